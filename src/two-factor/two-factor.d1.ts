/**
 * All SQL of two-factor authentication (migration 0033): a user's authenticator (`two_factor`), its recovery codes
 * (`two_factor_recovery_codes`) and the second step of password sign-ins (`sign_in_challenges`).
 */
import type { Db } from "../caller";

/** A user's authenticator: its sealed secret, whether a code confirmed it, the newest time step accepted. */
export interface Authenticator {
  userId: string;
  secretSealed: string;
  confirmedAt: string | null;
  lastStep: number;
}

interface AuthenticatorRow {
  user_id: string;
  secret_sealed: string;
  confirmed_at: string | null;
  last_step: number;
}

const toAuthenticator = (r: AuthenticatorRow): Authenticator => ({
  userId: r.user_id,
  secretSealed: r.secret_sealed,
  confirmedAt: r.confirmed_at,
  lastStep: r.last_step,
});

/** Whether user `u` (a column or a bound parameter) has a confirmed authenticator, as SQL (authentication joins it). */
export const twoFactorSql = (u: string) => `EXISTS (SELECT 1 FROM two_factor tf WHERE tf.user_id = ${u} AND tf.confirmed_at IS NOT NULL)`;
/** Whether user `u` has begun enrolling an authenticator (confirmed or not). */
export const twoFactorEnrolledSql = (u: string) => `EXISTS (SELECT 1 FROM two_factor tf WHERE tf.user_id = ${u})`;

export async function findAuthenticator(db: Db, userId: string): Promise<Authenticator | null> {
  const row = await db
    .prepare("SELECT user_id, secret_sealed, confirmed_at, last_step FROM two_factor WHERE user_id = ?")
    .bind(userId)
    .first<AuthenticatorRow>();
  return row ? toAuthenticator(row) : null;
}

/** The recovery codes a user has left (unused). */
export async function recoveryCodesLeft(db: Db, userId: string): Promise<number> {
  const row = await db.prepare("SELECT count(*) AS n FROM two_factor_recovery_codes WHERE user_id = ? AND used_at IS NULL").bind(userId).first<{ n: number }>();
  return row?.n ?? 0;
}

/** A pending authenticator, replacing a pending one; false when the user has a confirmed one (it stays). */
export async function insertPendingAuthenticator(db: Db, userId: string, secretSealed: string, now: string): Promise<boolean> {
  const res = await db
    .prepare(
      `INSERT INTO two_factor (user_id, secret_sealed, confirmed_at, last_step, created_at) VALUES (?1, ?2, NULL, 0, ?3)
       ON CONFLICT (user_id) DO UPDATE SET secret_sealed = excluded.secret_sealed, last_step = 0, created_at = excluded.created_at
       WHERE two_factor.confirmed_at IS NULL`,
    )
    .bind(userId, secretSealed, now)
    .run();
  return res.meta.changes === 1;
}

/**
 * Spends a time step: only when it is newer than any accepted before (a code works once; two racing uses of one code:
 * one wins). `sealed`: the secret the code was checked against, so that a code of a replaced enrolment never counts.
 */
export async function spendStep(db: Db, userId: string, sealed: string, step: number): Promise<boolean> {
  const res = await db
    .prepare("UPDATE two_factor SET last_step = ?3 WHERE user_id = ?1 AND secret_sealed = ?2 AND last_step < ?3")
    .bind(userId, sealed, step)
    .run();
  return res.meta.changes === 1;
}

/**
 * Confirms a pending authenticator with its first code's step, and stores its recovery codes (their hashes), in one
 * batch; false when it was not pending with that secret any more, or the step was spent.
 */
export async function confirmAuthenticator(db: Db, userId: string, sealed: string, step: number, codeHashes: string[], now: string): Promise<boolean> {
  const [confirmed] = await db.batch([
    db
      .prepare("UPDATE two_factor SET confirmed_at = ?4, last_step = ?3 WHERE user_id = ?1 AND secret_sealed = ?2 AND confirmed_at IS NULL AND last_step < ?3")
      .bind(userId, sealed, step, now),
    // changes(): the rows the statement before changed (a batch runs its statements in order, in one transaction).
    db.prepare("DELETE FROM two_factor_recovery_codes WHERE user_id = ? AND changes() = 1").bind(userId),
    ...codeHashes.map((h) =>
      db
        .prepare(
          "INSERT INTO two_factor_recovery_codes (user_id, code_hash) SELECT ?1, ?2 WHERE EXISTS (SELECT 1 FROM two_factor WHERE user_id = ?1 AND confirmed_at = ?3)",
        )
        .bind(userId, h, now),
    ),
  ]);
  return confirmed.meta.changes === 1;
}

/** Uses a recovery code up: false when it is not one of the user's, or was used. */
export async function useRecoveryCode(db: Db, userId: string, codeHash: string, now: string): Promise<boolean> {
  const res = await db
    .prepare("UPDATE two_factor_recovery_codes SET used_at = ? WHERE user_id = ? AND code_hash = ? AND used_at IS NULL")
    .bind(now, userId, codeHash)
    .run();
  return res.meta.changes === 1;
}

/** Removes a user's authenticator and recovery codes (disabling two-factor authentication). */
export async function deleteAuthenticator(db: Db, userId: string): Promise<void> {
  await db.batch([
    db.prepare("DELETE FROM two_factor WHERE user_id = ?").bind(userId),
    db.prepare("DELETE FROM two_factor_recovery_codes WHERE user_id = ?").bind(userId),
    db.prepare("DELETE FROM sign_in_challenges WHERE user_id = ?").bind(userId),
  ]);
}

// ---- the second step of a password sign-in ----

export interface Challenge {
  userId: string;
  failureKey: string;
  addressKey: string | null;
  next: string | null;
  expiresAt: string;
}

export async function insertChallenge(db: Db, idHash: string, c: Challenge, now: string): Promise<void> {
  await db.batch([
    db.prepare("DELETE FROM sign_in_challenges WHERE expires_at <= ?").bind(now),
    db
      .prepare("INSERT INTO sign_in_challenges (id_hash, user_id, failure_key, address_key, next, expires_at) VALUES (?, ?, ?, ?, ?, ?)")
      .bind(idHash, c.userId, c.failureKey, c.addressKey, c.next, c.expiresAt),
  ]);
}

/** An unexpired challenge, with its user's username (null: none, expired, or its user is gone). */
export async function findChallenge(db: Db, idHash: string, now: string): Promise<(Challenge & { username: string }) | null> {
  const r = await db
    .prepare(
      `SELECT c.user_id, c.failure_key, c.address_key, c.next, c.expires_at, u.username FROM sign_in_challenges c JOIN users u ON u.id = c.user_id
       WHERE c.id_hash = ? AND c.expires_at > ?`,
    )
    .bind(idHash, now)
    .first<{ user_id: string; failure_key: string; address_key: string | null; next: string | null; expires_at: string; username: string }>();
  return r ? { userId: r.user_id, failureKey: r.failure_key, addressKey: r.address_key, next: r.next, expiresAt: r.expires_at, username: r.username } : null;
}

/** Ends a challenge (its code was accepted); false when another request ended it first. */
export async function deleteChallenge(db: Db, idHash: string): Promise<boolean> {
  const res = await db.prepare("DELETE FROM sign_in_challenges WHERE id_hash = ?").bind(idHash).run();
  return res.meta.changes === 1;
}
