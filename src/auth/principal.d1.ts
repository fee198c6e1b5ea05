/**
 * The reads authentication makes (SQL over tokens, users, teams and organisations): a token by its hash with what its
 * principal needs, the refresh of its last use, and the bootstrap site admin. The tokens service owns the rest of
 * the tokens table (src/tokens/tokens.d1.ts), the users service the rest of users.
 */
import type { Db } from "../caller";
import { LIMITS } from "../limits";
import { twoFactorSql } from "../two-factor/two-factor.d1";

/** A token with what authentication needs of its user or team, found by its hash. */
interface AuthTokenRow {
  id: string;
  last_used_at: string | null;
  kind: "user" | "team" | "organization" | "audit-trails";
  user_id: string | null;
  team_id: string | null;
  organization_id: string | null;
  expired_at: string | null;
  username: string | null;
  is_site_admin: number | null;
  team_org: string | null;
  team_service_user: string | null;
  organization_name: string | null;
  created_at: string;
  ttl_cap_ms: number | null;
  two_factor: number | null;
}

/** A token as authentication sees it: itself, and what it needs of its user, team and organisation. */
export interface AuthToken {
  id: string;
  lastUsedAt: string | null;
  kind: "user" | "team" | "organization" | "audit-trails";
  userId: string | null;
  teamId: string | null;
  organizationId: string | null;
  expiredAt: string | null;
  /** A user token's user (null: the user is gone). */
  username: string | null;
  isSiteAdmin: boolean;
  /** A team token's team's organisation and service user (null: the team is gone). */
  teamOrganizationId: string | null;
  teamServiceUserId: string | null;
  /** The current name of the token's organisation (an organisation token's, or its team's). */
  organizationName: string | null;
  createdAt: string;
  /**
   * The longest a team, organisation or audit-trails token may live, when its organisation enforces its token TTL
   * policies (`max-ttl-enabled`); null otherwise. A token older than that no longer works (src/tokens/token-ttl-policies.service.ts).
   */
  ttlCapMs: number | null;
  /** A user token's user has a confirmed authenticator (organisations requiring two-factor authentication admit it). */
  twoFactor: boolean;
}

/** The token a read of `AUTH_TOKEN_COLUMNS` found (null: none; a LEFT JOIN's all-null columns included). */
export function authTokenOf(row: unknown): AuthToken | null {
  const r = row as AuthTokenRow | null;
  if (!r || r.id === null) return null;
  return {
    id: r.id,
    lastUsedAt: r.last_used_at,
    kind: r.kind,
    userId: r.user_id,
    teamId: r.team_id,
    organizationId: r.organization_id,
    expiredAt: r.expired_at,
    username: r.username,
    isSiteAdmin: r.is_site_admin === 1,
    teamOrganizationId: r.team_org,
    teamServiceUserId: r.team_service_user,
    organizationName: r.organization_name,
    createdAt: r.created_at,
    ttlCapMs: r.ttl_cap_ms,
    twoFactor: r.two_factor === 1,
  };
}

/** An `AuthToken`'s columns over `tokens k` and its joins (the UI's session read joins the same, src/ui/sessions/sessions.d1.ts). */
export const AUTH_TOKEN_COLUMNS = `k.id, k.last_used_at, k.kind, k.user_id, k.team_id, k.organization_id, k.expired_at, k.created_at,
  u.username, u.is_site_admin, t.organization_id AS team_org, t.service_user_id AS team_service_user, o.name AS organization_name,
  CASE WHEN k.kind <> 'user' AND json_extract(o.attrs, '$."max-ttl-enabled"') = 1 THEN coalesce(
    (SELECT p.max_ttl_ms FROM token_ttl_policies p WHERE p.organization_id = o.external_id AND p.token_type = replace(k.kind, '-', '_')),
    ${LIMITS.tokenTtlPolicyDefaultMs}) END AS ttl_cap_ms,
  ${twoFactorSql("k.user_id")} AS two_factor`;
export const AUTH_TOKEN_JOINS = `LEFT JOIN users u ON u.id = k.user_id LEFT JOIN teams t ON t.id = k.team_id
  LEFT JOIN organizations o ON o.external_id = coalesce(t.organization_id, k.organization_id)`;

/** The token read, as a statement (a cached principal's recheck rides in another batch: src/auth/principal-cache.ts). */
export function tokenByHashStatement(db: Db, hash: string): D1PreparedStatement {
  return db.prepare(`SELECT ${AUTH_TOKEN_COLUMNS} FROM tokens k ${AUTH_TOKEN_JOINS} WHERE k.token_hash = ?`).bind(hash);
}

export async function tokenByHash(db: Db, hash: string): Promise<AuthToken | null> {
  return authTokenOf(await tokenByHashStatement(db, hash).first());
}

/**
 * The principal cache's keys of everything that authenticates as a user (src/auth/principal-cache.ts): its tokens'
 * hashes and its UI sessions' (`session:<hash>`), password sessions and sessions of its tokens alike.
 */
export async function principalKeysOfUser(db: Db, userId: string): Promise<string[]> {
  const rows = await db
    .prepare(
      `SELECT token_hash AS k FROM tokens WHERE user_id = ?1
       UNION ALL SELECT 'session:' || id_hash FROM ui_sessions WHERE user_id = ?1 OR token_hash IN (SELECT token_hash FROM tokens WHERE user_id = ?1)`,
    )
    .bind(userId)
    .all<{ k: string }>();
  return rows.results.map((r) => r.k);
}

export async function touchToken(db: Db, id: string, at: string): Promise<void> {
  await db.prepare("UPDATE tokens SET last_used_at = ? WHERE id = ?").bind(at, id).run();
}

/**
 * What a run token rests on: its run's index row (D1 `runs`, written by the workspace object's index flush). Read in
 * the request's first batch like a cached principal's recheck (src/auth/principal-cache.ts).
 */
export function runStandingStatement(db: Db, runId: string): D1PreparedStatement {
  return db.prepare("SELECT id, workspace_id, organization_id, status FROM runs WHERE id = ?").bind(runId);
}

export interface RunStandingRow {
  id: string;
  workspace_id: string;
  organization_id: string;
  status: string;
}

// ---- the bootstrap site admin (found by its marker, migration 0003, as it may rename itself) ----

export async function bootstrapAdmin(db: Db): Promise<{ id: string; username: string } | null> {
  return db.prepare("SELECT id, username FROM users WHERE is_bootstrap = 1").first<{ id: string; username: string }>();
}

/** Creates the bootstrap admin unless it exists; a taken username leaves it uncreated. */
export async function insertBootstrapAdmin(db: Db, id: string, username: string, createdAt: string): Promise<void> {
  await db
    .prepare(
      `INSERT INTO users (id, username, email, is_site_admin, is_bootstrap, created_at)
       SELECT ?, ?, 'admin@localhost', 1, 1, ? WHERE NOT EXISTS (SELECT 1 FROM users WHERE is_bootstrap = 1)
       ON CONFLICT DO NOTHING`,
    )
    .bind(id, username, createdAt)
    .run();
}
