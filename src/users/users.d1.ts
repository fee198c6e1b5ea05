/** All SQL for users (D1 `users`). */
import type { Db } from "../caller";

interface UserRow {
  id: string;
  username: string;
  email: string | null;
  is_site_admin: number;
  unconfirmed_email: string | null;
}

export interface User {
  id: string;
  username: string;
  email: string | null;
  isSiteAdmin: boolean;
  /** An email change waiting for confirmation (see PATCH /account/update). */
  unconfirmedEmail: string | null;
}

function toUser(row: UserRow): User {
  return { id: row.id, username: row.username, email: row.email, isSiteAdmin: row.is_site_admin === 1, unconfirmedEmail: row.unconfirmed_email ?? null };
}

const USER_COLUMNS = "id, username, email, is_site_admin, unconfirmed_email";

const isUniqueViolation = (err: unknown) => String(err).includes("UNIQUE");

export async function findUser(db: Db, id: string): Promise<User | null> {
  const row = await db.prepare(`SELECT ${USER_COLUMNS} FROM users WHERE id = ?`).bind(id).first<UserRow>();
  return row ? toUser(row) : null;
}

export async function userExists(db: Db, id: string): Promise<boolean> {
  return (await db.prepare("SELECT 1 FROM users WHERE id = ?").bind(id).first()) !== null;
}

/** False when the username is taken. */
export async function insertUser(db: Db, user: User, createdAt: string): Promise<boolean> {
  const res = await db
    .prepare("INSERT INTO users (id, username, email, is_site_admin, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")
    .bind(user.id, user.username, user.email, user.isSiteAdmin ? 1 : 0, createdAt)
    .run();
  return res.meta.changes === 1;
}

/**
 * Changes a user's username and/or email. With `direct` the email applies at once; otherwise it waits
 * in unconfirmed_email (cleared when it equals the current address). False when the username is taken.
 */
export async function updateAccount(db: Db, userId: string, change: { username: string | null; email: string | null }, direct: boolean): Promise<boolean> {
  try {
    await db
      .prepare(
        `UPDATE users SET username = coalesce(?1, username),
           email = CASE WHEN ?3 = 1 THEN coalesce(?2, email) ELSE email END,
           unconfirmed_email = CASE WHEN ?2 IS NULL THEN unconfirmed_email WHEN ?3 = 1 OR lower(?2) = lower(coalesce(email, '')) THEN NULL ELSE ?2 END
         WHERE id = ?4`,
      )
      .bind(change.username, change.email, direct ? 1 : 0, userId)
      .run();
  } catch (err) {
    if (isUniqueViolation(err)) return false;
    throw err;
  }
  return true;
}

/**
 * Makes a user's unconfirmed email its email. False when another user (an invited one included)
 * has confirmed that address already: one owner per address.
 */
export async function confirmEmail(db: Db, id: string): Promise<boolean> {
  const res = await db
    .prepare(
      `UPDATE users SET email = unconfirmed_email, unconfirmed_email = NULL
       WHERE id = ?1 AND unconfirmed_email IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM users o WHERE o.id != ?1 AND o.email = users.unconfirmed_email COLLATE NOCASE)`,
    )
    .bind(id)
    .run();
  return res.meta.changes === 1;
}

/**
 * The user whose confirmed address `email` is, created with the given id and username when there is
 * none (unconfirmed changes never match).
 */
export async function userIdForEmail(db: Db, email: string, created: { id: string; username: string; createdAt: string }): Promise<string | null> {
  await db
    .prepare("INSERT INTO users (id, username, email, created_at) SELECT ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM users WHERE email = ? COLLATE NOCASE)")
    .bind(created.id, created.username, email, created.createdAt, email)
    .run();
  const user = await db.prepare("SELECT id FROM users WHERE email = ? COLLATE NOCASE ORDER BY created_at, id LIMIT 1").bind(email).first<{ id: string }>();
  return user?.id ?? null;
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
}

/** People (not the service users standing for team and organisation tokens), by username, one page, with the total. */
export async function usersPage(db: Db, page: { number: number; size: number }): Promise<{ users: ListedUser[]; total: number }> {
  const [rows, count] = await db.batch([
    db
      .prepare(
        `SELECT id, username, email, is_site_admin, password_hash IS NOT NULL AS has_password FROM users
         WHERE is_service_account = 0 ORDER BY username COLLATE NOCASE, id LIMIT ? OFFSET ?`,
      )
      .bind(page.size, (page.number - 1) * page.size),
    db.prepare("SELECT count(*) AS n FROM users WHERE is_service_account = 0"),
  ]);
  const users = (rows.results as Array<{ id: string; username: string; email: string | null; is_site_admin: number; has_password: number }>).map((r) => ({
    id: r.id,
    username: r.username,
    email: r.email,
    isSiteAdmin: r.is_site_admin === 1,
    hasPassword: r.has_password === 1,
  }));
  return { users, total: (count.results[0] as { n: number }).n };
}
