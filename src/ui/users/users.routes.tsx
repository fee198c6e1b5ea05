/** @jsxImportSource hono/jsx */
/**
 * The site admin's users (`/app/admin/users`): the list (searched by username or e-mail, paged), one user's page, and
 * what the admin users API does (create a user, confirm an e-mail change, grant and revoke site admin, turn off
 * two-factor authentication) plus
 * reset links, each through the service the API calls, which authorises as the site admin (anyone else: 404).
 */
import { Hono } from "hono";
import type { AppEnv } from "../../env";
import { pageOf } from "../../jsonapi/schemas";
import { resetLink } from "../../passwords/passwords.service";
import { adminDisableTwoFactor } from "../../two-factor/two-factor.service";
import { changeSiteAdmin, confirmEmailChange, createUser, listUsers, showListedUser } from "../../users/users.service";
import { callerOf, type Ctx } from "../context";
import { definePage } from "../define-page";
import { attempt, formOf, type Refusal, text, ticked } from "../forms";
import { AdminUserPage, AdminUsersPage, usersPath } from "./users.view";

export const usersUi = new Hono<AppEnv>();

const linkUrl = (c: Ctx, secret: string) => `${new URL(c.req.url).origin}/app/password/${secret}`;

async function usersPage(c: Ctx, extra: { created?: { url: string; expiresAt: string; username: string }; refusal?: Refusal } = {}): Promise<Response> {
  const caller = callerOf(c);
  const pg = pageOf(c.req.query());
  const q = (c.req.query("q") ?? "").trim().slice(0, 255);
  const { users, total } = await listUsers(caller, pg, q);
  const query = new URLSearchParams([...new URL(c.req.url).searchParams].filter(([k]) => k !== "page[number]"));
  return c.html(<AdminUsersPage principal={caller.principal} users={users} total={total} page={pg} query={query} {...extra} />, extra.refusal ? 422 : 200);
}

definePage(usersUi, "get", "/admin/users", "site-admin", (c) => usersPage(c));

/** A new user, as `POST /admin/users` makes one. */
definePage(usersUi, "post", "/admin/users", "site-admin", async (c) => {
  const form = await formOf(c);
  const values = { username: text(form, "username").trim().slice(0, 64), email: text(form, "email").trim().slice(0, 255) };
  const admin = ticked(form, "is-site-admin");
  return attempt(
    c,
    () => createUser(callerOf(c), { ...values, "is-site-admin": admin }),
    (user) => usersPath(user.id),
    (errors) => usersPage(c, { refusal: { form: "new-user", values: { ...values, "is-site-admin": String(admin) }, errors } }),
  );
});

definePage(usersUi, "get", "/admin/users/:user_id", "site-admin", async (c) => {
  const caller = callerOf(c);
  return c.html(<AdminUserPage principal={caller.principal} user={await showListedUser(caller, c.req.param("user_id"))} />);
});

definePage(usersUi, "post", "/admin/users/:user_id/reset-link", "site-admin", async (c) => {
  const made = await resetLink(callerOf(c), c.req.param("user_id"));
  return usersPage(c, { created: { url: linkUrl(c, made.secret), expiresAt: made.expiresAt, username: made.username } });
});

/** As `POST /admin/users/:id/actions/confirm-email`; a user with no change waiting: its page, with why. */
definePage(usersUi, "post", "/admin/users/:user_id/confirm-email", "site-admin", async (c) => {
  const caller = callerOf(c);
  const id = c.req.param("user_id");
  return attempt(
    c,
    () => confirmEmailChange(caller, id),
    usersPath(id),
    async (errors) => c.html(<AdminUserPage principal={caller.principal} user={await showListedUser(caller, id)} errors={errors} />, 422),
  );
});

/** As `POST /admin/users/:id/actions/grant_admin` and `revoke_admin`; a refusal (one's own, the bootstrap admin): the user's page, with why. */
for (const [path, admin] of [
  ["grant-admin", true],
  ["revoke-admin", false],
] as const) {
  definePage(usersUi, "post", `/admin/users/:user_id/${path}`, "site-admin", async (c) => {
    const caller = callerOf(c);
    const id = c.req.param("user_id");
    return attempt(
      c,
      () => changeSiteAdmin(caller, id, admin),
      usersPath(id),
      async (errors) => c.html(<AdminUserPage principal={caller.principal} user={await showListedUser(caller, id)} errors={errors} />, 422),
    );
  });
}

/** As `POST /admin/users/:id/actions/disable_two_factor`: for a user who lost its authenticator and its recovery codes. */
definePage(usersUi, "post", "/admin/users/:user_id/disable-two-factor", "site-admin", async (c) => {
  const id = c.req.param("user_id");
  await adminDisableTwoFactor(callerOf(c), id);
  return c.redirect(usersPath(id), 303);
});
