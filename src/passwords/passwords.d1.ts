/**
 * All SQL of passwords (migration 0024): a user's password hash (`users.password_hash`), the one-time links that set
 * one (`password_links`), and failed sign-ins (`sign_in_failures`).
 */
import type { Db } from "../caller";
import type { FailureStats } from "./passwords.rules";

/** A user as password sign-in sees it. */
export interface PasswordUser {
  id: string;
  username: string;
  isSiteAdmin: boolean;
  passwordHash: string | null;
}

interface PasswordUserRow {
  id: string;
  username: string;
  is_site_admin: number;
  password_hash: string | null;
}

const toPasswordUser = (r: PasswordUserRow): PasswordUser => ({
  id: r.id,
  username: r.username,
  isSiteAdmin: r.is_site_admin === 1,
  passwordHash: r.password_hash,
});

/** The person a login names: its username, else the oldest user with that confirmed address; never a service user. */
const USER_BY_LOGIN = `SELECT id, username, is_site_admin, password_hash FROM users
  WHERE is_service_account = 0 AND (username = ?1 COLLATE NOCASE OR email = ?1 COLLATE NOCASE)
  ORDER BY (username = ?1 COLLATE NOCASE) DESC, created_at, id LIMIT 1`;

const FAILURE_STATS = "SELECT count(*) AS count, min(at) AS first, max(at) AS last FROM sign_in_failures WHERE key = ? AND at > ?";

/**
 * In one batch: the user a login names, and the failures within the window of the client address and of the
 * account (the user's, or the login's when it names no one).
 */
export async function signInFacts(
  db: Db,
  login: string,
  addressKey: string,
  loginKey: string,
  since: string,
): Promise<{ user: PasswordUser | null; address: FailureStats; account: FailureStats }> {
  const [user, address, account] = await db.batch([
    db.prepare(USER_BY_LOGIN).bind(login),
    db.prepare(FAILURE_STATS).bind(addressKey, since),
    db
      .prepare(
        `SELECT count(*) AS count, min(at) AS first, max(at) AS last FROM sign_in_failures
         WHERE key = coalesce((SELECT 'user:' || id FROM (${USER_BY_LOGIN.replaceAll("?1", "?2")})), ?3) AND at > ?1`,
      )
      .bind(since, login, loginKey),
  ]);
  const row = (user.results[0] ?? null) as PasswordUserRow | null;
  return { user: row ? toPasswordUser(row) : null, address: address.results[0] as FailureStats, account: account.results[0] as FailureStats };
}

/** Records one failure under each key, and prunes failures older than `before` (nothing counts them any more). */
export async function recordFailure(db: Db, keys: string[], at: string, before: string): Promise<void> {
  await db.batch([
    ...keys.map((k) => db.prepare("INSERT INTO sign_in_failures (key, at) VALUES (?, ?)").bind(k, at)),
    db.prepare("DELETE FROM sign_in_failures WHERE at <= ?").bind(before),
  ]);
}

export async function clearFailures(db: Db, key: string): Promise<void> {
  await db.prepare("DELETE FROM sign_in_failures WHERE key = ?").bind(key).run();
}

/** Replaces a password hash, unless it changed meanwhile (a re-hash must not undo a new password). */
export async function replacePasswordHash(db: Db, userId: string, old: string, hash: string): Promise<void> {
  await db.prepare("UPDATE users SET password_hash = ? WHERE id = ? AND password_hash = ?").bind(hash, userId, old).run();
}

/**
 * Whether a user has a password, and whether its account is in use otherwise (a site admin, an API token, or an
 * active membership anywhere): null when there is no such user.
 */
export async function accountStanding(db: Db, userId: string): Promise<{ hasPassword: boolean; inUse: boolean } | null> {
  const row = await db
    .prepare(
      `SELECT password_hash IS NOT NULL AS has_password,
         (is_site_admin = 1 OR EXISTS (SELECT 1 FROM tokens WHERE user_id = ?1)
           OR EXISTS (SELECT 1 FROM organization_memberships WHERE user_id = ?1 AND status = 'active')) AS in_use
       FROM users WHERE id = ?1`,
    )
    .bind(userId)
    .first<{ has_password: number; in_use: number }>();
  return row ? { hasPassword: row.has_password === 1, inUse: row.in_use === 1 } : null;
}

// ---- links ----

export type LinkKind = "invitation" | "reset";

export interface PasswordLink {
  userId: string;
  username: string;
  isSiteAdmin: boolean;
  kind: LinkKind;
  membershipId: string | null;
  expiresAt: string;
  usedAt: string | null;
}

interface LinkRow {
  user_id: string;
  username: string;
  is_site_admin: number;
  kind: LinkKind;
  membership_id: string | null;
  expires_at: string;
  used_at: string | null;
}

/** A link by its secret's hash, with its user (null: no such link, or its user is gone). */
export async function linkByHash(db: Db, idHash: string): Promise<PasswordLink | null> {
  const r = await db
    .prepare(
      `SELECT l.user_id, u.username, u.is_site_admin, l.kind, l.membership_id, l.expires_at, l.used_at
       FROM password_links l JOIN users u ON u.id = l.user_id WHERE l.id_hash = ?`,
    )
    .bind(idHash)
    .first<LinkRow>();
  return r
    ? {
        userId: r.user_id,
        username: r.username,
        isSiteAdmin: r.is_site_admin === 1,
        kind: r.kind,
        membershipId: r.membership_id,
        expiresAt: r.expires_at,
        usedAt: r.used_at,
      }
    : null;
}

/**
 * A new link, voiding the unused links it replaces (an invitation's earlier links, or the user's earlier reset
 * links), and pruning links expired a while ago (a used or expired link is kept until then, to say so).
 */
export async function insertLink(
  db: Db,
  link: { idHash: string; userId: string; kind: LinkKind; membershipId: string | null; createdBy: string | null; createdAt: string; expiresAt: string },
  pruneBefore: string,
): Promise<void> {
  const voided =
    link.kind === "invitation"
      ? db.prepare("DELETE FROM password_links WHERE membership_id = ? AND used_at IS NULL").bind(link.membershipId)
      : db.prepare("DELETE FROM password_links WHERE user_id = ? AND kind = 'reset' AND used_at IS NULL").bind(link.userId);
  await db.batch([
    db.prepare("DELETE FROM password_links WHERE expires_at <= ?").bind(pruneBefore),
    voided,
    db
      .prepare("INSERT INTO password_links (id_hash, user_id, kind, membership_id, created_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)")
      .bind(link.idHash, link.userId, link.kind, link.membershipId, link.createdBy, link.createdAt, link.expiresAt),
  ]);
}

/** The newest unused, unexpired link of an invitation: when it expires (null: none). */
export async function liveInvitationLink(db: Db, membershipId: string, now: string): Promise<{ createdAt: string; expiresAt: string } | null> {
  return db
    .prepare(
      `SELECT created_at AS createdAt, expires_at AS expiresAt FROM password_links
       WHERE membership_id = ? AND used_at IS NULL AND expires_at > ? ORDER BY created_at DESC LIMIT 1`,
    )
    .bind(membershipId, now)
    .first<{ createdAt: string; expiresAt: string }>();
}

/**
 * Uses a link: marks it used and sets its user's password, in one transaction, only while the link is unused and
 * unexpired (two racing uses: one wins). Then voids the user's other unused links and forgets its failed sign-ins.
 * False when the link could not be used.
 */
export async function useLink(db: Db, idHash: string, userId: string, hash: string, now: string): Promise<boolean> {
  const [used] = await db.batch([
    db.prepare("UPDATE password_links SET used_at = ?1 WHERE id_hash = ?2 AND used_at IS NULL AND expires_at > ?1").bind(now, idHash),
    // changes(): the rows the statement before changed (a batch runs its statements in order, in one transaction).
    db.prepare("UPDATE users SET password_hash = ? WHERE id = ? AND changes() = 1").bind(hash, userId),
    db
      .prepare(
        "DELETE FROM password_links WHERE user_id = ?1 AND used_at IS NULL AND EXISTS (SELECT 1 FROM password_links WHERE id_hash = ?2 AND used_at = ?3)",
      )
      .bind(userId, idHash, now),
  ]);
  if (used.meta.changes !== 1) return false;
  await clearFailures(db, `user:${userId}`);
  return true;
}
