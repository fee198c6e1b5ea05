/** @jsxImportSource hono/jsx */
/** Single sign-on's pages: plain data in, HTML out (src/ui/sso/sso.routes.tsx serves them). */
import { Layout } from "../layout";

/**
 * The answer to a successful callback: it moves on to `next` by itself. The session's cookie is SameSite=Strict, and a
 * navigation the provider started is cross-site, so a redirect would arrive without it; this page's own navigation
 * is same-site and carries it.
 */
export function SignedInPage(props: { next: string }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta http-equiv="refresh" content={`0;url=${props.next}`} />
        <title>Signed in</title>
        <link rel="stylesheet" href="/app/ui.css" />
      </head>
      <body>
        <main>
          <p>
            Signed in.{" "}
            <a id="continue" href={props.next}>
              Continue
            </a>
          </p>
        </main>
      </body>
    </html>
  );
}

/** A sign-in with SSO that could not start or finish. */
export function SsoFailedPage(props: { title: string; detail: string }) {
  return (
    <Layout title={props.title}>
      <div class="signin">
        <h1>{props.title}</h1>
        <p class="error" role="alert" id="sso-error">
          {props.detail}
        </p>
        <p>
          <a href="/app/sso/start">Try again</a> or <a href="/app/session/new">sign in another way</a>.
        </p>
      </div>
    </Layout>
  );
}
