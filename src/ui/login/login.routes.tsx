/** @jsxImportSource hono/jsx */
/**
 * `terraform login`'s authorization endpoint (login.v1). The request is checked before anything is shown
 * (`refuseBadAuthorizeRequest` runs even before the session is asked for), so a bad client or redirect URI gets an
 * error page and never a redirect. A signed-in user sees who asks and where the answer goes, and approves (a one-time
 * code for Terraform's local listener) or denies (`error=access_denied`); both are CSRF-checked POST forms.
 */
import { Hono } from "hono";
import { getCookie } from "hono/cookie";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../../env";
import { checkAuthorizeRequest } from "../../login/login.rules";
import { approveLogin, denyLogin } from "../../login/login.service";
import { callerOf, type Ctx, UI_CSP } from "../context";
import { ErrorPage } from "../layout";
import { definePage } from "../define-page";
import type { Form } from "../forms";
import { SESSION_COOKIE } from "../sessions/sessions.service";
import { AuthorizePage } from "./login.view";

export const loginUi = new Hono<AppEnv>();

/** Answers a bad authorization request with an error page, before any session or page (mounted ahead of both). */
export const refuseBadAuthorizeRequest = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.method !== "GET" && c.req.method !== "HEAD") return next();
  const checked = checkAuthorizeRequest(c.req.query());
  if (!checked.ok) return c.html(<ErrorPage status={400} title="Login request refused" detail={checked.reason} />, 400);
  return next();
});

const fields = (form: Form) => Object.fromEntries(Object.entries(form).map(([k, v]) => [k, typeof v === "string" ? v : undefined]));

definePage(loginUi, "get", "/oauth/authorize", "authenticated", async (c) => {
  // Checked again here (the middleware ahead of the session let only a good request through).
  const checked = checkAuthorizeRequest(c.req.query());
  if (!checked.ok) return c.html(<ErrorPage principal={c.get("principal")} status={400} title="Login request refused" detail={checked.reason} />, 400);
  const res = await c.html(<AuthorizePage principal={c.get("principal")} request={checked.value} />);
  // Approve and deny answer with a redirect to Terraform's listener, and browsers hold a form's redirects to the
  // page's form-action too: this page allows that one checked origin besides its own.
  res.headers.set("Content-Security-Policy", UI_CSP.replace("form-action 'self'", `form-action 'self' ${new URL(checked.value.redirectUri).origin}`));
  return res;
});

/** The posted request, checked as the page's was: a forged or altered one gets an error page, never a redirect. */
async function postedRequest(c: Ctx) {
  return checkAuthorizeRequest(fields(await c.req.parseBody()));
}

definePage(loginUi, "post", "/oauth/authorize/approve", "user", async (c) => {
  const checked = await postedRequest(c);
  if (!checked.ok) return c.html(<ErrorPage principal={c.get("principal")} status={400} title="Login request refused" detail={checked.reason} />, 400);
  return c.redirect(await approveLogin(callerOf(c), checked.value, getCookie(c, SESSION_COOKIE) ?? ""), 303);
});

definePage(loginUi, "post", "/oauth/authorize/deny", "authenticated", async (c) => {
  const checked = await postedRequest(c);
  if (!checked.ok) return c.html(<ErrorPage principal={c.get("principal")} status={400} title="Login request refused" detail={checked.reason} />, 400);
  return c.redirect(denyLogin(checked.value), 303);
});
