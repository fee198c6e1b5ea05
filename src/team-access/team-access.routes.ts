/** Team access to workspaces (`team-workspaces`) and projects (`team-projects`), per the real role tables. */
import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { requireOrgAccess, type OrgAccess } from "../auth/access";
import { primary } from "../db";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";
import { newId, nowIso } from "../ids";
import { jsonapi, noContent, paginated, readPage, type Resource } from "../jsonapi/document";
import { errorResponses, jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import { findTeam } from "../teams/teams.index";
import { readById, requireCap } from "../workspaces/workspaces.service";

const tags = ["Team access"];
export const teamAccess = router();

// ---- team-workspaces ----

const WS_LEVELS = ["read", "plan", "write", "admin", "custom"] as const;
const WS_CUSTOM = {
  runs: z.enum(["read", "plan", "apply"]),
  variables: z.enum(["none", "read", "write"]),
  "state-versions": z.enum(["none", "read-outputs", "read", "write"]),
  "sentinel-mocks": z.enum(["none", "read"]),
  "workspace-locking": z.boolean(),
  "run-tasks": z.boolean(),
  "policy-overrides": z.boolean(),
};
type WsCustom = { [K in keyof typeof WS_CUSTOM]: z.infer<(typeof WS_CUSTOM)[K]> };
const WS_DEFAULT_CUSTOM: WsCustom = { runs: "read", variables: "none", "state-versions": "none", "sentinel-mocks": "none", "workspace-locking": false, "run-tasks": false, "policy-overrides": false };
/** What each fixed level implies (UTO/permissions_workspace). */
const WS_IMPLIED: Record<Exclude<(typeof WS_LEVELS)[number], "custom">, WsCustom> = {
  read: { ...WS_DEFAULT_CUSTOM, variables: "read", "state-versions": "read" },
  plan: { ...WS_DEFAULT_CUSTOM, runs: "plan", variables: "read", "state-versions": "read" },
  write: { ...WS_DEFAULT_CUSTOM, runs: "apply", variables: "write", "state-versions": "write", "sentinel-mocks": "read", "workspace-locking": true },
  admin: { ...WS_DEFAULT_CUSTOM, runs: "apply", variables: "write", "state-versions": "write", "sentinel-mocks": "read", "workspace-locking": true, "run-tasks": true },
};
const wsCustomInput = z.object(Object.fromEntries(Object.entries(WS_CUSTOM).map(([k, v]) => [k, v.optional()])) as { [K in keyof typeof WS_CUSTOM]: z.ZodOptional<(typeof WS_CUSTOM)[K]> });
const relationship = (type: string) => z.object({ data: z.object({ type: z.literal(type), id: z.string().max(64) }) });
const twCreateBody = z
  .object({
    data: z.object({
      type: z.literal("team-workspaces"),
      attributes: wsCustomInput.extend({ access: z.enum(WS_LEVELS) }),
      relationships: z.object({ team: relationship("teams"), workspace: relationship("workspaces") }),
    }),
  })
  .openapi("TeamWorkspaceCreate");
const twUpdateBody = z.object({ data: z.object({ type: z.literal("team-workspaces"), attributes: wsCustomInput.extend({ access: z.enum(WS_LEVELS).optional() }) }) }).openapi("TeamWorkspaceUpdate");

const LEVEL_WORD = (k: string) => k.split("-").map((w, i) => (i === 0 ? w[0].toUpperCase() + w.slice(1) : w)).join(" ");

/** Custom keys may be set only with access "custom" (the real 422 text). */
function customPerms<T extends Record<string, unknown>>(access: string, given: Partial<T>, defaults: T, pointer: string): T | null {
  const keys = Object.keys(given).filter((k) => k !== "access" && given[k as keyof T] !== undefined);
  if (access !== "custom") {
    if (keys.length) {
      throw ApiError.of("invalid_attribute", {
        detail: `${LEVEL_WORD(keys[0])} is read-only when access level is '${access}'; use the 'custom' access level to set this attribute.`,
        pointer: `${pointer}/${keys[0]}`,
      });
    }
    return null;
  }
  return { ...defaults, ...Object.fromEntries(keys.map((k) => [k, given[k as keyof T]])) } as T;
}

interface TwRow {
  id: string;
  team_id: string;
  workspace_id: string;
  access: string;
  perms: string;
}

function serializeTw(r: TwRow): Resource {
  const implied = r.access === "custom" ? { ...WS_DEFAULT_CUSTOM, ...JSON.parse(r.perms) } : WS_IMPLIED[r.access as keyof typeof WS_IMPLIED];
  return {
    id: r.id,
    type: "team-workspaces",
    attributes: { access: r.access, ...implied },
    relationships: {
      team: { data: { id: r.team_id, type: "teams" }, links: { related: `/api/v2/teams/${r.team_id}` } },
      workspace: { data: { id: r.workspace_id, type: "workspaces" }, links: { related: `/api/v2/workspaces/${r.workspace_id}` } },
    },
    links: { self: `/api/v2/team-workspaces/${r.id}` },
  };
}

/** Managing a workspace's team access needs admin on it; the team must be of the same organisation. */
async function adminOfWorkspace(c: Context<AppEnv>, workspaceId: string) {
  const { record, caps } = await readById(c, workspaceId);
  requireCap(caps.admin);
  return record;
}

teamAccess.openapi(
  createRoute({ method: "post", path: "/team-workspaces", tags, summary: "Give a team access to a workspace", request: { body: jsonBody(twCreateBody) }, responses: { ...ok("The access", 201), ...errorResponses } }),
  async (c) => {
    const d = c.req.valid("json").data;
    const ws = await adminOfWorkspace(c, d.relationships.workspace.data.id);
    const db = primary(c);
    const team = await findTeam(db, d.relationships.team.data.id);
    if (!team || team.organization_name.toLowerCase() !== ws.organization.toLowerCase()) {
      throw ApiError.of("not_found", { detail: "Team not found", pointer: "/data/relationships/team/data/id" });
    }
    const { access, ...given } = d.attributes;
    const perms = customPerms(access, given, WS_DEFAULT_CUSTOM, "/data/attributes");
    const row: TwRow = { id: newId("tws"), team_id: team.id, workspace_id: ws.id, access, perms: JSON.stringify(perms ?? {}) };
    const res = await db
      .prepare("INSERT INTO team_workspaces (id, team_id, workspace_id, access, perms, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")
      .bind(row.id, row.team_id, row.workspace_id, row.access, row.perms, nowIso())
      .run();
    if (res.meta.changes !== 1) throw ApiError.of("invalid_attribute", { detail: "Team already has access to this workspace", pointer: "/data/relationships/team/data/id" });
    return jsonapi(c, { data: serializeTw(row) }, 201);
  },
);

teamAccess.openapi(
  createRoute({
    method: "get",
    path: "/team-workspaces",
    tags,
    summary: "List the team access of a workspace",
    request: { query: z.object({ "filter[workspace][id]": z.string().max(64), "page[number]": z.string().max(20).optional(), "page[size]": z.string().max(20).optional() }).passthrough() },
    responses: { ...ok("Team accesses"), ...errorResponses },
  }),
  async (c) => {
    const wsId = c.req.valid("query")["filter[workspace][id]"];
    await readById(c, wsId);
    const page = readPage(c);
    const rows = await primary(c).prepare("SELECT * FROM team_workspaces WHERE workspace_id = ? ORDER BY created_at, id").bind(wsId).all<TwRow>();
    return jsonapi(c, paginated(c, rows.results.slice((page.number - 1) * page.size, page.number * page.size).map(serializeTw), page, rows.results.length));
  },
);

const twParam = z.object({ id: z.string().regex(/^tws-[A-Za-z0-9]{1,64}$/) });

async function loadTw(c: Context<AppEnv>, id: string, admin: boolean): Promise<TwRow> {
  const row = await primary(c).prepare("SELECT * FROM team_workspaces WHERE id = ?").bind(id).first<TwRow>();
  if (!row) throw ApiError.of("not_found");
  if (admin) await adminOfWorkspace(c, row.workspace_id);
  else await readById(c, row.workspace_id);
  return row;
}

teamAccess.openapi(
  createRoute({ method: "get", path: "/team-workspaces/{id}", tags, summary: "Show a team access", request: { params: twParam }, responses: { ...ok("The access"), ...errorResponses } }),
  async (c) => jsonapi(c, { data: serializeTw(await loadTw(c, c.req.valid("param").id, false)) }),
);

teamAccess.openapi(
  createRoute({ method: "patch", path: "/team-workspaces/{id}", tags, summary: "Change a team access", request: { params: twParam, body: jsonBody(twUpdateBody) }, responses: { ...ok("The access"), ...errorResponses } }),
  async (c) => {
    const row = await loadTw(c, c.req.valid("param").id, true);
    const { access = row.access as (typeof WS_LEVELS)[number], ...given } = c.req.valid("json").data.attributes;
    const base = access === "custom" && row.access === "custom" ? { ...WS_DEFAULT_CUSTOM, ...JSON.parse(row.perms) } : WS_DEFAULT_CUSTOM;
    const perms = customPerms(access, given, base, "/data/attributes");
    const next = { ...row, access, perms: JSON.stringify(perms ?? {}) };
    await primary(c).prepare("UPDATE team_workspaces SET access = ?, perms = ? WHERE id = ?").bind(next.access, next.perms, row.id).run();
    return jsonapi(c, { data: serializeTw(next) });
  },
);

teamAccess.openapi(
  createRoute({ method: "delete", path: "/team-workspaces/{id}", tags, summary: "Remove a team access", request: { params: twParam }, responses: { ...noContentResponse, ...errorResponses } }),
  async (c) => {
    const row = await loadTw(c, c.req.valid("param").id, true);
    await primary(c).prepare("DELETE FROM team_workspaces WHERE id = ?").bind(row.id).run();
    return noContent(c);
  },
);

// ---- team-projects ----

const PRJ_LEVELS = ["read", "write", "maintain", "admin", "custom"] as const;
const projectAccessInput = z.object({ settings: z.enum(["read", "update", "delete"]).optional(), teams: z.enum(["none", "read", "manage"]).optional(), "variable-sets": z.enum(["none", "read", "write"]).optional() });
const workspaceAccessInput = z.object({
  runs: z.enum(["read", "plan", "apply"]).optional(),
  "sentinel-mocks": z.enum(["none", "read"]).optional(),
  "state-versions": z.enum(["none", "read-outputs", "read", "write"]).optional(),
  variables: z.enum(["none", "read", "write"]).optional(),
  create: z.boolean().optional(),
  locking: z.boolean().optional(),
  delete: z.boolean().optional(),
  move: z.boolean().optional(),
  "run-tasks": z.boolean().optional(),
  "policy-overrides": z.boolean().optional(),
});
type PrjAccess = { "project-access": Record<string, unknown>; "workspace-access": Record<string, unknown> };
const ws = (runs: string, mocks: string, state: string, vars: string, create: boolean, locking: boolean, del: boolean, move: boolean, tasks: boolean) => ({
  runs, "sentinel-mocks": mocks, "state-versions": state, variables: vars, create, locking, delete: del, move, "run-tasks": tasks,
});
/** The implied-permissions table (tfe-api-notes §2.4). */
const PRJ_IMPLIED: Record<string, PrjAccess> = {
  read: { "project-access": { settings: "read", teams: "none" }, "workspace-access": ws("read", "none", "read", "read", false, false, false, false, false) },
  write: { "project-access": { settings: "read", teams: "none" }, "workspace-access": ws("apply", "read", "write", "write", false, true, false, false, false) },
  maintain: { "project-access": { settings: "read", teams: "none" }, "workspace-access": ws("apply", "read", "write", "write", true, true, true, false, true) },
  admin: { "project-access": { settings: "delete", teams: "manage" }, "workspace-access": ws("apply", "read", "write", "write", true, true, true, true, true) },
  custom: { "project-access": { settings: "read", teams: "none" }, "workspace-access": ws("read", "none", "none", "none", false, false, false, false, false) },
};
const tpCreateBody = z
  .object({
    data: z.object({
      type: z.literal("team-projects"),
      attributes: z.object({ access: z.enum(PRJ_LEVELS), "project-access": projectAccessInput.optional(), "workspace-access": workspaceAccessInput.optional() }),
      relationships: z.object({ team: relationship("teams"), project: relationship("projects") }),
    }),
  })
  .openapi("TeamProjectCreate");
const tpUpdateBody = z
  .object({ data: z.object({ type: z.literal("team-projects"), attributes: z.object({ access: z.enum(PRJ_LEVELS).optional(), "project-access": projectAccessInput.optional(), "workspace-access": workspaceAccessInput.optional() }) }) })
  .openapi("TeamProjectUpdate");

interface TpRow {
  id: string;
  team_id: string;
  project_id: string;
  access: string;
  perms: string;
}

function tpPerms(access: string, given: { "project-access"?: Record<string, unknown>; "workspace-access"?: Record<string, unknown> }, current?: PrjAccess): PrjAccess {
  if (access !== "custom") {
    for (const group of ["project-access", "workspace-access"] as const) {
      const keys = Object.keys(given[group] ?? {});
      if (keys.length) {
        throw ApiError.of("invalid_attribute", {
          detail: `${LEVEL_WORD(keys[0])} is read-only when access level is '${access}'; use the 'custom' access level to set this attribute.`,
          pointer: `/data/attributes/${group}/${keys[0]}`,
        });
      }
    }
    return PRJ_IMPLIED[access];
  }
  const base = current ?? PRJ_IMPLIED.custom;
  return {
    "project-access": { ...base["project-access"], ...(given["project-access"] ?? {}) },
    "workspace-access": { ...base["workspace-access"], ...(given["workspace-access"] ?? {}) },
  };
}

function serializeTp(r: TpRow): Resource {
  const perms = JSON.parse(r.perms) as PrjAccess;
  return {
    id: r.id,
    type: "team-projects",
    attributes: { access: r.access, "project-access": perms["project-access"], "workspace-access": perms["workspace-access"] },
    relationships: {
      team: { data: { id: r.team_id, type: "teams" }, links: { related: `/api/v2/teams/${r.team_id}` } },
      project: { data: { id: r.project_id, type: "projects" }, links: { related: `/api/v2/projects/${r.project_id}` } },
    },
    links: { self: `/api/v2/team-projects/${r.id}` },
  };
}

/** Managing project access: owners, organisation token, manage-projects teams, or project admins. */
async function projectManager(c: Context<AppEnv>, projectId: string, manage: boolean): Promise<{ org: OrgAccess; organization: string }> {
  const db = primary(c);
  const project = await db.prepare("SELECT id, organization_name FROM projects WHERE id = ?").bind(projectId).first<{ id: string; organization_name: string }>();
  if (!project) throw ApiError.of("not_found");
  const access = await requireOrgAccess(db, c.get("principal"), project.organization_name);
  const orgWide = access.isOwner || access.isOrgToken || access.orgPermissions["manage-projects"];
  let allowed = orgWide || (!manage && access.orgPermissions["read-projects"]);
  if (!allowed && access.teamIds.length) {
    const grants = await db
      .prepare("SELECT access, perms FROM team_projects WHERE project_id = ? AND team_id IN (SELECT value FROM json_each(?))")
      .bind(projectId, JSON.stringify(access.teamIds))
      .all<{ access: string; perms: string }>();
    allowed = grants.results.some((g) => !manage || g.access === "admin" || (JSON.parse(g.perms) as PrjAccess)["project-access"]?.teams === "manage");
  }
  if (!allowed) throw ApiError.of("not_found");
  return { org: access, organization: project.organization_name };
}

teamAccess.openapi(
  createRoute({ method: "post", path: "/team-projects", tags, summary: "Give a team access to a project", request: { body: jsonBody(tpCreateBody) }, responses: { ...ok("The access", 201), ...errorResponses } }),
  async (c) => {
    const d = c.req.valid("json").data;
    const { organization } = await projectManager(c, d.relationships.project.data.id, true);
    const db = primary(c);
    const team = await findTeam(db, d.relationships.team.data.id);
    if (!team || team.organization_name.toLowerCase() !== organization.toLowerCase()) {
      throw ApiError.of("not_found", { detail: "Team not found", pointer: "/data/relationships/team/data/id" });
    }
    const row: TpRow = { id: newId("tprj"), team_id: team.id, project_id: d.relationships.project.data.id, access: d.attributes.access, perms: JSON.stringify(tpPerms(d.attributes.access, d.attributes)) };
    const res = await db
      .prepare("INSERT INTO team_projects (id, team_id, project_id, access, perms, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")
      .bind(row.id, row.team_id, row.project_id, row.access, row.perms, nowIso())
      .run();
    if (res.meta.changes !== 1) throw ApiError.of("invalid_attribute", { detail: "Team already has access to this project", pointer: "/data/relationships/team/data/id" });
    return jsonapi(c, { data: serializeTp(row) }, 201);
  },
);

teamAccess.openapi(
  createRoute({
    method: "get",
    path: "/team-projects",
    tags,
    summary: "List the team access of a project",
    request: { query: z.object({ "filter[project][id]": z.string().max(64), "page[number]": z.string().max(20).optional(), "page[size]": z.string().max(20).optional() }).passthrough() },
    responses: { ...ok("Team accesses"), ...errorResponses },
  }),
  async (c) => {
    const projectId = c.req.valid("query")["filter[project][id]"];
    await projectManager(c, projectId, false);
    const page = readPage(c);
    const rows = await primary(c).prepare("SELECT * FROM team_projects WHERE project_id = ? ORDER BY created_at, id").bind(projectId).all<TpRow>();
    return jsonapi(c, paginated(c, rows.results.slice((page.number - 1) * page.size, page.number * page.size).map(serializeTp), page, rows.results.length));
  },
);

const tpParam = z.object({ id: z.string().regex(/^tprj-[A-Za-z0-9]{1,64}$/) });

async function loadTp(c: Context<AppEnv>, id: string, manage: boolean): Promise<TpRow> {
  const row = await primary(c).prepare("SELECT * FROM team_projects WHERE id = ?").bind(id).first<TpRow>();
  if (!row) throw ApiError.of("not_found");
  await projectManager(c, row.project_id, manage);
  return row;
}

teamAccess.openapi(
  createRoute({ method: "get", path: "/team-projects/{id}", tags, summary: "Show a project team access", request: { params: tpParam }, responses: { ...ok("The access"), ...errorResponses } }),
  async (c) => jsonapi(c, { data: serializeTp(await loadTp(c, c.req.valid("param").id, false)) }),
);

teamAccess.openapi(
  createRoute({ method: "patch", path: "/team-projects/{id}", tags, summary: "Change a project team access", request: { params: tpParam, body: jsonBody(tpUpdateBody) }, responses: { ...ok("The access"), ...errorResponses } }),
  async (c) => {
    const row = await loadTp(c, c.req.valid("param").id, true);
    const a = c.req.valid("json").data.attributes;
    const access = a.access ?? row.access;
    const perms = tpPerms(access, a, access === "custom" && row.access === "custom" ? (JSON.parse(row.perms) as PrjAccess) : undefined);
    const next = { ...row, access, perms: JSON.stringify(perms) };
    await primary(c).prepare("UPDATE team_projects SET access = ?, perms = ? WHERE id = ?").bind(next.access, next.perms, row.id).run();
    return jsonapi(c, { data: serializeTp(next) });
  },
);

teamAccess.openapi(
  createRoute({ method: "delete", path: "/team-projects/{id}", tags, summary: "Remove a project team access", request: { params: tpParam }, responses: { ...noContentResponse, ...errorResponses } }),
  async (c) => {
    const row = await loadTp(c, c.req.valid("param").id, true);
    await primary(c).prepare("DELETE FROM team_projects WHERE id = ?").bind(row.id).run();
    return noContent(c);
  },
);
