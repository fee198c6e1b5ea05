/** @jsxImportSource hono/jsx */
/**
 * The web UI: server-rendered pages behind every workspace's `links.self-html`, calling the
 * same services as the API with a `Caller` built from the session's principal. Forms work without
 * JavaScript; every state-changing form is a same-origin POST (Hono's csrf Origin check on top of the
 * SameSite=Strict cookie). This router, mounted at /app, holds what every page shares (headers, body limit, CSRF,
 * the session gate, the check of each page's declared action, error pages) and mounts each area's pages
 * (`src/ui/<area>/<area>.routes.tsx`), as src/index.ts mounts the API's routers.
 */
import { auditUi } from "./audit/audit.routes";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { deleteCookie, getCookie } from "hono/cookie";
import { csrf } from "hono/csrf";
import { HTTPException } from "hono/http-exception";
import { matchedRoutes } from "hono/route";
import { hopsOf } from "../auth/caller.http";
import type { AppEnv } from "../env";
import { ApiError, ERRORS } from "../errors";
import { hopsHeader } from "../platform/hops";
import { type Ctx, UI_CSP } from "./context";
import { definePage, UI_ROUTE_ACTIONS } from "./define-page";
import { ErrorPage } from "./layout";
import { loginUi, refuseBadAuthorizeRequest } from "./login/login.routes";
import { membersUi } from "./members/members.routes";
import { organizationsUi } from "./organizations/organizations.routes";
import { passwordUi } from "./passwords/passwords.routes";
import { agentsUi } from "./agents/agents.routes";
import { registryUi } from "./registry/registry.routes";
import { projectsUi } from "./projects/projects.routes";
import { runsUi } from "./runs/runs.routes";
import { sessionsUi } from "./sessions/sessions.routes";
import { ssoUi } from "./sso/sso.routes";
import { pageAfterSignIn, principalOfSession, SESSION_COOKIE, signOut, touchedSession } from "./sessions/sessions.service";
import { statesUi } from "./states/states.routes";
import { UI_CSS } from "./styles";
import { teamsUi } from "./teams/teams.routes";
import { tokensUi } from "./tokens/tokens.routes";
import { twoFactorUi } from "./two-factor/two-factor.routes";
import { usersUi } from "./users/users.routes";
import { tagsUi } from "./tags/tags.routes";
import { variablesUi } from "./variables/variables.routes";
import { vcsUi } from "./vcs/vcs.routes";
import { runTriggersUi } from "./run-triggers/run-triggers.routes";
import { notificationsUi } from "./notifications/notifications.routes";
import { runTasksUi } from "./run-tasks/run-tasks.routes";
import { varsetsUi } from "./varsets/varsets.routes";
import { workspaceUi } from "./workspaces/workspace.routes";
import { workspacesUi } from "./workspaces/workspaces.routes";

/** Paths served without a session (and the password links, `/app/password/:secret`). */
const PUBLIC = new Set([
  "/app/ui.css",
  "/app/session/new",
  "/app/session",
  "/app/session/delete",
  "/app/session/password",
  "/app/session/two-factor",
  "/app/sso/start",
  "/app/sso/callback",
]);
const isPublic = (path: string) => PUBLIC.has(path) || path.startsWith("/app/password/");

export const ui = new Hono<AppEnv>();

/** Requests whose session an organisation's session settings ended: sent to sign in, having rightly authorised nothing. */
const SESSION_ENDED = new WeakSet<object>();

ui.use("*", async (c, next) => {
  const hops = hopsOf(c);
  await next();
  if (!c.res.headers.has("Content-Security-Policy")) c.res.headers.set("Content-Security-Policy", UI_CSP);
  if (c.req.path !== "/app/ui.css") c.res.headers.set("Cache-Control", "no-store");
  // Round trips, as the API reports them (EXPOSE_HOPS=1: the bench and test/api/ui.test.ts compare the two).
  if (c.env.EXPOSE_HOPS === "1") c.res.headers.set("X-Hops", hopsHeader(hops));
});
ui.use("*", bodyLimit({ maxSize: 16 * 1024 }));
ui.use("*", csrf());

// A bad `terraform login` request is refused before anything else, signed in or not (never redirected).
ui.use("/oauth/authorize", refuseBadAuthorizeRequest);

// Every other page needs a live session; the route's declared action must have been authorised.
ui.use("*", async (c, next) => {
  if (isPublic(c.req.path)) return next();
  const sessionId = getCookie(c, SESSION_COOKIE);
  const session = await principalOfSession(c.env, sessionId, hopsOf(c));
  if (!session) {
    deleteCookie(c, SESSION_COOKIE, { path: "/app" });
    return c.redirect(signInPath(c), 303);
  }
  c.set("principal", session.principal);
  if (session.gate) c.set("tokenGate", session.gate);
  const authz = { authorized: new Set<string>() };
  c.set("authz", authz);
  await next();
  // Not in the page's path: the session's activity is recorded after it (an organisation's idle timeout reads it).
  if (sessionId) c.executionCtx.waitUntil(touchedSession(c.env, sessionId, session.principal).catch(() => undefined));
  // A cached session is rechecked in the page's first round trip (or now, if it made none): when its token no
  // longer stands, whatever the page answered gives way to signing in again.
  if (
    session.gate &&
    (await session.gate.settled().then(
      () => false,
      () => session.gate?.failed === true,
    ))
  ) {
    await signOut(c.env, sessionId);
    c.res = undefined as unknown as Response;
    c.res = new Response(null, { status: 303, headers: { Location: "/app/session/new" } });
    deleteCookie(c, SESSION_COOKIE, { path: "/app" });
    return;
  }
  // The route that answered (several may match: `/workspaces/new` also matches `/workspaces/:name`); middleware and
  // the catch-all 404 are registered for ALL methods. HEAD is served by the GET route.
  const method = c.req.method === "HEAD" ? "GET" : c.req.method;
  const route = matchedRoutes(c)[c.req.routeIndex];
  const declared = route?.method === method ? UI_ROUTE_ACTIONS[`${method} ${route.path}`] : undefined;
  if (c.res.status < 400 && declared !== "authenticated" && !(declared && authz.authorized.has(declared)) && !SESSION_ENDED.has(c)) {
    console.log(
      JSON.stringify({
        level: "error",
        requestId: c.get("requestId"),
        error: `UI route ${c.req.method} ${c.req.path} answered without authorising ${declared}`,
      }),
    );
    c.res = undefined as unknown as Response;
    c.res = await c.html(<ErrorPage status={500} title="Internal error" />, 500);
  }
});

definePage(ui, "get", "/ui.css", null, (c) => c.body(UI_CSS, 200, { "Content-Type": "text/css; charset=utf-8", "Cache-Control": "public, max-age=300" }));

/** Sign-in, then back to the page asked for (GET pages only; `/app` itself needs no return address). */
function signInPath(c: Ctx): string {
  const url = new URL(c.req.url);
  const next = c.req.method === "GET" ? pageAfterSignIn(`${url.pathname}${url.search}`) : "/app";
  return next !== "/app" ? `/app/session/new?${new URLSearchParams({ next }).toString()}` : "/app/session/new";
}

// Each area's pages. The order matters where two patterns match one path: the first registered answers
// (`/workspaces/new` before the workspace page, which would take it for the workspace named "new"; the organisation's
// lists before `/password/:secret`).
ui.route("/", sessionsUi);
ui.route("/", ssoUi);
ui.route("/", loginUi);
ui.route("/", tokensUi);
ui.route("/", twoFactorUi);
ui.route("/", agentsUi);
ui.route("/", projectsUi);
ui.route("/", workspacesUi);
ui.route("/", variablesUi);
ui.route("/", vcsUi);
ui.route("/", runTriggersUi);
ui.route("/", notificationsUi);
ui.route("/", runTasksUi);
ui.route("/", tagsUi);
ui.route("/", workspaceUi);
ui.route("/", runsUi);
ui.route("/", passwordUi);
ui.route("/", usersUi);
ui.route("/", varsetsUi);
ui.route("/", teamsUi);
ui.route("/", membersUi);
ui.route("/", auditUi);
ui.route("/", organizationsUi);
ui.route("/", statesUi);
ui.route("/", registryUi);

ui.all("*", (c) => c.html(<ErrorPage principal={c.get("principal")} status={404} title="Not found" />, 404));

ui.onError(async (err, c) => {
  const principal = c.get("principal");
  // The organisation's session settings ended this session (src/auth/access.ts): sign it out, and in again from here.
  if (err instanceof ApiError && err.status === 401 && err.errors[0]?.detail === ERRORS.session_expired.detail) {
    await signOut(c.env, getCookie(c, SESSION_COOKIE));
    deleteCookie(c, SESSION_COOKIE, { path: "/app" });
    SESSION_ENDED.add(c);
    return c.redirect(signInPath(c), 303);
  }
  if (err instanceof HTTPException) {
    const title = err.status === 403 ? "Forbidden" : "Request refused";
    return c.html(<ErrorPage principal={principal} status={err.status} title={title} detail={err.message || undefined} />, err.status);
  }
  if (err instanceof ApiError) {
    const e = err.errors[0];
    // An organisation requiring two-factor authentication of a member without it: the way to enrol.
    // An organisation requiring single sign-on of a member signed in with a password: the way to sign in with SSO.
    const next =
      e?.detail === ERRORS.two_factor_required.detail
        ? { href: "/app/settings/two-factor", text: "Set up two-factor authentication" }
        : e?.detail === ERRORS.sso_required.detail
          ? { href: `/app/sso/start?${new URLSearchParams({ next: pageAfterSignIn(c.req.path) }).toString()}`, text: "Sign in with SSO" }
          : undefined;
    const title =
      e?.detail === ERRORS.two_factor_required.detail
        ? "Two-factor authentication required"
        : e?.detail === ERRORS.sso_required.detail
          ? "Single sign-on required"
          : (e?.title ?? "Error");
    return c.html(<ErrorPage principal={principal} status={err.status} title={title} detail={e?.detail} next={next} />, err.status as 400);
  }
  console.log(JSON.stringify({ level: "error", requestId: c.get("requestId"), error: String(err), stack: err instanceof Error ? err.stack : undefined }));
  return c.html(<ErrorPage principal={principal} status={500} title="Internal error" />, 500);
});
