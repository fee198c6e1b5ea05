/** The `oauth_login_codes` table (migrations 0025, 0027): all SQL of `terraform login`'s one-time codes. */
import type { Db } from "../caller";

interface LoginCodeRow {
  code_hash: string;
  user_id: string;
  client_id: string;
  redirect_uri: string;
  code_challenge: string;
  session_hash: string | null;
  created_at: string;
  expires_at: string;
}

/** An issued code (never the code itself: only its SHA-256 is stored). */
export interface LoginCode {
  codeHash: string;
  userId: string;
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  /** The UI session that approved it (its id's SHA-256; null: a code issued before sessions were recorded). */
  sessionHash: string | null;
  createdAt: string;
  expiresAt: string;
}

function toLoginCode(row: LoginCodeRow): LoginCode {
  return {
    codeHash: row.code_hash,
    userId: row.user_id,
    clientId: row.client_id,
    redirectUri: row.redirect_uri,
    codeChallenge: row.code_challenge,
    sessionHash: row.session_hash,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}

/** Stores a new code, dropping expired ones in the same batch (the table only grows by approvals). */
export async function insertLoginCode(db: Db, code: LoginCode, now: string): Promise<void> {
  await db.batch([
    db.prepare("DELETE FROM oauth_login_codes WHERE expires_at <= ?").bind(now),
    db
      .prepare(
        `INSERT INTO oauth_login_codes (code_hash, user_id, client_id, redirect_uri, code_challenge, session_hash, created_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .bind(code.codeHash, code.userId, code.clientId, code.redirectUri, code.codeChallenge, code.sessionHash, code.createdAt, code.expiresAt),
  ]);
}

/**
 * Takes a code out of the table and returns it (null: unknown or already taken). One statement, so of two racing
 * exchanges exactly one gets the row; whatever the exchange then finds wrong, the code is spent.
 */
export async function takeLoginCode(db: Db, codeHash: string): Promise<LoginCode | null> {
  const row = await db.prepare("DELETE FROM oauth_login_codes WHERE code_hash = ? RETURNING *").bind(codeHash).first<LoginCodeRow>();
  return row ? toLoginCode(row) : null;
}

/**
 * Whether the UI session that approved a code still stands for its user: unexpired, and a password session of that
 * user, or a session of one of its unexpired tokens (or, for the bootstrap admin, of the operator's `adminTokenHash`).
 */
export async function approvingSessionStands(db: Db, sessionHash: string, userId: string, now: string, adminTokenHash: string | null): Promise<boolean> {
  const row = await db
    .prepare(
      `SELECT 1 FROM ui_sessions s LEFT JOIN tokens k ON k.token_hash = s.token_hash
       WHERE s.id_hash = ?1 AND s.expires_at > ?2 AND (s.user_id = ?3 OR (k.kind = 'user' AND k.user_id = ?3 AND (k.expired_at IS NULL OR k.expired_at > ?2))
         OR (s.token_hash = ?4 AND EXISTS (SELECT 1 FROM users WHERE id = ?3 AND is_bootstrap = 1)))`,
    )
    .bind(sessionHash, now, userId, adminTokenHash)
    .first();
  return row !== null;
}
