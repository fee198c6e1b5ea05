/** @jsxImportSource hono/jsx */
/** The page frame every UI page shares: no scripts, one same-origin stylesheet. */
import type { Child } from "hono/jsx";
import type { Principal } from "../auth/principal";

export function whoIs(p: Principal): string {
  switch (p.kind) {
    case "user":
      return p.username;
    case "team":
      return `team ${p.teamId}`;
    case "organization":
      return `organization token (${p.organization})`;
    case "run":
      return `run ${p.runId}`;
  }
}

/** `refreshSeconds`: the page reloads itself (a run's page while the run moves on; no script needed). */
export function Layout(props: { title: string; principal?: Principal | null; refreshSeconds?: number; children: Child }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        {props.refreshSeconds ? <meta http-equiv="refresh" content={String(props.refreshSeconds)} /> : null}
        <title>{`${props.title} · Workspaces`}</title>
        {/* No favicon request (it would 404 outside /app). */}
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href="/app/ui.css" />
      </head>
      <body>
        <header class="top">
          <a class="brand" href="/app">
            Workspaces
          </a>
          {props.principal ? (
            <form method="post" action="/app/session/delete">
              <a href="/app/settings/tokens">API tokens</a> {props.principal.kind === "user" ? <a href="/app/settings/two-factor">Two-factor</a> : null}{" "}
              <span class="muted">{whoIs(props.principal)}</span> <button type="submit">Sign out</button>
            </form>
          ) : null}
        </header>
        <main>{props.children}</main>
      </body>
    </html>
  );
}

/** `next`: the page that gets the visitor past the error (enrolling two-factor authentication), when there is one. */
export function ErrorPage(props: { principal?: Principal | null; status: number; title: string; detail?: string; next?: { href: string; text: string } }) {
  return (
    <Layout title={props.title} principal={props.principal}>
      <h1>{props.title}</h1>
      <p class="error" role="alert">
        {props.detail ?? props.title} <span class="muted">({props.status})</span>
      </p>
      {props.next ? (
        <p>
          <a id="error-next" href={props.next.href}>
            {props.next.text}
          </a>
        </p>
      ) : null}
      <p>
        <a href="/app">Back to your organisations</a>
      </p>
    </Layout>
  );
}
