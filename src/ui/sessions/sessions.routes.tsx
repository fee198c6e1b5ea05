/** @jsxImportSource hono/jsx */
/** Signing in with a pasted API token, and signing out (src/ui/sessions/sessions.service.ts keeps the sessions). */
import { Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { AppEnv } from "../../env";
import { ssoEnabled } from "../../sso/sso.service";
import { definePage } from "../define-page";
import { pageAfterSignIn, SESSION_COOKIE, sessionCookieOptions, signIn, signOut } from "./sessions.service";
import { SignInPage } from "./sessions.view";

export const sessionsUi = new Hono<AppEnv>();

definePage(sessionsUi, "get", "/session/new", null, (c) =>
  c.html(<SignInPage next={c.req.query("next") ? pageAfterSignIn(c.req.query("next")) : undefined} sso={ssoEnabled(c.env)} />),
);

definePage(sessionsUi, "post", "/session", null, async (c) => {
  const form = await c.req.parseBody();
  const token = typeof form.token === "string" ? form.token.trim() : "";
  const next = typeof form.next === "string" && form.next ? form.next : undefined;
  const id = await signIn(c.env, token);
  if (!id) return c.html(<SignInPage error="That token is not valid." next={next} sso={ssoEnabled(c.env)} />, 401);
  setCookie(c, SESSION_COOKIE, id, sessionCookieOptions(c.req.url));
  return c.redirect(pageAfterSignIn(next), 303);
});

definePage(sessionsUi, "post", "/session/delete", null, async (c) => {
  await signOut(c.env, getCookie(c, SESSION_COOKIE));
  deleteCookie(c, SESSION_COOKIE, { path: "/app" });
  return c.redirect("/app/session/new", 303);
});
