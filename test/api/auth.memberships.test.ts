// Organisation memberships (invite by email, filters, includes) and team membership.
import { describe, expect, it } from "vitest";
import { createOrg, makeTeam, makeUser } from "../fixtures";
import { api } from "../helpers";

const invite = (org: string, email: string, extra: Record<string, unknown> = {}, token?: string) =>
  api("POST", `/organizations/${org}/organization-memberships`, {
    token,
    body: { data: { type: "organization-memberships", attributes: { email }, ...extra } },
  });
const email = () => `${crypto.randomUUID().slice(0, 10)}@example.test`;

describe("organisation memberships", () => {
  it("invites by email, naming the user who proved the address, else an account of the invitation's own", async () => {
    const org = await createOrg();
    const other = await createOrg();
    const address = email();
    const res = await invite(org, address);
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ type: "organization-memberships", attributes: { status: "invited", email: address } });
    const userId = res.body.data.relationships.user.data.id;
    expect(res.body.included).toEqual([expect.objectContaining({ id: userId, type: "users" })]);
    // An address an inviter typed proves nothing: another organisation's invitation of it names another account.
    const elsewhere = await invite(other, address.toUpperCase());
    expect(elsewhere.status).toBe(201);
    expect(elsewhere.body.data.relationships.user.data.id).not.toBe(userId);
    const again = await invite(org, address);
    expect(again.status).toBe(422);
    expect(again.body.errors[0].detail).toBe("User is already a member of this organization");
    expect((await invite(org, address.toUpperCase())).status).toBe(422);
    expect((await invite(org, "nope")).status).toBe(422);
    // An address a site admin vouched for (creating the user) names that user in every organisation.
    const proven = email();
    const created = await api("POST", "/admin/users", {
      body: { data: { type: "users", attributes: { username: `p-${proven.split("@")[0]}`, email: proven } } },
    });
    expect(created.status).toBe(201);
    expect((await invite(org, proven)).body.data.relationships.user.data.id).toBe(created.body.data.id);
    expect((await invite(other, proven.toUpperCase())).body.data.relationships.user.data.id).toBe(created.body.data.id);
    expect((await invite(org, proven)).status).toBe(422);
  });

  it("lists with filter[email], filter[status], q and include", async () => {
    const org = await createOrg();
    const [a, b, c] = [email(), email(), email()];
    for (const e of [a, b, c]) await invite(org, e);
    const ids = (r: { body: { data: Array<{ attributes: { email: string } }> } }) => r.body.data.map((m) => m.attributes.email).sort();
    expect(ids(await api("GET", `/organizations/${org}/organization-memberships?filter%5Bemail%5D=${a},${b}`))).toEqual([a, b].sort());
    const invited = await api("GET", `/organizations/${org}/organization-memberships?filter%5Bstatus%5D=invited`);
    expect(ids(invited)).toEqual([a, b, c].sort());
    const active = await api("GET", `/organizations/${org}/organization-memberships?filter%5Bstatus%5D=active`);
    expect(active.body.data.every((m: { attributes: { status: string } }) => m.attributes.status === "active")).toBe(true);
    expect(active.body.meta.pagination["total-count"]).toBe(1); // the creator
    expect(ids(await api("GET", `/organizations/${org}/organization-memberships?q=${c.slice(0, 8)}`))).toEqual([c]);
    const withUsers = await api("GET", `/organizations/${org}/organization-memberships?include=user`);
    expect(withUsers.body.included.filter((r: { type: string }) => r.type === "users")).toHaveLength(4);
    const bad = await api("GET", `/organizations/${org}/organization-memberships?include=users`);
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].title).toContain("include parameter");
    const paged = await api("GET", `/organizations/${org}/organization-memberships?page%5Bsize%5D=2&page%5Bnumber%5D=2`);
    expect(paged.body.data).toHaveLength(2);
    expect(paged.body.meta.pagination).toMatchObject({ "current-page": 2, "total-count": 4 });
  });

  it("reads (include user, teams) and deletes; removing a member takes it out of the organisation's teams", async () => {
    const org = await createOrg();
    const team = await makeTeam(org, { "read-workspaces": true });
    const res = await invite(org, email(), { relationships: { teams: { data: [{ type: "teams", id: team.id }] } } });
    expect(res.body.data.relationships.teams.data).toEqual([{ id: team.id, type: "teams" }]);
    const read = await api("GET", `/organization-memberships/${res.body.data.id}?include=user,teams`);
    expect(read.body.included.map((r: { type: string }) => r.type).sort()).toEqual(["teams", "users"]);
    expect((await api("GET", `/organization-memberships/${res.body.data.id}?include=organization`)).status).toBe(400);
    expect((await api("DELETE", `/organization-memberships/${res.body.data.id}`)).status).toBe(204);
    expect((await api("GET", `/teams/${team.id}`)).body.data.relationships.users.data).toEqual([]);
    expect((await api("GET", `/organization-memberships/${res.body.data.id}`)).status).toBe(404);
  });

  it("needs manage-membership to invite or remove; members may read; outsiders see nothing", async () => {
    const org = await createOrg();
    const reader = await makeTeam(org, { "read-workspaces": true });
    const manager = await makeTeam(org, { "manage-membership": true });
    const outsider = await makeUser({ ownerOf: await createOrg() });
    expect((await invite(org, email(), {}, reader.token)).status).toBe(404);
    const ok = await invite(org, email(), {}, manager.token);
    expect(ok.status).toBe(201);
    expect((await api("GET", `/organization-memberships/${ok.body.data.id}`, { token: reader.token })).status).toBe(200);
    expect((await api("DELETE", `/organization-memberships/${ok.body.data.id}`, { token: reader.token })).status).toBe(404);
    expect((await api("GET", `/organization-memberships/${ok.body.data.id}`, { token: outsider.token })).status).toBe(404);
    expect((await api("GET", `/organizations/${org}/organization-memberships`, { token: outsider.token })).status).toBe(404);
    expect((await api("DELETE", `/organization-memberships/${ok.body.data.id}`, { token: manager.token })).status).toBe(204);
  });

  it("the last owner cannot be removed", async () => {
    const org = await createOrg();
    const list = await api("GET", `/organizations/${org}/organization-memberships`);
    const mine = list.body.data[0];
    const res = await api("DELETE", `/organization-memberships/${mine.id}`);
    expect(res.status).toBe(422);
    expect((await api("GET", `/organizations/${org}`)).status).toBe(200);
  });
});

describe("team membership", () => {
  it("adds and removes users by id or username; members gain and lose standing", async () => {
    const org = await createOrg();
    const t = await makeTeam(org, { "read-workspaces": true });
    const user = await makeUser();
    const username = (await api("GET", "/account/details", { token: user.token })).body.data.attributes.username;
    expect((await api("GET", `/organizations/${org}`, { token: user.token })).status).toBe(404);
    expect((await api("POST", `/teams/${t.id}/relationships/users`, { body: { data: [{ type: "users", id: username }] } })).status).toBe(204);
    expect((await api("GET", `/teams/${t.id}`)).body.data.relationships.users.data).toEqual([{ id: user.id, type: "users" }]);
    expect((await api("GET", `/organizations/${org}`, { token: user.token })).status).toBe(200);
    // Adding makes the user an (active) organisation member.
    const members = await api("GET", `/organizations/${org}/organization-memberships?filter%5Bstatus%5D=active`, { token: user.token });
    expect(members.body.data.map((m: { relationships: { user: { data: { id: string } } } }) => m.relationships.user.data.id)).toContain(user.id);
    expect((await api("POST", `/teams/${t.id}/relationships/users`, { body: { data: [{ type: "users", id: "user-doesnotexist" }] } })).status).toBe(404);
    expect((await api("DELETE", `/teams/${t.id}/relationships/users`, { body: { data: [{ type: "users", id: user.id }] } })).status).toBe(204);
    expect((await api("GET", `/organizations/${org}`, { token: user.token })).status).toBe(404);
  });

  it("the owners team keeps at least one member", async () => {
    const org = await createOrg();
    const owners = (await api("GET", `/organizations/${org}/teams?q=owners`)).body.data[0];
    const me = (await api("GET", "/account/details")).body.data.id;
    expect((await api("DELETE", `/teams/${owners.id}/relationships/users`, { body: { data: [{ type: "users", id: me }] } })).status).toBe(422);
    const other = await makeUser();
    await api("POST", `/teams/${owners.id}/relationships/users`, { body: { data: [{ type: "users", id: other.id }] } });
    expect((await api("DELETE", `/teams/${owners.id}/relationships/users`, { body: { data: [{ type: "users", id: me }] } })).status).toBe(204);
  });
});
