// Flat tags and tag bindings are two sets. The `tfe` provider's and Terraform's `cloud`
// block's exact request sequences, concurrent writes to both sets, and the migration of a store
// written with one tag set per workspace. Also flat-tag name rules and reserved prefixes.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { WorkspaceRecord } from "../../src/workspaces/workspace.types";
import { createOrg, createWorkspace } from "../fixtures";
import { api, expectConsistent } from "../helpers";
import { asStoreOfSchema } from "../old-store";

type Pair = [string, string];
const kv = (...pairs: Array<[string, string?]>) =>
  pairs.map(([key, value]) => ({ type: "tag-bindings", attributes: value === undefined ? { key } : { key, value } }));
const byName = (...names: string[]) => names.map((name) => ({ type: "tags", attributes: { name } }));
const pairs = (data: Array<{ attributes: { key: string; value: string } }>): Pair[] => data.map((b) => [b.attributes.key, b.attributes.value]);

/** Everything a client can read about a workspace's tags, each from its own endpoint. */
async function tagState(ws: string) {
  const show = await api("GET", `/workspaces/${ws}?include=effective_tag_bindings`);
  expect(show.status).toBe(200);
  const [flat, bindings, effective] = await Promise.all([
    api("GET", `/workspaces/${ws}/relationships/tags`),
    api("GET", `/workspaces/${ws}/tag-bindings`),
    api("GET", `/workspaces/${ws}/effective-tag-bindings`),
  ]);
  const included = (show.body.included ?? []).filter((r: { type: string }) => r.type === "effective-tag-bindings");
  return {
    tagNames: show.body.data.attributes["tag-names"] as string[],
    flat: flat.body.data.map((t: { attributes: { name: string } }) => t.attributes.name) as string[],
    bindings: pairs(bindings.body.data),
    effective: pairs(effective.body.data),
    included: pairs(included),
  };
}

/** tag-names, flat tags, bindings, effective and included effective bindings are exactly these. */
async function expectTags(ws: string, flat: string[], ...bindings: Pair[]) {
  expect(await tagState(ws)).toEqual({ tagNames: flat, flat, bindings, effective: bindings, included: bindings });
}

async function orgTags(org: string): Promise<Record<string, number>> {
  const res = await api("GET", `/organizations/${org}/tags?page%5Bsize%5D=100`);
  expect(res.status).toBe(200);
  return Object.fromEntries(
    res.body.data.map((t: { attributes: { name: string; "instance-count": number } }) => [t.attributes.name, t.attributes["instance-count"]]),
  );
}

async function listNames(org: string, query: string): Promise<string[]> {
  const res = await api("GET", `/organizations/${org}/workspaces?${query}`);
  expect(res.status, query).toBe(200);
  return res.body.data.map((w: { attributes: { name: string } }) => w.attributes.name).sort();
}

const updateWs = (ws: string, relationships: unknown) => api("PATCH", `/workspaces/${ws}`, { body: { data: { type: "workspaces", relationships } } });
const addFlat = (ws: string, ...names: string[]) => api("POST", `/workspaces/${ws}/relationships/tags`, { body: { data: byName(...names) } });
const removeFlat = (ws: string, ...names: string[]) => api("DELETE", `/workspaces/${ws}/relationships/tags`, { body: { data: byName(...names) } });
const patchBindings = (ws: string, data: unknown[]) => api("PATCH", `/workspaces/${ws}/tag-bindings`, { body: { data } });

describe("the tfe provider's request sequences (tag_names and tags)", () => {
  /** What the provider creates for tag_names [rc, alpha] and tags {env = dev, owner = rc}. */
  const providerCreated = (org: string) =>
    createWorkspace(org, {}, undefined, { tags: { data: byName("rc", "alpha") }, "tag-bindings": { data: kv(["env", "dev"], ["owner", "rc"]) } });

  it("sequence 1: create with tag_names [rc, alpha] and tags {env = dev, owner = rc} reads back exactly that", async () => {
    const org = await createOrg();
    const ws = await providerCreated(org);
    // The create response already carries flat tags only (in the order sent).
    expect(ws.attributes["tag-names"]).toEqual(["rc", "alpha"]);
    await expectTags(ws.id, ["rc", "alpha"], ["env", "dev"], ["owner", "rc"]);
    // Only flat tags are organisation tags.
    expect(await orgTags(org)).toEqual({ alpha: 1, rc: 1 });
  });

  it("sequence 2: the update the provider sends once reads are right, then its old bad DELETE, leave each set exact", async () => {
    const org = await createOrg();
    const ws = await providerCreated(org);

    // tags = { env = "prod", owner = "rc" }: the whole binding set, replaced; flat tags untouched.
    const upd = await updateWs(ws.id, {
      "tag-bindings": {
        data: kv(["owner", "rc"], ["env", "prod"]),
      },
    });
    expect(upd.status).toBe(200);
    expect(upd.body.data.attributes["tag-names"]).toEqual(["rc", "alpha"]);
    await expectTags(ws.id, ["rc", "alpha"], ["owner", "rc"], ["env", "prod"]);

    // tag_names = ["beta", "rc"]: add beta, remove alpha; bindings untouched.
    expect((await addFlat(ws.id, "beta")).status).toBe(204);
    await expectTags(ws.id, ["rc", "alpha", "beta"], ["owner", "rc"], ["env", "prod"]);
    expect((await removeFlat(ws.id, "alpha")).status).toBe(204);
    await expectTags(ws.id, ["rc", "beta"], ["owner", "rc"], ["env", "prod"]);

    // The DELETE the provider sent while it read binding keys as flat tags: only flat tags named
    // that are removed (none left), the bindings env and owner stay.
    expect((await removeFlat(ws.id, "env", "alpha", "owner")).status).toBe(204);
    await expectTags(ws.id, ["rc", "beta"], ["owner", "rc"], ["env", "prod"]);
    expect(await orgTags(org)).toEqual({ beta: 1, rc: 1 });
  });

  it("a workspace update's relationships.tags replaces the flat tags only", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org, {}, undefined, { tags: { data: byName("a", "b") }, "tag-bindings": { data: kv(["a", "1"]) } });
    expect((await updateWs(ws.id, { tags: { data: byName("b", "c") } })).status).toBe(200);
    await expectTags(ws.id, ["b", "c"], ["a", "1"]);
    expect((await updateWs(ws.id, { tags: { data: [] } })).status).toBe(200);
    await expectTags(ws.id, [], ["a", "1"]);
    // A name whose organisation tag was deleted is a new tag when set again (not the dead entry).
    expect((await updateWs(ws.id, { tags: { data: byName("x") } })).status).toBe(200);
    const dead = (await api("GET", `/organizations/${org}/tags?q=x`)).body.data[0].id;
    expect((await api("DELETE", `/organizations/${org}/tags`, { body: { data: [{ type: "tags", id: dead }] } })).status).toBe(204);
    await expectTags(ws.id, [], ["a", "1"]);
    expect((await updateWs(ws.id, { tags: { data: byName("x") } })).status).toBe(200);
    await expectTags(ws.id, ["x"], ["a", "1"]);
    expect(await orgTags(org)).toEqual({ x: 1 });
  });
});

describe("Terraform's cloud block", () => {
  it('set strategy (tags = ["a", "b"]): create with flat tags, tag check, key-only binding adds, both list queries', async () => {
    const org = await createOrg();
    const other = await createWorkspace(org, { name: "other" }, undefined, { tags: { data: byName("a") } });
    expect(await listNames(org, "search%5Btags%5D=a,b")).toEqual([]);
    // terraform init creates the workspace with flat tags...
    const ws = await createWorkspace(org, { name: "app" }, undefined, { tags: { data: byName("a", "b") } });
    // ...then checks each tag is in tag-names and among the binding keys: the bindings lack them,
    await expectTags(ws.id, ["a", "b"]);
    // ...so it adds every tag as a key-only binding.
    const add = await patchBindings(ws.id, kv(["a"], ["b"]));
    expect(add.status).toBe(200);
    expect(pairs(add.body.data)).toEqual([
      ["a", ""],
      ["b", ""],
    ]);
    await expectTags(ws.id, ["a", "b"], ["a", ""], ["b", ""]);
    // The next init finds nothing to add; both list queries find the workspace.
    expect(await listNames(org, "search%5Btags%5D=a,b")).toEqual(["app"]);
    expect(await listNames(org, "filter%5Btagged%5D%5B0%5D%5Bkey%5D=a")).toEqual(["app"]);
    expect(await listNames(org, "search%5Btags%5D=a")).toEqual(["app", "other"]);
    // A flat tag alone is no binding.
    expect(other.attributes["tag-names"]).toEqual(["a"]);
    expect(await listNames(org, "filter%5Btagged%5D%5B0%5D%5Bkey%5D=a&filter%5Btagged%5D%5B0%5D%5Bvalue%5D=")).toEqual(["app"]);
    // Adding the same key-only bindings again changes nothing.
    expect((await patchBindings(ws.id, kv(["a"], ["b"]))).status).toBe(200);
    await expectTags(ws.id, ["a", "b"], ["a", ""], ["b", ""]);
  });

  it('map strategy (tags = { env = "prod", team = "x" }): create with bindings, tag check, both list queries', async () => {
    const org = await createOrg();
    const query =
      "search%5Btags%5D=env,team&filter%5Btagged%5D%5B0%5D%5Bkey%5D=env&filter%5Btagged%5D%5B0%5D%5Bvalue%5D=prod&filter%5Btagged%5D%5B1%5D%5Bkey%5D=team&filter%5Btagged%5D%5B1%5D%5Bvalue%5D=x";
    expect(await listNames(org, query)).toEqual([]);
    const ws = await createWorkspace(org, { name: "svc" }, undefined, {
      "tag-bindings": {
        data: kv(["env", "prod"], ["team", "x"]),
      },
    });
    await expectTags(ws.id, [], ["env", "prod"], ["team", "x"]);
    // Its search[tags] part and its filter[tagged] part give the same answer.
    expect(await listNames(org, query)).toEqual(["svc"]);
    expect(await listNames(org, "search%5Btags%5D=env,team")).toEqual(["svc"]);
    expect(await listNames(org, "filter%5Btagged%5D%5B0%5D%5Bkey%5D=env&filter%5Btagged%5D%5B0%5D%5Bvalue%5D=prod")).toEqual(["svc"]);
    // A changed value in the configuration: the tag check PATCHes the whole map.
    expect((await patchBindings(ws.id, kv(["env", "staging"], ["team", "x"]))).status).toBe(200);
    await expectTags(ws.id, [], ["env", "staging"], ["team", "x"]);
    expect(await listNames(org, query)).toEqual([]);
  });
});

describe("concurrent writes to both sets", () => {
  it("flat-tag adds and removes racing binding PATCHes on one workspace: every acknowledged write is there", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org, {}, undefined, { tags: { data: byName("old0", "old1", "old2") }, "tag-bindings": { data: kv(["keep", "1"]) } });
    const writes: Array<Promise<{ status: number }>> = [];
    for (let i = 0; i < 8; i++) writes.push(addFlat(ws.id, `f${i}`));
    for (let i = 0; i < 3; i++) writes.push(removeFlat(ws.id, `old${i}`));
    for (let i = 0; i < 5; i++) writes.push(patchBindings(ws.id, kv([`b${i}`, `v${i}`])));
    // Same keys in the other set: never interfere with the flat adds of f0..f3.
    for (let i = 0; i < 4; i++) writes.push(patchBindings(ws.id, kv([`f${i}`])));
    const results = await Promise.all(writes);
    expect(results.map((r) => r.status)).toEqual([...Array(8).fill(204), ...Array(3).fill(204), ...Array(9).fill(200)]);
    const state = await tagState(ws.id);
    expect([...state.tagNames].sort()).toEqual(["f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7"]);
    expect(state.flat.sort()).toEqual(state.tagNames.sort());
    expect(state.bindings.sort()).toEqual(
      (
        [
          ["keep", "1"],
          ["b0", "v0"],
          ["b1", "v1"],
          ["b2", "v2"],
          ["b3", "v3"],
          ["b4", "v4"],
          ["f0", ""],
          ["f1", ""],
          ["f2", ""],
          ["f3", ""],
        ] as Pair[]
      ).sort(),
    );
    expect(await orgTags(org)).toEqual({ f0: 1, f1: 1, f2: 1, f3: 1, f4: 1, f5: 1, f6: 1, f7: 1 });
    await expectConsistent();
  });
});

describe("flat tag names", () => {
  it("follow the documented flat-tag rules and reject the reserved prefixes, on add, create and update", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    for (const name of ["hcp:x", "hc:x", "HCP:x", "a b", "a/b", "x".repeat(256)]) {
      const res = await addFlat(ws.id, "ok", name);
      expect(res.status, name).toBe(422);
      expect(res.body.errors[0].status).toBe("422");
      expect(res.body.errors[0].source.pointer).toBe("/data/1/attributes/name");
    }
    expect((await addFlat(ws.id, "hcp:x")).body.errors[0].detail).toBe("Tag name may not start with the reserved prefixes hc: or hcp:");
    // A binding key's limits (128 characters) do not apply to flat tags (255).
    expect((await addFlat(ws.id, "t".repeat(200), "hcpx:ok", "a:b_c-d")).status).toBe(204);
    const create = await api("POST", `/organizations/${org}/workspaces`, {
      body: { data: { type: "workspaces", attributes: { name: "reserved" }, relationships: { tags: { data: byName("hcp:env") } } } },
    });
    expect(create.status).toBe(422);
    expect(create.body.errors[0].source.pointer).toBe("/data/relationships/tags/data/0/attributes/name");
    const upd = await updateWs(ws.id, { tags: { data: byName("fine", "hc:no") } });
    expect(upd.status).toBe(422);
    expect(upd.body.errors[0].source.pointer).toBe("/data/relationships/tags/data/1/attributes/name");
    expect((await tagState(ws.id)).tagNames).toEqual(["t".repeat(200), "hcpx:ok", "a:b_c-d"]);
  });
});

describe("migration from one tag set per workspace", () => {
  it("splits a store written by the previous code: valued entries become bindings, key-only ones flat tags; the index follows", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org, { name: "legacy" }, undefined, { tags: { data: byName("f1", "keyonly") } });
    const stub = env.WORKSPACES.getByName(ws.id);
    const current = ((await stub.get()) as { value: WorkspaceRecord }).value;
    const [f1, keyonly] = current.tags;
    const at = current.createdAt;
    // The record exactly as the previous code stored it: one list, key-only entries with value null (and, as
    // every record before schema 6, its organisation's name).
    const { tagBindings: _dropped, ...rest } = current;
    const old = {
      ...rest,
      organization: org,
      tags: [
        { key: "f1", value: null, id: "tb-old1", tagId: f1!.tagId, createdAt: at },
        { key: "env", value: "prod", id: "tb-old2", tagId: null, createdAt: at },
        { key: "keyonly", value: null, id: "tb-old3", tagId: keyonly!.tagId, createdAt: at },
        { key: "owner", value: "rc", id: "tb-old4", tagId: null, createdAt: at },
      ],
    };
    await runInDurableObject(stub, (_instance, state) => {
      const sql = state.storage.sql;
      sql.exec("UPDATE workspace SET record = ? WHERE singleton = 1", JSON.stringify(old));
      asStoreOfSchema(sql, 2);
      sql.exec("DELETE FROM outbox");
    });

    // D1 as the previous code left it (workspace_tags of migrations 0001-0007, rows written by the old
    // indexUpsertStatements, naming the organisation by name), then the tag-set migration itself and what
    // migration 0016 does to that table. Other tests' rows in this file's database are set aside and put back afterwards.
    await env.DB.batch([
      env.DB.prepare("UPDATE workspaces SET doc = ? WHERE id = ?").bind(JSON.stringify(old), ws.id),
      env.DB.prepare(
        "CREATE TABLE saved_tags AS SELECT workspace_id, organization_id, kind, key, value, position, tag_id FROM workspace_tags WHERE workspace_id <> ?",
      ).bind(ws.id),
      env.DB.prepare("DROP TABLE workspace_tags"),
      env.DB.prepare(`CREATE TABLE workspace_tags (workspace_id TEXT NOT NULL, organization_name TEXT NOT NULL COLLATE NOCASE, key TEXT NOT NULL,
        value TEXT, position INTEGER NOT NULL, tag_id TEXT, PRIMARY KEY (workspace_id, key))`),
      env.DB.prepare("CREATE INDEX workspace_tags_org_key ON workspace_tags(organization_name, key, value)"),
      env.DB.prepare("CREATE INDEX workspace_tags_tag ON workspace_tags(tag_id)"),
      env.DB.prepare("CREATE INDEX workspace_tags_org_key_ws ON workspace_tags(organization_name, key, value, workspace_id, tag_id)"),
      ...old.tags.map((t, i) =>
        env.DB.prepare("INSERT INTO workspace_tags (workspace_id, organization_name, key, value, position, tag_id) VALUES (?, ?, ?, ?, ?, ?)").bind(
          ws.id,
          org,
          t.key,
          t.value,
          i,
          t.tagId,
        ),
      ),
    ]);
    const migration = env.TEST_MIGRATIONS.find((m) => m.name.endsWith("_tag_sets.sql"));
    expect(migration).toBeDefined();
    for (const q of migration!.queries) await env.DB.prepare(q).run();
    await env.DB.batch([
      env.DB.prepare("ALTER TABLE workspace_tags RENAME COLUMN organization_name TO organization_id"),
      env.DB.prepare(
        `UPDATE workspace_tags SET organization_id = (SELECT o.external_id FROM organizations o WHERE o.name = workspace_tags.organization_id)
         WHERE organization_id IN (SELECT name FROM organizations)`,
      ),
      env.DB.prepare("INSERT INTO workspace_tags (workspace_id, organization_id, kind, key, value, position, tag_id) SELECT * FROM saved_tags"),
      env.DB.prepare("DROP TABLE saved_tags"),
    ]);
    const rows = await env.DB.prepare("SELECT kind, key, value, tag_id FROM workspace_tags WHERE workspace_id = ? ORDER BY kind, key").bind(ws.id).all();
    expect(rows.results).toEqual([
      { kind: "binding", key: "env", value: "prod", tag_id: null },
      { kind: "binding", key: "owner", value: "rc", tag_id: null },
      { kind: "flat", key: "f1", value: null, tag_id: f1!.tagId },
      { kind: "flat", key: "keyonly", value: null, tag_id: keyonly!.tagId },
    ]);

    // Before the DO migrates, list reads of the old doc already show the two sets.
    const listed = await api("GET", `/organizations/${org}/workspaces?search%5Btags%5D=env`);
    expect(listed.body.data.map((w: { attributes: { "tag-names": string[] } }) => w.attributes["tag-names"])).toEqual([["f1", "keyonly"]]);
    expect(await listNames(org, "filter%5Btagged%5D%5B0%5D%5Bkey%5D=keyonly")).toEqual([]);
    expect(await listNames(org, "filter%5Btagged%5D%5B0%5D%5Bkey%5D=owner&filter%5Btagged%5D%5B0%5D%5Bvalue%5D=rc")).toEqual(["legacy"]);

    // The DO's schema migration (as on its next start), then the index write it queued.
    await runInDurableObject(stub, (instance) => (instance as unknown as { migrate(): void }).migrate());
    await runDurableObjectAlarm(stub);
    const migrated = ((await stub.get()) as { value: WorkspaceRecord }).value;
    expect(migrated.version).toBe(old.version + 1);
    expect(migrated.tags).toEqual([
      { key: "f1", tagId: f1!.tagId, createdAt: at },
      { key: "keyonly", tagId: keyonly!.tagId, createdAt: at },
    ]);
    expect(migrated.tagBindings).toEqual([
      { key: "env", value: "prod", id: "tb-old2", createdAt: at },
      { key: "owner", value: "rc", id: "tb-old4", createdAt: at },
    ]);
    await expectTags(ws.id, ["f1", "keyonly"], ["env", "prod"], ["owner", "rc"]);
    const binding = await api("GET", `/workspaces/${ws.id}/tag-bindings`);
    expect(binding.body.data.map((b: { id: string }) => b.id)).toEqual(["tb-old2", "tb-old4"]);
    expect(await orgTags(org)).toEqual({ f1: 1, keyonly: 1 });
    const index = await env.DB.prepare("SELECT version, doc FROM workspaces WHERE id = ?").bind(ws.id).first<{ version: number; doc: string }>();
    expect(index?.version).toBe(migrated.version);
    expect(JSON.parse(index!.doc)).toEqual(migrated);
    await expectConsistent();

    // Migrating again changes nothing; writes after the migration go to their own set.
    await runInDurableObject(stub, (instance) => (instance as unknown as { migrate(): void }).migrate());
    expect(((await stub.get()) as { value: WorkspaceRecord }).value.version).toBe(migrated.version);
    expect((await addFlat(ws.id, "env")).status).toBe(204);
    expect((await patchBindings(ws.id, kv(["keyonly"]))).status).toBe(200);
    await expectTags(ws.id, ["f1", "keyonly", "env"], ["env", "prod"], ["owner", "rc"], ["keyonly", ""]);
    await expectConsistent();
  });
});
