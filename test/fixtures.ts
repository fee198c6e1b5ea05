// Seeds for the tests. Organisations and workspaces are created through the API, as a client would; principals,
// grants and registry rows are written with the repositories' own insert functions, so a seed is the row the
// service writes and a permission-dependent test does not depend on the token and team endpoints.
import { env } from "cloudflare:workers";
import { newId, newTokenSecret, nowIso, sha256Hex } from "../src/ids";
import { findOrganization } from "../src/organizations/organizations.d1";
import { insertProjectStatement } from "../src/projects/projects.d1";
import { insertPool } from "../src/agent-pools/agent-pools.d1";
import { insertClientWithToken } from "../src/oauth/oauth.d1";
import { sealValue } from "../src/variables/variables.crypto";
import { insertTeamProject, insertTeamWorkspace } from "../src/team-access/team-access.d1";
import { addMembers, findTeam, insertTeam, organizationTeams } from "../src/teams/teams.d1";
import { insertToken, type Token } from "../src/tokens/tokens.d1";
import { insertUser } from "../src/users/users.d1";
import { claimName } from "../src/workspaces/workspaces.d1";
import { ADMIN, api, uniqueName } from "./helpers";

// ---- through the API ----

export async function createOrg(token: string = ADMIN, name = uniqueName("org")): Promise<string> {
  const res = await api("POST", "/organizations", {
    token,
    body: { data: { type: "organizations", attributes: { name, email: "owner@example.com" } } },
  });
  if (res.status !== 201) throw new Error(`createOrg: ${res.status} ${res.text}`);
  return name;
}

export async function createWorkspace(org: string, attributes: Record<string, unknown> = {}, token: string = ADMIN, relationships?: unknown) {
  const res = await api("POST", `/organizations/${org}/workspaces`, {
    token,
    body: { data: { type: "workspaces", attributes: { name: uniqueName("ws"), ...attributes }, ...(relationships ? { relationships } : {}) } },
  });
  if (res.status !== 201) throw new Error(`createWorkspace: ${res.status} ${res.text}`);
  return res.body.data as { id: string; attributes: Record<string, any>; relationships: Record<string, any> };
}

/** POST /organizations/:org/oauth-clients with these attributes, as the admin unless a token is given. */
export function postOAuthClient(org: string, attributes: Record<string, unknown>, token: string = ADMIN) {
  return api("POST", `/organizations/${org}/oauth-clients`, { token, body: { data: { type: "oauth-clients", attributes } } });
}

// ---- principals and grants, through the repositories ----

export interface TestPrincipal {
  token: string;
  id: string;
}

/** The organisation's immutable id, which every table but `organizations` keys by. */
export async function organizationId(org: string): Promise<string> {
  const found = await findOrganization(env.DB, { name: org });
  if (!found) throw new Error(`no organisation ${org}`);
  return found.externalId;
}

/** A new API token of the given owner; returns its secret and its id. */
async function seedToken(owner: Pick<Token, "kind" | "userId" | "teamId" | "organizationId">, expiredAt: string | null = null): Promise<TestPrincipal> {
  const token = newTokenSecret();
  const id = newId("at");
  const row: Token = { id, ...owner, description: null, legacy: false, createdBy: null, createdAt: nowIso(), lastUsedAt: null, expiredAt };
  if (!(await insertToken(env.DB, row, await sha256Hex(token)))) throw new Error("seedToken: not inserted");
  return { token, id };
}

/** Makes users members of a team (and of its organisation), as adding them through the API does. */
async function addToTeam(team: { id: string; organizationId: string }, userIds: string[]): Promise<void> {
  await addMembers(
    env.DB,
    team,
    userIds.map((userId) => ({ userId, membershipId: newId("ou") })),
    nowIso(),
  );
}

/** Adds a user to the organisation's owners team. */
export async function makeOwner(userId: string, org: string): Promise<void> {
  const owners = (await organizationTeams(env.DB, await organizationId(org))).find((t) => t.isOwners);
  if (!owners) throw new Error(`no owners team in ${org}`);
  await addToTeam(owners, [userId]);
}

/** A user with a token; optionally an owner of the organisation or a member of given teams. */
export async function makeUser(opts: { ownerOf?: string; teams?: string[]; expiredAt?: string } = {}): Promise<TestPrincipal> {
  const id = newId("user");
  if (!(await insertUser(env.DB, { id, username: `u-${id}`, email: `${id}@example.com`, unconfirmedEmail: null, isSiteAdmin: false }, nowIso())))
    throw new Error("makeUser: taken");
  const { token } = await seedToken({ kind: "user", userId: id, teamId: null, organizationId: null }, opts.expiredAt ?? null);
  if (opts.ownerOf) await makeOwner(id, opts.ownerOf);
  for (const teamId of opts.teams ?? []) {
    const team = await findTeam(env.DB, teamId);
    if (!team) throw new Error(`makeUser: no team ${teamId}`);
    await addToTeam(team, [id]);
  }
  return { token, id };
}

/** A team of the organisation with optional organisation access; returns its id and a team token. */
export async function makeTeam(org: string, organizationAccess: Record<string, boolean> = {}): Promise<TestPrincipal> {
  const orgId = await organizationId(org);
  const id = newId("team");
  const inserted = await insertTeam(env.DB, {
    id,
    organizationId: orgId,
    name: uniqueName("team"),
    visibility: "secret",
    ssoTeamId: null,
    organizationAccess,
    allowMemberTokenManagement: true,
    serviceUserId: newId("user"),
    createdAt: nowIso(),
  });
  if (!inserted) throw new Error("makeTeam: name taken");
  const { token } = await seedToken({ kind: "team", userId: null, teamId: id, organizationId: orgId });
  return { token, id };
}

/** New teams of `org`, one for each organisation access given, in that order. */
export async function makeTeams(org: string, ...accesses: Array<Record<string, boolean>>): Promise<TestPrincipal[]> {
  const teams: TestPrincipal[] = [];
  for (const access of accesses) teams.push(await makeTeam(org, access));
  return teams;
}

/** Another token of an existing team (descriptive team tokens: a team may have several). */
export async function addTeamToken(teamId: string, org: string): Promise<string> {
  return (await seedToken({ kind: "team", userId: null, teamId, organizationId: await organizationId(org) })).token;
}

export async function grantWorkspace(teamId: string, workspaceId: string, access: string, perms: Record<string, unknown> = {}): Promise<void> {
  await insertTeamWorkspace(env.DB, { id: newId("tws"), teamId, workspaceId, access, perms: perms as never }, nowIso());
}

export async function grantProject(teamId: string, projectId: string, access: string, perms: Record<string, unknown> = {}): Promise<void> {
  await insertTeamProject(env.DB, { id: newId("tprj"), teamId, projectId, access, perms: perms as never }, nowIso());
}

/** A workspace of a new organisation, and a new team granted `access` on it. */
export async function workspaceWithTeam(access: string) {
  const org = await createOrg();
  const ws = await createWorkspace(org);
  const team = await makeTeam(org);
  await grantWorkspace(team.id, ws.id, access);
  return { org, ws, team };
}

/** A team token with the given organisation access and workspace and project grants (id → access). */
export async function teamToken(
  org: string,
  opts: { orgAccess?: Record<string, boolean>; workspaces?: Record<string, string>; projects?: Record<string, string> } = {},
): Promise<string> {
  const team = await makeTeam(org, opts.orgAccess);
  for (const [ws, access] of Object.entries(opts.workspaces ?? {})) await grantWorkspace(team.id, ws, access);
  for (const [prj, access] of Object.entries(opts.projects ?? {})) await grantProject(team.id, prj, access);
  return team.token;
}

/** An organisation token (acts as the organisation's service user). */
export async function makeOrgToken(org: string): Promise<TestPrincipal> {
  return seedToken({ kind: "organization", userId: newId("user"), teamId: null, organizationId: await organizationId(org) });
}

// ---- other rows, through the repositories ----

/** A project of the organisation with the given name; returns its id. */
export async function makeProject(org: string, name = uniqueName("project")): Promise<string> {
  const id = newId("prj");
  await insertProjectStatement(env.DB, {
    id,
    organizationId: await organizationId(org),
    name,
    description: null,
    attrs: {},
    mode: null,
    pool: null,
    createdAt: nowIso(),
  }).run();
  return id;
}

/** An organisation-scoped agent pool; returns its id. */
export async function makeAgentPool(org: string): Promise<string> {
  const id = newId("apool");
  await insertPool(env.DB, {
    id,
    organizationId: await organizationId(org),
    name: uniqueName("pool"),
    organizationScoped: true,
    allowedWorkspaces: [],
    allowedProjects: [],
    excludedWorkspaces: [],
    createdAt: nowIso(),
  });
  return id;
}

/** A GitHub OAuth client with its one OAuth token and a (sealed) token string; returns the token's id. */
export async function makeOAuthToken(org: string): Promise<string> {
  const orgId = await organizationId(org);
  const clientId = newId("oc");
  const tokenId = newId("ot");
  const at = nowIso();
  await insertClientWithToken(
    env.DB,
    { id: clientId, organizationId: orgId, attrs: { "service-provider": "github" }, createdAt: at },
    { id: tokenId, oauthClientId: clientId, organizationId: orgId, serviceProviderUser: null, createdAt: at, hasSshKey: false },
    [],
    await sealValue(env, tokenId, "ghp_fixture_token"),
  );
  return tokenId;
}

/** A name lease taken for a workspace id at `claimedAt` (ms) that no create or rename has committed. */
export async function claimWorkspaceName(org: string, name: string, workspaceId: string, claimedAt: number): Promise<void> {
  const outcome = await claimName(env.DB, await organizationId(org), name, workspaceId, claimedAt);
  if (!outcome.claimed) throw new Error(`claimWorkspaceName: ${name} is held by ${outcome.holder}`);
}
