// Workspace variables over HTTP: CRUD, key rules, one key per category, sensitive values never
// shown, the workspace's `vars` relationship, permissions, concurrency and encryption at rest.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { createOrg, createWorkspace, grantWorkspace, makeTeam } from "../fixtures";
import { api, type ApiResponse, uniqueName } from "../helpers";

const varBody = (attributes: Record<string, unknown>) => ({ data: { type: "vars", attributes: { category: "terraform", ...attributes } } });
const create = (ws: string, attributes: Record<string, unknown>, token?: string) => api("POST", `/workspaces/${ws}/vars`, { body: varBody(attributes), token });
const key = () => uniqueName("k").replace(/[^A-Za-z0-9_]/g, "_");

/** Every `vars` resource in a document, wherever it is. */
function varsIn(res: ApiResponse): Array<{ attributes: Record<string, unknown> }> {
  const data = res.body?.data;
  return (Array.isArray(data) ? data : data ? [data] : []).filter((r: { type: string }) => r.type === "vars");
}

/** The redaction rule on every response that carries a variable: a sensitive one shows a null value. */
function expectRedacted(res: ApiResponse, secret?: string): void {
  for (const v of varsIn(res)) if (v.attributes.sensitive) expect(v.attributes.value).toBeNull();
  if (secret) expect(res.text).not.toContain(secret);
}

async function workspace(): Promise<{ org: string; id: string }> {
  const org = await createOrg();
  return { org, id: (await createWorkspace(org)).id };
}

describe("workspace variables: CRUD", () => {
  it("creates, lists, shows, updates and deletes a variable", async () => {
    const { id: ws } = await workspace();
    const k = key();
    const created = await create(ws, { key: k, value: "v1", description: "d", hcl: false, sensitive: false });
    expect(created.status).toBe(201);
    const v = created.body.data;
    expect(v.id).toMatch(/^var-/);
    expect(v.attributes).toMatchObject({ key: k, value: "v1", description: "d", category: "terraform", hcl: false, sensitive: false });
    expect(v.attributes["version-id"]).toMatch(/^[0-9a-f]{40}$/);
    expect(v.relationships.configurable.data).toEqual({ id: ws, type: "workspaces" });
    expect(v.links.self).toBe(`/api/v2/workspaces/${ws}/vars/${v.id}`);

    const list = await api("GET", `/workspaces/${ws}/vars`);
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([v]);
    expect((await api("GET", `/workspaces/${ws}/vars/${v.id}`)).body.data).toEqual(v);

    const patchBody = { data: { type: "vars", id: v.id, attributes: { value: "v2", hcl: true } } };
    const patched = await api("PATCH", `/workspaces/${ws}/vars/${v.id}`, { body: patchBody });
    expect(patched.status).toBe(200);
    expect(patched.body.data.attributes).toMatchObject({ key: k, value: "v2", hcl: true });
    // An update that changes nothing still gets a new version (go-tfe checks it): three writes, three version ids.
    const noop = await api("PATCH", `/workspaces/${ws}/vars/${v.id}`, { body: { data: { type: "vars" } } });
    expect(noop.status).toBe(200);
    const versions = [v, patched.body.data, noop.body.data].map((d) => d.attributes["version-id"] as string);
    expect(versions).toEqual(versions.map(() => expect.stringMatching(/^[0-9a-f]{40}$/)));
    expect(new Set(versions).size).toBe(3);
    expect((await api("GET", `/workspaces/${ws}/vars/${v.id}`)).body.data.attributes["version-id"]).toBe(versions[2]);

    expect((await api("DELETE", `/workspaces/${ws}/vars/${v.id}`)).status).toBe(204);
    expect((await api("GET", `/workspaces/${ws}/vars/${v.id}`)).status).toBe(404);
    expect((await api("DELETE", `/workspaces/${ws}/vars/${v.id}`)).status).toBe(404);
    expect((await api("GET", `/workspaces/${ws}/vars`)).body.data).toEqual([]);
  });

  it("defaults: empty value, no description, not hcl, not sensitive", async () => {
    const { id: ws } = await workspace();
    const res = await create(ws, { key: key() });
    expect(res.status).toBe(201);
    expect(res.body.data.attributes).toMatchObject({ value: "", description: null, hcl: false, sensitive: false });
  });

  it("lists the variable ids as the workspace's vars relationship, in creation order", async () => {
    const { org, id: ws } = await workspace();
    const a = (await create(ws, { key: key() })).body.data.id;
    const b = (await create(ws, { key: key(), category: "env" })).body.data.id;
    const want = [
      { id: a, type: "vars" },
      { id: b, type: "vars" },
    ];
    expect((await api("GET", `/workspaces/${ws}`)).body.data.relationships.vars.data).toEqual(want);
    const listed = await api("GET", `/organizations/${org}/workspaces`);
    expect(listed.body.data.find((w: { id: string }) => w.id === ws).relationships.vars.data).toEqual(want);
    await api("DELETE", `/workspaces/${ws}/vars/${a}`);
    expect((await api("GET", `/workspaces/${ws}`)).body.data.relationships.vars.data).toEqual([{ id: b, type: "vars" }]);
  });

  it("answers 404 for unknown workspaces and variables, and another workspace's variable", async () => {
    const { id: ws } = await workspace();
    const { id: other } = await workspace();
    const v = (await create(other, { key: key() })).body.data.id;
    expect((await api("GET", "/workspaces/ws-doesnotexist123/vars")).status).toBe(404);
    expect((await create("ws-doesnotexist123", { key: key() })).status).toBe(404);
    expect((await api("GET", `/workspaces/${ws}/vars/nonexisting`)).status).toBe(404);
    expect((await api("GET", `/workspaces/${ws}/vars/${v}`)).status).toBe(404);
    expect((await api("PATCH", `/workspaces/${ws}/vars/${v}`, { body: { data: { type: "vars", attributes: { value: "x" } } } })).status).toBe(404);
    expect((await api("DELETE", `/workspaces/${ws}/vars/${v}`)).status).toBe(404);
  });
});

describe("workspace variables: validation", () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ["wrong category", { key: "a", category: "policy-set" }, "/data/attributes/category"],
    ["an over-long value", { key: "a", value: "x".repeat(256 * 1024 + 1) }, "/data/attributes/value"],
    ["an over-long description", { key: "a", description: "d".repeat(513) }, "/data/attributes/description"],
    ["a key with a space", { key: "a b" }, "/data/attributes/key"],
    ["an over-long key", { key: "k".repeat(129) }, "/data/attributes/key"],
    ["an empty key", { key: "" }, "/data/attributes/key"],
    ["an env key starting with a digit", { key: "1abc", category: "env" }, "/data/attributes/key"],
    ["a non-boolean sensitive", { key: "a", sensitive: "yes" }, "/data/attributes/sensitive"],
  ];
  for (const [name, attributes, pointer] of cases) {
    it(`refuses ${name} with 422 and a pointer`, async () => {
      const { id: ws } = await workspace();
      const res = await create(ws, attributes);
      expect(res.status).toBe(422);
      expect(res.body.errors[0]).toMatchObject({ status: "422", source: { pointer } });
    });
  }

  it("gives invalid keys the real service's text", async () => {
    const { id: ws } = await workspace();
    const res = await create(ws, { key: "no spaces" });
    expect(res.body.errors[0].title).toBe("invalid attribute");
    expect(res.body.errors[0].detail).toMatch(/^Key is invalid/);
  });

  it("keeps one key per category: a clash is 422 'Key has already been taken', on create and on update", async () => {
    const { id: ws } = await workspace();
    const k = key();
    expect((await create(ws, { key: k })).status).toBe(201);
    const clash = await create(ws, { key: k, value: "other" });
    expect(clash.status).toBe(422);
    const taken = { status: "422", title: "invalid attribute", detail: "Key has already been taken", source: { pointer: "/data/attributes/key" } };
    expect(clash.body.errors).toEqual([taken]);
    // The same key in the other category is another variable.
    expect((await create(ws, { key: k, category: "env" })).status).toBe(201);
    const other = (await create(ws, { key: key() })).body.data.id;
    const rename = await api("PATCH", `/workspaces/${ws}/vars/${other}`, { body: { data: { type: "vars", attributes: { key: k } } } });
    expect(rename.status).toBe(422);
    expect(rename.body.errors[0].detail).toBe("Key has already been taken");
    // Moving into the other category where the key exists clashes too.
    const env1 = (await create(ws, { key: "SAME", category: "env" })).body.data.id;
    await create(ws, { key: "SAME" });
    const move = await api("PATCH", `/workspaces/${ws}/vars/${env1}`, { body: { data: { type: "vars", attributes: { category: "terraform" } } } });
    expect(move.status).toBe(422);
    expect((await api("GET", `/workspaces/${ws}/vars/${env1}`)).body.data.attributes.category).toBe("env");
  });

  it("refuses a category change that makes the key invalid", async () => {
    const { id: ws } = await workspace();
    const v = (await create(ws, { key: "9-lives" })).body.data.id;
    const res = await api("PATCH", `/workspaces/${ws}/vars/${v}`, { body: { data: { type: "vars", attributes: { category: "env" } } } });
    expect(res.status).toBe(422);
    expect(res.body.errors[0].source.pointer).toBe("/data/attributes/key");
  });

  it("refuses a wrong type and malformed documents without a 5xx", async () => {
    const { id: ws } = await workspace();
    const wrongType = await api("POST", `/workspaces/${ws}/vars`, { body: { data: { type: "variables", attributes: { key: "a", category: "env" } } } });
    expect(wrongType.status).toBe(422);
    expect(wrongType.body.errors[0].source.pointer).toBe("/data/type");
    expect((await api("POST", `/workspaces/${ws}/vars`, { raw: "{" })).status).toBe(400);
    expect((await api("POST", `/workspaces/${ws}/vars`, { body: { data: { type: "vars", attributes: { key: "a" } } } })).status).toBe(422);
  });
});

describe("workspace variables: sensitive values", () => {
  it("never shows a sensitive value, in any response", async () => {
    const { id: ws } = await workspace();
    const secret = `s3cr3t-${crypto.randomUUID()}`;
    const created = await create(ws, { key: key(), value: secret, sensitive: true });
    expect(created.status).toBe(201);
    expect(created.body.data.attributes).toMatchObject({ sensitive: true, value: null });
    expectRedacted(created, secret);
    const id = created.body.data.id;
    for (const path of [`/workspaces/${ws}/vars`, `/workspaces/${ws}/vars/${id}`, `/workspaces/${ws}/all-vars`, `/workspaces/${ws}`]) {
      const res = await api("GET", path);
      expect(res.status).toBe(200);
      expectRedacted(res, secret);
    }
    const secret2 = `n3w-${crypto.randomUUID()}`;
    const rotate = { data: { type: "vars", attributes: { value: secret2, description: "rotated" } } };
    const patched = await api("PATCH", `/workspaces/${ws}/vars/${id}`, { body: rotate });
    expect(patched.status).toBe(200);
    expect(patched.body.data.attributes).toMatchObject({ value: null, sensitive: true, description: "rotated" });
    expectRedacted(patched, secret2);
  });

  it("cannot be made non-sensitive again", async () => {
    const { id: ws } = await workspace();
    const id = (await create(ws, { key: key(), value: "x", sensitive: true })).body.data.id;
    const res = await api("PATCH", `/workspaces/${ws}/vars/${id}`, { body: { data: { type: "vars", attributes: { sensitive: false } } } });
    expect(res.status).toBe(422);
    expect(res.body.errors[0]).toMatchObject({ title: "invalid attribute", source: { pointer: "/data/attributes/sensitive" } });
    expect((await api("GET", `/workspaces/${ws}/vars/${id}`)).body.data.attributes.sensitive).toBe(true);
    // Saying sensitive: true again is fine.
    expect((await api("PATCH", `/workspaces/${ws}/vars/${id}`, { body: { data: { type: "vars", attributes: { sensitive: true } } } })).status).toBe(200);
  });

  it("hides the value once a variable is made sensitive", async () => {
    const { id: ws } = await workspace();
    const plain = `p-${crypto.randomUUID()}`;
    const id = (await create(ws, { key: key(), value: plain })).body.data.id;
    const res = await api("PATCH", `/workspaces/${ws}/vars/${id}`, { body: { data: { type: "vars", attributes: { sensitive: true } } } });
    expect(res.body.data.attributes).toMatchObject({ sensitive: true, value: null });
    expectRedacted(await api("GET", `/workspaces/${ws}/vars`), plain);
  });

  it("stores no value in plaintext, and logs none", async () => {
    const { id: ws } = await workspace();
    const secret = `at-rest-${crypto.randomUUID()}`;
    const plain = `plain-${crypto.randomUUID()}`;
    const logged: string[] = [];
    const spy = vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void logged.push(args.map(String).join(" ")));
    try {
      await create(ws, { key: key(), value: secret, sensitive: true });
      await create(ws, { key: key(), value: plain });
    } finally {
      spy.mockRestore();
    }
    expect(logged.join("\n")).not.toContain(secret);
    expect(logged.join("\n")).not.toContain(plain);
    const rows = await runInDurableObject(env.WORKSPACES.getByName(ws), async (_i, state) => state.storage.sql.exec("SELECT * FROM variables").toArray());
    expect(rows).toHaveLength(2);
    const dump = JSON.stringify(rows);
    expect(dump).not.toContain(secret);
    expect(dump).not.toContain(plain);
    for (const r of rows) expect(String(r.value)).toMatch(/^v1\./);
    // The plain one still reads back (decrypted for the response).
    const list = await api("GET", `/workspaces/${ws}/vars`);
    expect(list.body.data.map((v: { attributes: { value: string | null } }) => v.attributes.value)).toEqual([null, plain]);
  });
});

describe("workspace variables: concurrency", () => {
  it("20 concurrent creates of one key give exactly one 201 and nineteen 422", async () => {
    const { id: ws } = await workspace();
    const k = key();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => create(ws, { key: k, value: String(i) })));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, ...Array(19).fill(422)]);
    for (const r of results.filter((r) => r.status === 422)) expect(r.body.errors[0].detail).toBe("Key has already been taken");
    const list = await api("GET", `/workspaces/${ws}/vars`);
    expect(list.body.data).toHaveLength(1);
    expect((await api("GET", `/workspaces/${ws}`)).body.data.relationships.vars.data).toHaveLength(1);
  });
});

describe("workspace variables: permissions (team access `variables`)", () => {
  it("none hides them, read reads, write writes; the flags say the same", async () => {
    const org = await createOrg();
    const ws = (await createWorkspace(org)).id;
    const v = (await create(ws, { key: key(), value: "x" })).body.data.id;
    const teams: Record<string, string> = {};
    for (const [name, perms] of [
      ["none", { variables: "none" }],
      ["read", { variables: "read" }],
      ["write", { variables: "write" }],
    ] as const) {
      const t = await makeTeam(org);
      await grantWorkspace(t.id, ws, "custom", { runs: "read", ...perms });
      teams[name] = t.token;
    }
    const want = { none: [404, 404, 404, false, false], read: [200, 200, 404, true, false], write: [200, 200, 201, true, true] } as const;
    for (const [who, [list, show, post, canRead, canUpdate]] of Object.entries(want)) {
      const token = teams[who];
      expect((await api("GET", `/workspaces/${ws}/vars`, { token })).status, who).toBe(list);
      expect((await api("GET", `/workspaces/${ws}/vars/${v}`, { token })).status, who).toBe(show);
      expect((await create(ws, { key: key() }, token)).status, who).toBe(post);
      const flags = (await api("GET", `/workspaces/${ws}`, { token })).body.data.attributes.permissions;
      expect([flags["can-read-variable"], flags["can-update-variable"]], who).toEqual([canRead, canUpdate]);
    }
    // Without read, the workspace's vars relationship lists nothing.
    expect((await api("GET", `/workspaces/${ws}`, { token: teams.none })).body.data.relationships.vars.data).toEqual([]);
    expect((await api("GET", `/workspaces/${ws}`, { token: teams.read })).body.data.relationships.vars.data.length).toBeGreaterThan(0);
    const patch = { data: { type: "vars", attributes: { value: "y" } } };
    expect((await api("PATCH", `/workspaces/${ws}/vars/${v}`, { token: teams.read, body: patch })).status).toBe(404);
    expect((await api("DELETE", `/workspaces/${ws}/vars/${v}`, { token: teams.read })).status).toBe(404);
    expect((await api("PATCH", `/workspaces/${ws}/vars/${v}`, { token: teams.write, body: patch })).status).toBe(200);
  });

  it("a deleted workspace takes its variables with it", async () => {
    const { id: ws } = await workspace();
    await create(ws, { key: key(), value: "x" });
    expect((await api("DELETE", `/workspaces/${ws}`)).status).toBe(204);
    expect((await api("GET", `/workspaces/${ws}/vars`)).status).toBe(404);
    const stub = env.WORKSPACES.getByName(ws);
    const rows = await runInDurableObject(stub, async (_i, state) => state.storage.sql.exec("SELECT count(*) AS n FROM variables").one().n);
    expect(rows).toBe(0);
  });
});
