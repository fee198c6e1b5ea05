/** The `ui_sessions` table (migration 0012): all of the web UI's SQL. */
import type { Db } from "../caller";
import { AUTH_TOKEN_COLUMNS, AUTH_TOKEN_JOINS, authTokenOf, type AuthToken } from "../auth/principal.d1";

/** A session with its token as authentication sees it (null when the token no longer exists). */
export interface Session {
  tokenHash: string;
  expiresAt: string;
  token: AuthToken | null;
}

/** The session a read of `sessionByIdHashStatement` found (null: none). */
export function sessionOf(row: unknown): Session | null {
  const r = row as { session_token_hash: string; session_expires_at: string } | null;
  return r ? { tokenHash: r.session_token_hash, expiresAt: r.session_expires_at, token: authTokenOf(r) } : null;
}

export async function insertSession(db: Db, idHash: string, tokenHash: string, createdAt: string, expiresAt: string): Promise<void> {
  await db
    .prepare("INSERT INTO ui_sessions (id_hash, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?)")
    .bind(idHash, tokenHash, createdAt, expiresAt)
    .run();
}

/** The session joined to its token, as a statement (a cached session's recheck rides in another batch): what authenticating it needs in one read. */
export function sessionByIdHashStatement(db: Db, idHash: string): D1PreparedStatement {
  return db
    .prepare(
      `SELECT s.token_hash AS session_token_hash, s.expires_at AS session_expires_at, ${AUTH_TOKEN_COLUMNS}
       FROM ui_sessions s LEFT JOIN tokens k ON k.token_hash = s.token_hash ${AUTH_TOKEN_JOINS}
       WHERE s.id_hash = ?`,
    )
    .bind(idHash);
}

export async function sessionByIdHash(db: Db, idHash: string): Promise<Session | null> {
  return sessionOf(await sessionByIdHashStatement(db, idHash).first());
}

export async function deleteSession(db: Db, idHash: string): Promise<void> {
  await db.prepare("DELETE FROM ui_sessions WHERE id_hash = ?").bind(idHash).run();
}

/** Expired sessions go whenever someone signs in (no cron needed: the table only grows by sign-ins). */
export async function deleteExpiredSessions(db: Db, now: string): Promise<void> {
  await db.prepare("DELETE FROM ui_sessions WHERE expires_at <= ?").bind(now).run();
}
