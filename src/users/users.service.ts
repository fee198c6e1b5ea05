/** Users: site admins create them, confirm email changes and grant or revoke site admin; users change their own account. */
import { authorize } from "../auth/requirements";
import type { Caller } from "../caller";
import { ApiError } from "../errors";
import { newId, nowIso } from "../ids";
import {
  confirmEmail,
  setSiteAdmin,
  findUser,
  insertUser,
  type ListedUser,
  listedUser,
  provenElsewhere,
  updateAccount as updateAccountRow,
  type User,
  usersPage,
} from "./users.d1";

const USERNAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,190}$/;

function checkUsername(username: string): void {
  if (!USERNAME.test(username))
    throw ApiError.of("invalid_attribute", { detail: "Username may only contain letters, numbers, -, _ and .", pointer: "/data/attributes/username" });
}

export function checkEmail(email: string): void {
  if (!EMAIL.test(email)) throw ApiError.of("invalid_attribute", { detail: "Email is invalid", pointer: "/data/attributes/email" });
}

const usernameTaken = () => ApiError.of("invalid_attribute", { detail: "Username has already been taken", pointer: "/data/attributes/username" });

/** Site admins only; anyone else is told the endpoint does not exist. */
function requireSiteAdmin(caller: Caller): void {
  authorize(caller, "site-admin");
}

export async function createUser(caller: Caller, a: { username: string; email: string; "is-site-admin"?: boolean }): Promise<User> {
  requireSiteAdmin(caller);
  checkUsername(a.username);
  checkEmail(a.email);
  const user: User = { id: newId("user"), username: a.username, email: a.email, isSiteAdmin: !!a["is-site-admin"], unconfirmedEmail: null };
  // The site admin vouches for the address (it is proven): one proven holder per address.
  if (await provenElsewhere(caller.db, a.email, user.id))
    throw ApiError.of("invalid_attribute", { detail: "Email has already been taken", pointer: "/data/attributes/email" });
  if (!(await insertUser(caller.db, user, nowIso()))) throw usernameTaken();
  return user;
}

/** A user; its email only for the user itself and site admins. */
export async function showUser(caller: Caller, id: string): Promise<User> {
  const user = await findUser(caller.db, id);
  if (!user) throw ApiError.of("not_found");
  const p = caller.principal;
  const self = p.kind === "user" && (p.userId === user.id || p.isSiteAdmin);
  return self ? user : { ...user, email: null, unconfirmedEmail: null };
}

export async function updateAccount(caller: Caller, a: { username?: string; email?: string }): Promise<User> {
  const p = caller.principal;
  // Service users (team and organisation tokens) have no account to change.
  authorize(caller, "user");
  if (p.kind !== "user") throw ApiError.of("not_found");
  if (a.username !== undefined) checkUsername(a.username);
  if (a.email !== undefined) checkEmail(a.email);
  // An address is someone's only once proven (invitations attach only to proven addresses): a change waits in
  // unconfirmed_email until the site admin confirms it. The site admin's own change has no one above it to confirm
  // it and applies at once, proven, unless another user has proven that address.
  if (p.isSiteAdmin && a.email !== undefined && (await provenElsewhere(caller.db, a.email, p.userId)))
    throw ApiError.of("invalid_attribute", { detail: "Email has already been taken", pointer: "/data/attributes/email" });
  if (!(await updateAccountRow(caller.db, p.userId, { username: a.username ?? null, email: a.email ?? null }, p.isSiteAdmin))) throw usernameTaken();
  const user = await findUser(caller.db, p.userId);
  if (!user) throw ApiError.of("not_found");
  return user;
}

/** Confirms a user's email change (the local stand-in for the confirmation email). */
export async function confirmEmailChange(caller: Caller, id: string): Promise<User> {
  requireSiteAdmin(caller);
  const user = await findUser(caller.db, id);
  if (!user) throw ApiError.of("not_found");
  if (!user.unconfirmedEmail) throw ApiError.of("invalid_attribute", { detail: "The user has no email change to confirm", pointer: "/data/attributes/email" });
  // One proven holder per address: one another user proved stays theirs.
  if (!(await confirmEmail(caller.db, id)))
    throw ApiError.of("invalid_attribute", { detail: "Email has already been taken", pointer: "/data/attributes/email" });
  return (await findUser(caller.db, id))!;
}

/** Every person with an account (`q`: whose username or e-mail contains it), a page at a time: site admins only (the web UI's user list). */
export async function listUsers(caller: Caller, page: { number: number; size: number }, q = ""): Promise<{ users: ListedUser[]; total: number }> {
  requireSiteAdmin(caller);
  return usersPage(caller.db, page, q);
}

/** One person, as the site admin's user page shows it: site admins only. */
export async function showListedUser(caller: Caller, id: string): Promise<ListedUser & { unconfirmedEmail: string | null }> {
  requireSiteAdmin(caller);
  const user = await listedUser(caller.db, id);
  if (!user) throw ApiError.of("not_found");
  return user;
}

/**
 * Grants or revokes site admin (the admin users API's `grant_admin` and `revoke_admin`). A site admin does not revoke
 * its own (someone must remain to undo it), and the bootstrap admin, which stands for the operator's token, stays one.
 */
export async function changeSiteAdmin(caller: Caller, id: string, admin: boolean): Promise<User> {
  requireSiteAdmin(caller);
  const p = caller.principal;
  const user = await findUser(caller.db, id);
  if (!user) throw ApiError.of("not_found");
  if (!admin && p.kind === "user" && p.userId === id)
    throw ApiError.of("invalid_attribute", { detail: "You cannot revoke your own site admin rights", pointer: "/data/attributes/is-site-admin" });
  if (!(await setSiteAdmin(caller.db, id, admin)))
    throw ApiError.of("invalid_attribute", {
      detail: "The bootstrap site admin (the operator's token) remains a site admin",
      pointer: "/data/attributes/is-site-admin",
    });
  return (await findUser(caller.db, id))!;
}
