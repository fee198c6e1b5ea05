// OAuth clients' projects (the OAuth clients API reference: attach / detach, `relationships.projects` on create and
// update; go-tfe's TestOAuthClientsAddProjects / RemoveProjects): what a client observes in the `projects` relationship
// of show, list and create, refusals that change nothing, and a deleted project leaving the relationship.
import { describe, expect, it } from "vitest";
import { createOrg, makeOrgToken, makeTeam, makeUser } from "../fixtures";
import { api, uniqueName } from "../helpers";

const GITHUB = { "service-provider": "github", "http-url": "https://github.com", "api-url": "https://api.github.com" };
const refs = (ids: string[]) => ({ data: ids.map((id) => ({ type: "projects", id })) });

async function project(org: string): Promise<string> {
  const res = await api("POST", `/organizations/${org}/projects`, { body: { data: { type: "projects", attributes: { name: uniqueName("p").slice(0, 36) } } } });
  expect(res.status).toBe(201);
  return res.body.data.id;
}
async function client(org: string, relationships?: unknown): Promise<any> {
  const res = await api("POST", `/organizations/${org}/oauth-clients`, {
    body: { data: { type: "oauth-clients", attributes: GITHUB, ...(relationships ? { relationships } : {}) } },
  });
  expect(res.status).toBe(201);
  return res.body.data;
}
const attach = (id: string, ids: string[], token?: string) => api("POST", `/oauth-clients/${id}/relationships/projects`, { token, body: refs(ids) });
const detach = (id: string, ids: string[], token?: string) => api("DELETE", `/oauth-clients/${id}/relationships/projects`, { token, body: refs(ids) });
const shownProjects = async (id: string) =>
  ((await api("GET", `/oauth-clients/${id}`)).body.data.relationships.projects.data as Array<{ id: string; type: string }>).map((p) => p.id).sort();

describe("OAuth client projects", () => {
  it("attaches projects (204, no body): show and list carry them; attaching again changes nothing", async () => {
    const org = await createOrg();
    const [p1, p2] = [await project(org), await project(org)];
    const oc = await client(org);
    expect(oc.relationships.projects).toEqual({ data: [] });
    const res = await attach(oc.id, [p1, p2]);
    expect(res.status).toBe(204);
    expect(res.text).toBe("");
    expect(await shownProjects(oc.id)).toEqual([p1, p2].sort());
    const shown = (await api("GET", `/oauth-clients/${oc.id}`)).body.data.relationships.projects.data;
    expect(shown.every((p: any) => p.type === "projects")).toBe(true);
    expect((await attach(oc.id, [p1])).status).toBe(204);
    expect(await shownProjects(oc.id)).toEqual([p1, p2].sort());
    const listed = (await api("GET", `/organizations/${org}/oauth-clients`)).body.data.find((c: any) => c.id === oc.id);
    expect(listed.relationships.projects.data.map((p: any) => p.id).sort()).toEqual([p1, p2].sort());
  });

  it("accepts whole project resources as go-tfe sends them", async () => {
    const org = await createOrg();
    const p = await project(org);
    const full = (await api("GET", `/projects/${p}`)).body.data;
    const oc = await client(org);
    expect((await api("POST", `/oauth-clients/${oc.id}/relationships/projects`, { body: { data: [full] } })).status).toBe(204);
    expect(await shownProjects(oc.id)).toEqual([p]);
  });

  it("detaches projects (204); detaching one that is not attached changes nothing", async () => {
    const org = await createOrg();
    const [p1, p2, p3] = [await project(org), await project(org), await project(org)];
    const oc = await client(org);
    await attach(oc.id, [p1, p2]);
    const res = await detach(oc.id, [p1, p3]);
    expect(res.status).toBe(204);
    expect(await shownProjects(oc.id)).toEqual([p2]);
    expect((await detach(oc.id, [p2])).status).toBe(204);
    expect(await shownProjects(oc.id)).toEqual([]);
  });

  it("refuses projects of another organisation or unknown ones (422 naming the entry) and changes nothing", async () => {
    const org = await createOrg();
    const mine = await project(org);
    const foreign = await project(await createOrg());
    const oc = await client(org);
    for (const send of [attach, detach]) {
      for (const stranger of [foreign, "prj-doesnotexist0000"]) {
        const res = await send(oc.id, [mine, stranger]);
        expect(res.status).toBe(422);
        expect(res.body.errors[0]).toMatchObject({ status: "422", title: "invalid attribute", source: { pointer: "/data/1/id" } });
        expect(res.body.errors[0].detail).toContain(stranger);
      }
      expect(await shownProjects(oc.id)).toEqual([]);
    }
    await attach(oc.id, [mine]);
    expect((await detach(oc.id, [foreign])).status).toBe(422);
    expect(await shownProjects(oc.id)).toEqual([mine]);
  });

  it("refuses an empty list or a wrong type (422), and answers 404 for an unknown client", async () => {
    const org = await createOrg();
    const p = await project(org);
    const oc = await client(org);
    const empty = await api("POST", `/oauth-clients/${oc.id}/relationships/projects`, { body: { data: [] } });
    expect(empty.status).toBe(422);
    expect(empty.body.errors[0].source.pointer).toBe("/data");
    const wrong = await api("POST", `/oauth-clients/${oc.id}/relationships/projects`, { body: { data: [{ type: "workspaces", id: p }] } });
    expect(wrong.status).toBe(422);
    expect(wrong.body.errors[0].source.pointer).toBe("/data/0/type");
    expect(await shownProjects(oc.id)).toEqual([]);
    expect((await attach("oc-doesnotexist00000", [p])).status).toBe(404);
  });

  it("create attaches the organisation's projects from relationships.projects; another organisation's is refused and nothing is created", async () => {
    const org = await createOrg();
    const p = await project(org);
    const foreign = await project(await createOrg());
    const refused = await api("POST", `/organizations/${org}/oauth-clients`, {
      body: { data: { type: "oauth-clients", attributes: GITHUB, relationships: { projects: refs([p, foreign]) } } },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0]).toMatchObject({
      status: "422",
      detail: `Project ${foreign} not found in this organization`,
      source: { pointer: "/data/relationships/projects/data/1/id" },
    });
    expect((await api("GET", `/organizations/${org}/oauth-clients`)).body.data).toEqual([]);
    const oc = await client(org, { projects: refs([p]) });
    expect(oc.relationships.projects.data).toEqual([{ id: p, type: "projects" }]);
    expect(await shownProjects(oc.id)).toEqual([p]);
  });

  it("update replaces the projects with relationships.projects ([] clears); another organisation's project is refused", async () => {
    const org = await createOrg();
    const [p1, p2] = [await project(org), await project(org)];
    const oc = await client(org, { projects: refs([p1]) });
    const patch = (relationships: unknown) =>
      api("PATCH", `/oauth-clients/${oc.id}`, { body: { data: { type: "oauth-clients", attributes: { name: "renamed" }, relationships } } });
    const replaced = await patch({ projects: refs([p2]) });
    expect(replaced.status).toBe(200);
    expect(replaced.body.data.relationships.projects.data).toEqual([{ id: p2, type: "projects" }]);
    const refused = await patch({ projects: refs([p1, await project(await createOrg())]) });
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0].source.pointer).toBe("/data/relationships/projects/data/1/id");
    expect(await shownProjects(oc.id)).toEqual([p2]);
    expect((await patch({ projects: { data: [] } })).body.data.relationships.projects.data).toEqual([]);
    // Without the relationship, the projects stay.
    await attach(oc.id, [p1]);
    expect((await api("PATCH", `/oauth-clients/${oc.id}`, { body: { data: { type: "oauth-clients", attributes: { name: "again" } } } })).status).toBe(200);
    expect(await shownProjects(oc.id)).toEqual([p1]);
  });

  it("a deleted project leaves the relationship", async () => {
    const org = await createOrg();
    const [p1, p2] = [await project(org), await project(org)];
    const oc = await client(org);
    await attach(oc.id, [p1, p2]);
    expect((await api("DELETE", `/projects/${p1}`)).status).toBe(204);
    expect(await shownProjects(oc.id)).toEqual([p2]);
  });

  it("attaching and detaching need manage-vcs-settings (as updating the client); members and outsiders get 404", async () => {
    const org = await createOrg();
    const p = await project(org);
    const oc = await client(org);
    for (const token of [(await makeTeam(org, { "manage-vcs-settings": true })).token, (await makeOrgToken(org)).token]) {
      expect((await attach(oc.id, [p], token)).status).toBe(204);
      expect((await detach(oc.id, [p], token)).status).toBe(204);
    }
    const member = (await makeTeam(org, { "manage-agent-pools": true, "manage-projects": true, "manage-workspaces": true })).token;
    expect((await api("GET", `/oauth-clients/${oc.id}`, { token: member })).status).toBe(200);
    const outsider = (await makeUser({ ownerOf: await createOrg() })).token;
    for (const token of [member, outsider]) {
      expect((await attach(oc.id, [p], token)).status).toBe(404);
      expect((await detach(oc.id, [p], token)).status).toBe(404);
    }
    expect(await shownProjects(oc.id)).toEqual([]);
  });

  it("organization-scoped defaults to true, as the docs say", async () => {
    const org = await createOrg();
    expect((await client(org)).attributes["organization-scoped"]).toBe(true);
    const scoped = await api("POST", `/organizations/${org}/oauth-clients`, {
      body: { data: { type: "oauth-clients", attributes: { ...GITHUB, "organization-scoped": false } } },
    });
    expect(scoped.body.data.attributes["organization-scoped"]).toBe(false);
  });
});
