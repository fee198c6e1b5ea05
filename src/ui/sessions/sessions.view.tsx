/** @jsxImportSource hono/jsx */
/** The sign-in page: plain data in, HTML out (src/ui/sessions/sessions.routes.tsx and the password sign-in serve it). */
import { Layout } from "../layout";

/**
 * Sign in: through the operator's identity provider when single sign-on is configured (`sso`: `#sso-sign-in`), with a
 * username or e-mail and a password (`#username`, `#password`, `#password-sign-in`), or by pasting an API token
 * (`#token`, the page's first `button[type=submit]`). `next`: the page to return to afterwards.
 */
export function SignInPage(props: { error?: string; passwordError?: string; ssoError?: string; login?: string; next?: string; sso?: boolean }) {
  const next = props.next ? <input type="hidden" name="next" value={props.next} /> : null;
  const ssoHref = props.next ? `/app/sso/start?${new URLSearchParams({ next: props.next }).toString()}` : "/app/sso/start";
  return (
    <Layout title="Sign in">
      <div class="signin">
        <h1>Sign in</h1>
        {props.ssoError ? (
          <p class="error" role="alert" id="sso-error">
            {props.ssoError}
          </p>
        ) : null}
        {props.sso ? (
          <p>
            <a class="button primary" id="sso-sign-in" href={ssoHref}>
              Sign in with SSO
            </a>
          </p>
        ) : null}
        {props.passwordError ? (
          <p class="error" role="alert" id="password-error">
            {props.passwordError}
          </p>
        ) : null}
        <form method="post" action="/app/session/password">
          <div>
            <label for="username">Username or e-mail</label>
            <input id="username" name="username" autocomplete="username" value={props.login ?? ""} required />
          </div>
          <div>
            <label for="password">Password</label>
            <input id="password" name="password" type="password" autocomplete="current-password" required />
          </div>
          {next}
          {/* An input, not a button: the token form's button stays the page's first `button[type=submit]`. */}
          <input class="primary" type="submit" id="password-sign-in" value="Sign in" />
        </form>
        <h2>Or with an API token</h2>
        {props.error ? (
          <p class="error" role="alert">
            {props.error}
          </p>
        ) : null}
        <form method="post" action="/app/session">
          <label for="token">API token</label>
          <input id="token" name="token" type="password" autocomplete="off" required />
          {next}
          <button class="primary" type="submit">
            Sign in with the token
          </button>
        </form>
        <p class="muted">Paste a user, team or organisation token. The session ends when you sign out or the token is revoked.</p>
      </div>
    </Layout>
  );
}

/**
 * The second step of a password sign-in (`#code`, `#code-sign-in`): a code of the user's authenticator app, or one of
 * its recovery codes. No session exists until it is accepted.
 */
export function SecondFactorPage(props: { error?: string }) {
  return (
    <Layout title="Two-factor authentication">
      <div class="signin">
        <h1>Two-factor authentication</h1>
        {props.error ? (
          <p class="error" role="alert" id="code-error">
            {props.error}
          </p>
        ) : null}
        <form method="post" action="/app/session/two-factor">
          <div>
            <label for="code">Code from your authenticator app, or a recovery code</label>
            <input id="code" name="code" autocomplete="one-time-code" inputmode="text" required />
          </div>
          <input class="primary" type="submit" id="code-sign-in" value="Verify" />
        </form>
        <p class="muted">
          Lost your authenticator and your recovery codes? A site admin can turn two-factor authentication off for you.{" "}
          <a href="/app/session/new">Start again</a>
        </p>
      </div>
    </Layout>
  );
}
