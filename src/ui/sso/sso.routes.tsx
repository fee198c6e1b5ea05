/** @jsxImportSource hono/jsx */
/**
 * Signing in through the operator's identity provider (src/sso/sso.service.ts): `/app/sso/start` sends the browser to
 * the provider with a cookie tying the callback to it; `/app/sso/callback` checks the answer and starts a session.
 * Both are served without a session.
 */
import { Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { AppEnv } from "../../env";
import { finishSignIn, type SsoFailure, startSignIn } from "../../sso/sso.service";
import { SSO_REQUEST_TTL_MS } from "../../sso/sso.rules";
import type { Ctx } from "../context";
import { definePage } from "../define-page";
import { pageAfterSignIn, SESSION_COOKIE, sessionCookieOptions, signInAsUser } from "../sessions/sessions.service";
import { SignedInPage, SsoFailedPage } from "./sso.view";

export const ssoUi = new Hono<AppEnv>();

/** The cookie of a sign-in under way: sent back only to the callback, and on the provider's cross-site redirect (Lax). */
const SSO_COOKIE = "ws_sso";
const ssoCookieOptions = (url: string) => ({ ...sessionCookieOptions(url), path: "/app/sso", sameSite: "Lax", maxAge: SSO_REQUEST_TTL_MS / 1000 }) as const;

function failed(c: Ctx, f: SsoFailure): Response | Promise<Response> {
  // The reason is for the operator's log; the page says what the person can do.
  if (f.detail) console.log(JSON.stringify({ level: "warn", requestId: c.get("requestId"), sso: f.reason, detail: f.detail }));
  switch (f.reason) {
    case "off":
      return c.html(<SsoFailedPage title="Single sign-on is off" detail="This installation has no single sign-on configured." />, 404);
    case "unavailable":
      return c.html(<SsoFailedPage title="Identity provider unavailable" detail="The identity provider could not be reached. Try again later." />, 502);
    case "gone":
      return c.html(<SsoFailedPage title="Sign-in expired" detail="This sign-in is unknown, used or expired: start again." />, 400);
    case "refused":
      return c.html(
        <SsoFailedPage title="Sign-in refused" detail={`The identity provider's answer was refused: ${f.detail ?? "it did not check out"}.`} />,
        401,
      );
  }
}

definePage(ssoUi, "get", "/sso/start", null, async (c) => {
  const next = c.req.query("next");
  const started = await startSignIn(c.env, new URL(c.req.url).origin, next ? pageAfterSignIn(next) : null);
  if (!started.ok) return failed(c, started);
  setCookie(c, SSO_COOKIE, started.cookie, ssoCookieOptions(c.req.url));
  return c.redirect(started.location, 303);
});

definePage(ssoUi, "get", "/sso/callback", null, async (c) => {
  const outcome = await finishSignIn(c.env, c.req.url, getCookie(c, SSO_COOKIE));
  deleteCookie(c, SSO_COOKIE, { path: "/app/sso" });
  if (!outcome.ok) return failed(c, outcome);
  setCookie(c, SESSION_COOKIE, await signInAsUser(c.env, outcome.userId, "sso"), sessionCookieOptions(c.req.url));
  return c.html(<SignedInPage next={pageAfterSignIn(outcome.next)} />);
});
