// Issue 3: teams, tokens, team access — what a client observes.
import { describe, expect, it } from "vitest";
import { api, createOrg, createWorkspace } from "./helpers";
import { makeUser } from "./principals";

async function team(org: string, attrs: Record<string, unknown> = {}, token?: string) {
  return api("POST", `/organizations/${org}/teams`, { token, body: { data: { type: "teams", attributes: { name: `t${crypto.randomUUID().slice(0, 8)}`, ...attrs } } } });
}
const teamToken = (teamId: string, token?: string) => api("POST", `/teams/${teamId}/authentication-token`, { token });

describe("teams", () => {
  it("creates teams with organisation access, applying the dependency rules", async () => {
    const org = await createOrg();
    const res = await team(org, { "organization-access": { "manage-projects": true }, visibility: "organization" });
    expect(res.status).toBe(201);
    const oa = res.body.data.attributes["organization-access"];
    expect(oa["manage-projects"]).toBe(true);
    expect(oa["manage-workspaces"]).toBe(true);
    expect(oa["read-workspaces"]).toBe(true);
    const bad = await team(org, { "organization-access": { "manage-projects": true, "manage-workspaces": false } });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].source.pointer).toBe("/data/attributes/organization-access/manage-workspaces");
    const dup = await team(org, { name: res.body.data.attributes.name });
    expect(dup.status).toBe(422);
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

describe("tokens", () => {
  it("team tokens: secret only at creation, replaced by the next legacy token, 401 once deleted", async () => {
    const org = await createOrg();
    const t = (await team(org, { "organization-access": { "read-workspaces": true } })).body.data;
    const first = await teamToken(t.id);
    expect(first.status).toBe(201);
    const secret = first.body.data.attributes.token;
    expect(secret).toMatch(/\.atlasv1\./);
    expect((await api("GET", `/organizations/${org}/workspaces`, { token: secret })).status).toBe(200);
    const shown = await api("GET", `/teams/${t.id}/authentication-token`);
    expect(shown.body.data.attributes.token).toBeNull();
    const second = await teamToken(t.id);
    expect((await api("GET", `/organizations/${org}/workspaces`, { token: secret })).status).toBe(401);
    const me = await api("GET", "/account/details", { token: second.body.data.attributes.token });
    expect(me.body.data.attributes["is-service-account"]).toBe(true);
    expect(me.body.data.relationships["authenticated-resource"].data).toEqual({ id: t.id, type: "teams" });
    expect((await api("DELETE", `/teams/${t.id}/authentication-token`)).status).toBe(204);
    expect((await api("GET", "/account/details", { token: second.body.data.attributes.token })).status).toBe(401);
  });

  it("described team tokens need a unique description", async () => {
    const org = await createOrg();
    const t = (await team(org)).body.data;
    const body = { data: { type: "authentication-tokens", attributes: { description: "ci" } } };
    expect((await api("POST", `/teams/${t.id}/authentication-tokens`, { body })).status).toBe(201);
    const dup = await api("POST", `/teams/${t.id}/authentication-tokens`, { body });
    expect(dup.status).toBe(422);
    expect(dup.body.errors[0]).toMatchObject({ title: "invalid attributes", detail: "Validation failed: Description has already been taken" });
  });

  it("expired tokens get 401 at once; a past expiry is refused at creation", async () => {
    const org = await createOrg();
    const t = (await team(org)).body.data;
    const past = await api("POST", `/teams/${t.id}/authentication-tokens`, { body: { data: { type: "authentication-tokens", attributes: { "expired-at": "2001-01-01T00:00:00Z" } } } });
    expect(past.status).toBe(422);
    const expired = await makeUser({ ownerOf: org, expiredAt: new Date(Date.now() - 1000).toISOString() });
    expect((await api("GET", `/organizations/${org}`, { token: expired.token })).status).toBe(401);
  });

  it("the organisation token is one per organisation and acts as a service user", async () => {
    const org = await createOrg();
    const a = await api("POST", `/organizations/${org}/authentication-token`);
    const b = await api("POST", `/organizations/${org}/authentication-token`);
    expect(a.status).toBe(201);
    expect((await api("GET", "/account/details", { token: a.body.data.attributes.token })).status).toBe(401);
    const me = await api("GET", "/account/details", { token: b.body.data.attributes.token });
    expect(me.body.data.relationships["authenticated-resource"].data).toEqual({ id: org, type: "organizations" });
    const ws = await createWorkspace(org, {}, b.body.data.attributes.token);
    expect(ws.id).toMatch(/^ws-/);
  });

  it("user tokens: only for yourself", async () => {
    const user = await makeUser();
    const created = await api("POST", `/users/${user.id}/authentication-tokens`, { token: user.token, body: { data: { type: "authentication-tokens", attributes: { description: "laptop" } } } });
    expect(created.status).toBe(201);
    expect((await api("GET", "/account/details", { token: created.body.data.attributes.token })).body.data.id).toBe(user.id);
    expect((await api("POST", `/users/${user.id}/authentication-tokens`)).status).toBe(404); // the site admin is someone else
    expect((await api("DELETE", `/authentication-tokens/${created.body.data.id}`, { token: user.token })).status).toBe(204);
    expect((await api("GET", "/account/details", { token: created.body.data.attributes.token })).status).toBe(401);
  });

  it("site admins create users", async () => {
    const name = `u${crypto.randomUUID().slice(0, 8)}`;
    const res = await api("POST", "/admin/users", { body: { data: { type: "users", attributes: { username: name, email: `${name}@x.test` } } } });
    expect(res.status).toBe(201);
    const user = await makeUser();
    expect((await api("POST", "/admin/users", { token: user.token, body: { data: { type: "users", attributes: { username: "x1", email: "x1@x.test" } } } })).status).toBe(404);
  });
});

describe("team access", () => {
  it("grants a team access to a workspace; custom keys only with access custom; one access per team", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const t = (await team(org)).body.data;
    const body = (attributes: Record<string, unknown>) => ({
      data: { type: "team-workspaces", attributes, relationships: { team: { data: { type: "teams", id: t.id } }, workspace: { data: { type: "workspaces", id: ws.id } } } },
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
    const custom = await api("PATCH", `/team-workspaces/${res.body.data.id}`, { body: { data: { type: "team-workspaces", attributes: { access: "custom", runs: "read", "workspace-locking": false } } } });
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
      body: { data: { type: "team-projects", attributes: { access: "maintain" }, relationships: { team: { data: { type: "teams", id: t.id } }, project: { data: { type: "projects", id: project } } } } },
    });
    expect(res.status).toBe(201);
    expect(res.body.data.attributes["workspace-access"]).toMatchObject({ create: true, locking: true, delete: true, move: false });
    const shown = await api("GET", `/workspaces/${ws.id}`, { token: tok });
    expect(shown.status).toBe(200);
    expect(shown.body.data.attributes.permissions["can-update"]).toBe(true);
    expect((await createWorkspace(org, {}, tok)).id).toMatch(/^ws-/);
  });
});
