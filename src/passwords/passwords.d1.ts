/**
 * All SQL of passwords (migrations 0024, 0027): a user's password hash (`users.password_hash`), the one-time links that
 * set one (`password_links`), failed sign-ins (`sign_in_failures`) and the browsers that signed in (`sign_in_devices`).
 */
import { AUTH_TOKEN_COLUMNS, AUTH_TOKEN_JOINS, authTokenOf, type AuthToken } from "../auth/principal.d1";
import type { Db } from "../caller";
import { twoFactorSql } from "../two-factor/two-factor.d1";
import { emailProvenSql } from "../users/users.d1";
import type { FailureStats } from "./passwords.rules";

/** A user as password sign-in sees it. */
export interface PasswordUser {
  id: string;
  username: string;
  isSiteAdmin: boolean;
  passwordHash: string | null;
  /** A confirmed authenticator: the password alone does not sign in (src/two-factor/). */
  twoFactor: boolean;
}

interface PasswordUserRow {
  id: string;
  username: string;
  is_site_admin: number;
  password_hash: string | null;
  two_factor: number;
}

const toPasswordUser = (r: PasswordUserRow): PasswordUser => ({
  id: r.id,
  username: r.username,
  isSiteAdmin: r.is_site_admin === 1,
  passwordHash: r.password_hash,
  twoFactor: r.two_factor === 1,
});

/**
 * The person a login names: its username, else the user who proved that address, else the oldest user an invitation
 * made for it; never a service user.
 */
const USER_BY_LOGIN = `SELECT id, username, is_site_admin, password_hash, ${twoFactorSql("users.id")} AS two_factor FROM users
  WHERE is_service_account = 0 AND (username = ?1 COLLATE NOCASE OR email = ?1 COLLATE NOCASE)
  ORDER BY (username = ?1 COLLATE NOCASE) DESC, ${emailProvenSql("users")} DESC, created_at, id LIMIT 1`;

const FAILURE_COLUMNS = "count(*) AS count, min(at) AS first, max(at) AS last";
/** The user a login names, as a subquery over the login bound to ?2. */
const LOGIN_USER_ID = `(SELECT id FROM (${USER_BY_LOGIN.replaceAll("?1", "?2")}))`;

/** What a sign-in looks at before it spends a PBKDF2. */
export interface SignInFacts {
  user: PasswordUser | null;
  /** Failures within the window from the client address. */
  address: FailureStats;
  /** Failures within the window of the account (the user's, or the login's when it names no one) by unknown clients. */
  account: FailureStats;
  /** The client's browser, when it signed in to this user before (its own failures within the window); else null. */
  device: FailureStats | null;
}

/**
 * In one batch: the user a login names, the failures within the window of the client address and of the account,
 * and whether the client's browser (`deviceHash`, its cookie's SHA-256) signed in to that user before, with its own
 * failures (`deviceKey` in passwords.rules.ts: `device:<hash>:<user id>`).
 */
export async function signInFacts(
  db: Db,
  q: { login: string; addressKey: string; loginKey: string; deviceHash: string | null; since: string; now: string },
): Promise<SignInFacts> {
  const statements = [
    db.prepare(USER_BY_LOGIN).bind(q.login),
    db.prepare(`SELECT ${FAILURE_COLUMNS} FROM sign_in_failures WHERE key = ? AND at > ?`).bind(q.addressKey, q.since),
    db
      .prepare(`SELECT ${FAILURE_COLUMNS} FROM sign_in_failures WHERE key = coalesce((SELECT 'user:' || ${LOGIN_USER_ID}), ?3) AND at > ?1`)
      .bind(q.since, q.login, q.loginKey),
  ];
  if (q.deviceHash)
    statements.push(
      db
        .prepare(
          `SELECT EXISTS (SELECT 1 FROM sign_in_devices d WHERE d.device_hash = ?3 AND d.user_id = ${LOGIN_USER_ID} AND d.expires_at > ?4) AS known,
             ${FAILURE_COLUMNS} FROM sign_in_failures WHERE key = 'device:' || ?3 || ':' || ${LOGIN_USER_ID} AND at > ?1`,
        )
        .bind(q.since, q.login, q.deviceHash, q.now),
    );
  const [user, address, account, device] = await db.batch(statements);
  const row = (user.results[0] ?? null) as PasswordUserRow | null;
  const known = device?.results[0] as (FailureStats & { known: number }) | undefined;
  return {
    user: row ? toPasswordUser(row) : null,
    address: address.results[0] as FailureStats,
    account: account.results[0] as FailureStats,
    device: known?.known === 1 ? { count: known.count, first: known.first, last: known.last } : null,
  };
}

/** Remembers that a browser signed in to a user (until `expiresAt`), and forgets browsers whose time is up. */
export async function rememberDevice(db: Db, deviceHash: string, userId: string, expiresAt: string, now: string): Promise<void> {
  await db.batch([
    db.prepare("DELETE FROM sign_in_devices WHERE expires_at <= ?").bind(now),
    db
      .prepare("INSERT INTO sign_in_devices (device_hash, user_id, expires_at) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET expires_at = excluded.expires_at")
      .bind(deviceHash, userId, expiresAt),
  ]);
}

/** Records one failure under each key, and prunes failures older than `before` (nothing counts them any more). */
export async function recordFailure(db: Db, keys: string[], at: string, before: string): Promise<void> {
  await db.batch([
    ...keys.map((k) => db.prepare("INSERT INTO sign_in_failures (key, at) VALUES (?, ?)").bind(k, at)),
    db.prepare("DELETE FROM sign_in_failures WHERE at <= ?").bind(before),
  ]);
}

/** Failures within the window under each key, in one batch (a sign-in's second step reads its budgets with it). */
export async function failureStats(db: Db, keys: string[], since: string): Promise<FailureStats[]> {
  const res = await db.batch(keys.map((k) => db.prepare(`SELECT ${FAILURE_COLUMNS} FROM sign_in_failures WHERE key = ? AND at > ?`).bind(k, since)));
  return res.map((r) => r.results[0] as FailureStats);
}

export async function clearFailures(db: Db, key: string): Promise<void> {
  await db.prepare("DELETE FROM sign_in_failures WHERE key = ?").bind(key).run();
}

/** Replaces a password hash, unless it changed meanwhile (a re-hash must not undo a new password). */
export async function replacePasswordHash(db: Db, userId: string, old: string, hash: string): Promise<void> {
  await db.prepare("UPDATE users SET password_hash = ? WHERE id = ? AND password_hash = ?").bind(hash, userId, old).run();
}

// ---- the accounts an invitation's link may be for ----

/**
 * The account an invitation names, as its link needs it (`u`, the invitation `m`): created for that invitation
 * (no one proved the address: src/users/memberships.d1.ts), and used by no one yet — no password, no API token, no
 * active membership anywhere, not a site admin, its address not proven. Checked when a link is made and again, in
 * the same transaction that spends it, when it is used; triggers (migration 0027) also kill the account's unused
 * invitation links the moment it is used, so that nothing undone later revives them.
 */
const ACCOUNT_FACTS = (u: string, m: string) => `${u}.password_hash IS NOT NULL AS has_password,
  (${u}.is_site_admin = 1 OR EXISTS (SELECT 1 FROM tokens k WHERE k.user_id = ${u}.id)
    OR EXISTS (SELECT 1 FROM organization_memberships a WHERE a.user_id = ${u}.id AND a.status = 'active')) AS in_use,
  ${emailProvenSql(u)} AS proven,
  coalesce(${u}.created_for_invitation = ${m}.id, 0) AS created_for_it`;

const LINKABLE = (u: string, m: string) => `(${m}.status = 'invited' AND ${u}.password_hash IS NULL AND ${u}.is_site_admin = 0
  AND NOT EXISTS (SELECT 1 FROM tokens k WHERE k.user_id = ${u}.id)
  AND NOT EXISTS (SELECT 1 FROM organization_memberships a WHERE a.user_id = ${u}.id AND a.status = 'active')
  AND NOT ${emailProvenSql(u)} AND ${u}.created_for_invitation = ${m}.id)`;

/** The invited account's standing, as `ACCOUNT_FACTS` reads it (null: the user is gone). */
export interface AccountStanding {
  hasPassword: boolean;
  inUse: boolean;
  proven: boolean;
  createdForIt: boolean;
}

export async function accountStanding(db: Db, membershipId: string): Promise<AccountStanding | null> {
  const row = await db
    .prepare(`SELECT ${ACCOUNT_FACTS("u", "m")} FROM organization_memberships m JOIN users u ON u.id = m.user_id WHERE m.id = ?`)
    .bind(membershipId)
    .first<{ has_password: number; in_use: number; proven: number; created_for_it: number }>();
  return row ? { hasPassword: row.has_password === 1, inUse: row.in_use === 1, proven: row.proven === 1, createdForIt: row.created_for_it === 1 } : null;
}

// ---- links ----

export type LinkKind = "invitation" | "reset";

export interface PasswordLink {
  userId: string;
  username: string;
  isSiteAdmin: boolean;
  kind: LinkKind;
  membershipId: string | null;
  /** The user who made it, and the token it made it with (null: a password session, or the operator's token). */
  createdBy: string | null;
  createdByToken: string | null;
  expiresAt: string;
  usedAt: string | null;
}

interface LinkRow {
  user_id: string;
  username: string;
  is_site_admin: number;
  kind: LinkKind;
  membership_id: string | null;
  created_by: string | null;
  created_by_token: string | null;
  expires_at: string;
  used_at: string | null;
}

/** A link by its secret's hash, with its user (null: no such link, or its user is gone). */
export async function linkByHash(db: Db, idHash: string): Promise<PasswordLink | null> {
  const r = await db
    .prepare(
      `SELECT l.user_id, u.username, u.is_site_admin, l.kind, l.membership_id, l.created_by, l.created_by_token, l.expires_at, l.used_at
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
        createdBy: r.created_by,
        createdByToken: r.created_by_token,
        expiresAt: r.expires_at,
        usedAt: r.used_at,
      }
    : null;
}

/** Who made a link, as authentication would see them now: the token it was made with, or its user. */
export async function linkMaker(
  db: Db,
  link: Pick<PasswordLink, "createdBy" | "createdByToken">,
): Promise<{ token: AuthToken | null } | { user: { id: string; username: string; isSiteAdmin: boolean; twoFactor: boolean } | null } | null> {
  if (link.createdByToken) {
    const row = await db.prepare(`SELECT ${AUTH_TOKEN_COLUMNS} FROM tokens k ${AUTH_TOKEN_JOINS} WHERE k.id = ?`).bind(link.createdByToken).first();
    return { token: authTokenOf(row) };
  }
  if (!link.createdBy) return null;
  const u = await db
    .prepare(`SELECT id, username, is_site_admin, ${twoFactorSql("users.id")} AS two_factor FROM users WHERE id = ?`)
    .bind(link.createdBy)
    .first<{ id: string; username: string; is_site_admin: number; two_factor: number }>();
  return { user: u ? { id: u.id, username: u.username, isSiteAdmin: u.is_site_admin === 1, twoFactor: u.two_factor === 1 } : null };
}

/**
 * A new link, voiding the unused links it replaces (an invitation's earlier links, or the user's earlier reset
 * links), and pruning links expired a while ago (a used or expired link is kept until then, to say so).
 */
export async function insertLink(
  db: Db,
  link: {
    idHash: string;
    userId: string;
    kind: LinkKind;
    membershipId: string | null;
    createdBy: string | null;
    createdByToken: string | null;
    createdAt: string;
    expiresAt: string;
  },
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
      .prepare(
        `INSERT INTO password_links (id_hash, user_id, kind, membership_id, created_by, created_by_token, created_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .bind(link.idHash, link.userId, link.kind, link.membershipId, link.createdBy, link.createdByToken, link.createdAt, link.expiresAt),
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
 * Uses a link, in one transaction: marks it used — only while it is unused and unexpired (two racing uses: one wins)
 * and, for an invitation's, while its invitation is pending and names an account no one uses yet (`LINKABLE`) — and
 * then sets its user's password, voids the user's other unused links, ends every UI session of the user (password
 * sessions, sessions of its API tokens and, for the bootstrap admin, of the operator's token `adminTokenHash`; the
 * tokens themselves stay, as on the real service) and forgets its failed sign-ins. False when the link could not be used.
 */
export async function useLink(db: Db, idHash: string, userId: string, hash: string, now: string, adminTokenHash: string | null): Promise<boolean> {
  const spent = "EXISTS (SELECT 1 FROM password_links WHERE id_hash = ?2 AND used_at = ?3)";
  const [used] = await db.batch([
    db
      .prepare(
        `UPDATE password_links SET used_at = ?1 WHERE id_hash = ?2 AND used_at IS NULL AND expires_at > ?1
         AND (kind = 'reset' OR EXISTS (SELECT 1 FROM organization_memberships m JOIN users u ON u.id = m.user_id
           WHERE m.id = password_links.membership_id AND u.id = password_links.user_id AND ${LINKABLE("u", "m")}))`,
      )
      .bind(now, idHash),
    // changes(): the rows the statement before changed (a batch runs its statements in order, in one transaction).
    db.prepare("UPDATE users SET password_hash = ? WHERE id = ? AND changes() = 1").bind(hash, userId),
    db.prepare(`DELETE FROM password_links WHERE user_id = ?1 AND used_at IS NULL AND ${spent}`).bind(userId, idHash, now),
    db
      .prepare(
        `DELETE FROM ui_sessions WHERE ${spent} AND (user_id = ?1 OR token_hash IN (SELECT token_hash FROM tokens WHERE user_id = ?1)
           OR (token_hash = ?4 AND EXISTS (SELECT 1 FROM users WHERE id = ?1 AND is_bootstrap = 1)))`,
      )
      .bind(userId, idHash, now, adminTokenHash),
    db.prepare(`DELETE FROM sign_in_failures WHERE key = 'user:' || ?1 AND ${spent}`).bind(userId, idHash, now),
  ]);
  return used.meta.changes === 1;
}
