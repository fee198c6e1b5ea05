/** All SQL for users (D1 `users`). */
import type { Db } from "../caller";
import { offsetOf, pageWithTotal } from "../platform/paging";
import { appendTo, textMatchSql } from "../platform/text-match";
import { twoFactorEnrolledSql, twoFactorSql } from "../two-factor/two-factor.d1";

/**
 * Whether the holder of account `u` proved control of its address (migration 0027, `email_proof`): a site admin
 * created the account or confirmed the address (`site-admin`), it was in use before proofs were recorded (`upgrade`),
 * or it is a site admin's own (the bootstrap admin's address is the operator's). An address an inviter typed proves
 * nothing: invitations attach only to accounts this holds for.
 */
export const emailProvenSql = (u: string) => `(${u}.email_proof IS NOT NULL OR ${u}.is_site_admin = 1)`;

/** How an address was proven (`email_proof`). Single sign-on will add `sso`, set when the identity provider asserts it. */
export type EmailProof = "site-admin";

interface UserRow {
  id: string;
  username: string;
  email: string | null;
  is_site_admin: number;
  unconfirmed_email: string | null;
  tf_enabled?: number;
  tf_verified?: number;
}

export interface User {
  id: string;
  username: string;
  email: string | null;
  isSiteAdmin: boolean;
  /** An email change waiting for confirmation (see PATCH /account/update). */
  unconfirmedEmail: string | null;
  /** Two-factor authentication: an authenticator enrolled (`enabled`), and confirmed with a code (`verified`). */
  twoFactor?: { enabled: boolean; verified: boolean };
}

function toUser(row: UserRow): User {
  return {
    id: row.id,
    username: row.username,
    email: row.email,
    isSiteAdmin: row.is_site_admin === 1,
    unconfirmedEmail: row.unconfirmed_email ?? null,
    twoFactor: { enabled: row.tf_enabled === 1, verified: row.tf_verified === 1 },
  };
}

const USER_COLUMNS = `id, username, email, is_site_admin, unconfirmed_email, ${twoFactorEnrolledSql("users.id")} AS tf_enabled,
  ${twoFactorSql("users.id")} AS tf_verified`;

const isUniqueViolation = (err: unknown) => String(err).includes("UNIQUE");

export async function findUser(db: Db, id: string): Promise<User | null> {
  const row = await db.prepare(`SELECT ${USER_COLUMNS} FROM users WHERE id = ?`).bind(id).first<UserRow>();
  return row ? toUser(row) : null;
}

export async function userExists(db: Db, id: string): Promise<boolean> {
  return (await db.prepare("SELECT 1 FROM users WHERE id = ?").bind(id).first()) !== null;
}

/** A user a site admin creates, its address proven by the site admin. False when the username is taken. */
export async function insertUser(db: Db, user: User, createdAt: string): Promise<boolean> {
  const proof: EmailProof = "site-admin";
  const res = await db
    .prepare("INSERT INTO users (id, username, email, is_site_admin, email_proof, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")
    .bind(user.id, user.username, user.email, user.isSiteAdmin ? 1 : 0, proof, createdAt)
    .run();
  return res.meta.changes === 1;
}

/** Whether another user holds `email` as a proven address (one proven holder per address). */
export async function provenElsewhere(db: Db, email: string, userId: string): Promise<boolean> {
  const row = await db
    .prepare(`SELECT 1 FROM users u WHERE u.id != ? AND u.email = ? COLLATE NOCASE AND ${emailProvenSql("u")} LIMIT 1`)
    .bind(userId, email)
    .first();
  return row !== null;
}

/**
 * Changes a user's username and/or email. With `direct` (a site admin's own change) the email applies at once, proven;
 * otherwise it waits in unconfirmed_email, cleared when it equals the current address, unless that address is not
 * proven yet (then it waits too, so that a site admin can confirm it). False when the username is taken.
 */
export async function updateAccount(db: Db, userId: string, change: { username: string | null; email: string | null }, direct: boolean): Promise<boolean> {
  const proof: EmailProof = "site-admin";
  try {
    await db
      .prepare(
        `UPDATE users SET username = coalesce(?1, username),
           email = CASE WHEN ?3 = 1 THEN coalesce(?2, email) ELSE email END,
           email_proof = CASE WHEN ?3 = 1 AND ?2 IS NOT NULL THEN ?5 ELSE email_proof END,
           unconfirmed_email = CASE WHEN ?2 IS NULL THEN unconfirmed_email
             WHEN ?3 = 1 OR (lower(?2) = lower(coalesce(email, '')) AND ${emailProvenSql("users")}) THEN NULL ELSE ?2 END
         WHERE id = ?4`,
      )
      .bind(change.username, change.email, direct ? 1 : 0, userId, proof)
      .run();
  } catch (err) {
    if (isUniqueViolation(err)) return false;
    throw err;
  }
  return true;
}

/**
 * Makes a user's unconfirmed email its email, proven by the site admin who confirms it. False when another user has
 * proven that address already: one proven holder per address (the accounts invitations made for it prove nothing).
 */
export async function confirmEmail(db: Db, id: string): Promise<boolean> {
  const proof: EmailProof = "site-admin";
  const res = await db
    .prepare(
      `UPDATE users SET email = unconfirmed_email, unconfirmed_email = NULL, email_proof = ?2
       WHERE id = ?1 AND unconfirmed_email IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM users o WHERE o.id != ?1 AND o.email = users.unconfirmed_email COLLATE NOCASE AND ${emailProvenSql("o")})`,
    )
    .bind(id, proof)
    .run();
  return res.meta.changes === 1;
}

/**
 * Makes a user a site admin or not (its address counts as proven while it is one, `emailProvenSql`). Never the
 * bootstrap admin, which stands for the operator's ADMIN_TOKEN: false then, or when there is no such person.
 */
export async function setSiteAdmin(db: Db, id: string, admin: boolean): Promise<boolean> {
  const res = await db
    .prepare("UPDATE users SET is_site_admin = ? WHERE id = ? AND is_service_account = 0 AND is_bootstrap = 0")
    .bind(admin ? 1 : 0, id)
    .run();
  return res.meta.changes === 1;
}

/** Users named by id or by username. */
export async function usersByIdOrUsername(db: Db, refs: string[]): Promise<Array<{ id: string; username: string }>> {
  const json = JSON.stringify(refs);
  const rows = await db
    .prepare("SELECT id, username FROM users WHERE id IN (SELECT value FROM json_each(?)) OR username IN (SELECT value FROM json_each(?))")
    .bind(json, json)
    .all<{ id: string; username: string }>();
  return rows.results;
}

export async function usernames(db: Db, ids: string[]): Promise<Array<{ id: string; username: string }>> {
  return (
    await db
      .prepare("SELECT id, username FROM users WHERE id IN (SELECT value FROM json_each(?))")
      .bind(JSON.stringify(ids))
      .all<{ id: string; username: string }>()
  ).results;
}

/** A user as the site admin's list shows it. */
export interface ListedUser {
  id: string;
  username: string;
  email: string | null;
  isSiteAdmin: boolean;
  hasPassword: boolean;
  /** A confirmed authenticator (two-factor authentication on). */
  twoFactor: boolean;
}

interface ListedUserRow {
  id: string;
  username: string;
  email: string | null;
  is_site_admin: number;
  has_password: number;
  two_factor: number;
}

const LISTED_COLUMNS = `id, username, email, is_site_admin, password_hash IS NOT NULL AS has_password, ${twoFactorSql("users.id")} AS two_factor`;

const toListedUser = (r: ListedUserRow): ListedUser => ({
  id: r.id,
  username: r.username,
  email: r.email,
  isSiteAdmin: r.is_site_admin === 1,
  hasPassword: r.has_password === 1,
  twoFactor: r.two_factor === 1,
});

/**
 * People (not the service users standing for team and organisation tokens), by username, one page, with the total;
 * `q`: those whose username or e-mail contains it (literally).
 */
export async function usersPage(db: Db, page: { number: number; size: number }, q = ""): Promise<{ users: ListedUser[]; total: number }> {
  const binds: unknown[] = [];
  const where = ["is_service_account = 0"];
  if (q) where.push(`(${textMatchSql("username", q, "contains", appendTo(binds))} OR ${textMatchSql("coalesce(email, '')", q, "contains", appendTo(binds))})`);
  const filter = where.join(" AND ");
  const { rows, total } = await pageWithTotal<ListedUserRow>(
    db,
    db
      .prepare(`SELECT ${LISTED_COLUMNS} FROM users WHERE ${filter} ORDER BY username COLLATE NOCASE, id LIMIT ? OFFSET ?`)
      .bind(...binds, page.size, offsetOf(page)),
    db.prepare(`SELECT count(*) AS n FROM users WHERE ${filter}`).bind(...binds),
  );
  return { users: rows.map(toListedUser), total };
}

/** One person (not a service user) as the site admin's pages show it, with its unconfirmed e-mail. */
export async function listedUser(db: Db, id: string): Promise<(ListedUser & { unconfirmedEmail: string | null }) | null> {
  const r = await db
    .prepare(`SELECT ${LISTED_COLUMNS}, unconfirmed_email FROM users WHERE id = ? AND is_service_account = 0`)
    .bind(id)
    .first<ListedUserRow & { unconfirmed_email: string | null }>();
  return r ? { ...toListedUser(r), unconfirmedEmail: r.unconfirmed_email } : null;
}
