/**
 * API tokens: team tokens (legacy single and described multiples), the organisation token, user
 * tokens. Secrets exist in clear only in the create response; D1 keeps their SHA-256.
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { requireOrgAccess } from "../auth/access";
import { primary } from "../db";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";
import { newId, newTokenSecret, nowIso, sha256Hex } from "../ids";
import { jsonapi, noContent, paginated, readPage, type Resource } from "../jsonapi/document";
import { errorResponses, jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import { LIMITS } from "../limits";
import { loadTeam, canManageTeams } from "../teams/teams.routes";
import { mayManageTeamTokens } from "../teams/teams.rules";

const tags = ["Tokens"];
export const tokens = router();

interface TokenRow {
  id: string;
  kind: string;
  user_id: string | null;
  team_id: string | null;
  organization_name: string | null;
  description: string | null;
  legacy: number;
  created_by: string | null;
  created_at: string;
  last_used_at: string | null;
  expired_at: string | null;
}

const tokenAttributes = z.object({
  description: z.string().max(255).nullable().optional(),
  "expired-at": z.string().max(64).nullable().optional(),
});
const tokenBody = z
  .object({ data: z.object({ type: z.string().max(64).optional(), attributes: tokenAttributes.optional() }).optional() })
  .openapi("TokenCreate");
/** Token bodies are optional and may be empty even with a JSON:API Content-Type: parsed by the handler. */
const TOKEN_BODY_DOC = "Body (optional): `{\"data\":{\"type\":\"authentication-tokens\",\"attributes\":{\"description\":\"...\",\"expired-at\":\"...\"}}}`.";

function serializeToken(row: TokenRow, secret?: string): Resource {
  const relationships: Record<string, unknown> = {
    "created-by": { data: row.created_by ? { id: row.created_by, type: "users" } : null },
  };
  if (row.team_id) relationships.team = { data: { id: row.team_id, type: "teams" } };
  return {
    id: row.id,
    type: "authentication-tokens",
    attributes: {
      "created-at": row.created_at,
      "last-used-at": row.last_used_at,
      description: row.description,
      "expired-at": row.expired_at,
      token: secret ?? null,
    },
    relationships,
    links: { self: `/api/v2/authentication-tokens/${row.id}` },
  };
}

/** The default expiry: `tokenDefaultLifetimeYears` calendar years after `now`. */
export function defaultExpiry(now: Date): string {
  const d = new Date(now.getTime());
  d.setUTCFullYear(d.getUTCFullYear() + LIMITS.tokenDefaultLifetimeYears);
  return d.toISOString();
}

/**
 * Parses an optional create body (go-tfe sends none, or `expired-at` / `description`).
 * `expired-at` omitted → the default lifetime; explicitly null → never expires; in the past → 422.
 */
async function readTokenAttributes(c: Context<AppEnv>, now: Date): Promise<{ description: string | null; expiredAt: string | null }> {
  const text = await c.req.text();
  let a: z.infer<typeof tokenAttributes> = {};
  if (text.trim() !== "") {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw ApiError.of("malformed_body");
    }
    const parsed = tokenBody.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw ApiError.of("invalid_attribute", { detail: issue?.message, pointer: `/${(issue?.path ?? ["data", "attributes"]).join("/")}` });
    }
    a = parsed.data.data?.attributes ?? {};
  }
  let expiredAt: string | null = defaultExpiry(now);
  if (a["expired-at"] === null) expiredAt = null;
  else if (a["expired-at"] !== undefined) {
    const t = Date.parse(a["expired-at"]);
    if (Number.isNaN(t)) throw ApiError.of("invalid_attribute", { detail: "Expired at must be an ISO 8601 timestamp", pointer: "/data/attributes/expired-at" });
    if (t <= now.getTime()) throw ApiError.of("invalid_attribute", { detail: "Expired at must be a date in the future", pointer: "/data/attributes/expired-at" });
    expiredAt = new Date(t).toISOString();
  }
  // An empty description is kept as given (go-tfe reads back "").
  return { description: a.description ?? null, expiredAt };
}

function creatorId(c: Context<AppEnv>): string {
  const p = c.get("principal");
  return p.kind === "user" ? p.userId : p.serviceUserId;
}

async function insertToken(c: Context<AppEnv>, now: Date, row: Omit<TokenRow, "id" | "created_at" | "last_used_at" | "created_by">, replace?: D1PreparedStatement): Promise<Response> {
  const db = primary(c);
  const secret = newTokenSecret();
  const full: TokenRow = { ...row, id: newId("at"), created_at: now.toISOString(), last_used_at: null, created_by: creatorId(c) };
  const insert = db
    .prepare(
      `INSERT INTO tokens (id, token_hash, kind, user_id, team_id, organization_name, description, legacy, created_by, created_at, expired_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .bind(full.id, await sha256Hex(secret), full.kind, full.user_id, full.team_id, full.organization_name, full.description, full.legacy, full.created_by, full.created_at, full.expired_at);
  try {
    await db.batch(replace ? [replace, insert] : [insert]);
  } catch (err) {
    if (String(err).includes("UNIQUE") && full.description !== null) {
      throw ApiError.of("invalid_attributes", { detail: "Validation failed: Description has already been taken", pointer: "/data/attributes/description" });
    }
    throw err;
  }
  return jsonapi(c, { data: serializeToken(full, secret) }, 201);
}

// ---- team tokens ----

const teamParam = z.object({ team_id: z.string().regex(/^team-[A-Za-z0-9]{1,64}$/) });

/** Who may manage a team's tokens: see `mayManageTeamTokens` (never more power than the caller's). */
async function teamForTokens(c: Context<AppEnv>, teamId: string) {
  const { team, access } = await loadTeam(c, teamId);
  if (!mayManageTeamTokens(access, team)) throw ApiError.of("not_found");
  return team;
}

tokens.openapi(
  createRoute({ method: "post", path: "/teams/{team_id}/authentication-token", tags, summary: "Create (replace) the team's legacy token", request: { params: teamParam }, description: TOKEN_BODY_DOC, responses: { ...ok("The token, with its secret", 201), ...errorResponses } }),
  async (c) => {
    const team = await teamForTokens(c, c.req.valid("param").team_id);
    const now = new Date();
    const a = await readTokenAttributes(c, now);
    const db = primary(c);
    return insertToken(
      c,
      now,
      { kind: "team", user_id: null, team_id: team.id, organization_name: team.organization_name, description: null, legacy: 1, expired_at: a.expiredAt },
      db.prepare("DELETE FROM tokens WHERE team_id = ? AND legacy = 1").bind(team.id),
    );
  },
);

tokens.openapi(
  createRoute({ method: "get", path: "/teams/{team_id}/authentication-token", tags, summary: "Show the team's legacy token", request: { params: teamParam }, responses: { ...ok("The token (no secret)"), ...errorResponses } }),
  async (c) => {
    const team = await teamForTokens(c, c.req.valid("param").team_id);
    const row = await primary(c).prepare("SELECT * FROM tokens WHERE team_id = ? AND legacy = 1").bind(team.id).first<TokenRow>();
    if (!row) throw ApiError.of("not_found");
    return jsonapi(c, { data: serializeToken(row) });
  },
);

tokens.openapi(
  createRoute({ method: "delete", path: "/teams/{team_id}/authentication-token", tags, summary: "Delete the team's legacy token", request: { params: teamParam }, responses: { ...noContentResponse, ...errorResponses } }),
  async (c) => {
    const team = await teamForTokens(c, c.req.valid("param").team_id);
    const res = await primary(c).prepare("DELETE FROM tokens WHERE team_id = ? AND legacy = 1").bind(team.id).run();
    if (res.meta.changes === 0) throw ApiError.of("not_found");
    return noContent(c);
  },
);

tokens.openapi(
  createRoute({ method: "post", path: "/teams/{team_id}/authentication-tokens", tags, summary: "Create a described team token", request: { params: teamParam }, description: TOKEN_BODY_DOC, responses: { ...ok("The token, with its secret", 201), ...errorResponses } }),
  async (c) => {
    const team = await teamForTokens(c, c.req.valid("param").team_id);
    const now = new Date();
    const a = await readTokenAttributes(c, now);
    // Uniqueness is the index's (migration 0003), so concurrent creates with one description give one token.
    return insertToken(c, now, { kind: "team", user_id: null, team_id: team.id, organization_name: team.organization_name, description: a.description, legacy: 0, expired_at: a.expiredAt });
  },
);

tokens.openapi(
  createRoute({ method: "get", path: "/teams/{team_id}/authentication-tokens", tags, summary: "List a team's tokens", request: { params: teamParam }, responses: { ...ok("A page of tokens"), ...errorResponses } }),
  async (c) => {
    const team = await teamForTokens(c, c.req.valid("param").team_id);
    const page = readPage(c);
    const rows = await primary(c).prepare("SELECT * FROM tokens WHERE team_id = ? ORDER BY created_at, id").bind(team.id).all<TokenRow>();
    return jsonapi(c, paginated(c, rows.results.slice((page.number - 1) * page.size, page.number * page.size).map((r) => serializeToken(r)), page, rows.results.length));
  },
);

tokens.openapi(
  createRoute({
    method: "delete",
    path: "/teams/{team_id}/authentication-tokens",
    tags,
    summary: "Revoke every token of a team (legacy and described) in one call",
    request: { params: teamParam },
    responses: { ...noContentResponse, ...errorResponses },
  }),
  async (c) => {
    const team = await teamForTokens(c, c.req.valid("param").team_id);
    await primary(c).prepare("DELETE FROM tokens WHERE team_id = ? AND kind = 'team'").bind(team.id).run();
    return noContent(c);
  },
);

const TEAM_TOKEN_SORTS: Record<string, string> = {
  "team-name": "t.name COLLATE NOCASE",
  "created-by": "k.created_by",
  "created-at": "k.created_at",
  "expired-at": "k.expired_at",
  "last-used-at": "k.last_used_at",
};

tokens.openapi(
  createRoute({
    method: "get",
    path: "/organizations/{organization_name}/team-tokens",
    tags,
    summary: "List the organisation's team tokens (q: team name; sort: team-name, created-by, created-at, expired-at, last-used-at)",
    request: {
      params: z.object({ organization_name: z.string().min(1).max(255) }),
      query: z.object({ q: z.string().max(255).optional(), sort: z.string().max(64).optional(), "page[number]": z.string().max(20).optional(), "page[size]": z.string().max(20).optional() }).passthrough(),
    },
    responses: { ...ok("A page of team tokens"), ...errorResponses },
  }),
  async (c) => {
    const db = primary(c);
    const access = await requireOrgAccess(db, c.get("principal"), c.req.valid("param").organization_name);
    if (!canManageTeams(access)) throw ApiError.of("not_found");
    const { q, sort } = c.req.valid("query");
    const key = sort?.replace(/^-/, "");
    if (key !== undefined && !(key in TEAM_TOKEN_SORTS)) throw ApiError.of("bad_request", { detail: `Invalid sort parameter: ${sort}`, parameter: "sort" });
    const dir = sort?.startsWith("-") ? "DESC" : "ASC";
    // Tokens without the sorted value (never used, never expiring) come last either way.
    const order = key ? `${TEAM_TOKEN_SORTS[key]} IS NULL, ${TEAM_TOKEN_SORTS[key]} ${dir}, k.id` : "k.created_at, k.id";
    // The owners team's tokens are owners' business alone (see mayManageTeamTokens).
    const ownersClause = access.isOwner ? "" : " AND t.is_owners = 0";
    const where = `FROM tokens k JOIN teams t ON t.id = k.team_id WHERE k.kind = 'team' AND t.organization_name = ? AND (? IS NULL OR instr(lower(t.name), lower(?)) > 0)${ownersClause}`;
    const page = readPage(c);
    const binds = [access.organization.name, q ?? null, q ?? null];
    const [total, rows] = await db.batch([
      db.prepare(`SELECT count(*) AS n ${where}`).bind(...binds),
      db.prepare(`SELECT k.* ${where} ORDER BY ${order} LIMIT ? OFFSET ?`).bind(...binds, page.size, (page.number - 1) * page.size),
    ]);
    const n = ((total?.results?.[0] ?? { n: 0 }) as { n: number }).n;
    return jsonapi(c, paginated(c, ((rows?.results ?? []) as TokenRow[]).map((r) => serializeToken(r)), page, n));
  },
);

// ---- organisation token ----

const orgParam = z.object({ organization_name: z.string().min(1).max(255) });

async function orgForToken(c: Context<AppEnv>, org: string) {
  // Part of the organisation's settings: owners reach it even with user tokens refused.
  const access = await requireOrgAccess(primary(c), c.get("principal"), org, { ownerSettings: true });
  if (!access.isOwner && !access.isOrgToken) throw ApiError.of("not_found");
  return access.organization;
}

tokens.openapi(
  createRoute({ method: "post", path: "/organizations/{organization_name}/authentication-token", tags, summary: "Create (replace) the organisation token", request: { params: orgParam }, description: TOKEN_BODY_DOC, responses: { ...ok("The token, with its secret", 201), ...errorResponses } }),
  async (c) => {
    const org = await orgForToken(c, c.req.valid("param").organization_name);
    const now = new Date();
    const a = await readTokenAttributes(c, now);
    const db = primary(c);
    // The organisation token acts as one service user of the organisation, kept across replacements.
    const prev = await db.prepare("SELECT user_id FROM tokens WHERE organization_name = ? AND kind = 'organization'").bind(org.name).first<{ user_id: string | null }>();
    return insertToken(
      c,
      now,
      { kind: "organization", user_id: prev?.user_id ?? newId("user"), team_id: null, organization_name: org.name, description: null, legacy: 1, expired_at: a.expiredAt },
      db.prepare("DELETE FROM tokens WHERE organization_name = ? AND kind = 'organization'").bind(org.name),
    );
  },
);

tokens.openapi(
  createRoute({ method: "get", path: "/organizations/{organization_name}/authentication-token", tags, summary: "Show the organisation token", request: { params: orgParam }, responses: { ...ok("The token (no secret)"), ...errorResponses } }),
  async (c) => {
    const org = await orgForToken(c, c.req.valid("param").organization_name);
    const row = await primary(c).prepare("SELECT * FROM tokens WHERE organization_name = ? AND kind = 'organization'").bind(org.name).first<TokenRow>();
    if (!row) throw ApiError.of("not_found");
    return jsonapi(c, { data: serializeToken(row) });
  },
);

tokens.openapi(
  createRoute({ method: "delete", path: "/organizations/{organization_name}/authentication-token", tags, summary: "Delete the organisation token", request: { params: orgParam }, responses: { ...noContentResponse, ...errorResponses } }),
  async (c) => {
    const org = await orgForToken(c, c.req.valid("param").organization_name);
    const res = await primary(c).prepare("DELETE FROM tokens WHERE organization_name = ? AND kind = 'organization'").bind(org.name).run();
    if (res.meta.changes === 0) throw ApiError.of("not_found");
    return noContent(c);
  },
);

// ---- user tokens ----

const userParam = z.object({ user_id: z.string().regex(/^user-[A-Za-z0-9]{1,64}$/) });

function requireSelf(c: Context<AppEnv>, userId: string): void {
  const p = c.get("principal");
  // Only a user token acts for its user; the real service refuses team and organisation tokens here.
  if (p.kind !== "user" || p.userId !== userId) throw ApiError.of("not_found");
}

tokens.openapi(
  createRoute({
    method: "post",
    path: "/users/{user_id}/authentication-tokens",
    tags,
    summary: "Create a user token: for yourself, or (site admins) a user's first token",
    request: { params: userParam },
    description: TOKEN_BODY_DOC,
    responses: { ...ok("The token, with its secret", 201), ...errorResponses },
  }),
  async (c) => {
    const { user_id } = c.req.valid("param");
    const p = c.get("principal");
    // Users created under /admin/users have no token yet: the site admin issues it and hands it over.
    if (p.kind === "user" && p.isSiteAdmin && p.userId !== user_id) {
      const exists = await primary(c).prepare("SELECT 1 FROM users WHERE id = ?").bind(user_id).first();
      if (!exists) throw ApiError.of("not_found");
    } else requireSelf(c, user_id);
    const now = new Date();
    const a = await readTokenAttributes(c, now);
    return insertToken(c, now, { kind: "user", user_id, team_id: null, organization_name: null, description: a.description, legacy: 0, expired_at: a.expiredAt });
  },
);

tokens.openapi(
  createRoute({ method: "get", path: "/users/{user_id}/authentication-tokens", tags, summary: "List your user tokens", request: { params: userParam }, responses: { ...ok("A page of tokens"), ...errorResponses } }),
  async (c) => {
    const { user_id } = c.req.valid("param");
    requireSelf(c, user_id);
    const page = readPage(c);
    const rows = await primary(c).prepare("SELECT * FROM tokens WHERE user_id = ? AND kind = 'user' ORDER BY created_at, id").bind(user_id).all<TokenRow>();
    return jsonapi(c, paginated(c, rows.results.slice((page.number - 1) * page.size, page.number * page.size).map((r) => serializeToken(r)), page, rows.results.length));
  },
);

const tokenParam = z.object({ token_id: z.string().regex(/^at-[A-Za-z0-9]{1,64}$/) });

/** A token is visible to its user, or (team tokens) to those who manage the team's tokens. */
async function visibleToken(c: Context<AppEnv>, id: string): Promise<TokenRow> {
  const row = await primary(c).prepare("SELECT * FROM tokens WHERE id = ?").bind(id).first<TokenRow>();
  if (!row) throw ApiError.of("not_found");
  const p = c.get("principal");
  if (row.kind === "user" && p.kind === "user" && p.userId === row.user_id) return row;
  if (row.kind === "team" && row.team_id) {
    await teamForTokens(c, row.team_id);
    return row;
  }
  if (row.kind === "organization" && row.organization_name) {
    await orgForToken(c, row.organization_name);
    return row;
  }
  throw ApiError.of("not_found");
}

tokens.openapi(
  createRoute({ method: "get", path: "/authentication-tokens/{token_id}", tags, summary: "Show a token", request: { params: tokenParam }, responses: { ...ok("The token (no secret)"), ...errorResponses } }),
  async (c) => jsonapi(c, { data: serializeToken(await visibleToken(c, c.req.valid("param").token_id)) }),
);

tokens.openapi(
  createRoute({ method: "delete", path: "/authentication-tokens/{token_id}", tags, summary: "Delete a token (it stops working at once)", request: { params: tokenParam }, responses: { ...noContentResponse, ...errorResponses } }),
  async (c) => {
    const row = await visibleToken(c, c.req.valid("param").token_id);
    await primary(c).prepare("DELETE FROM tokens WHERE id = ?").bind(row.id).run();
    return noContent(c);
  },
);
