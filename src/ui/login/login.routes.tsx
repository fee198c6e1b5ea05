/** @jsxImportSource hono/jsx */
/**
 * `terraform login`'s authorization endpoint (login.v1). The request is checked before anything is shown
 * (`refuseBadAuthorizeRequest` runs even before the session is asked for), so a bad client or redirect URI gets an
 * error page and never a redirect. A signed-in user sees who asks and where the answer goes, and approves (a one-time
 * code for Terraform's local listener) or denies (`error=access_denied`); both are CSRF-checked POST forms.
 */
import { Hono } from "hono";
import { createMiddleware } from "hono/factory";
import type { Principal } from "../../auth/principal";
import type { AppEnv } from "../../env";
import { type AuthorizeRequest, checkAuthorizeRequest } from "../../login/login.rules";
import { approveLogin, denyLogin } from "../../login/login.service";
import { callerOf, type Ctx, UI_CSP } from "../context";
import { ErrorPage, Layout, whoIs } from "../layout";
import { definePage } from "../define-page";

export const loginUi = new Hono<AppEnv>();

/** Answers a bad authorization request with an error page, before any session or page (mounted ahead of both). */
export const refuseBadAuthorizeRequest = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.method !== "GET" && c.req.method !== "HEAD") return next();
  const checked = checkAuthorizeRequest(c.req.query());
  if (!checked.ok) return c.html(<ErrorPage status={400} title="Login request refused" detail={checked.reason} />, 400);
  return next();
});

type Form = Record<string, string | File | (string | File)[]>;
const fields = (form: Form) => Object.fromEntries(Object.entries(form).map(([k, v]) => [k, typeof v === "string" ? v : undefined]));

/** The request's parameters again, as the approve and deny forms send them back. */
function Hidden(props: { request: AuthorizeRequest }) {
  const r = props.request;
  return (
    <>
      <input type="hidden" name="client_id" value={r.clientId} />
      <input type="hidden" name="redirect_uri" value={r.redirectUri} />
      <input type="hidden" name="response_type" value="code" />
      <input type="hidden" name="state" value={r.state} />
      <input type="hidden" name="code_challenge" value={r.codeChallenge} />
      <input type="hidden" name="code_challenge_method" value="S256" />
    </>
  );
}

function AuthorizePage(props: { principal: Principal; request: AuthorizeRequest }) {
  const target = new URL(props.request.redirectUri);
  const isUser = props.principal.kind === "user";
  return (
    <Layout title="Authorize Terraform CLI" principal={props.principal}>
      <div class="signin">
        <h1>Authorize Terraform CLI</h1>
        <p>
          <strong>Terraform CLI</strong> (<code>terraform-cli</code>) asks for a new API token for <strong>{whoIs(props.principal)}</strong>. It will receive
          the answer on this computer at <code>{target.host}</code>.
        </p>
        {isUser ? (
          <>
            <p class="muted">
              Approve only if you just ran <code>terraform login</code>. The token appears on your <a href="/app/settings/tokens">tokens page</a>, where you can
              revoke it.
            </p>
            <div class="actions">
              <form method="post" action="/app/oauth/authorize/approve">
                <Hidden request={props.request} />
                <button class="primary" type="submit" id="approve">
                  Approve
                </button>
              </form>
              <form method="post" action="/app/oauth/authorize/deny">
                <Hidden request={props.request} />
                <button type="submit" id="deny">
                  Deny
                </button>
              </form>
            </div>
          </>
        ) : (
          <>
            <p class="error" role="alert">
              This session uses a team or organisation token, which belongs to no user: sign in as a user to log Terraform in.
            </p>
            <form method="post" action="/app/oauth/authorize/deny">
              <Hidden request={props.request} />
              <button type="submit" id="deny">
                Deny
              </button>
            </form>
          </>
        )}
      </div>
    </Layout>
  );
}

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
  return c.redirect(await approveLogin(callerOf(c), checked.value), 303);
});

definePage(loginUi, "post", "/oauth/authorize/deny", "authenticated", async (c) => {
  const checked = await postedRequest(c);
  if (!checked.ok) return c.html(<ErrorPage principal={c.get("principal")} status={400} title="Login request refused" detail={checked.reason} />, 400);
  return c.redirect(denyLogin(checked.value), 303);
});
