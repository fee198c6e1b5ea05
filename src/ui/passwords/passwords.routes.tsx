/** @jsxImportSource hono/jsx */
/**
 * People sign in as themselves: the password form of the sign-in page, the one-time links that set a password
 * (`/app/password/:secret`), an invitation's link page for whoever may invite, and the second step of a sign-in for
 * people with two-factor authentication (`/app/session/two-factor`). The site admin's reset links: src/ui/users/. Each calls the passwords service (src/passwords/); links are shown once, in the answer to the form
 * that made them, since only their hash is kept.
 */
import { Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { clientKey } from "../../auth/auth.middleware";
import type { AppEnv } from "../../env";
import { ssoEnabled } from "../../sso/sso.service";
import { ApiError } from "../../errors";
import {
  type DeviceCookie,
  invitationLink,
  knownDevice,
  passwordLinkState,
  setPasswordWithLink,
  showInvitationLink,
  signInSecondFactor,
  signInWithPassword,
} from "../../passwords/passwords.service";
import { callerOf, type Ctx } from "../context";
import { SecondFactorPage, SignInPage } from "../sessions/sessions.view";
import { InvitationPage, LinkGonePage, SetPasswordPage } from "./passwords.view";
import { definePage } from "../define-page";
import type { Form } from "../forms";
import {
  CHALLENGE_COOKIE,
  challengeCookieOptions,
  DEVICE_COOKIE,
  deviceCookieOptions,
  pageAfterSignIn,
  SESSION_COOKIE,
  sessionCookieOptions,
  signInAsUser,
} from "../sessions/sessions.service";

export const passwordUi = new Hono<AppEnv>();

const text = (form: Form, k: string) => (typeof form[k] === "string" ? (form[k] as string) : "");
const reasonsOf = (e: ApiError) => e.errors.map((x) => x.detail ?? x.title);
const linkUrl = (c: Ctx, secret: string) => `${new URL(c.req.url).origin}/app/password/${secret}`;

/** Signs the user in, and keeps the browser's device cookie, which gives it a failure budget of its own for this user. */
async function startSession(c: Ctx, userId: string, device: DeviceCookie): Promise<void> {
  setCookie(c, SESSION_COOKIE, await signInAsUser(c.env, userId), sessionCookieOptions(c.req.url));
  setCookie(c, DEVICE_COOKIE, device.value, deviceCookieOptions(c.req.url, device.expiresAt));
}

/** One answer for an unknown login, a user without a password and a wrong password: nothing tells them apart. */
const REFUSED = "Incorrect username, e-mail or password.";

definePage(passwordUi, "post", "/session/password", null, async (c) => {
  const form = await c.req.parseBody();
  const login = text(form, "username");
  const next = text(form, "next") || undefined;
  const outcome = await signInWithPassword(c.env, {
    login,
    password: text(form, "password"),
    address: clientKey(c),
    device: getCookie(c, DEVICE_COOKIE),
    next: next ? pageAfterSignIn(next) : null,
  });
  if (!outcome.ok) {
    if (outcome.reason === "second-factor") {
      // The password was right, but it alone signs no one in: the code's page, with the step's cookie.
      setCookie(c, CHALLENGE_COOKIE, outcome.challenge, challengeCookieOptions(c.req.url, outcome.expiresAt));
      return c.redirect("/app/session/two-factor", 303);
    }
    if (outcome.reason === "limited")
      return c.html(<SignInPage passwordError={tooMany(c, outcome.retryAt)} login={login} next={next} sso={ssoEnabled(c.env)} />, 429);
    return c.html(<SignInPage passwordError={REFUSED} login={login} next={next} sso={ssoEnabled(c.env)} />, 401);
  }
  await startSession(c, outcome.user.id, outcome.device);
  return c.redirect(pageAfterSignIn(next), 303);
});

/** The refusal of a sign-in over its failure budget, with its Retry-After. */
function tooMany(c: Ctx, retryAt: number): string {
  const at = new Date(retryAt).toISOString();
  c.header("Retry-After", String(Math.max(1, Math.ceil((retryAt - Date.now()) / 1000))));
  return `Too many failed sign-ins. Try again after ${at.slice(11, 19)} UTC (${at.slice(0, 10)}), or use a reset link.`;
}

// ---- the second step: a code of the user's authenticator ----

definePage(passwordUi, "get", "/session/two-factor", null, (c) => {
  if (!getCookie(c, CHALLENGE_COOKIE)) return c.redirect("/app/session/new", 303);
  return c.html(<SecondFactorPage />);
});

definePage(passwordUi, "post", "/session/two-factor", null, async (c) => {
  const form = await c.req.parseBody();
  const outcome = await signInSecondFactor(c.env, {
    challenge: getCookie(c, CHALLENGE_COOKIE) ?? "",
    code: text(form, "code"),
    device: getCookie(c, DEVICE_COOKIE),
  });
  if (!outcome.ok) {
    if (outcome.reason === "gone") {
      deleteCookie(c, CHALLENGE_COOKIE, { path: "/app/session" });
      return c.html(<SignInPage passwordError="The sign-in expired: enter your password again." sso={ssoEnabled(c.env)} />, 401);
    }
    if (outcome.reason === "limited") return c.html(<SecondFactorPage error={tooMany(c, outcome.retryAt)} />, 429);
    return c.html(<SecondFactorPage error="That code is not valid." />, 401);
  }
  deleteCookie(c, CHALLENGE_COOKIE, { path: "/app/session" });
  await startSession(c, outcome.userId, outcome.device);
  return c.redirect(pageAfterSignIn(outcome.next), 303);
});

// ---- the links that set a password ----

definePage(passwordUi, "get", "/password/:secret", null, async (c) => {
  const found = await passwordLinkState(c.env, c.req.param("secret"));
  if (found.state !== "valid") return c.html(<LinkGonePage state={found.state} />, found.state === "unknown" ? 404 : 410);
  return c.html(<SetPasswordPage action={c.req.path} username={found.link.username} invitation={found.link.kind === "invitation"} />);
});

definePage(passwordUi, "post", "/password/:secret", null, async (c) => {
  const form = await c.req.parseBody();
  const secret = c.req.param("secret");
  let used: Awaited<ReturnType<typeof setPasswordWithLink>>;
  try {
    used = await setPasswordWithLink(c.env, secret, text(form, "password"), text(form, "password_confirmation"));
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 422) throw e;
    const found = await passwordLinkState(c.env, secret);
    if (found.state !== "valid") return c.html(<LinkGonePage state={found.state} />, found.state === "unknown" ? 404 : 410);
    return c.html(
      <SetPasswordPage action={c.req.path} username={found.link.username} invitation={found.link.kind === "invitation"} errors={reasonsOf(e)} />,
      422,
    );
  }
  if (used.state !== "valid") return c.html(<LinkGonePage state={used.state} />, used.state === "unknown" ? 404 : 410);
  // The password is set (the user's other sessions ended, an invitation accepted): this browser signs in.
  const userId = used.link.userId;
  await startSession(c, userId, await knownDevice(c.env, userId, getCookie(c, DEVICE_COOKIE)));
  return c.redirect("/app", 303);
});

// ---- an invitation's link, for whoever may invite ----

async function invitationPage(c: Ctx, made?: { url: string; expiresAt: string }, errors?: string[]): Promise<Response> {
  const organization = c.req.param("organization") ?? "";
  const caller = callerOf(c);
  const view = await showInvitationLink(caller, organization, c.req.param("membership_id") ?? "");
  return c.html(<InvitationPage principal={caller.principal} organization={organization} {...view} created={made} errors={errors} />, errors ? 422 : 200);
}

definePage(passwordUi, "get", "/:organization/invitations/:membership_id", "membership.manage", (c) => invitationPage(c));

definePage(passwordUi, "post", "/:organization/invitations/:membership_id/link", "membership.manage", async (c) => {
  try {
    const made = await invitationLink(callerOf(c), c.req.param("organization"), c.req.param("membership_id"));
    // Shown in this answer, not after a redirect: the secret is not kept anywhere to show again.
    return invitationPage(c, { url: linkUrl(c, made.secret), expiresAt: made.expiresAt });
  } catch (e) {
    if (e instanceof ApiError && e.status === 422) return invitationPage(c, undefined, reasonsOf(e));
    throw e;
  }
});
