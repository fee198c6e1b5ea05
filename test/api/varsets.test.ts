// Variable sets over HTTP: the sets, their variables (sensitive values never shown, sealed at rest),
// applying them to workspaces and projects, the lists by workspace and project, all-vars precedence,
// cascades of deletes, and the organisation permissions that govern them.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createOrg, createWorkspace, grantWorkspace, makeTeam, makeUser } from "../fixtures";
import { api, type ApiResponse, uniqueName } from "../helpers";

const setBody = (attributes: Record<string, unknown> = {}, relationships?: unknown) => ({
  data: { type: "varsets", attributes: { name: uniqueName("vs"), global: false, ...attributes }, ...(relationships ? { relationships } : {}) },
});
const varBody = (attributes: Record<string, unknown>) => ({ data: { type: "vars", attributes: { category: "terraform", ...attributes } } });
const key = () => uniqueName("k").replace(/[^A-Za-z0-9_]/g, "_");

async function newSet(org: string, attributes: Record<string, unknown> = {}, relationships?: unknown) {
  const res = await api("POST", `/organizations/${org}/varsets`, { body: setBody(attributes, relationships) });
  if (res.status !== 201) throw new Error(`varset: ${res.status} ${res.text}`);
  return res.body.data as { id: string; attributes: Record<string, unknown>; relationships: Record<string, any> };
}
const setVar = (set: string, attributes: Record<string, unknown>) => api("POST", `/varsets/${set}/relationships/vars`, { body: varBody(attributes) });
const project = async (org: string) => {
  const res = await api("POST", `/organizations/${org}/projects`, { body: { data: { type: "projects", attributes: { name: uniqueName("p") } } } });
  return res.body.data.id as string;
};
const apply = (set: string, kind: "workspaces" | "projects", ids: string[], method = "POST") =>
  api(method, `/varsets/${set}/relationships/${kind}`, { body: { data: ids.map((id) => ({ type: kind, id })) } });

/** Every response that carries a variable shows a sensitive one's value as null and never the secret. */
function expectRedacted(res: ApiResponse, secret: string): void {
  const all = [...(Array.isArray(res.body?.data) ? res.body.data : [res.body?.data]), ...(res.body?.included ?? [])].filter(Boolean);
  for (const r of all) if (r.type === "vars" && r.attributes.sensitive) expect(r.attributes.value).toBeNull();
  expect(res.text).not.toContain(secret);
}

describe("variable sets: CRUD", () => {
  it("creates, shows, lists, updates and deletes a set", async () => {
    const org = await createOrg();
    const created = await api("POST", `/organizations/${org}/varsets`, { body: setBody({ name: "creds", description: "cloud creds", priority: true }) });
    expect(created.status).toBe(201);
    const s = created.body.data;
    expect(s.id).toMatch(/^varset-/);
    expect(s.attributes).toMatchObject({ name: "creds", description: "cloud creds", global: false, priority: true });
    expect(s.relationships.organization.data).toEqual({ id: org, type: "organizations" });
    expect(s.relationships.parent.data).toEqual({ id: org, type: "organizations" });
    expect(s.relationships.workspaces.data).toEqual([]);
    expect((await api("GET", `/varsets/${s.id}`)).body.data).toEqual(s);

    const dup = await api("POST", `/organizations/${org}/varsets`, { body: setBody({ name: "creds" }) });
    expect(dup.status).toBe(422);
    expect(dup.body.errors[0]).toMatchObject({ detail: "Name has already been taken", source: { pointer: "/data/attributes/name" } });

    await newSet(org, { name: "other" });
    const list = await api("GET", `/organizations/${org}/varsets`);
    expect(list.body.meta.pagination["total-count"]).toBe(2);
    const q = await api("GET", `/organizations/${org}/varsets?q=RED`);
    expect(q.body.data.map((d: { id: string }) => d.id)).toEqual([s.id]);
    const far = await api("GET", `/organizations/${org}/varsets?page%5Bnumber%5D=999&page%5Bsize%5D=100`);
    expect(far.body.data).toEqual([]);
    expect(far.body.meta.pagination).toMatchObject({ "current-page": 999, "total-count": 2 });

    const patchBody = { data: { type: "varsets", attributes: { name: "creds2", global: true, priority: false } } };
    const patched = await api("PATCH", `/varsets/${s.id}`, { body: patchBody });
    expect(patched.status).toBe(200);
    expect(patched.body.data.attributes).toMatchObject({ name: "creds2", global: true, priority: false, description: "cloud creds" });

    expect((await api("DELETE", `/varsets/${s.id}`)).status).toBe(204);
    expect((await api("GET", `/varsets/${s.id}`)).status).toBe(404);
    expect((await api("DELETE", `/varsets/${s.id}`)).status).toBe(404);
  });

  it("answers 404 for unknown and malformed ids and for another organisation's set", async () => {
    const org = await createOrg();
    const s = await newSet(org);
    expect((await api("GET", "/varsets/nonexisting")).status).toBe(404);
    expect((await api("GET", "/varsets/varset-doesnotexist1")).status).toBe(404);
    const stranger = await makeUser({ ownerOf: await createOrg() });
    for (const [method, path, body] of [
      ["GET", `/varsets/${s.id}`],
      ["PATCH", `/varsets/${s.id}`, { data: { type: "varsets", attributes: { name: "x" } } }],
      ["DELETE", `/varsets/${s.id}`],
      ["GET", `/varsets/${s.id}/relationships/vars`],
      ["POST", `/varsets/${s.id}/relationships/vars`, varBody({ key: "a" })],
      ["GET", `/organizations/${org}/varsets`],
    ] as const) {
      expect((await api(method, path, { token: stranger.token, body })).status, `${method} ${path}`).toBe(404);
    }
  });

  it("refuses bad input with 4xx JSON:API errors and pointers", async () => {
    const org = await createOrg();
    const cases: Array<[unknown, string]> = [
      [{ data: { type: "varsets", attributes: { name: "", global: false } } }, "/data/attributes/name"],
      [{ data: { type: "varsets", attributes: { name: "n", global: "yes" } } }, "/data/attributes/global"],
      [{ data: { type: "varsets", attributes: { name: "n".repeat(129) } } }, "/data/attributes/name"],
      [setBody({}, { parent: { data: { type: "projects", id: "prj-nope12345" } } }), "/data/relationships/parent/data/id"],
      [setBody({}, { parent: { data: { type: "organizations", id: "someone-else" } } }), "/data/relationships/parent/data/id"],
      [setBody({}, { workspaces: { data: [{ type: "workspaces", id: "ws-nope1234567" }] } }), "/data/relationships/workspaces/data/0/id"],
    ];
    for (const [body, pointer] of cases) {
      const res = await api("POST", `/organizations/${org}/varsets`, { body });
      expect(res.status, pointer).toBe(422);
      expect(res.body.errors[0].source.pointer).toBe(pointer);
    }
  });
});

describe("variable sets: their variables", () => {
  it("creates, lists, shows, updates and deletes variables, with one key per category", async () => {
    const org = await createOrg();
    const s = await newSet(org);
    const k = key();
    const created = await setVar(s.id, { key: k, value: "v1", description: "d" });
    expect(created.status).toBe(201);
    const v = created.body.data;
    expect(v.attributes).toMatchObject({ key: k, value: "v1", description: "d", category: "terraform", sensitive: false, hcl: false });
    expect(v.relationships.varset.data).toEqual({ id: s.id, type: "varsets" });
    expect(v.links.self).toBe(`/api/v2/varsets/${s.id}/relationships/vars/${v.id}`);
    expect((await api("GET", `/varsets/${s.id}/relationships/vars`)).body.data).toEqual([v]);
    expect((await api("GET", `/varsets/${s.id}/relationships/vars/${v.id}`)).body.data).toEqual(v);
    expect((await api("GET", `/varsets/${s.id}`)).body.data.relationships.vars.data).toEqual([{ id: v.id, type: "vars" }]);

    const clash = await setVar(s.id, { key: k });
    expect(clash.status).toBe(422);
    const taken = { status: "422", title: "invalid attribute", detail: "Key has already been taken", source: { pointer: "/data/attributes/key" } };
    expect(clash.body.errors[0]).toEqual(taken);
    expect((await setVar(s.id, { key: k, category: "env" })).status).toBe(201);

    const patched = await api("PATCH", `/varsets/${s.id}/relationships/vars/${v.id}`, { body: { data: { type: "vars", attributes: { value: "v2" } } } });
    expect(patched.body.data.attributes.value).toBe("v2");
    // Every write gets a new version id (go-tfe compares them), and a read shows the latest.
    const versions = [v.attributes["version-id"], patched.body.data.attributes["version-id"]];
    expect(versions).toEqual([expect.stringMatching(/^[0-9a-f]{40}$/), expect.stringMatching(/^[0-9a-f]{40}$/)]);
    expect(new Set(versions).size).toBe(2);
    expect((await api("GET", `/varsets/${s.id}/relationships/vars/${v.id}`)).body.data.attributes["version-id"]).toBe(versions[1]);
    expect((await api("DELETE", `/varsets/${s.id}/relationships/vars/${v.id}`)).status).toBe(204);
    expect((await api("GET", `/varsets/${s.id}/relationships/vars/${v.id}`)).status).toBe(404);
    expect((await api("DELETE", `/varsets/${s.id}/relationships/vars/nonexisting`)).status).toBe(404);
  });

  it("refuses a wrong category, an over-long value and a bad key with pointers", async () => {
    const org = await createOrg();
    const s = await newSet(org);
    for (const [attributes, pointer] of [
      [{ key: "a", category: "nope" }, "/data/attributes/category"],
      [{ key: "a", value: "x".repeat(256 * 1024 + 1) }, "/data/attributes/value"],
      [{ key: "a b" }, "/data/attributes/key"],
    ] as const) {
      const res = await setVar(s.id, attributes);
      expect(res.status).toBe(422);
      expect(res.body.errors[0].source.pointer).toBe(pointer);
    }
  });

  it("never shows a sensitive value, keeps it sensitive, and stores no plaintext", async () => {
    const org = await createOrg();
    const ws = (await createWorkspace(org)).id;
    const s = await newSet(org);
    await apply(s.id, "workspaces", [ws]);
    const secret = `vs-secret-${crypto.randomUUID()}`;
    const plain = `vs-plain-${crypto.randomUUID()}`;
    const created = await setVar(s.id, { key: key(), value: secret, sensitive: true });
    expect(created.body.data.attributes).toMatchObject({ sensitive: true, value: null });
    expectRedacted(created, secret);
    const id = created.body.data.id;
    await setVar(s.id, { key: key(), value: plain });
    for (const path of [
      `/varsets/${s.id}/relationships/vars`,
      `/varsets/${s.id}/relationships/vars/${id}`,
      `/varsets/${s.id}?include=vars`,
      `/organizations/${org}/varsets?include=vars`,
      `/workspaces/${ws}/varsets?include=vars`,
      `/workspaces/${ws}/all-vars`,
    ]) {
      const res = await api("GET", path);
      expect(res.status, path).toBe(200);
      expectRedacted(res, secret);
    }
    const patched = await api("PATCH", `/varsets/${s.id}/relationships/vars/${id}`, { body: { data: { type: "vars", attributes: { value: `${secret}-2` } } } });
    expectRedacted(patched, secret);
    const back = await api("PATCH", `/varsets/${s.id}/relationships/vars/${id}`, { body: { data: { type: "vars", attributes: { sensitive: false } } } });
    expect(back.status).toBe(422);
    expect(back.body.errors[0].source.pointer).toBe("/data/attributes/sensitive");

    const rows = await env.DB.prepare("SELECT * FROM varset_vars WHERE varset_id = ?").bind(s.id).all();
    expect(rows.results).toHaveLength(2);
    const dump = JSON.stringify(rows.results);
    expect(dump).not.toContain(secret);
    expect(dump).not.toContain(plain);
  });
});

describe("variable sets: where they apply", () => {
  it("applies to and removes from workspaces and projects, and lists sets by workspace and project", async () => {
    const org = await createOrg();
    const prj = await project(org);
    const ws1 = (await createWorkspace(org)).id;
    const ws2 = (await createWorkspace(org, {}, undefined, { project: { data: { type: "projects", id: prj } } })).id;
    const direct = await newSet(org, { name: "a-direct" });
    const viaProject = await newSet(org, { name: "b-project" });
    const global = await newSet(org, { name: "c-global", global: true });

    expect((await apply(direct.id, "workspaces", [ws1, ws2])).status).toBe(204);
    expect((await apply(direct.id, "workspaces", [ws1])).status).toBe(204); // idempotent
    const applied = (await api("GET", `/varsets/${direct.id}`)).body.data.relationships.workspaces.data;
    expect(applied.map((w: { id: string }) => w.id).sort()).toEqual([ws1, ws2].sort());
    expect((await apply(viaProject.id, "projects", [prj])).status).toBe(204);
    expect((await api("GET", `/varsets/${viaProject.id}`)).body.data.relationships.projects.data).toEqual([{ id: prj, type: "projects" }]);

    const ids = async (path: string) => (await api("GET", path)).body.data.map((d: { id: string }) => d.id);
    expect(await ids(`/workspaces/${ws1}/varsets`)).toEqual([direct.id, global.id]);
    expect(await ids(`/workspaces/${ws2}/varsets`)).toEqual([direct.id, viaProject.id, global.id]);
    expect(await ids(`/projects/${prj}/varsets`)).toEqual([viaProject.id]);

    expect((await apply(direct.id, "workspaces", [ws1], "DELETE")).status).toBe(204);
    expect(await ids(`/workspaces/${ws1}/varsets`)).toEqual([global.id]);
    expect((await apply(viaProject.id, "projects", [prj], "DELETE")).status).toBe(204);
    expect(await ids(`/projects/${prj}/varsets`)).toEqual([]);
  });

  it("refuses unknown workspaces and projects, another organisation's, and applying a global set", async () => {
    const org = await createOrg();
    const s = await newSet(org);
    const foreignWs = (await createWorkspace(await createOrg())).id;
    const ws = (await createWorkspace(org)).id;
    for (const body of [[ws, "ws-nope1234567"], [foreignWs]]) {
      const res = await apply(s.id, "workspaces", body);
      expect(res.status).toBe(422);
      expect(res.body.errors[0].source.pointer).toBe(`/data/${body.length - 1}/id`);
    }
    expect((await api("GET", `/varsets/${s.id}`)).body.data.relationships.workspaces.data).toEqual([]);
    const prj = await apply(s.id, "projects", ["prj-nope1234567"]);
    expect(prj.status).toBe(422);
    expect(prj.body.errors[0].source.pointer).toBe("/data/0/id");
    const g = await newSet(org, { global: true });
    expect((await apply(g.id, "workspaces", [ws])).status).toBe(422);
    expect((await apply(s.id, "workspaces", [])).status).toBe(422);
  });

  it("replaces a set's workspaces through PATCH relationships.workspaces (go-tfe UpdateWorkspaces)", async () => {
    const org = await createOrg();
    const s = await newSet(org);
    const ws = (await createWorkspace(org)).id;
    const body = (ids: string[]) => ({
      data: { type: "varsets", attributes: { global: false }, relationships: { workspaces: { data: ids.map((id) => ({ type: "workspaces", id })) } } },
    });
    const set = await api("PATCH", `/varsets/${s.id}?include=workspaces`, { body: body([ws]) });
    expect(set.status).toBe(200);
    expect(set.body.data.relationships.workspaces.data).toEqual([{ id: ws, type: "workspaces" }]);
    const cleared = await api("PATCH", `/varsets/${s.id}`, { body: body([]) });
    expect(cleared.body.data.relationships.workspaces.data).toEqual([]);
  });

  it("project-owned sets: parent project, applied only within the project, gone with the project", async () => {
    const org = await createOrg();
    const prj = await project(org);
    const res = await api("POST", `/organizations/${org}/varsets`, { body: setBody({}, { parent: { data: { type: "projects", id: prj } } }) });
    expect(res.status).toBe(201);
    const s = res.body.data;
    expect(s.relationships.parent.data).toEqual({ id: prj, type: "projects" });
    const outside = (await createWorkspace(org)).id;
    const inside = (await createWorkspace(org, {}, undefined, { project: { data: { type: "projects", id: prj } } })).id;
    expect((await apply(s.id, "workspaces", [outside])).status).toBe(422);
    expect((await apply(s.id, "workspaces", [inside])).status).toBe(204);
    const global = await api("PATCH", `/varsets/${s.id}`, { body: { data: { type: "varsets", attributes: { global: true } } } });
    expect(global.status).toBe(422);
    expect(global.body.errors[0].source.pointer).toBe("/data/attributes/global");
    // A project with a workspace cannot be deleted: empty it first.
    expect((await api("DELETE", `/workspaces/${inside}`)).status).toBe(204);
    expect((await api("DELETE", `/projects/${prj}`)).status).toBe(204);
    expect((await api("GET", `/varsets/${s.id}`)).status).toBe(404);
  });
});

describe("variable sets: deletes leave every list", () => {
  it("a deleted workspace or project disappears from every set, and a deleted organisation takes its sets", async () => {
    const org = await createOrg();
    const prj = await project(org);
    const ws = (await createWorkspace(org)).id;
    const a = await newSet(org);
    const b = await newSet(org);
    for (const s of [a, b]) {
      await apply(s.id, "workspaces", [ws]);
      await apply(s.id, "projects", [prj]);
    }
    expect((await api("DELETE", `/workspaces/${ws}`)).status).toBe(204);
    expect((await api("DELETE", `/projects/${prj}`)).status).toBe(204);
    for (const s of [a, b]) {
      const rel = (await api("GET", `/varsets/${s.id}`)).body.data.relationships;
      expect(rel.workspaces.data).toEqual([]);
      expect(rel.projects.data).toEqual([]);
    }
    await setVar(a.id, { key: key(), value: "x" });
    expect((await api("DELETE", `/organizations/${org}`)).status).toBe(204);
    const left = await env.DB.prepare("SELECT (SELECT count(*) FROM varsets WHERE id IN (?, ?)) + (SELECT count(*) FROM varset_vars WHERE varset_id = ?) AS n")
      .bind(a.id, b.id, a.id)
      .first<{ n: number }>();
    expect(left?.n).toBe(0);
    expect((await api("GET", `/varsets/${a.id}`)).status).toBe(404);
  });
});

describe("all-vars: precedence", () => {
  it("priority sets, then the workspace, then sets on the workspace, on its project, global; by set name within a rank", async () => {
    const org = await createOrg();
    const prj = await project(org);
    const ws = (await createWorkspace(org, {}, undefined, { project: { data: { type: "projects", id: prj } } })).id;
    const global = await newSet(org, { name: "z-global", global: true });
    const onProject = await newSet(org, { name: "y-project" });
    await apply(onProject.id, "projects", [prj]);
    const onWsB = await newSet(org, { name: "b-ws" });
    const onWsA = await newSet(org, { name: "a-ws" });
    await apply(onWsB.id, "workspaces", [ws]);
    await apply(onWsA.id, "workspaces", [ws]);
    const prio = await newSet(org, { name: "p-prio", priority: true, global: true });

    await setVar(global.id, { key: "g", value: "global" });
    await setVar(global.id, { key: "p", value: "global" });
    await setVar(onProject.id, { key: "p", value: "project" });
    await setVar(onProject.id, { key: "w", value: "project" });
    await setVar(onWsB.id, { key: "w", value: "ws-b" });
    await setVar(onWsA.id, { key: "w", value: "ws-a" });
    await setVar(onWsA.id, { key: "own", value: "ws-a" });
    await setVar(prio.id, { key: "forced", value: "prio" });
    await setVar(prio.id, { key: "w", value: "prio", category: "env" });
    await api("POST", `/workspaces/${ws}/vars`, { body: varBody({ key: "own", value: "workspace" }) });
    await api("POST", `/workspaces/${ws}/vars`, { body: varBody({ key: "forced", value: "workspace" }) });

    const res = await api("GET", `/workspaces/${ws}/all-vars`);
    expect(res.status).toBe(200);
    type V = { attributes: { key: string; category: string; value: string } };
    const got = Object.fromEntries(res.body.data.map((v: V) => [`${v.attributes.category}:${v.attributes.key}`, v.attributes.value]));
    expect(got).toEqual({
      "terraform:g": "global",
      "terraform:p": "project",
      "terraform:w": "ws-a",
      "terraform:own": "workspace",
      "terraform:forced": "prio",
      "env:w": "prio",
    });
    for (const v of res.body.data) expect(v.type).toBe("vars");
  });
});

describe("variable sets: permissions", () => {
  it("read-workspaces reads, manage-workspaces manages, workspace variable readers see the sets reaching their workspace", async () => {
    const org = await createOrg();
    const ws = (await createWorkspace(org)).id;
    const s = await newSet(org);
    await apply(s.id, "workspaces", [ws]);
    const reader = await makeTeam(org, { "read-workspaces": true });
    const manager = await makeTeam(org, { "manage-workspaces": true });
    const wsTeam = await makeTeam(org);
    await grantWorkspace(wsTeam.id, ws, "read");
    const noVars = await makeTeam(org);
    await grantWorkspace(noVars.id, ws, "custom", { runs: "read", variables: "none" });

    expect((await api("GET", `/varsets/${s.id}`, { token: reader.token })).status).toBe(200);
    expect((await api("GET", `/organizations/${org}/varsets`, { token: reader.token })).status).toBe(200);
    expect((await api("POST", `/organizations/${org}/varsets`, { token: reader.token, body: setBody() })).status).toBe(404);
    expect((await api("POST", `/varsets/${s.id}/relationships/vars`, { token: reader.token, body: varBody({ key: "b" }) })).status).toBe(404);
    expect((await api("GET", `/varsets/${s.id}/relationships/vars`, { token: reader.token })).status).toBe(200);
    expect((await api("POST", `/organizations/${org}/varsets`, { token: manager.token, body: setBody() })).status).toBe(201);
    expect((await api("POST", `/varsets/${s.id}/relationships/vars`, { token: manager.token, body: varBody({ key: "c" }) })).status).toBe(201);

    expect((await api("GET", `/varsets/${s.id}`, { token: wsTeam.token })).status).toBe(404);
    const mine = await api("GET", `/workspaces/${ws}/varsets`, { token: wsTeam.token });
    expect(mine.status).toBe(200);
    expect(mine.body.data.map((d: { id: string }) => d.id)).toEqual([s.id]);
    // Which other workspaces the set reaches is not theirs to see.
    expect(mine.body.data[0].relationships.workspaces).toEqual({ meta: { count: 1 } });
    expect((await api("GET", `/workspaces/${ws}/all-vars`, { token: wsTeam.token })).status).toBe(200);
    expect((await api("GET", `/workspaces/${ws}/varsets`, { token: noVars.token })).status).toBe(404);
    expect((await api("GET", `/workspaces/${ws}/all-vars`, { token: noVars.token })).status).toBe(404);
  });
});
