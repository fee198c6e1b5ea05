/** @jsxImportSource hono/jsx */
/**
 * The web UI: server-rendered pages behind every workspace's `links.self-html`, calling the
 * same services as the API with a `Caller` built from the session's principal. Forms work without
 * JavaScript; every state-changing form is a same-origin POST (Hono's csrf Origin check on top of the
 * SameSite=Strict cookie).
 */
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { csrf } from "hono/csrf";
import { HTTPException } from "hono/http-exception";
import { matchedRoutes } from "hono/route";
import { hopsOf } from "../auth/caller.http";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";
import { hopsHeader } from "../platform/hops";
import { pageOf } from "../jsonapi/schemas";
import { listCallerOrganizations } from "../organizations/organizations.service";
import { parseProjectQuery } from "../projects/projects.filters";
import { listProjectsFor } from "../projects/projects.service";
import { parseListQuery } from "../workspaces/workspaces.filters";
import { listWorkspacePage } from "../workspaces/workspaces.list.service";
import { callerOf, type Ctx, UI_CSP } from "./context";
import { loginUi, refuseBadAuthorizeRequest } from "./login/login.routes";
import { tokensUi } from "./tokens/tokens.routes";
import { UI_CSS } from "./styles";
import { ErrorPage } from "./layout";
import { OrganizationsPage, ProjectsPage, SignInPage, WorkspaceListPage, type ListItem } from "./workspaces/workspaces.view";
import { definePage, UI_ROUTE_ACTIONS } from "./define-page";
import { pageAfterSignIn, principalOfSession, SESSION_COOKIE, sessionCookieOptions, signIn, signOut } from "./sessions/sessions.service";
import { passwordUi } from "./passwords/passwords.routes";
import { organizationUi } from "./ui.organization";
import { runsUi } from "./runs/runs.routes";
import { statesUi } from "./states/states.routes";
import { workspaceUi } from "./workspaces/workspace.routes";
import { mayCreateWorkspaces, workspaceFormsUi } from "./variables/variables.routes";

/** Paths served without a session (and the password links, `/app/password/:secret`). */
const PUBLIC = new Set(["/app/ui.css", "/app/session/new", "/app/session", "/app/session/delete", "/app/session/password"]);
const isPublic = (path: string) => PUBLIC.has(path) || path.startsWith("/app/password/");

export const ui = new Hono<AppEnv>();

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
  if (c.res.status < 400 && declared !== "authenticated" && !(declared && authz.authorized.has(declared))) {
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

definePage(ui, "get", "/session/new", null, (c) => c.html(<SignInPage next={c.req.query("next") ? pageAfterSignIn(c.req.query("next")) : undefined} />));

definePage(ui, "post", "/session", null, async (c) => {
  const form = await c.req.parseBody();
  const token = typeof form.token === "string" ? form.token.trim() : "";
  const next = typeof form.next === "string" && form.next ? form.next : undefined;
  const id = await signIn(c.env, token);
  if (!id) return c.html(<SignInPage error="That token is not valid." next={next} />, 401);
  setCookie(c, SESSION_COOKIE, id, sessionCookieOptions(c.req.url));
  return c.redirect(pageAfterSignIn(next), 303);
});

definePage(ui, "post", "/session/delete", null, async (c) => {
  await signOut(c.env, getCookie(c, SESSION_COOKIE));
  deleteCookie(c, SESSION_COOKIE, { path: "/app" });
  return c.redirect("/app/session/new", 303);
});

definePage(ui, "get", "/", "authenticated", async (c) => {
  const caller = callerOf(c);
  const { items } = await listCallerOrganizations(caller, { q: "" }, { number: 1, size: 100 });
  const organizations = items.map((o) => ({ name: o.organization.name, email: o.organization.email, owner: o.owner }));
  return c.html(<OrganizationsPage principal={caller.principal} organizations={organizations} />);
});

definePage(ui, "get", "/:organization/workspaces", "organization.read", async (c) => {
  const organization = c.req.param("organization");
  const query = new URL(c.req.url).searchParams;
  // The API's own query schema and service: the same query gives the same workspaces, from the same one D1
  // batch, which also brings the project filter's options, project names and lock holders' names.
  const { spec, page } = parseListQuery(c.req.query());
  const caller = callerOf(c);
  const result = await listWorkspacePage(caller, organization, spec, { projectOptions: true });
  const rows: ListItem[] = result.records.map((r) => {
    const a = result.scope.serialize(r).attributes as Record<string, unknown>;
    return {
      name: r.name,
      project: result.scope.projects.get(r.projectId)?.name ?? r.projectId,
      lock: r.lock,
      holderName: result.holderNames.get(r.id) ?? null,
      tags: a["tag-names"] as string[],
      latestChangeAt: r.latestChangeAt,
      resourceCount: r.resourceCount,
      executionMode: String(a["execution-mode"]),
    };
  });
  return c.html(
    <WorkspaceListPage
      principal={caller.principal}
      organization={organization}
      rows={rows}
      total={result.total}
      page={page}
      query={query}
      projects={result.projectOptions ?? []}
      canCreate={mayCreateWorkspaces(result.scope)}
      access={result.scope.access}
    />,
  );
});

definePage(ui, "get", "/:organization/projects", "organization.read", async (c) => {
  const organization = c.req.param("organization");
  // The filter form sends its empty fields too; an empty field is no filter (the API reads `filter[names]=` as
  // "none of no names", which no one filling a form means).
  const query = new URLSearchParams([...new URL(c.req.url).searchParams].filter(([, v]) => v !== ""));
  const page = pageOf(c.req.query());
  const caller = callerOf(c);
  // The API's own parser and list (GET /organizations/:name/projects): the same query gives the same projects.
  const { projects: found, matching, total, access } = await listProjectsFor(caller, organization, parseProjectQuery(Object.fromEntries(query)), page);
  const projects = found.map((p) => ({ id: p.id, name: p.name, description: p.description, workspaceCount: p.workspaceCount, isDefault: p.isDefault }));
  return c.html(
    <ProjectsPage
      principal={caller.principal}
      organization={organization}
      projects={projects}
      matching={matching}
      total={total}
      page={page}
      query={query}
      access={access}
    />,
  );
});

ui.route("/", loginUi);
ui.route("/", tokensUi);
// Before the workspace page: `/workspaces/new` would otherwise be the workspace named "new".
ui.route("/", workspaceFormsUi);
ui.route("/", workspaceUi);
ui.route("/", runsUi);
ui.route("/", passwordUi);
ui.route("/", organizationUi);
ui.route("/", statesUi);

ui.all("*", (c) => c.html(<ErrorPage principal={c.get("principal")} status={404} title="Not found" />, 404));

ui.onError((err, c) => {
  const principal = c.get("principal");
  if (err instanceof HTTPException) {
    const title = err.status === 403 ? "Forbidden" : "Request refused";
    return c.html(<ErrorPage principal={principal} status={err.status} title={title} detail={err.message || undefined} />, err.status);
  }
  if (err instanceof ApiError) {
    const e = err.errors[0];
    return c.html(<ErrorPage principal={principal} status={err.status} title={e?.title ?? "Error"} detail={e?.detail} />, err.status as 400);
  }
  console.log(JSON.stringify({ level: "error", requestId: c.get("requestId"), error: String(err), stack: err instanceof Error ? err.stack : undefined }));
  return c.html(<ErrorPage principal={principal} status={500} title="Internal error" />, 500);
});
