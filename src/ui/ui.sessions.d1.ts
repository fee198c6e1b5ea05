/** The `ui_sessions` table (migration 0012): all of the web UI's SQL. */
import type { Db } from "../caller";

export interface SessionRow {
  token_hash: string;
  expires_at: string;
}

export async function insertSession(db: Db, idHash: string, tokenHash: string, createdAt: string, expiresAt: string): Promise<void> {
  await db
    .prepare("INSERT INTO ui_sessions (id_hash, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?)")
    .bind(idHash, tokenHash, createdAt, expiresAt)
    .run();
}

export async function sessionByIdHash(db: Db, idHash: string): Promise<SessionRow | null> {
  return db.prepare("SELECT token_hash, expires_at FROM ui_sessions WHERE id_hash = ?").bind(idHash).first<SessionRow>();
}

export async function deleteSession(db: Db, idHash: string): Promise<void> {
  await db.prepare("DELETE FROM ui_sessions WHERE id_hash = ?").bind(idHash).run();
}

/** Expired sessions go whenever someone signs in (no cron needed: the table only grows by sign-ins). */
export async function deleteExpiredSessions(db: Db, now: string): Promise<void> {
  await db.prepare("DELETE FROM ui_sessions WHERE expires_at <= ?").bind(now).run();
}
