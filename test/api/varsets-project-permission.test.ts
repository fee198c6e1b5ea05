// The project permission over variable sets (team project access `project-access.variable-sets`: none, read, write;
// the admin role implies write): a team reads or manages the sets its project owns, and nothing else by it.
// Organisation-owned sets stay governed by the organisation permissions (read-workspaces, manage-workspaces).
import { describe, expect, it } from "vitest";
import { api, uniqueName } from "../helpers";
import { createOrg, createWorkspace } from "../fixtures";
import { makeTeam } from "../fixtures";

const setBody = (relationships?: unknown) => ({
  data: { type: "varsets", attributes: { name: uniqueName("vs"), global: false }, ...(relationships ? { relationships } : {}) },
});
const varBody = (key: string) => ({ data: { type: "vars", attributes: { key, value: "v", category: "terraform" } } });
const owned = (project: string) => ({ parent: { data: { type: "projects", id: project } } });

async function project(org: string): Promise<string> {
  const res = await api("POST", `/organizations/${org}/projects`, { body: { data: { type: "projects", attributes: { name: uniqueName("p") } } } });
  expect(res.status).toBe(201);
  return res.body.data.id;
}

/** A team with access to the project through POST /team-projects, as a client grants it; its token and the access. */
async function teamOn(org: string, projectId: string, access: string, projectAccess?: Record<string, string>) {
  const team = await makeTeam(org);
  const res = await api("POST", "/team-projects", {
    body: {
      data: {
        type: "team-projects",
        attributes: { access, ...(projectAccess ? { "project-access": projectAccess } : {}) },
        relationships: { team: { data: { type: "teams", id: team.id } }, project: { data: { type: "projects", id: projectId } } },
      },
    },
  });
  expect(res.status).toBe(201);
  return { token: team.token, access: res.body.data };
}

async function newSet(org: string, relationships?: unknown): Promise<string> {
  const res = await api("POST", `/organizations/${org}/varsets`, { body: setBody(relationships) });
  expect(res.status).toBe(201);
  return res.body.data.id;
}

describe("project variable-sets permission", () => {
  it("shows in team project access: admin implies write, other roles and custom default to none", async () => {
    const org = await createOrg();
    const p = await project(org);
    const levels: Array<[string, Record<string, string> | undefined, string]> = [
      ["admin", undefined, "write"],
      ["maintain", undefined, "none"],
      ["read", undefined, "none"],
      ["custom", undefined, "none"],
      ["custom", { "variable-sets": "read" }, "read"],
    ];
    for (const [access, given, want] of levels) {
      const { access: tp } = await teamOn(org, p, access, given);
      expect(tp.attributes["project-access"]["variable-sets"]).toBe(want);
      expect((await api("GET", `/team-projects/${tp.id}`)).body.data.attributes["project-access"]["variable-sets"]).toBe(want);
    }
  });

  it("read reads the project's own sets and their variables; none, maintain and another project's grant see nothing", async () => {
    const org = await createOrg();
    const p = await project(org);
    const q = await project(org);
    const set = await newSet(org, owned(p));
    const v = (await api("POST", `/varsets/${set}/relationships/vars`, { body: varBody("k1") })).body.data.id;
    const orgSet = await newSet(org);
    const reader = await teamOn(org, p, "custom", { "variable-sets": "read" });

    expect((await api("GET", `/varsets/${set}`, { token: reader.token })).status).toBe(200);
    expect((await api("GET", `/varsets/${set}?include=vars`, { token: reader.token })).body.included.map((r: { id: string }) => r.id)).toEqual([v]);
    expect((await api("GET", `/varsets/${set}/relationships/vars`, { token: reader.token })).status).toBe(200);
    expect((await api("GET", `/varsets/${set}/relationships/vars/${v}`, { token: reader.token })).status).toBe(200);
    // Reading is not writing: refused (404) and nothing changes.
    const patch = { data: { type: "varsets", attributes: { description: "changed" } } };
    expect((await api("PATCH", `/varsets/${set}`, { token: reader.token, body: patch })).status).toBe(404);
    expect((await api("POST", `/varsets/${set}/relationships/vars`, { token: reader.token, body: varBody("k2") })).status).toBe(404);
    expect((await api("DELETE", `/varsets/${set}`, { token: reader.token })).status).toBe(404);
    expect((await api("POST", `/organizations/${org}/varsets`, { token: reader.token, body: setBody(owned(p)) })).status).toBe(404);
    const after = await api("GET", `/varsets/${set}`);
    expect(after.body.data.attributes).toMatchObject({ description: "", "var-count": 1 });
    // The organisation's own sets are not the project's.
    expect((await api("GET", `/varsets/${orgSet}`, { token: reader.token })).status).toBe(404);

    for (const other of [
      await teamOn(org, p, "custom"),
      await teamOn(org, p, "custom", { "variable-sets": "none" }),
      await teamOn(org, p, "maintain"),
      await teamOn(org, q, "custom", { "variable-sets": "write" }),
    ]) {
      const res = await api("GET", `/varsets/${set}`, { token: other.token });
      expect(res.status).toBe(404);
      expect(res.body.errors[0].status).toBe("404");
      expect((await api("GET", `/varsets/${set}/relationships/vars`, { token: other.token })).status).toBe(404);
    }
  });

  it("write (and the admin role) creates, changes, applies and deletes the project's own sets, no others", async () => {
    const org = await createOrg();
    const p = await project(org);
    const q = await project(org);
    const wsInP = (await createWorkspace(org, {}, undefined, { project: { data: { type: "projects", id: p } } })).id;
    const orgSet = await newSet(org);

    for (const writer of [await teamOn(org, p, "custom", { "variable-sets": "write" }), await teamOn(org, p, "admin")]) {
      const token = writer.token;
      const created = await api("POST", `/organizations/${org}/varsets`, { token, body: setBody(owned(p)) });
      expect(created.status).toBe(201);
      const set = created.body.data.id;
      expect(created.body.data.relationships.parent.data).toEqual({ id: p, type: "projects" });

      const patched = await api("PATCH", `/varsets/${set}`, { token, body: { data: { type: "varsets", attributes: { description: "mine" } } } });
      expect(patched.status).toBe(200);
      const v = await api("POST", `/varsets/${set}/relationships/vars`, { token, body: varBody("k1") });
      expect(v.status).toBe(201);
      expect(
        (await api("PATCH", `/varsets/${set}/relationships/vars/${v.body.data.id}`, { token, body: { data: { type: "vars", attributes: { value: "w" } } } }))
          .status,
      ).toBe(200);
      expect((await api("POST", `/varsets/${set}/relationships/workspaces`, { token, body: { data: [{ type: "workspaces", id: wsInP }] } })).status).toBe(204);
      expect((await api("POST", `/varsets/${set}/relationships/projects`, { token, body: { data: [{ type: "projects", id: p }] } })).status).toBe(204);
      const shown = await api("GET", `/varsets/${set}`);
      expect(shown.body.data.attributes).toMatchObject({ description: "mine", "var-count": 1, "workspace-count": 1, "project-count": 1 });
      expect((await api("DELETE", `/varsets/${set}/relationships/vars/${v.body.data.id}`, { token })).status).toBe(204);
      expect((await api("DELETE", `/varsets/${set}`, { token })).status).toBe(204);
      expect((await api("GET", `/varsets/${set}`)).status).toBe(404);

      // Not another project's sets, not the organisation's, not a set owned by the organisation.
      expect((await api("POST", `/organizations/${org}/varsets`, { token, body: setBody(owned(q)) })).status).toBe(404);
      expect((await api("POST", `/organizations/${org}/varsets`, { token, body: setBody() })).status).toBe(404);
      expect((await api("PATCH", `/varsets/${orgSet}`, { token, body: { data: { type: "varsets", attributes: { description: "x" } } } })).status).toBe(404);
      expect((await api("DELETE", `/varsets/${orgSet}`, { token })).status).toBe(404);
    }
    expect((await api("GET", `/varsets/${orgSet}`)).body.data.attributes.description).toBe("");
  });
});
