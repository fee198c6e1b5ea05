/** The `ui_sessions` table (migrations 0013 and 0024): all of the web UI's SQL. */
import type { Db } from "../../caller";
import { twoFactorSql } from "../../two-factor/two-factor.d1";
import type { SessionMethod } from "../../auth/principal";
import { AUTH_TOKEN_COLUMNS, AUTH_TOKEN_JOINS, authTokenOf, type AuthToken } from "../../auth/principal.d1";

/**
 * A session with what it stands for: an API token as authentication sees it (`tokenHash`; `token` null when the
 * token no longer exists), or a user signed in with a password (`userId`; `user` null when the user is gone).
 */
export interface Session {
  tokenHash: string | null;
  createdAt: string;
  /** The last request's time, to the half minute (its start when none since). */
  lastSeenAt: string;
  expiresAt: string;
  /** How it was started (migration 0034; a user's session from before it: a password's). */
  method: SessionMethod;
  token: AuthToken | null;
  userId: string | null;
  user: { id: string; username: string; isSiteAdmin: boolean; twoFactor: boolean } | null;
}

interface SessionRow {
  session_token_hash: string | null;
  session_created_at: string;
  session_last_seen_at: string | null;
  session_expires_at: string;
  session_user_id: string | null;
  session_method: string | null;
  session_username: string | null;
  session_is_site_admin: number | null;
  session_two_factor: number | null;
}

/** The session a read of `sessionByIdHashStatement` found (null: none). */
export function sessionOf(row: unknown): Session | null {
  const r = row as SessionRow | null;
  if (!r) return null;
  const user =
    r.session_user_id && r.session_username !== null
      ? { id: r.session_user_id, username: r.session_username, isSiteAdmin: r.session_is_site_admin === 1, twoFactor: r.session_two_factor === 1 }
      : null;
  return {
    tokenHash: r.session_token_hash,
    createdAt: r.session_created_at,
    lastSeenAt: r.session_last_seen_at ?? r.session_created_at,
    expiresAt: r.session_expires_at,
    method: r.session_method === "sso" ? "sso" : r.session_user_id ? "password" : "token",
    token: authTokenOf(r),
    userId: r.session_user_id,
    user,
  };
}

/** A session standing for an API token (`tokenHash`) or for a user signed in with a password or through SSO (`userId`). */
export async function insertSession(
  db: Db,
  idHash: string,
  owner: { tokenHash: string; userId?: undefined } | { userId: string; tokenHash?: undefined; method: "password" | "sso" },
  createdAt: string,
  expiresAt: string,
  after: D1PreparedStatement[] = [],
): Promise<void> {
  await db.batch([
    db
      .prepare("INSERT INTO ui_sessions (id_hash, token_hash, user_id, created_at, expires_at, method) VALUES (?, ?, ?, ?, ?, ?)")
      .bind(idHash, owner.tokenHash ?? null, owner.userId ?? null, createdAt, expiresAt, owner.userId ? owner.method : "token"),
    ...after,
  ]);
}

/**
 * The session joined to its token or its password user, as a statement (a cached session's recheck rides in another
 * batch): what authenticating it needs in one read.
 */
export function sessionByIdHashStatement(db: Db, idHash: string): D1PreparedStatement {
  return db
    .prepare(
      `SELECT s.token_hash AS session_token_hash, s.created_at AS session_created_at, s.last_seen_at AS session_last_seen_at,
         s.expires_at AS session_expires_at, s.user_id AS session_user_id, s.method AS session_method,
         pu.username AS session_username, pu.is_site_admin AS session_is_site_admin, ${twoFactorSql("s.user_id")} AS session_two_factor,
         ${AUTH_TOKEN_COLUMNS}
       FROM ui_sessions s LEFT JOIN tokens k ON k.token_hash = s.token_hash ${AUTH_TOKEN_JOINS}
       LEFT JOIN users pu ON pu.id = s.user_id
       WHERE s.id_hash = ?`,
    )
    .bind(idHash);
}

export async function sessionByIdHash(db: Db, idHash: string): Promise<Session | null> {
  return sessionOf(await sessionByIdHashStatement(db, idHash).first());
}

/** Records a session's request (the organisations' idle timeout counts from it). */
export async function touchSession(db: Db, idHash: string, now: string): Promise<void> {
  await db.prepare("UPDATE ui_sessions SET last_seen_at = ? WHERE id_hash = ?").bind(now, idHash).run();
}

export async function deleteSession(db: Db, idHash: string): Promise<void> {
  await db.prepare("DELETE FROM ui_sessions WHERE id_hash = ?").bind(idHash).run();
}

/** Expired sessions go whenever someone signs in (no cron needed: the table only grows by sign-ins). */
export async function deleteExpiredSessions(db: Db, now: string): Promise<void> {
  await db.prepare("DELETE FROM ui_sessions WHERE expires_at <= ?").bind(now).run();
}
