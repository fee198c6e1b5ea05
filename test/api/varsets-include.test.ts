// `include=workspaces`, `projects` and `vars` on variable-set reads (go-tfe's VariableSetReadOptions and
// VariableSetListOptions; the tfe provider reads sets with include=workspaces): the resources the set's
// relationships name, each as its own endpoint shows it to the caller, and only those the caller may read.
import { describe, expect, it } from "vitest";
import { api, uniqueName, type ApiResponse } from "../helpers";
import { createOrg, createWorkspace } from "../fixtures";
import { grantProject, grantWorkspace, makeTeam } from "../fixtures";

const setBody = (relationships?: unknown) => ({
  data: { type: "varsets", attributes: { name: uniqueName("vs"), global: false }, ...(relationships ? { relationships } : {}) },
});
async function newSet(org: string, relationships?: unknown): Promise<string> {
  const res = await api("POST", `/organizations/${org}/varsets`, { body: setBody(relationships) });
  expect(res.status).toBe(201);
  return res.body.data.id;
}
async function project(org: string): Promise<string> {
  const res = await api("POST", `/organizations/${org}/projects`, { body: { data: { type: "projects", attributes: { name: uniqueName("p") } } } });
  expect(res.status).toBe(201);
  return res.body.data.id;
}
const inProject = (id: string) => ({ project: { data: { type: "projects", id } } });
const apply = (set: string, kind: "workspaces" | "projects", ids: string[]) =>
  api("POST", `/varsets/${set}/relationships/${kind}`, { body: { data: ids.map((id) => ({ type: kind, id })) } });
const of = (res: ApiResponse, type: string) =>
  ((res.body.included ?? []) as Array<{ type: string; id: string }>).filter((r) => r.type === type).sort((a, b) => a.id.localeCompare(b.id));
const idsOf = (res: ApiResponse, type: string) => of(res, type).map((r) => r.id);
const sorted = (xs: string[]) => [...xs].sort();

describe("include on variable-set reads", () => {
  it("includes the set's workspaces and projects as their own endpoints show them, on every read", async () => {
    const org = await createOrg();
    const p = await project(org);
    const w1 = await createWorkspace(org, {}, undefined, inProject(p));
    const w2 = await createWorkspace(org);
    const set = await newSet(org);
    expect((await apply(set, "workspaces", [w1.id, w2.id])).status).toBe(204);
    expect((await apply(set, "projects", [p])).status).toBe(204);
    const v = (
      await api("POST", `/varsets/${set}/relationships/vars`, { body: { data: { type: "vars", attributes: { key: "k", value: "v", category: "env" } } } })
    ).body.data.id;

    const shown = await api("GET", `/varsets/${set}?include=workspaces,projects,vars`);
    expect(shown.status).toBe(200);
    expect(sorted(idsOf(shown, "workspaces"))).toEqual(sorted([w1.id, w2.id]));
    expect(idsOf(shown, "projects")).toEqual([p]);
    expect(idsOf(shown, "vars")).toEqual([v]);
    // Each as its own endpoint shows it.
    expect(of(shown, "workspaces").find((w) => w.id === w1.id)).toEqual((await api("GET", `/workspaces/${w1.id}`)).body.data);
    expect(of(shown, "projects")[0]).toEqual((await api("GET", `/projects/${p}`)).body.data);
    // Only what was asked for.
    const justWs = await api("GET", `/varsets/${set}?include=workspaces`);
    expect(justWs.body.included.every((r: { type: string }) => r.type === "workspaces")).toBe(true);
    expect((await api("GET", `/varsets/${set}`)).body.included).toBeUndefined();

    // The organisation's list, the project's list and the workspace's list include them too.
    for (const path of [`/organizations/${org}/varsets`, `/projects/${p}/varsets`, `/workspaces/${w1.id}/varsets`]) {
      const res = await api("GET", `${path}?include=workspaces,projects`);
      expect(res.status, path).toBe(200);
      expect(sorted(idsOf(res, "workspaces")), path).toEqual(sorted([w1.id, w2.id]));
      expect(idsOf(res, "projects"), path).toEqual([p]);
    }
    // PATCH answers with the same includes.
    const patched = await api("PATCH", `/varsets/${set}?include=projects`, { body: { data: { type: "varsets", attributes: { description: "d" } } } });
    expect(patched.status).toBe(200);
    expect(idsOf(patched, "projects")).toEqual([p]);
  });

  it("includes only what the caller may see: nothing to a reader who sees the set through one workspace", async () => {
    const org = await createOrg();
    const w1 = await createWorkspace(org);
    const w2 = await createWorkspace(org);
    const set = await newSet(org);
    expect((await apply(set, "workspaces", [w1.id, w2.id])).status).toBe(204);
    const wsTeam = await makeTeam(org);
    await grantWorkspace(wsTeam.id, w1.id, "read");
    const res = await api("GET", `/workspaces/${w1.id}/varsets?include=workspaces,projects`, { token: wsTeam.token });
    expect(res.status).toBe(200);
    // The set's other workspaces are not theirs to see: counted, not named, not included.
    expect(res.body.data[0].relationships.workspaces).toEqual({ meta: { count: 2 } });
    expect(res.body.included).toBeUndefined();
    expect(res.text).not.toContain(w2.id);
  });

  it("a project's set reader gets the set's workspaces they may read, not one that moved out of the project", async () => {
    const org = await createOrg();
    const p = await project(org);
    const stays = await createWorkspace(org, {}, undefined, inProject(p));
    const leaves = await createWorkspace(org, {}, undefined, inProject(p));
    const set = await newSet(org, { parent: { data: { type: "projects", id: p } } });
    expect((await apply(set, "workspaces", [stays.id, leaves.id])).status).toBe(204);
    const home = (await api("GET", `/organizations/${org}`)).body.data.relationships["default-project"].data.id;
    expect((await api("PATCH", `/workspaces/${leaves.id}`, { body: { data: { type: "workspaces", relationships: inProject(home) } } })).status).toBe(200);

    const team = await makeTeam(org);
    await grantProject(team.id, p, "custom", { "project-access": { "variable-sets": "read" } });
    const res = await api("GET", `/varsets/${set}?include=workspaces`, { token: team.token });
    expect(res.status).toBe(200);
    expect(idsOf(res, "workspaces")).toEqual([stays.id]);
    expect((await api("GET", `/workspaces/${leaves.id}`, { token: team.token })).status).toBe(404);
  });
});

describe("include=vars on a page of sets", () => {
  const addVar = (set: string, key: string) =>
    api("POST", `/varsets/${set}/relationships/vars`, { body: { data: { type: "vars", attributes: { key, value: "v", category: "env" } } } });

  it("reads every set's variables in the same round trips, whatever the number of sets", async () => {
    const one = await createOrg();
    const s1 = await newSet(one);
    await addVar(s1, "a");
    const many = await createOrg();
    const sets = [await newSet(many), await newSet(many), await newSet(many)];
    for (const [i, s] of sets.entries()) for (const k of ["x", "y"]) expect((await addVar(s, `${k}${i}`)).status).toBe(201);

    const small = await api("GET", `/organizations/${one}/varsets?include=vars`);
    const large = await api("GET", `/organizations/${many}/varsets?include=vars`);
    expect(small.status).toBe(200);
    expect(large.status).toBe(200);
    expect(large.headers.get("X-Hops")).toBe(small.headers.get("X-Hops"));
    // Every set's variables, each as its own relationship lists them.
    const listed = large.body.data.flatMap((s: { relationships: { vars: { data: Array<{ id: string }> } } }) => s.relationships.vars.data.map((v) => v.id));
    expect(sorted(idsOf(large, "vars"))).toEqual(sorted(listed));
    expect(idsOf(large, "vars")).toHaveLength(6);
  });
});
