// Teams, tokens, team access — what a client observes.
import { describe, expect, it } from "vitest";
import { createOrg, createWorkspace, grantProject, grantWorkspace, makeTeam, makeUser } from "../fixtures";
import { api } from "../helpers";

async function team(org: string, attrs: Record<string, unknown> = {}, token?: string) {
  return api("POST", `/organizations/${org}/teams`, {
    token,
    body: { data: { type: "teams", attributes: { name: `t${crypto.randomUUID().slice(0, 8)}`, ...attrs } } },
  });
}
const teamToken = (teamId: string, token?: string) => api("POST", `/teams/${teamId}/authentication-token`, { token });

describe("teams", () => {
  it("creates teams (200, as documented) whose organisation access obeys the dependency rules", async () => {
    const org = await createOrg();
    const res = await team(org, { "organization-access": { "manage-projects": true, "manage-workspaces": true }, visibility: "organization" });
    expect(res.status).toBe(200);
    const oa = res.body.data.attributes["organization-access"];
    // Managing implies reading.
    expect(oa).toMatchObject({ "manage-projects": true, "manage-workspaces": true, "read-workspaces": true, "read-projects": true, "manage-teams": false });
    expect((await api("GET", `/teams/${res.body.data.id}`)).body.data.attributes["organization-access"]).toEqual(oa);
    const violations: Array<[Record<string, boolean>, string]> = [
      [{ "manage-projects": true }, "manage-projects"],
      [{ "manage-projects": true, "manage-workspaces": false }, "manage-workspaces"],
      [{ "read-projects": true }, "read-projects"],
      [{ "manage-workspaces": true, "read-workspaces": false }, "read-workspaces"],
      [{ "manage-teams": true }, "manage-teams"],
      [{ "manage-organization-access": true, "manage-membership": true }, "manage-organization-access"],
      [{ "access-secret-teams": true }, "access-secret-teams"],
    ];
    for (const [access, key] of violations) {
      const bad = await team(org, { "organization-access": access });
      expect({ access, status: bad.status, pointer: bad.body.errors[0].source.pointer }).toEqual({
        access,
        status: 422,
        pointer: `/data/attributes/organization-access/${key}`,
      });
    }
    expect((await team(org, { "organization-access": { "manage-membership": true, "manage-teams": true, "access-secret-teams": true } })).status).toBe(200);
    const dup = await team(org, { name: res.body.data.attributes.name });
    expect(dup.status).toBe(422);
    // PATCH merges with what is stored: dropping manage-workspaces while manage-projects stays is refused.
    const drop = await api("PATCH", `/teams/${res.body.data.id}`, {
      body: { data: { type: "teams", attributes: { "organization-access": { "manage-workspaces": false } } } },
    });
    expect(drop.status).toBe(422);
    const both = await api("PATCH", `/teams/${res.body.data.id}`, {
      body: { data: { type: "teams", attributes: { "organization-access": { "manage-workspaces": false, "manage-projects": false } } } },
    });
    expect(both.body.data.attributes["organization-access"]).toMatchObject({ "manage-workspaces": false, "manage-projects": false, "read-workspaces": true });
  });

  it("splits team rights: manage-teams, manage-membership, manage-organization-access, access-secret-teams", async () => {
    const org = await createOrg();
    const secret = (await team(org)).body.data;
    const target = (await team(org, { visibility: "organization" })).body.data;
    const user = await makeUser();
    const asTeam = async (access: Record<string, boolean>) =>
      (await teamToken((await team(org, { "organization-access": access })).body.data.id)).body.data.attributes.token as string;
    const membership = await asTeam({ "manage-membership": true });
    const teamsMgr = await asTeam({ "manage-membership": true, "manage-teams": true });
    const orgAccessMgr = await asTeam({ "manage-membership": true, "manage-teams": true, "manage-organization-access": true });
    const secrets = await asTeam({ "manage-membership": true, "access-secret-teams": true });
    const users = { data: [{ type: "users", id: user.id }] };
    // manage-membership: members yes, team settings no; secret teams stay hidden.
    expect((await api("POST", `/teams/${target.id}/relationships/users`, { token: membership, body: users })).status).toBe(204);
    expect(
      (await api("PATCH", `/teams/${target.id}`, { token: membership, body: { data: { type: "teams", attributes: { visibility: "secret" } } } })).status,
    ).toBe(404);
    expect((await api("GET", `/teams/${secret.id}`, { token: membership })).status).toBe(404);
    expect((await api("GET", `/teams/${secret.id}`, { token: secrets })).status).toBe(200);
    // manage-teams: settings yes, organisation access no.
    const shown = await api("GET", `/teams/${target.id}`, { token: teamsMgr });
    expect(shown.body.data.attributes.permissions).toMatchObject({
      "can-update-membership": true,
      "can-destroy": true,
      "can-update-organization-access": false,
    });
    expect((await api("PATCH", `/teams/${target.id}`, { token: teamsMgr, body: { data: { type: "teams", attributes: { name: "renamed" } } } })).status).toBe(
      200,
    );
    expect(
      (
        await api("PATCH", `/teams/${target.id}`, {
          token: teamsMgr,
          body: { data: { type: "teams", attributes: { "organization-access": { "read-workspaces": true } } } },
        })
      ).status,
    ).toBe(404);
    expect((await team(org, { "organization-access": { "read-workspaces": true } }, teamsMgr)).status).toBe(404);
    const granted = await api("PATCH", `/teams/${target.id}`, {
      token: orgAccessMgr,
      body: { data: { type: "teams", attributes: { "organization-access": { "read-workspaces": true } } } },
    });
    expect(granted.body.data.attributes["organization-access"]["read-workspaces"]).toBe(true);
  });

  it("shows the members' organisation memberships, and adds members by membership id", async () => {
    const org = await createOrg();
    const t = (await team(org)).body.data;
    const m = await api("POST", `/organizations/${org}/organization-memberships`, {
      body: { data: { type: "organization-memberships", attributes: { email: `${crypto.randomUUID().slice(0, 8)}@x.test` } } },
    });
    const body = { data: [{ type: "organization-memberships", id: m.body.data.id }] };
    expect((await api("POST", `/teams/${t.id}/relationships/organization-memberships`, { body })).status).toBe(204);
    const shown = await api("GET", `/teams/${t.id}?include=organization-memberships,users`);
    expect(shown.body.data.relationships["organization-memberships"].data).toEqual([{ id: m.body.data.id, type: "organization-memberships" }]);
    expect(shown.body.data.relationships.users.data).toEqual([{ id: m.body.data.relationships.user.data.id, type: "users" }]);
    expect(shown.body.included.map((r: { type: string }) => r.type).sort()).toEqual(["organization-memberships", "users"]);
    expect((await api("GET", `/teams/${t.id}?include=workspaces`)).status).toBe(400);
    const other = await createOrg();
    const foreign = await api("POST", `/organizations/${other}/organization-memberships`, {
      body: { data: { type: "organization-memberships", attributes: { email: `${crypto.randomUUID().slice(0, 8)}@x.test` } } },
    });
    expect(
      (
        await api("POST", `/teams/${t.id}/relationships/organization-memberships`, {
          body: { data: [{ type: "organization-memberships", id: foreign.body.data.id }] },
        })
      ).status,
    ).toBe(404);
    expect((await api("DELETE", `/teams/${t.id}/relationships/organization-memberships`, { body })).status).toBe(204);
    expect((await api("GET", `/teams/${t.id}`)).body.data.relationships.users.data).toEqual([]);
  });

  it("keeps the owners team: it cannot be deleted and always has every permission", async () => {
    const org = await createOrg();
    const list = await api("GET", `/organizations/${org}/teams`);
    const owners = list.body.data.find((t: { attributes: { name: string } }) => t.attributes.name === "owners");
    expect(Object.values(owners.attributes["organization-access"]).every((v) => v === true)).toBe(true);
    expect((await api("DELETE", `/teams/${owners.id}`)).status).toBe(422);
    expect((await api("GET", `/teams/${owners.id}`)).status).toBe(200);
  });

  it("adds and removes members", async () => {
    const org = await createOrg();
    const t = (await team(org)).body.data;
    const user = await makeUser();
    expect((await api("POST", `/teams/${t.id}/relationships/users`, { body: { data: [{ type: "users", id: user.id }] } })).status).toBe(204);
    expect((await api("GET", `/teams/${t.id}`)).body.data.relationships.users.data).toEqual([{ id: user.id, type: "users" }]);
    // As a member the user now has standing in the organisation.
    expect((await api("GET", `/organizations/${org}`, { token: user.token })).status).toBe(200);
    expect((await api("DELETE", `/teams/${t.id}/relationships/users`, { body: { data: [{ type: "users", id: user.id }] } })).status).toBe(204);
    expect((await api("GET", `/organizations/${org}`, { token: user.token })).status).toBe(404);
  });
});

describe("team access", () => {
  it("grants a team access to a workspace; custom keys only with access custom; one access per team", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const t = (await team(org)).body.data;
    const body = (attributes: Record<string, unknown>) => ({
      data: {
        type: "team-workspaces",
        attributes,
        relationships: { team: { data: { type: "teams", id: t.id } }, workspace: { data: { type: "workspaces", id: ws.id } } },
      },
    });
    const bad = await api("POST", "/team-workspaces", { body: body({ access: "read", runs: "apply" }) });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].detail).toBe("Runs is read-only when access level is 'read'; use the 'custom' access level to set this attribute.");
    const res = await api("POST", "/team-workspaces", { body: body({ access: "write" }) });
    expect(res.status).toBe(201);
    expect(res.body.data.attributes).toMatchObject({ access: "write", runs: "apply", "workspace-locking": true });
    expect((await api("POST", "/team-workspaces", { body: body({ access: "read" }) })).status).toBe(422);
    const tok = (await teamToken(t.id)).body.data.attributes.token;
    const locked = await api("POST", `/workspaces/${ws.id}/actions/lock`, { token: tok });
    expect(locked.status).toBe(200);
    const custom = await api("PATCH", `/team-workspaces/${res.body.data.id}`, {
      body: { data: { type: "team-workspaces", attributes: { access: "custom", runs: "read", "workspace-locking": false } } },
    });
    expect(custom.body.data.attributes).toMatchObject({ access: "custom", runs: "read", "workspace-locking": false });
    expect((await api("POST", `/workspaces/${ws.id}/actions/unlock`, { token: tok })).status).toBe(404);
    const list = await api("GET", `/team-workspaces?filter%5Bworkspace%5D%5Bid%5D=${ws.id}`);
    expect(list.body.data).toHaveLength(1);
    expect((await api("DELETE", `/team-workspaces/${res.body.data.id}`)).status).toBe(204);
    expect((await api("GET", `/workspaces/${ws.id}`, { token: tok })).status).toBe(404);
  });

  it("project access applies to every workspace of the project", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const project = ws.relationships.project.data.id;
    const t = (await team(org)).body.data;
    const tok = (await teamToken(t.id)).body.data.attributes.token;
    expect((await api("GET", `/workspaces/${ws.id}`, { token: tok })).status).toBe(404);
    const res = await api("POST", "/team-projects", {
      body: {
        data: {
          type: "team-projects",
          attributes: { access: "maintain" },
          relationships: { team: { data: { type: "teams", id: t.id } }, project: { data: { type: "projects", id: project } } },
        },
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.data.attributes["workspace-access"]).toMatchObject({ create: true, locking: true, delete: true, move: false });
    const shown = await api("GET", `/workspaces/${ws.id}`, { token: tok });
    expect(shown.status).toBe(200);
    expect(shown.body.data.attributes.permissions["can-update"]).toBe(true);
    expect((await createWorkspace(org, {}, tok)).id).toMatch(/^ws-/);
  });

  it("moving a workspace between projects needs admin (move) on both projects: 403 otherwise", async () => {
    const org = await createOrg();
    const other = (
      await api("POST", `/organizations/${org}/projects`, { body: { data: { type: "projects", attributes: { name: `p${crypto.randomUUID().slice(0, 8)}` } } } })
    ).body.data.id;
    const move = (wsId: string, token: string) =>
      api("PATCH", `/workspaces/${wsId}`, {
        token,
        body: { data: { type: "workspaces", relationships: { project: { data: { type: "projects", id: other } } } } },
      });
    const ws = await createWorkspace(org);
    const source = ws.relationships.project.data.id;
    const sourceAdmin = await makeTeam(org);
    await grantProject(sourceAdmin.id, source, "admin");
    const wsAdmin = await makeTeam(org);
    await grantWorkspace(wsAdmin.id, ws.id, "admin");
    const reader = await makeTeam(org);
    await grantWorkspace(reader.id, ws.id, "read");
    const manager = await makeTeam(org, { "manage-workspaces": true, "read-workspaces": true });
    const projectsManager = await makeTeam(org, { "manage-workspaces": true, "read-workspaces": true, "manage-projects": true, "read-projects": true });
    const cases: Array<[string, string, number]> = [
      ["reader", reader.token, 404],
      ["workspace admin", wsAdmin.token, 403],
      ["source project admin only", sourceAdmin.token, 403],
      ["manage-workspaces without manage-projects", manager.token, 403],
    ];
    for (const [who, token, status] of cases) {
      const res = await move(ws.id, token);
      expect({ who, status: res.status }).toEqual({ who, status });
      if (status === 403) expect(res.body.errors[0].title).toBe("forbidden");
    }
    expect((await api("GET", `/workspaces/${ws.id}`)).body.data.relationships.project.data.id).toBe(source);
    await grantProject(sourceAdmin.id, other, "admin");
    expect((await move(ws.id, sourceAdmin.token)).status).toBe(200);
    expect((await api("GET", `/workspaces/${ws.id}`)).body.data.relationships.project.data.id).toBe(other);
    const ws2 = await createWorkspace(org);
    expect((await move(ws2.id, projectsManager.token)).status).toBe(200);
  });
});
