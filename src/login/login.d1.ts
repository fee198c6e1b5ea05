/** The `oauth_login_codes` table (migration 0025): all SQL of `terraform login`'s one-time codes. */
import type { Db } from "../caller";

interface LoginCodeRow {
  code_hash: string;
  user_id: string;
  client_id: string;
  redirect_uri: string;
  code_challenge: string;
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
        "INSERT INTO oauth_login_codes (code_hash, user_id, client_id, redirect_uri, code_challenge, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      )
      .bind(code.codeHash, code.userId, code.clientId, code.redirectUri, code.codeChallenge, code.createdAt, code.expiresAt),
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
