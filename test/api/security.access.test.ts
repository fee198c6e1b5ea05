// Regression tests for the access findings of an adversarial review (delegated roles, token holders, email
// confirmation, the first-token gap and more): each drives the HTTP API the way the review did.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../../src/index";
import { createOrg, createWorkspace, grantWorkspace, makeOrgToken, makeTeam, makeUser } from "../fixtures";
import { api, uniqueName } from "../helpers";

const ownersOf = async (org: string): Promise<string> => (await api("GET", `/organizations/${org}/teams?filter%5Bnames%5D=owners`)).body.data[0].id;
const teamIn = async (org: string, attrs: Record<string, unknown> = {}): Promise<string> =>
  (
    await api("POST", `/organizations/${org}/teams`, {
      body: { data: { type: "teams", attributes: { name: uniqueName("t"), visibility: "organization", ...attrs } } },
    })
  ).body.data.id;
const users = (...ids: string[]) => ({ data: ids.map((id) => ({ type: "users", id })) });
const invite = (org: string, email: string, teams: string[] = [], token?: string) =>
  api("POST", `/organizations/${org}/organization-memberships`, {
    token,
    body: { data: { type: "organization-memberships", attributes: { email }, relationships: { teams: { data: teams.map((id) => ({ type: "teams", id })) } } } },
  });
const membershipOf = async (org: string, userId: string): Promise<string> => {
  const list = await api("GET", `/organizations/${org}/organization-memberships?page%5Bsize%5D=100`);
  return list.body.data.find((m: { relationships: { user: { data: { id: string } } } }) => m.relationships.user.data.id === userId).id;
};
const address = () => `${uniqueName("a")}@x.test`;

describe("manage-membership does not control the owners team", () => {
  it("cannot add to, invite into or remove from the owners team; the last owner stays", async () => {
    const org = await createOrg();
    const owners = await ownersOf(org);
    const mm = await makeTeam(org, { "manage-membership": true });
    const victim = await makeUser();
    expect((await api("POST", `/teams/${owners}/relationships/users`, { token: mm.token, body: users(victim.id) })).status).toBe(404);
    expect((await invite(org, address(), [owners], mm.token)).status).toBe(404);
    // A second owner, added by an owner, cannot be removed by the delegate either way.
    const owner2 = await makeUser();
    expect((await api("POST", `/teams/${owners}/relationships/users`, { body: users(owner2.id) })).status).toBe(204);
    expect((await api("DELETE", `/teams/${owners}/relationships/users`, { token: mm.token, body: users(owner2.id) })).status).toBe(404);
    const ms = await membershipOf(org, owner2.id);
    expect(
      (
        await api("POST", `/teams/${owners}/relationships/organization-memberships`, {
          token: mm.token,
          body: { data: [{ type: "organization-memberships", id: ms }] },
        })
      ).status,
    ).toBe(404);
    expect((await api("DELETE", `/organization-memberships/${ms}`, { token: mm.token })).status).toBe(404);
    // Still an owner: it may create the organisation token.
    expect((await api("POST", `/organizations/${org}/authentication-token`, { token: (await makeUser({ ownerOf: org })).token })).status).toBe(201);
    // The delegate still manages ordinary teams.
    const plain = await teamIn(org);
    expect((await api("POST", `/teams/${plain}/relationships/users`, { token: mm.token, body: users(victim.id) })).status).toBe(204);
    expect((await invite(org, address(), [plain], mm.token)).status).toBe(201);
  });
});

describe("no caller mints a token with more power than its own", () => {
  it("manage-teams and the organisation token cannot create owners-team tokens; owners can", async () => {
    const org = await createOrg();
    const owners = await ownersOf(org);
    const mt = await makeTeam(org, { "manage-membership": true, "manage-teams": true });
    const orgToken = await makeOrgToken(org);
    const never = { data: { type: "authentication-tokens", attributes: { "expired-at": null } } };
    for (const token of [mt.token, orgToken.token]) {
      expect((await api("POST", `/teams/${owners}/authentication-tokens`, { token, body: never })).status).toBe(404);
      expect((await api("POST", `/teams/${owners}/authentication-token`, { token })).status).toBe(404);
    }
    expect((await api("POST", `/teams/${owners}/authentication-tokens`, { body: never })).status).toBe(201);
  });

  it("manage-teams cannot mint a token for a team holding organisation permissions it lacks", async () => {
    const org = await createOrg();
    const mt = await makeTeam(org, { "manage-membership": true, "manage-teams": true });
    const stronger = await teamIn(org, { "organization-access": { "manage-workspaces": true, "read-workspaces": true } });
    expect((await api("POST", `/teams/${stronger}/authentication-tokens`, { token: mt.token })).status).toBe(404);
    const plain = await teamIn(org);
    expect((await api("POST", `/teams/${plain}/authentication-tokens`, { token: mt.token })).status).toBe(201);
  });
});

describe("team tokens cannot mint siblings; a team's tokens are revoked in one call", () => {
  it("a team token without manage-teams cannot create tokens for its own team", async () => {
    const org = await createOrg();
    const t = await makeTeam(org);
    expect(
      (
        await api("POST", `/teams/${t.id}/authentication-tokens`, {
          token: t.token,
          body: { data: { type: "authentication-tokens", attributes: { "expired-at": null } } },
        })
      ).status,
    ).toBe(404);
    expect((await api("POST", `/teams/${t.id}/authentication-token`, { token: t.token })).status).toBe(404);
  });

  it("DELETE /teams/:id/authentication-tokens revokes every token of the team", async () => {
    const org = await createOrg();
    const t = await teamIn(org);
    const a = (await api("POST", `/teams/${t}/authentication-tokens`, { body: { data: { type: "authentication-tokens", attributes: { description: "a" } } } }))
      .body.data.attributes.token;
    const b = (await api("POST", `/teams/${t}/authentication-token`)).body.data.attributes.token;
    expect((await api("GET", "/account/details", { token: a })).status).toBe(200);
    expect((await api("DELETE", `/teams/${t}/authentication-tokens`)).status).toBe(204);
    expect((await api("GET", "/account/details", { token: a })).status).toBe(401);
    expect((await api("GET", "/account/details", { token: b })).status).toBe(401);
    expect((await api("GET", `/teams/${t}/authentication-tokens`)).body.data).toEqual([]);
  });
});

describe("invitations bind to the invited address and grant nothing until accepted", () => {
  it("an unconfirmed email change does not capture a later invitation", async () => {
    const org = await createOrg();
    const team = await teamIn(org, { "organization-access": { "read-workspaces": true } });
    const squatter = await makeUser();
    const target = address();
    const patched = await api("PATCH", "/account/update", { token: squatter.token, body: { data: { type: "users", attributes: { email: target } } } });
    expect(patched.status).toBe(200);
    expect(patched.body.data.attributes.email).toBe(`${squatter.id}@example.com`);
    expect(patched.body.data.attributes["unconfirmed-email"]).toBe(target);
    const inv = await invite(org, target, [team]);
    expect(inv.status).toBe(201);
    // The invitation names the user that has the address (a new one), not the squatter that only asked for it.
    const invited = await api("GET", `/users/${inv.body.data.relationships.user.data.id}`);
    expect(invited.status).toBe(200);
    expect(invited.body.data.attributes.email).toBe(target);
    expect((await api("GET", `/organizations/${org}`, { token: squatter.token })).status).toBe(404);
    expect((await api("POST", `/organization-memberships/${inv.body.data.id}/actions/accept`, { token: squatter.token })).status).toBe(404);
  });

  it("the invited user has no access until it accepts; only that user may accept", async () => {
    const org = await createOrg();
    const team = await teamIn(org, { "organization-access": { "read-workspaces": true } });
    const email = address();
    const created = await api("POST", "/admin/users", { body: { data: { type: "users", attributes: { username: uniqueName("u"), email } } } });
    const userId = created.body.data.id;
    const token = (await api("POST", `/users/${userId}/authentication-tokens`)).body.data.attributes.token;
    const inv = await invite(org, email, [team]);
    expect(inv.body.data.relationships.user.data.id).toBe(userId);
    expect(inv.body.data.attributes.status).toBe("invited");
    // Shown with its pending team, but no standing.
    expect((await api("GET", `/organization-memberships/${inv.body.data.id}`)).body.data.relationships.teams.data).toEqual([{ id: team, type: "teams" }]);
    expect((await api("GET", `/organizations/${org}`, { token })).status).toBe(404);
    expect((await api("GET", `/organizations/${org}/workspaces`, { token })).status).toBe(404);
    const other = await makeUser();
    expect((await api("POST", `/organization-memberships/${inv.body.data.id}/actions/accept`, { token: other.token })).status).toBe(404);
    const accepted = await api("POST", `/organization-memberships/${inv.body.data.id}/actions/accept`, { token });
    expect(accepted.status).toBe(200);
    expect(accepted.body.data.attributes.status).toBe("active");
    expect((await api("GET", `/organizations/${org}/workspaces`, { token })).status).toBe(200);
    expect((await api("POST", `/organization-memberships/${inv.body.data.id}/actions/accept`, { token })).status).toBe(422);
  });

  it("confirming an email later does not take over a pending invitation", async () => {
    const org = await createOrg();
    const target = address();
    const inv = await invite(org, target);
    const invitee = inv.body.data.relationships.user.data.id;
    const late = await makeUser();
    await api("PATCH", "/account/update", { token: late.token, body: { data: { type: "users", attributes: { email: target } } } });
    // The invitation's account holds the address unproven, so a site admin may confirm it for another user...
    expect((await api("POST", `/admin/users/${late.id}/actions/confirm-email`)).status).toBe(200);
    // ... which takes nothing: the invitation stays with its own account.
    expect((await api("POST", `/organization-memberships/${inv.body.data.id}/actions/accept`, { token: late.token })).status).toBe(404);
    expect((await api("GET", `/organization-memberships/${inv.body.data.id}`)).body.data.relationships.user.data.id).toBe(invitee);
    // Once proven, the address is that user's alone: no one else gets it confirmed.
    const later = await makeUser();
    await api("PATCH", "/account/update", { token: later.token, body: { data: { type: "users", attributes: { email: target } } } });
    const refused = await api("POST", `/admin/users/${later.id}/actions/confirm-email`);
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0].source.pointer).toBe("/data/attributes/email");
  });

  it("the site admin confirms an email change", async () => {
    const u = await makeUser();
    const next = address();
    await api("PATCH", "/account/update", { token: u.token, body: { data: { type: "users", attributes: { email: next } } } });
    expect((await api("POST", `/admin/users/${u.id}/actions/confirm-email`, { token: u.token })).status).toBe(404);
    const res = await api("POST", `/admin/users/${u.id}/actions/confirm-email`);
    expect(res.status).toBe(200);
    expect(res.body.data.attributes).toMatchObject({ email: next, "unconfirmed-email": null });
  });
});

describe("user-tokens-enabled false leaves owners and the site admin a way back", () => {
  it("user tokens get 401 on the organisation's resources; owners and the site admin can still switch it back or delete it", async () => {
    const org = await createOrg();
    const owner = await makeUser({ ownerOf: org });
    const member = await makeUser({ teams: [await teamIn(org, { "organization-access": { "read-workspaces": true } })] });
    const off = await api("PATCH", `/organizations/${org}`, {
      token: owner.token,
      body: { data: { type: "organizations", attributes: { "user-tokens-enabled": false } } },
    });
    expect(off.status).toBe(200);
    expect((await api("GET", `/organizations/${org}/workspaces`, { token: member.token })).status).toBe(401);
    expect((await api("GET", `/organizations/${org}/workspaces`, { token: owner.token })).status).toBe(401);
    // go-tfe (TestOrganizationsUpdate) expects the user-token client to be refused reading the organisation.
    expect((await api("GET", `/organizations/${org}/workspaces`)).status).toBe(401);
    expect((await api("GET", `/organizations/${org}`, { token: owner.token })).status).toBe(401);
    expect((await api("GET", `/organizations/${org}`)).status).toBe(401);
    // The site admin's way back: the settings themselves.
    expect(
      (await api("PATCH", `/organizations/${org}`, { body: { data: { type: "organizations", attributes: { email: "admin@example.test" } } } })).status,
    ).toBe(200);
    expect(
      (
        await api("PATCH", `/organizations/${org}`, {
          token: member.token,
          body: { data: { type: "organizations", attributes: { "user-tokens-enabled": true } } },
        })
      ).status,
    ).toBe(401);
    const on = await api("PATCH", `/organizations/${org}`, {
      token: owner.token,
      body: { data: { type: "organizations", attributes: { "user-tokens-enabled": true } } },
    });
    expect(on.status).toBe(200);
    expect((await api("GET", `/organizations/${org}/workspaces`, { token: member.token })).status).toBe(200);

    // With user tokens off, an owner's user token can still delete the organisation; a member's cannot.
    const gone = await createOrg();
    const goneOwner = await makeUser({ ownerOf: gone });
    await api("PATCH", `/organizations/${gone}`, {
      token: goneOwner.token,
      body: { data: { type: "organizations", attributes: { "user-tokens-enabled": false } } },
    });
    expect((await api("DELETE", `/organizations/${gone}`, { token: member.token })).status).toBe(401);
    expect((await api("DELETE", `/organizations/${gone}`, { token: goneOwner.token })).status).toBe(204);
  });
});

describe("rate limiting of unauthenticated callers", () => {
  const limited = { ...env, RATE_LIMIT: "1" };
  const statuses = async (path: string, headers: (i: number) => Record<string, string>) => {
    const out: number[] = [];
    for (let i = 0; i < 3; i++) out.push((await app.request(`http://localhost${path}`, { headers: headers(i) }, limited)).status);
    return out;
  };

  it("a client-supplied CF-Connecting-IP does not buy a fresh budget locally", async () => {
    const got = await statuses("/api/v2/ping", (i) => ({ "CF-Connecting-IP": `203.0.113.${i + 1}` }));
    expect(got[2]).toBe(429);
  });

  it("limits the signed blob URLs and openapi.json", async () => {
    expect((await statuses("/_blobs/ws-x/sv-x/state?expires=1&signature=00", () => ({})))[2]).toBe(429);
    expect((await statuses("/api/v2/openapi.json", () => ({})))[2]).toBe(429);
  });
});

describe("member email addresses", () => {
  it("read-level members see their own email only; membership managers see every one", async () => {
    const org = await createOrg();
    const reader = await makeUser();
    const t = await teamIn(org, { "organization-access": { "read-workspaces": true } });
    await api("POST", `/teams/${t}/relationships/users`, { body: users(reader.id) });
    await invite(org, address());
    const ws = await createWorkspace(org);
    const readTeam = await makeTeam(org);
    await grantWorkspace(readTeam.id, ws.id, "read");
    type M = { attributes: { email: string | null }; relationships: { user: { data: { id: string } } } };
    for (const token of [reader.token, readTeam.token]) {
      const list = await api("GET", `/organizations/${org}/organization-memberships?include=user`, { token });
      expect(list.status).toBe(200);
      const leaked = (list.body.data as M[]).filter((m) => m.attributes.email !== null && m.relationships.user.data.id !== reader.id);
      expect(leaked).toEqual([]);
      expect(
        (list.body.included as Array<{ id: string; attributes: { email: string | null } }>).filter((u) => u.id !== reader.id && u.attributes.email !== null),
      ).toEqual([]);
      // Nor can an address be probed through the filters.
      expect(
        (await api("GET", `/organizations/${org}/organization-memberships?q=example.com`, { token })).body.data.filter(
          (m: M) => m.relationships.user.data.id !== reader.id,
        ),
      ).toEqual([]);
    }
    const own = (await api("GET", `/organizations/${org}/organization-memberships`, { token: reader.token })).body.data.find(
      (m: M) => m.relationships.user.data.id === reader.id,
    );
    expect(own.attributes.email).toBe(`${reader.id}@example.com`);
    const mm = await makeTeam(org, { "manage-membership": true });
    const all = await api("GET", `/organizations/${org}/organization-memberships`, { token: mm.token });
    expect((all.body.data as M[]).every((m) => m.attributes.email !== null)).toBe(true);
  });
});

describe("the site admin issues a user's first token", () => {
  it("POST /users/:id/authentication-tokens by the site admin; the user then creates its own", async () => {
    const created = await api("POST", "/admin/users", { body: { data: { type: "users", attributes: { username: uniqueName("u"), email: address() } } } });
    const id = created.body.data.id;
    const first = await api("POST", `/users/${id}/authentication-tokens`, {
      body: { data: { type: "authentication-tokens", attributes: { description: "first" } } },
    });
    expect(first.status).toBe(201);
    const token = first.body.data.attributes.token;
    expect((await api("GET", "/account/details", { token })).body.data.id).toBe(id);
    expect((await api("POST", `/users/${id}/authentication-tokens`, { token })).status).toBe(201);
    // Nobody else may.
    const other = await makeUser();
    expect((await api("POST", `/users/${id}/authentication-tokens`, { token: other.token })).status).toBe(404);
  });
});
