/** @jsxImportSource hono/jsx */
/**
 * The web UI (issue 20): server-rendered pages behind every workspace's `links.self-html`, calling the
 * same services as the API with a `Caller` built from the session's principal. Forms work without
 * JavaScript; every state-changing form is a same-origin POST (Hono's csrf Origin check on top of the
 * SameSite=Strict cookie).
 */
import { Hono, type Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { csrf } from "hono/csrf";
import { HTTPException } from "hono/http-exception";
import { matchedRoutes } from "hono/route";
import type { Caller } from "../caller";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";
import { readPage } from "../jsonapi/document";
import { listCallerOrganizations } from "../organizations/organizations.service";
import { listProjectsFor } from "../projects/projects.service";
import { currentStateVersion, listStateVersions } from "../state-versions/state-versions.service";
import { serializeOutputs, serializeStateVersion } from "../state-versions/state-versions.serialize";
import { workspaceEffectiveTagBindings } from "../tags/tags.service";
import { workspaceTeamAccesses } from "../team-access/team-access.service";
import { listTeams } from "../teams/teams.service";
import { validationError } from "../jsonapi/validation";
import { listConsumers } from "../workspaces/consumers.service";
import { workspaceAttributesInput } from "../workspaces/workspaces.schemas";
import { updateWorkspace } from "../workspaces/workspaces.write.service";
import { listWorkspaceVariables } from "../variables/variables.service";
import { forceUnlockWorkspace, lockWorkspace, safeDeleteWorkspace, unlockWorkspace } from "../workspaces/workspace-actions.service";
import { parseListQuery } from "../workspaces/workspaces.list";
import { listWorkspacePage } from "../workspaces/workspaces.list.service";
import { readByName, resolveId } from "../workspaces/workspaces.service";
import { UI_CSS } from "./ui.css";
import { ErrorPage } from "./ui.layout";
import { OrganizationsPage, ProjectsPage, SignInPage, WorkspaceListPage, WorkspacePage, type ListRow, type SettingsForm, type StateRow } from "./ui.pages";
import { UI_ROUTE_REQUIREMENTS } from "./ui.requirements";
import { principalOfSession, SESSION_COOKIE, SESSION_TTL_SECONDS, signIn, signOut, uiCaller } from "./ui.session";

type Ctx = Context<AppEnv>;

const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);
const CSP = "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
/** Paths served without a session. */
const PUBLIC = new Set(["/app/ui.css", "/app/session/new", "/app/session", "/app/session/delete"]);

export const ui = new Hono<AppEnv>();

ui.use("*", async (c, next) => {
  await next();
  c.res.headers.set("Content-Security-Policy", CSP);
  if (c.req.path !== "/app/ui.css") c.res.headers.set("Cache-Control", "no-store");
});
ui.use("*", bodyLimit({ maxSize: 16 * 1024 }));
ui.use("*", csrf());

// Every other page needs a live session; the route's declared action must have been authorised.
ui.use("*", async (c, next) => {
  if (PUBLIC.has(c.req.path)) return next();
  const principal = await principalOfSession(c.env, getCookie(c, SESSION_COOKIE));
  if (!principal) {
    deleteCookie(c, SESSION_COOKIE, { path: "/app" });
    return c.redirect("/app/session/new", 303);
  }
  c.set("principal", principal);
  const authz = { authorized: new Set<string>() };
  c.set("authz", authz);
  await next();
  // The page's own route: middleware and the catch-all 404 are registered for ALL methods.
  // HEAD is served by the GET route.
  const method = c.req.method === "HEAD" ? "GET" : c.req.method;
  const route = matchedRoutes(c).findLast((r) => r.method === method);
  const declared = route ? UI_ROUTE_REQUIREMENTS[`${method} ${route.path}`] : undefined;
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

function callerOf(c: Ctx): Caller {
  const caller = uiCaller(c.env, c.get("principal"));
  caller.authorized = c.get("authz")?.authorized ?? caller.authorized;
  return caller;
}

ui.get("/ui.css", (c) => c.body(UI_CSS, 200, { "Content-Type": "text/css; charset=utf-8", "Cache-Control": "public, max-age=300" }));

ui.get("/session/new", (c) => c.html(<SignInPage />));

ui.post("/session", async (c) => {
  const form = await c.req.parseBody();
  const token = typeof form.token === "string" ? form.token.trim() : "";
  const id = await signIn(c.env, token);
  if (!id) return c.html(<SignInPage error="That token is not valid." />, 401);
  const host = new URL(c.req.url).hostname.toLowerCase();
  setCookie(c, SESSION_COOKIE, id, {
    path: "/app",
    httpOnly: true,
    sameSite: "Strict",
    secure: !LOCAL_HOSTS.has(host),
    maxAge: SESSION_TTL_SECONDS,
  });
  return c.redirect("/app", 303);
});

ui.post("/session/delete", async (c) => {
  await signOut(c.env, getCookie(c, SESSION_COOKIE));
  deleteCookie(c, SESSION_COOKIE, { path: "/app" });
  return c.redirect("/app/session/new", 303);
});

ui.get("/", async (c) => {
  const caller = callerOf(c);
  const { items } = await listCallerOrganizations(caller, { q: "" }, { number: 1, size: 100 });
  const organizations = items.map((o) => ({ name: o.organization.name, email: o.organization.email, owner: o.owner }));
  return c.html(<OrganizationsPage principal={caller.principal} organizations={organizations} />);
});

/** The organisation's projects the caller may read (names for the list and the filter). */
async function projectNames(caller: Caller, organization: string): Promise<Array<{ id: string; name: string }>> {
  const { rows } = await listProjectsFor(caller, organization, { tagged: [], sort: "name" }, { number: 1, size: 100 });
  return rows.map((p) => ({ id: p.id, name: p.name }));
}

ui.get("/:organization/workspaces", async (c) => {
  const organization = c.req.param("organization");
  const query = new URL(c.req.url).searchParams;
  const page = readPage(c);
  // The API's own parser and service: the same query gives the same workspaces.
  const spec = parseListQuery(query, page);
  const caller = callerOf(c);
  const result = await listWorkspacePage(caller, organization, spec);
  const projects = await projectNames(caller, organization);
  const names = new Map(projects.map((p) => [p.id, p.name]));
  const rows: ListRow[] = result.records.map((r) => {
    const a = result.scope.serialize(r).attributes as Record<string, unknown>;
    return {
      name: r.name,
      project: names.get(r.projectId) ?? r.projectId,
      lock: r.lock,
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
      projects={projects}
    />,
  );
});

ui.get("/:organization/projects", async (c) => {
  const organization = c.req.param("organization");
  const caller = callerOf(c);
  // The API's own list (GET /organizations/:name/projects), sorted by name.
  const { rows, total } = await listProjectsFor(caller, organization, { tagged: [], sort: "name" }, { number: 1, size: 100 });
  const projects = rows.map((p) => ({ id: p.id, name: p.name, description: p.description, workspaceCount: p.workspace_count, isDefault: p.is_default === 1 }));
  return c.html(<ProjectsPage principal={caller.principal} organization={organization} projects={projects} total={total} />);
});

/** Null when the read is not found (no current state, say); other errors propagate. */
async function orNull<T>(p: Promise<T>): Promise<T | null> {
  try {
    return await p;
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return null;
    throw e;
  }
}

/** The workspace page; `settings` re-renders the settings form with what was sent and why it was refused. */
async function workspacePage(c: Ctx, settings?: SettingsForm): Promise<Response> {
  const organization = c.req.param("organization") ?? "";
  const caller = callerOf(c);
  const { record, scope } = await readByName(caller, organization, c.req.param("name") ?? "");
  const resource = scope.serialize(record);
  const attributes = resource.attributes as Record<string, unknown>;
  const flags = attributes.permissions as Record<string, boolean>;
  const origin = new URL(c.req.url).origin;
  const [projects, variables, states, current, effective, consumers, accesses, teams] = await Promise.all([
    projectNames(caller, organization).catch(() => []),
    flags["can-read-variable"] ? listWorkspaceVariables(caller, record.id) : null,
    flags["can-read-state-versions"] ? listStateVersions(caller, { organization, name: record.name }, undefined, { number: 1, size: 10 }) : null,
    // Outputs need only read-outputs; as GET .../current-state-version-outputs, sensitive values are never shown.
    flags["can-read-state-outputs"] && record.currentStateVersionId ? orNull(currentStateVersion(caller, record.id, 1)) : null,
    workspaceEffectiveTagBindings(caller, record.id),
    listConsumers(caller, caller.db, record.id, { number: 1, size: 100 }),
    workspaceTeamAccesses(caller, record.id),
    listTeams(caller, organization, {}, { number: 1, size: 100 }).catch(() => ({ teams: [] })),
  ]);
  // Download links exactly as the API serialises them (signed URLs), for state readers only.
  const stateRows: StateRow[] | null = states
    ? await Promise.all(
        states.items.map(async (sv) => {
          const doc = await serializeStateVersion(c.env, origin, record.id, sv, { canUpload: false });
          const a = doc.attributes as Record<string, unknown>;
          return {
            id: sv.id,
            serial: sv.serial,
            status: sv.status,
            createdAt: sv.created_at,
            resourceCount: sv.parsed?.resourceCount ?? 0,
            download: (a["hosted-state-download-url"] as string | null) ?? null,
          };
        }),
      )
    : null;
  const outputs = current
    ? serializeOutputs(current.sv, "state-version-outputs", false).map((o) => {
        const a = o.attributes as { name: string; sensitive: boolean; value: unknown; "output-type": string };
        return { name: a.name, sensitive: a.sensitive, type: a["output-type"], value: a.sensitive ? null : JSON.stringify(a.value) };
      })
    : null;
  const projectName = (id: string) => projects.find((p) => p.id === id)?.name ?? id;
  const direct = new Set(effective.record.tagBindings.map((b) => b.key));
  const inherited = effective.inherited.filter((b) => !direct.has(b.key)).map((b) => ({ key: b.key, value: b.value, project: projectName(b.project_id) }));
  const teamNames = new Map(teams.teams.map((t) => [t.row.id, t.row.name] as const));
  const me = caller.principal;
  const holder = record.lock.holder;
  const myId = me.kind === "user" ? me.userId : me.kind === "team" ? me.teamId : me.serviceUserId;
  return c.html(
    <WorkspacePage
      principal={me}
      ws={{
        id: record.id,
        name: record.name,
        organization: scope.access.organization.name,
        project: projectName(record.projectId),
        attributes,
        lock: record.lock,
        lockedByYou: !!holder && holder.id === myId,
        tags: attributes["tag-names"] as string[],
        bindings: record.tagBindings,
        inherited,
        flags,
        variables,
        stateVersions: stateRows,
        outputs,
        consumers: consumers.records.map((w) => w.name),
        teamAccess: accesses.map((a) => ({ team: teamNames.get(a.team_id) ?? a.team_id, access: a.access })),
        settings,
      }}
    />,
    settings?.errors.length ? 422 : 200,
  );
}

ui.get("/:organization/workspaces/:name", (c) => workspacePage(c));

const backTo = (c: Ctx) => `/app/${encodeURIComponent(c.req.param("organization") ?? "")}/workspaces/${encodeURIComponent(c.req.param("name") ?? "")}`;
const idOf = (c: Ctx, caller: Caller) => resolveId(caller, { organization: c.req.param("organization") ?? "", name: c.req.param("name") ?? "" });

ui.post("/:organization/workspaces/:name/lock", async (c) => {
  const form = await c.req.parseBody();
  const reason = typeof form.reason === "string" ? form.reason.slice(0, 200) : "";
  const caller = callerOf(c);
  await lockWorkspace(caller, await idOf(c, caller), reason, undefined);
  return c.redirect(backTo(c), 303);
});

ui.post("/:organization/workspaces/:name/unlock", async (c) => {
  const caller = callerOf(c);
  await unlockWorkspace(caller, await idOf(c, caller), undefined);
  return c.redirect(backTo(c), 303);
});

ui.post("/:organization/workspaces/:name/force-unlock", async (c) => {
  const caller = callerOf(c);
  await forceUnlockWorkspace(caller, await idOf(c, caller), undefined);
  return c.redirect(backTo(c), 303);
});

ui.post("/:organization/workspaces/:name/safe-delete", async (c) => {
  const form = await c.req.parseBody();
  const organization = c.req.param("organization");
  const name = c.req.param("name");
  if (form.confirm !== name) throw ApiError.of("bad_request", { detail: "Type the workspace's name to confirm its deletion." });
  await safeDeleteWorkspace(callerOf(c), { organization, name }, undefined);
  return c.redirect(`/app/${encodeURIComponent(organization)}/workspaces`, 303);
});

/** The settings form's fields as the API's attributes (the API's own schema validates them). */
function settingsAttributes(form: Record<string, string | File | (string | File)[]>): Record<string, unknown> {
  const text = (k: string) => (typeof form[k] === "string" ? (form[k] as string) : "");
  const attributes: Record<string, unknown> = {
    description: text("description"),
    "auto-apply": text("auto-apply") === "on",
    "execution-mode": text("execution-mode"),
    "working-directory": text("working-directory"),
  };
  const version = text("terraform-version").trim();
  if (version) attributes["terraform-version"] = version;
  return attributes;
}

ui.post("/:organization/workspaces/:name/settings", async (c) => {
  const form = await c.req.parseBody();
  const caller = callerOf(c);
  const ref = { organization: c.req.param("organization"), name: c.req.param("name") };
  // Authorise first: a caller who may not update gets the API's 404, never a form.
  await readByName(caller, ref.organization, ref.name, "workspace.update");
  const sent = settingsAttributes(form);
  const values = Object.fromEntries(Object.entries(sent).map(([k, v]) => [k, String(v)]));
  const refused = (e: ApiError) => workspacePage(c, { values, errors: e.errors.map((x) => x.detail ?? x.title) });
  const parsed = workspaceAttributesInput.safeParse(sent);
  if (!parsed.success) return refused(validationError(parsed.error, "json"));
  try {
    await updateWorkspace(caller, ref, { type: "workspaces", attributes: parsed.data }, undefined);
  } catch (e) {
    if (e instanceof ApiError && (e.status === 422 || e.status === 400)) return refused(e);
    throw e;
  }
  return c.redirect(backTo(c), 303);
});

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
