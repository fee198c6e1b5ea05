/** API tokens: who may see and mint which token, and the token lifecycle over tokens.d1.ts. */
import { pageSlice } from "../jsonapi/document";
import { auditStatementsOf } from "../audit/audit.service";
import type { AuditResource } from "../audit/audit.rules";
import { authorize } from "../auth/requirements";
import { requireOrgAccess } from "../auth/access";
import { actingUserId, type Principal } from "../auth/principal";
import type { Caller } from "../caller";
import { ApiError, unwrap, type Result } from "../errors";
import { newId, newTokenSecret, sha256Hex } from "../ids";
import type { Page } from "../jsonapi/document";
import { LIMITS } from "../limits";
import { loadTeam } from "../teams/teams.service";
import { tokenLifetimeCap } from "./token-ttl-policies.service";
import { userExists } from "../users/users.d1";
import type { AgentToken } from "../agent-pools/agent-tokens.d1";
import { deleteShownAgentToken, showAgentToken } from "../agent-pools/agent-tokens.service";
import {
  deleteLegacyTeamToken,
  deleteLegacyTeamTokenStatement,
  deleteOrganizationToken,
  deleteOrganizationTokenStatement,
  deleteTeamTokens,
  deleteToken as deleteTokenRow,
  findLegacyTeamToken,
  findOrganizationToken,
  findToken,
  insertToken,
  isTeamTokenSort,
  organizationTeamTokens,
  organizationTokenUserId,
  teamTokens,
  userTokens,
  type OrganizationTokenKind,
  type Token,
} from "./tokens.d1";

/** A create request's attributes as given (`expired-at`: omitted, null or a string to check). */
export interface TokenInput {
  description?: string | null;
  "expired-at"?: string | null;
}

/** A new token with its secret, which exists in clear only here. */
export interface MintedToken {
  token: Token;
  secret: string;
}

/** The default expiry: `tokenDefaultLifetimeYears` calendar years after `now`. */
function defaultExpiry(now: Date): string {
  const d = new Date(now.getTime());
  d.setUTCFullYear(d.getUTCFullYear() + LIMITS.tokenDefaultLifetimeYears);
  return d.toISOString();
}

/**
 * The token's description and expiry. The body is checked only once the caller is authorised, so
 * it arrives as a Result. `expired-at` omitted → the default lifetime; null → never; in the past → 422.
 * `capMs`: the organisation's token TTL policy for the token's type, when it enforces one: a token may not
 * outlive it (tokens beyond it cease to work, per the tfe provider's `tfe_org_max_token_ttl_policy` docs), so
 * a later or absent expiry becomes `now + capMs`.
 */
function attributesOf(
  input: Result<{ attributes: TokenInput }>,
  now: Date,
  capMs: number | null = null,
): { description: string | null; expiredAt: string | null } {
  const a = unwrap(input).value.attributes;
  let expiredAt: string | null = defaultExpiry(now);
  if (a["expired-at"] === null) expiredAt = null;
  else if (a["expired-at"] !== undefined) {
    const t = Date.parse(a["expired-at"]);
    if (Number.isNaN(t)) throw ApiError.of("invalid_attribute", { detail: "Expired at must be an ISO 8601 timestamp", pointer: "/data/attributes/expired-at" });
    if (t <= now.getTime())
      throw ApiError.of("invalid_attribute", { detail: "Expired at must be a date in the future", pointer: "/data/attributes/expired-at" });
    expiredAt = new Date(t).toISOString();
  }
  if (capMs !== null) {
    const cap = now.getTime() + capMs;
    if (expiredAt === null || Date.parse(expiredAt) > cap) expiredAt = new Date(cap).toISOString();
  }
  // An empty description is kept as given (go-tfe reads back "").
  return { description: a.description ?? null, expiredAt };
}

/** A token as an audit event names it: its id, kind and team, never its secret. */
function tokenResource(token: Token, action: "create" | "destroy"): AuditResource {
  return {
    id: token.id,
    type: "authentication_token",
    action,
    meta: { kind: token.kind, ...(token.teamId ? { team_id: token.teamId } : {}), ...(token.description ? { description: token.description } : {}) },
  };
}

/** The statements recording a token's deletion, if the batch's delete removed it. */
function tokenDeleted(caller: Caller, token: Token): D1PreparedStatement[] {
  return token.organizationId ? auditStatementsOf(caller, token.organizationId, tokenResource(token, "destroy"), true) : [];
}

function creatorId(p: Principal): string | null {
  return actingUserId(p);
}

async function mint(
  caller: Caller,
  now: Date,
  fields: Omit<Token, "id" | "createdAt" | "lastUsedAt" | "createdBy">,
  replace?: D1PreparedStatement,
  after: D1PreparedStatement[] = [],
): Promise<MintedToken> {
  const secret = newTokenSecret();
  const token: Token = { ...fields, id: newId("at"), createdAt: now.toISOString(), lastUsedAt: null, createdBy: creatorId(caller.principal) };
  // An organisation's token (its own, or a team's) is in its audit trail; a user's token belongs to no organisation.
  const audit = [...(token.organizationId ? auditStatementsOf(caller, token.organizationId, tokenResource(token, "create")) : []), ...after];
  if (!(await insertToken(caller.db, token, await sha256Hex(secret), replace, audit))) {
    throw ApiError.of("invalid_attributes", { detail: "Validation failed: Description has already been taken", pointer: "/data/attributes/description" });
  }
  return { token, secret };
}

// ---- team tokens ----

/** A team whose tokens the caller may manage: see `mayManageTeamTokens` (never more power than the caller's). */
async function teamForTokens(caller: Caller, teamId: string) {
  const { team, access } = await loadTeam(caller, teamId);
  authorize(caller, "teams.manage-tokens", { access, team });
  return team;
}

/** As `teamForTokens`, with the lifetime cap the team's organisation sets new team tokens (null: none). */
async function teamForNewToken(caller: Caller, teamId: string) {
  const { team, access } = await loadTeam(caller, teamId);
  authorize(caller, "teams.manage-tokens", { access, team });
  return { team, capMs: await tokenLifetimeCap(caller, access.organization, "team") };
}

/** Creates (replaces) the team's legacy token. */
export async function createLegacyTeamToken(caller: Caller, teamId: string, input: Result<{ attributes: TokenInput }>): Promise<MintedToken> {
  const { team, capMs } = await teamForNewToken(caller, teamId);
  const now = new Date();
  const a = attributesOf(input, now, capMs);
  return mint(
    caller,
    now,
    { kind: "team", userId: null, teamId: team.id, organizationId: team.organizationId, description: null, legacy: true, expiredAt: a.expiredAt },
    deleteLegacyTeamTokenStatement(caller.db, team.id),
  );
}

export async function showLegacyTeamToken(caller: Caller, teamId: string): Promise<Token> {
  const team = await teamForTokens(caller, teamId);
  const token = await findLegacyTeamToken(caller.db, team.id);
  if (!token) throw ApiError.of("not_found");
  return token;
}

export async function deleteLegacyTeamTokenOf(caller: Caller, teamId: string): Promise<void> {
  const team = await teamForTokens(caller, teamId);
  const token = await findLegacyTeamToken(caller.db, team.id);
  if (!token || !(await deleteLegacyTeamToken(caller.db, team.id, tokenDeleted(caller, token)))) throw ApiError.of("not_found");
}

/** Creates a described team token; the description is unique per team (the index decides, see tokens.d1.ts). */
export async function createTeamToken(caller: Caller, teamId: string, input: Result<{ attributes: TokenInput }>): Promise<MintedToken> {
  const { team, capMs } = await teamForNewToken(caller, teamId);
  const now = new Date();
  const a = attributesOf(input, now, capMs);
  return mint(caller, now, {
    kind: "team",
    userId: null,
    teamId: team.id,
    organizationId: team.organizationId,
    description: a.description,
    legacy: false,
    expiredAt: a.expiredAt,
  });
}

export async function listTeamTokens(caller: Caller, teamId: string, page: Page): Promise<{ tokens: Token[]; total: number }> {
  const team = await teamForTokens(caller, teamId);
  const all = await teamTokens(caller.db, team.id);
  return { tokens: pageSlice(all, page), total: all.length };
}

/** Revokes every token of a team (legacy and described). */
export async function revokeTeamTokens(caller: Caller, teamId: string): Promise<void> {
  const team = await teamForTokens(caller, teamId);
  await deleteTeamTokens(
    caller.db,
    team.id,
    auditStatementsOf(caller, team.organizationId, { id: team.id, type: "team", action: "revoke_tokens", meta: { name: team.name } }, true),
  );
}

/** The organisation's team tokens (`sort`: a key, `-` first for descending). */
export async function listOrganizationTeamTokens(
  caller: Caller,
  organization: string,
  query: { q?: string; sort?: string },
  page: Page,
): Promise<{ tokens: Token[]; total: number }> {
  const access = await requireOrgAccess(caller, { name: organization });
  authorize(caller, "teams.manage", { access });
  const { q, sort } = query;
  const key = sort?.replace(/^-/, "");
  if (key !== undefined && !isTeamTokenSort(key)) throw ApiError.of("bad_request", { detail: `Invalid sort parameter: ${sort}`, parameter: "sort" });
  return organizationTeamTokens(
    caller.db,
    access.organization.externalId,
    // The owners team's tokens are owners' business alone (see mayManageTeamTokens).
    { q: q ?? null, sort: key !== undefined ? { key, desc: sort!.startsWith("-") } : null, withOwners: access.isOwner },
    page,
  );
}

// ---- the organisation token ----

/** Creating (replacing) it is for owners and the token itself; reading and deleting it for owners. */
async function organizationForToken(caller: Caller, organization: string, action: "organization.manage" | "organization.owner") {
  // Part of the organisation's settings: owners reach it even with user tokens refused.
  const access = await requireOrgAccess(caller, { name: organization }, { ownerSettings: true });
  authorize(caller, action, { access });
  return access.organization;
}

export async function createOrganizationToken(
  caller: Caller,
  organization: string,
  input: Result<{ attributes: TokenInput }>,
  kind: OrganizationTokenKind = "organization",
): Promise<MintedToken> {
  const org = await organizationForToken(caller, organization, "organization.manage");
  const now = new Date();
  const a = attributesOf(input, now, await tokenLifetimeCap(caller, org, kind === "audit-trails" ? "audit_trails" : "organization"));
  // The organisation token acts as one service user of the organisation, kept across replacements.
  // The audit-trails token only reads audit trails: it acts as no one (it authenticates nowhere here).
  const userId = kind === "organization" ? ((await organizationTokenUserId(caller.db, org.externalId, kind)) ?? newId("user")) : null;
  return mint(
    caller,
    now,
    { kind, userId, teamId: null, organizationId: org.externalId, description: null, legacy: true, expiredAt: a.expiredAt },
    // Replaces only the token of its own kind: the ordinary and audit-trails tokens coexist.
    deleteOrganizationTokenStatement(caller.db, org.externalId, kind),
  );
}

export async function showOrganizationToken(caller: Caller, organization: string, kind: OrganizationTokenKind = "organization"): Promise<Token> {
  const org = await organizationForToken(caller, organization, "organization.owner");
  const token = await findOrganizationToken(caller.db, org.externalId, kind);
  if (!token) throw ApiError.of("not_found");
  return token;
}

export async function deleteOrganizationTokenOf(caller: Caller, organization: string, kind: OrganizationTokenKind = "organization"): Promise<void> {
  const org = await organizationForToken(caller, organization, "organization.owner");
  const token = await findOrganizationToken(caller.db, org.externalId, kind);
  if (!token || !(await deleteOrganizationToken(caller.db, org.externalId, kind, tokenDeleted(caller, token)))) throw ApiError.of("not_found");
}

// ---- user tokens ----

function requireSelf(caller: Caller, userId: string): void {
  // Only a user token acts for its user; the real service refuses team and organisation tokens here.
  authorize(caller, "user.self", { userId });
}

/** A user token: for the caller itself, or (site admins) for a user created under /admin/users, who has none yet. */
/** `after`: statements for the batch that inserts the token (`terraform login` records its sign-in there). */
export async function createUserToken(
  caller: Caller,
  userId: string,
  input: Result<{ attributes: TokenInput }>,
  after: D1PreparedStatement[] = [],
): Promise<MintedToken> {
  const p = caller.principal;
  authorize(caller, "user.self-or-site-admin", { userId });
  if (p.kind === "user" && p.isSiteAdmin && p.userId !== userId && !(await userExists(caller.db, userId))) throw ApiError.of("not_found");
  const now = new Date();
  const a = attributesOf(input, now);
  return mint(
    caller,
    now,
    {
      kind: "user",
      userId,
      teamId: null,
      organizationId: null,
      description: a.description,
      legacy: false,
      expiredAt: a.expiredAt,
    },
    undefined,
    after,
  );
}

export async function listUserTokens(caller: Caller, userId: string, page: Page): Promise<{ tokens: Token[]; total: number }> {
  requireSelf(caller, userId);
  const all = await userTokens(caller.db, userId);
  return { tokens: pageSlice(all, page), total: all.length };
}

// ---- tokens by id ----

/** A token shown by id: an API token, or an agent token (the same `authentication-tokens` ids and endpoints). */
export type TokenById = { kind: "api"; token: Token } | { kind: "agent"; token: AgentToken };

/**
 * A token is visible to its user, or (team and organisation tokens) to those who manage them; an id no API token
 * has may be an agent token's, which those who manage its agent pool see (src/agent-pools/agent-tokens.service.ts).
 */
export async function showToken(caller: Caller, id: string): Promise<TokenById> {
  const token = await findToken(caller.db, id);
  if (!token) return { kind: "agent", token: await showAgentToken(caller, id) };
  if (token.kind === "user" && token.userId) {
    authorize(caller, "token.manage", { userId: token.userId });
    return { kind: "api", token };
  }
  if (token.kind === "team" && token.teamId) {
    const { team, access } = await loadTeam(caller, token.teamId);
    authorize(caller, "token.manage", { access, team });
    return { kind: "api", token };
  }
  if ((token.kind === "organization" || token.kind === "audit-trails") && token.organizationId) {
    const access = await requireOrgAccess(caller, { id: token.organizationId }, { ownerSettings: true });
    authorize(caller, "token.manage", { access });
    return { kind: "api", token };
  }
  throw ApiError.of("not_found");
}

/** Deletes a visible token; it stops working at once. */
export async function deleteToken(caller: Caller, id: string): Promise<void> {
  const shown = await showToken(caller, id);
  if (shown.kind === "agent") await deleteShownAgentToken(caller, shown.token);
  else await deleteTokenRow(caller.db, shown.token.id, tokenDeleted(caller, shown.token));
}
