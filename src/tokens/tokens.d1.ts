/** All SQL for API tokens (D1 `tokens`): secrets are never stored, only their SHA-256. */
import type { Db } from "../caller";
import { offsetOf, pageWithTotal } from "../platform/paging";
import type { Page } from "../jsonapi/document";

interface TokenRow {
  id: string;
  kind: string;
  user_id: string | null;
  team_id: string | null;
  /** The organisation's id (organisation tokens, and team tokens denormalised). */
  organization_id: string | null;
  description: string | null;
  legacy: number;
  created_by: string | null;
  created_at: string;
  last_used_at: string | null;
  expired_at: string | null;
}

export type TokenKind = "user" | "team" | "organization" | "audit-trails";

/** An API token (never its secret, which only its SHA-256 in D1 stands for). */
export interface Token {
  id: string;
  kind: TokenKind;
  userId: string | null;
  teamId: string | null;
  /** The organisation's id (organisation tokens, and team tokens denormalised). */
  organizationId: string | null;
  description: string | null;
  /** A team's single legacy token, or an organisation token (one per kind). */
  legacy: boolean;
  createdBy: string | null;
  createdAt: string;
  lastUsedAt: string | null;
  expiredAt: string | null;
}

function toToken(row: TokenRow): Token {
  return {
    id: row.id,
    kind: row.kind as TokenKind,
    userId: row.user_id,
    teamId: row.team_id,
    organizationId: row.organization_id,
    description: row.description,
    legacy: row.legacy === 1,
    createdBy: row.created_by,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    expiredAt: row.expired_at,
  };
}

const tokenOrNull = (row: TokenRow | null): Token | null => (row ? toToken(row) : null);

/**
 * Inserts a token, after `replace` in the same batch when given. False when a described token's
 * description is taken (the unique index of migration 0003 decides, so concurrent creates give one).
 */
export async function insertToken(db: Db, token: Token, tokenHash: string, replace?: D1PreparedStatement, after: D1PreparedStatement[] = []): Promise<boolean> {
  const insert = db
    .prepare(
      `INSERT INTO tokens (id, token_hash, kind, user_id, team_id, organization_id, description, legacy, created_by, created_at, expired_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .bind(
      token.id,
      tokenHash,
      token.kind,
      token.userId,
      token.teamId,
      token.organizationId,
      token.description,
      token.legacy ? 1 : 0,
      token.createdBy,
      token.createdAt,
      token.expiredAt,
    );
  try {
    await db.batch([...(replace ? [replace] : []), insert, ...after]);
  } catch (err) {
    if (String(err).includes("UNIQUE") && token.description !== null) return false;
    throw err;
  }
  return true;
}

// ---- team tokens ----

export function deleteLegacyTeamTokenStatement(db: Db, teamId: string): D1PreparedStatement {
  return db.prepare("DELETE FROM tokens WHERE team_id = ? AND legacy = 1").bind(teamId);
}

export async function findLegacyTeamToken(db: Db, teamId: string): Promise<Token | null> {
  return tokenOrNull(await db.prepare("SELECT * FROM tokens WHERE team_id = ? AND legacy = 1").bind(teamId).first<TokenRow>());
}

/** False when the team had no legacy token. `after`: statements for the same batch (its audit event). */
export async function deleteLegacyTeamToken(db: Db, teamId: string, after: D1PreparedStatement[] = []): Promise<boolean> {
  const [res] = await db.batch([deleteLegacyTeamTokenStatement(db, teamId), ...after]);
  return res.meta.changes > 0;
}

export async function teamTokens(db: Db, teamId: string): Promise<Token[]> {
  return (await db.prepare("SELECT * FROM tokens WHERE team_id = ? ORDER BY created_at, id").bind(teamId).all<TokenRow>()).results.map(toToken);
}

export async function deleteTeamTokens(db: Db, teamId: string, after: D1PreparedStatement[] = []): Promise<void> {
  await db.batch([db.prepare("DELETE FROM tokens WHERE team_id = ? AND kind = 'team'").bind(teamId), ...after]);
}

const TEAM_TOKEN_SORTS: Record<string, string> = {
  "team-name": "t.name COLLATE NOCASE",
  "created-by": "k.created_by",
  "created-at": "k.created_at",
  "expired-at": "k.expired_at",
  "last-used-at": "k.last_used_at",
};

export function isTeamTokenSort(key: string): boolean {
  return key in TEAM_TOKEN_SORTS;
}

/**
 * A page of an organisation's team tokens. `sort` is a key of `TEAM_TOKEN_SORTS` (checked by the
 * caller); `withOwners` includes the owners team's tokens.
 */
export async function organizationTeamTokens(
  db: Db,
  organizationId: string,
  opts: { q: string | null; sort: { key: string; desc: boolean } | null; withOwners: boolean },
  page: Page,
): Promise<{ tokens: Token[]; total: number }> {
  const { q, sort } = opts;
  // Tokens without the sorted value (never used, never expiring) come last either way.
  const order = sort ? `${TEAM_TOKEN_SORTS[sort.key]} IS NULL, ${TEAM_TOKEN_SORTS[sort.key]} ${sort.desc ? "DESC" : "ASC"}, k.id` : "k.created_at, k.id";
  const ownersClause = opts.withOwners ? "" : " AND t.is_owners = 0";
  const where = `FROM tokens k JOIN teams t ON t.id = k.team_id WHERE k.kind = 'team' AND t.organization_id = ? AND (? IS NULL OR instr(lower(t.name), lower(?)) > 0)${ownersClause}`;
  const binds = [organizationId, q, q];
  const { rows, total } = await pageWithTotal<TokenRow>(
    db,
    db.prepare(`SELECT k.* ${where} ORDER BY ${order} LIMIT ? OFFSET ?`).bind(...binds, page.size, offsetOf(page)),
    db.prepare(`SELECT count(*) AS n ${where}`).bind(...binds),
  );
  return { tokens: rows.map(toToken), total };
}

// ---- the organisation token ----

/**
 * The kinds of organisation token: the ordinary one (`organization`) and the audit-trails one
 * (`?token=audit-trails`). An organisation holds at most one of each (migrations 0003 and 0012).
 */
export type OrganizationTokenKind = "organization" | "audit-trails";

/** The service user the organisation token acts as, kept across replacements (null: none yet). */
export async function organizationTokenUserId(db: Db, organizationId: string, kind: OrganizationTokenKind): Promise<string | null> {
  const row = await db
    .prepare("SELECT user_id FROM tokens WHERE organization_id = ? AND kind = ?")
    .bind(organizationId, kind)
    .first<{ user_id: string | null }>();
  return row?.user_id ?? null;
}

export function deleteOrganizationTokenStatement(db: Db, organizationId: string, kind: OrganizationTokenKind): D1PreparedStatement {
  return db.prepare("DELETE FROM tokens WHERE organization_id = ? AND kind = ?").bind(organizationId, kind);
}

export async function findOrganizationToken(db: Db, organizationId: string, kind: OrganizationTokenKind): Promise<Token | null> {
  return tokenOrNull(await db.prepare("SELECT * FROM tokens WHERE organization_id = ? AND kind = ?").bind(organizationId, kind).first<TokenRow>());
}

/** False when the organisation had no token of that kind. `after`: statements for the same batch (its audit event). */
export async function deleteOrganizationToken(
  db: Db,
  organizationId: string,
  kind: OrganizationTokenKind,
  after: D1PreparedStatement[] = [],
): Promise<boolean> {
  const [res] = await db.batch([deleteOrganizationTokenStatement(db, organizationId, kind), ...after]);
  return res.meta.changes > 0;
}

// ---- user tokens and tokens by id ----

export async function userTokens(db: Db, userId: string): Promise<Token[]> {
  return (await db.prepare("SELECT * FROM tokens WHERE user_id = ? AND kind = 'user' ORDER BY created_at, id").bind(userId).all<TokenRow>()).results.map(
    toToken,
  );
}

export async function findToken(db: Db, id: string): Promise<Token | null> {
  return tokenOrNull(await db.prepare("SELECT * FROM tokens WHERE id = ?").bind(id).first<TokenRow>());
}

export async function deleteToken(db: Db, id: string, after: D1PreparedStatement[] = []): Promise<void> {
  await db.batch([db.prepare("DELETE FROM tokens WHERE id = ?").bind(id), ...after]);
}
