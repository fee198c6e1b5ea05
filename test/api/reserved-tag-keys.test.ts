// Reserved tag keys (HCP reserved-tag-keys API, go-tfe ReservedTagKeys) — CRUD, paging, the key rules and
// texts go-tfe matches, who may read and manage them, the organisation delete, and what disable-overrides refuses.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createOrg, createWorkspace, makeOrgToken, makeProject, makeTeam, makeUser } from "../fixtures";
import { api, uniqueName } from "../helpers";

const create = (org: string, attributes: Record<string, unknown>, token?: string) =>
  api("POST", `/organizations/${org}/reserved-tag-keys`, { token, body: { data: { type: "reserved-tag-keys", attributes } } });
const update = (id: string, attributes: Record<string, unknown>, token?: string) =>
  api("PATCH", `/reserved-tag-keys/${id}`, { token, body: { data: { type: "reserved-tag-keys", attributes } } });
const list = (org: string, query = "", token?: string) => api("GET", `/organizations/${org}/reserved-tag-keys${query}`, { token });

const inProject = (project: string) => ({ project: { data: { type: "projects", id: project } } });
const kv = (pairs: Array<[string, string]>) => pairs.map(([key, value]) => ({ type: "tag-bindings", attributes: { key, value } }));

describe("reserved tag keys", () => {
  it("creates (201) with the real shape; list, update and delete as a client sees them", async () => {
    const org = await createOrg();
    const res = await create(org, { key: "environment", "disable-overrides": true });
    expect(res.status).toBe(201);
    const k = res.body.data;
    expect(k.id).toMatch(/^rtk-[A-Za-z0-9]{16}$/);
    expect(k.type).toBe("reserved-tag-keys");
    expect(k.attributes).toEqual({
      key: "environment",
      "disable-overrides": true,
      "is-registry-tag": false,
      "created-at": expect.stringMatching(/Z$/),
      "updated-at": k.attributes["created-at"],
    });
    expect((await list(org)).body.data).toEqual([k]);

    // disable-overrides defaults to false.
    const plain = (await create(org, { key: "cost-center" })).body.data;
    expect(plain.attributes["disable-overrides"]).toBe(false);

    const patched = await update(k.id, { key: "env", "disable-overrides": false });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ id: k.id, attributes: { key: "env", "disable-overrides": false, "created-at": k.attributes["created-at"] } });
    // Only what is sent changes.
    const onlyFlag = await update(k.id, { "disable-overrides": true });
    expect(onlyFlag.body.data.attributes).toMatchObject({ key: "env", "disable-overrides": true });
    expect((await list(org)).body.data.map((d: { attributes: { key: string } }) => d.attributes.key)).toEqual(["env", "cost-center"]);

    expect((await api("DELETE", `/reserved-tag-keys/${k.id}`)).status).toBe(204);
    expect((await list(org)).body.data.map((d: { id: string }) => d.id)).toEqual([plain.id]);
    expect((await api("DELETE", `/reserved-tag-keys/${k.id}`)).status).toBe(404);
    expect((await update(k.id, { key: "x" })).status).toBe(404);
  });

  it("pages the list, oldest first, with the pagination envelope", async () => {
    const org = await createOrg();
    const keys: string[] = [];
    for (let i = 0; i < 5; i++) {
      const key = `k${i}`;
      expect((await create(org, { key })).status).toBe(201);
      keys.push(key);
    }
    const first = await list(org, "?page%5Bnumber%5D=1&page%5Bsize%5D=2");
    expect(first.status).toBe(200);
    expect(first.body.data.map((d: { attributes: { key: string } }) => d.attributes.key)).toEqual(["k0", "k1"]);
    expect(first.body.meta.pagination).toMatchObject({ "current-page": 1, "page-size": 2, "total-count": 5, "total-pages": 3, "next-page": 2 });
    const last = await list(org, "?page%5Bnumber%5D=3&page%5Bsize%5D=2");
    expect(last.body.data.map((d: { attributes: { key: string } }) => d.attributes.key)).toEqual(["k4"]);
    expect(last.body.links.next).toBeNull();
    const all = await list(org);
    expect(all.body.meta.pagination).toMatchObject({ "current-page": 1, "total-count": 5 });
    expect(all.body.data.map((d: { attributes: { key: string } }) => d.attributes.key)).toEqual(keys);
  });

  it("validates keys with the binding rules and the texts go-tfe matches (422, source.pointer)", async () => {
    const org = await createOrg();
    const expectError = (r: { status: number; body: any }, detail: string) => {
      expect(r.status).toBe(422);
      expect(r.body.errors[0]).toEqual({ status: "422", title: "invalid attribute", detail, source: { pointer: "/data/attributes/key" } });
    };
    expectError(await create(org, {}), "Key can't be blank");
    expectError(await create(org, { key: "" }), "Key can't be blank");
    for (const bad of ["! / nope", "has space", "slash/x", "hc:mine", "HCP:mine"]) expectError(await create(org, { key: bad }), "Key is invalid");
    expectError(await create(org, { key: "k".repeat(129) }), "Key is too long (maximum is 128 characters)");
    // Every character a binding key may have.
    expect((await create(org, { key: "a-Z_0.9=+@:x" })).status).toBe(201);
    expect((await create(org, { key: "k".repeat(128) })).status).toBe(201);

    const taken = await create(org, { key: "team" });
    expect(taken.status).toBe(201);
    expectError(await create(org, { key: "team" }), "Key has already been taken");
    // Keys are case-sensitive, as binding keys are; another organisation may reserve the same key.
    expect((await create(org, { key: "Team" })).status).toBe(201);
    expect((await create(await createOrg(), { key: "team" })).status).toBe(201);

    const other = (await create(org, { key: "other" })).body.data.id;
    expectError(await update(other, { key: "team" }), "Key has already been taken");
    expectError(await update(other, { key: "! / nope" }), "Key is invalid");
    expectError(await update(other, { key: "" }), "Key can't be blank");
    // Renaming to its own key is no conflict.
    expect((await update(other, { key: "other" })).status).toBe(200);
    expect((await list(org)).body.meta.pagination["total-count"]).toBe(5);

    // A wrong type, or a non-boolean flag, is refused before anything is written.
    const wrongType = await api("POST", `/organizations/${org}/reserved-tag-keys`, { body: { data: { type: "tags", attributes: { key: "x" } } } });
    expect(wrongType.status).toBe(422);
    expect((await create(org, { key: "x", "disable-overrides": "yes" })).status).toBe(422);
    expect((await list(org)).body.meta.pagination["total-count"]).toBe(5);
  });

  it("answers 404 for an unknown organisation or id", async () => {
    expect((await list("no-such-org-rtk")).status).toBe(404);
    expect((await create("no-such-org-rtk", { key: "k" })).status).toBe(404);
    expect((await update("nonexistent", { key: "k" })).status).toBe(404);
    expect((await update("rtk-doesnotexist1234", { key: "k" })).status).toBe(404);
    expect((await api("DELETE", "/reserved-tag-keys/nonexistent")).status).toBe(404);
    expect((await api("DELETE", "/reserved-tag-keys/rtk-doesnotexist1234")).status).toBe(404);
  });

  it("members read them; owners and the organisation token manage them; others see nothing", async () => {
    const org = await createOrg();
    const owner = await makeUser({ ownerOf: org });
    const orgToken = await makeOrgToken(org);
    const member = await makeTeam(org);
    const manager = await makeTeam(org, { "manage-workspaces": true, "manage-projects": true });
    const outsider = await makeUser();

    const mine = await create(org, { key: "by-owner" }, owner.token);
    expect(mine.status).toBe(201);
    expect((await create(org, { key: "by-org-token" }, orgToken.token)).status).toBe(201);
    const id = mine.body.data.id;

    for (const t of [member.token, manager.token]) {
      expect((await list(org, "", t)).status).toBe(200);
      expect((await list(org, "", t)).body.meta.pagination["total-count"]).toBe(2);
      expect((await create(org, { key: "nope" }, t)).status).toBe(404);
      expect((await update(id, { key: "nope" }, t)).status).toBe(404);
      expect((await api("DELETE", `/reserved-tag-keys/${id}`, { token: t })).status).toBe(404);
    }
    expect((await list(org, "", outsider.token)).status).toBe(404);
    expect((await update(id, { key: "nope" }, outsider.token)).status).toBe(404);
    expect((await api("DELETE", `/reserved-tag-keys/${id}`, { token: outsider.token })).status).toBe(404);
    // Nothing the refused callers sent was written.
    expect((await list(org)).body.data.map((d: { attributes: { key: string } }) => d.attributes.key)).toEqual(["by-owner", "by-org-token"]);

    expect((await update(id, { "disable-overrides": true }, orgToken.token)).status).toBe(200);
    expect((await api("DELETE", `/reserved-tag-keys/${id}`, { token: owner.token })).status).toBe(204);
  });

  it("go with their organisation: a delete removes them, and a new organisation of the same name starts empty", async () => {
    const org = await createOrg();
    const id = (await create(org, { key: "env" })).body.data.id;
    expect((await api("DELETE", `/organizations/${org}`)).status).toBe(204);
    const left = await env.DB.prepare("SELECT count(*) AS n FROM reserved_tag_keys WHERE id = ?").bind(id).first<{ n: number }>();
    expect(left?.n).toBe(0);
    expect((await update(id, { key: "x" })).status).toBe(404);
    await createOrg(undefined, org);
    expect((await list(org)).body.data).toEqual([]);
    expect((await create(org, { key: "env" })).status).toBe(201);
  });

  it("follow an organisation rename (named by its id)", async () => {
    const org = await createOrg();
    const id = (await create(org, { key: "env" })).body.data.id;
    const renamed = uniqueName("org");
    const res = await api("PATCH", `/organizations/${org}`, { body: { data: { type: "organizations", attributes: { name: renamed } } } });
    expect(res.status).toBe(200);
    expect((await list(renamed)).body.data.map((d: { id: string }) => d.id)).toEqual([id]);
    expect((await list(org)).status).toBe(404);
  });
});

describe("disable-overrides", () => {
  it("refuses a workspace binding of a key its project binds, on every path that writes bindings", async () => {
    const org = await createOrg();
    const prj = await makeProject(org);
    expect((await api("PATCH", `/projects/${prj}/tag-bindings`, { body: { data: kv([["env", "prod"]]) } })).status).toBe(200);
    const rtk = (await create(org, { key: "env", "disable-overrides": true })).body.data.id;
    const ws = await createWorkspace(org, {}, undefined, inProject(prj));

    const refused = (r: { status: number; body: any }, pointer: string) => {
      expect(r.status).toBe(422);
      expect(r.body.errors[0]).toMatchObject({ status: "422", title: "invalid attribute", source: { pointer } });
      expect(r.body.errors[0].detail).toContain("env");
    };
    // PATCH /workspaces/:id/tag-bindings: the offending entry is named; nothing is written.
    refused(
      await api("PATCH", `/workspaces/${ws.id}/tag-bindings`, {
        body: {
          data: kv([
            ["team", "a"],
            ["env", "dev"],
          ]),
        },
      }),
      "/data/1/attributes/key",
    );
    // The same value is an override too (a direct binding shadows the inherited one).
    refused(await api("PATCH", `/workspaces/${ws.id}/tag-bindings`, { body: { data: kv([["env", "prod"]]) } }), "/data/0/attributes/key");
    expect((await api("GET", `/workspaces/${ws.id}/tag-bindings`)).body.data).toEqual([]);
    // Workspace update (relationships.tag-bindings) and create.
    refused(
      await api("PATCH", `/workspaces/${ws.id}`, {
        body: { data: { type: "workspaces", attributes: {}, relationships: { "tag-bindings": { data: kv([["env", "dev"]]) } } } },
      }),
      "/data/relationships/tag-bindings/data/0/attributes/key",
    );
    const name = uniqueName("ws");
    refused(
      await api("POST", `/organizations/${org}/workspaces`, {
        body: { data: { type: "workspaces", attributes: { name }, relationships: { ...inProject(prj), "tag-bindings": { data: kv([["env", "dev"]]) } } } },
      }),
      "/data/relationships/tag-bindings/data/0/attributes/key",
    );
    expect((await api("GET", `/organizations/${org}/workspaces/${name}`)).status).toBe(404);
    // The workspace still inherits the project's value.
    const eff = await api("GET", `/workspaces/${ws.id}/effective-tag-bindings`);
    expect(eff.body.data.map((b: { attributes: { key: string; value: string } }) => [b.attributes.key, b.attributes.value])).toEqual([["env", "prod"]]);

    // Other keys, and the key in a workspace whose project does not bind it, are allowed.
    expect((await api("PATCH", `/workspaces/${ws.id}/tag-bindings`, { body: { data: kv([["team", "a"]]) } })).status).toBe(200);
    const elsewhere = await createWorkspace(org);
    expect((await api("PATCH", `/workspaces/${elsewhere.id}/tag-bindings`, { body: { data: kv([["env", "dev"]]) } })).status).toBe(200);

    // With overrides enabled again (or the reservation gone), the workspace may override.
    expect((await update(rtk, { "disable-overrides": false })).status).toBe(200);
    expect((await api("PATCH", `/workspaces/${ws.id}/tag-bindings`, { body: { data: kv([["env", "dev"]]) } })).status).toBe(200);
    const after = await api("GET", `/workspaces/${ws.id}/effective-tag-bindings`);
    expect(after.body.data.find((b: { attributes: { key: string } }) => b.attributes.key === "env").attributes.value).toBe("dev");
  });

  it("is not retroactive, and a reserved key without disable-overrides refuses nothing", async () => {
    const org = await createOrg();
    const prj = await makeProject(org);
    expect((await api("PATCH", `/projects/${prj}/tag-bindings`, { body: { data: kv([["env", "prod"]]) } })).status).toBe(200);
    const rtk = (await create(org, { key: "env" })).body.data.id;
    const ws = await createWorkspace(org, {}, undefined, inProject(prj));
    expect((await api("PATCH", `/workspaces/${ws.id}/tag-bindings`, { body: { data: kv([["env", "dev"]]) } })).status).toBe(200);
    // Disabling overrides later keeps the existing override, and other bindings can still be written.
    expect((await update(rtk, { "disable-overrides": true })).status).toBe(200);
    expect((await api("PATCH", `/workspaces/${ws.id}/tag-bindings`, { body: { data: kv([["team", "a"]]) } })).status).toBe(200);
    const direct = await api("GET", `/workspaces/${ws.id}/tag-bindings`);
    expect(direct.body.data.map((b: { attributes: { key: string; value: string } }) => [b.attributes.key, b.attributes.value])).toEqual([
      ["env", "dev"],
      ["team", "a"],
    ]);
    // Deleting the reservation lifts the refusal.
    expect((await api("DELETE", `/reserved-tag-keys/${rtk}`)).status).toBe(204);
    expect((await api("PATCH", `/workspaces/${ws.id}/tag-bindings`, { body: { data: kv([["env", "qa"]]) } })).status).toBe(200);
  });
});
