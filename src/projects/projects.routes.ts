/** Projects (tfe-api-notes §2.2): every workspace belongs to one; every organisation has a "Default Project". */
import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { requireOrgAccess, type OrgAccess } from "../auth/access";
import { primary } from "../db";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";
import { newId, nowIso } from "../ids";
import { LIMITS } from "../limits";
import { jsonapi, noContent, paginated, readPage, type Resource } from "../jsonapi/document";
import { errorResponses, jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import { isProjectLimitError, projectBindingsOf, replaceProjectBindingsStatements } from "../tags/project-tags.index";
import { projectEffectiveBindings } from "../tags/tags.serialize";
import { checkBindings } from "../tags/tags.rules";
import { AUTO_DESTROY_DURATION } from "../workspaces/workspaces.schemas";

const tags = ["Projects"];
export const projects = router();

/** Letters, numbers, spaces, - and _; no leading or trailing space; 3-40 characters. */
const PROJECT_NAME = /^[A-Za-z0-9_-]([A-Za-z0-9 _-]*[A-Za-z0-9_-])?$/;

interface ProjectRow {
  id: string;
  organization_name: string;
  name: string;
  description: string | null;
  is_default: number;
  created_at: string;
  attrs: string;
  default_execution_mode: string | null;
  default_agent_pool_id: string | null;
  workspace_count?: number;
  team_count?: number;
}

const orgParam = z.object({ organization_name: z.string().min(1).max(255) });
const projectParam = z.object({ project_id: z.string().regex(/^prj-[A-Za-z0-9]{1,64}$/) });
const bindingInput = z.object({ type: z.literal("tag-bindings"), attributes: z.object({ key: z.string(), value: z.string().nullable().optional() }) });
const attributes = z.object({
  name: z.string().max(LIMITS.projectNameMax + 10).optional(),
  description: z.string().max(LIMITS.projectDescriptionMax).nullable().optional(),
  "default-execution-mode": z.enum(["remote", "local", "agent"]).nullable().optional(),
  "default-agent-pool-id": z.string().max(64).nullable().optional(),
  "auto-destroy-activity-duration": z.string().max(16).nullable().optional(),
  // The docs name these keys execution-mode / agent-pool; go-tfe sends default-execution-mode / default-agent-pool.
  "setting-overwrites": z
    .object({ "execution-mode": z.boolean().optional(), "agent-pool": z.boolean().optional(), "default-execution-mode": z.boolean().optional(), "default-agent-pool": z.boolean().optional() })
    .optional(),
});
const relationships = z
  .object({
    "default-agent-pool": z.object({ data: z.object({ type: z.literal("agent-pools"), id: z.string().max(64) }).nullable() }).optional(),
    "tag-bindings": z.object({ data: z.array(bindingInput).max(LIMITS.tagBindingsPerResource * 10) }).optional(),
  })
  .optional();
const createBody = z.object({ data: z.object({ type: z.literal("projects"), attributes: attributes.extend({ name: z.string().max(LIMITS.projectNameMax + 10) }), relationships }) }).openapi("ProjectCreate");
const updateBody = z.object({ data: z.object({ type: z.literal("projects"), attributes: attributes.optional(), relationships }) }).openapi("ProjectUpdate");

function canManageProjects(access: OrgAccess): boolean {
  return access.isOwner || access.isOrgToken || access.orgPermissions["manage-projects"] === true;
}

function serializeProject(p: ProjectRow, access: OrgAccess): Resource {
  const manage = canManageProjects(access);
  const attrs = JSON.parse(p.attrs) as Record<string, unknown>;
  return {
    id: p.id,
    type: "projects",
    attributes: {
      name: p.name,
      description: p.description,
      "created-at": p.created_at,
      "workspace-count": p.workspace_count ?? 0,
      "team-count": p.team_count ?? 0,
      "default-execution-mode": p.default_execution_mode ?? access.organization.defaultExecutionMode,
      "auto-destroy-activity-duration": attrs["auto-destroy-activity-duration"] ?? null,
      "setting-overwrites": {
        "execution-mode": p.default_execution_mode !== null,
        "agent-pool": p.default_execution_mode !== null,
        "default-execution-mode": p.default_execution_mode !== null,
        "default-agent-pool": p.default_execution_mode !== null,
      },
      permissions: { "can-read": true, "can-update": manage, "can-destroy": manage && p.is_default !== 1, "can-create-workspace": manage, "can-move-workspace": manage, "can-manage-tags": manage, "can-manage-teams": manage },
    },
    relationships: {
      organization: { data: { id: p.organization_name, type: "organizations" }, links: { related: `/api/v2/organizations/${p.organization_name}` } },
      "default-agent-pool": { data: p.default_agent_pool_id ? { id: p.default_agent_pool_id, type: "agent-pools" } : null },
      "tag-bindings": { links: { related: `/api/v2/projects/${p.id}/tag-bindings` } },
      "effective-tag-bindings": { links: { related: `/api/v2/projects/${p.id}/effective-tag-bindings` } },
    },
    links: { self: `/api/v2/projects/${p.id}` },
  };
}

const SELECT = `SELECT p.*, (SELECT count(*) FROM workspaces w WHERE w.project_id = p.id) AS workspace_count,
  (SELECT count(*) FROM team_projects tp WHERE tp.project_id = p.id) AS team_count FROM projects p`;

/** Readers: organisation-wide readers and managers, and teams with access to this project. */
export async function canReadProject(c: Context<AppEnv>, access: OrgAccess, projectId: string): Promise<boolean> {
  if (canManageProjects(access) || access.orgPermissions["read-projects"] || access.orgPermissions["read-workspaces"]) return true;
  if (access.teamIds.length === 0) return false;
  const row = await primary(c)
    .prepare("SELECT 1 FROM team_projects WHERE project_id = ? AND team_id IN (SELECT value FROM json_each(?)) UNION SELECT 1 FROM team_workspaces tw JOIN workspaces w ON w.id = tw.workspace_id WHERE w.project_id = ? AND tw.team_id IN (SELECT value FROM json_each(?))")
    .bind(projectId, JSON.stringify(access.teamIds), projectId, JSON.stringify(access.teamIds))
    .first();
  return row !== null;
}

/** `include=effective_tag_bindings`: relationship data on each project plus the bindings in `included`. */
async function withBindings(c: Context<AppEnv>, data: Resource[]): Promise<{ included?: Resource[] }> {
  const values = (c.req.query("include") ?? "").split(",").map((v) => v.trim()).filter(Boolean);
  for (const v of values) if (v !== "effective_tag_bindings") throw ApiError.of("invalid_include", { detail: `Invalid include parameter: ${v}`, parameter: "include" });
  if (!values.length || !data.length) return {};
  const bindings = await projectBindingsOf(primary(c), data.map((p) => p.id));
  const included: Resource[] = [];
  for (const p of data) {
    const eff = projectEffectiveBindings(bindings.get(p.id) ?? []);
    p.relationships!["effective-tag-bindings"] = { data: eff.map((b) => ({ id: b.id, type: b.type })), links: { related: `/api/v2/projects/${p.id}/effective-tag-bindings` } };
    included.push(...eff);
  }
  return included.length ? { included } : {};
}

async function loadProject(c: Context<AppEnv>, id: string, manage: boolean): Promise<{ project: ProjectRow; access: OrgAccess }> {
  const db = primary(c);
  const project = await db.prepare(`${SELECT} WHERE p.id = ?`).bind(id).first<ProjectRow>();
  if (!project) throw ApiError.of("not_found");
  const access = await requireOrgAccess(db, c.get("principal"), project.organization_name);
  if (manage ? !canManageProjects(access) : !(await canReadProject(c, access, id))) throw ApiError.of("not_found");
  return { project, access };
}

interface Settings {
  name?: string;
  description?: string | null;
  mode?: string | null;
  pool?: string | null;
  duration?: string | null;
}

/** Validates attributes and the default agent pool (which must belong to the organisation). */
async function settingsOf(c: Context<AppEnv>, org: string, a: z.infer<typeof attributes>, rel: z.infer<typeof relationships>, current?: ProjectRow): Promise<Settings> {
  const s: Settings = {};
  if (a.name !== undefined) {
    if (a.name.length < LIMITS.projectNameMin || a.name.length > LIMITS.projectNameMax) {
      throw ApiError.of("invalid_attribute", { detail: `Name must be ${LIMITS.projectNameMin} to ${LIMITS.projectNameMax} characters`, pointer: "/data/attributes/name" });
    }
    if (!PROJECT_NAME.test(a.name)) {
      throw ApiError.of("invalid_attribute", { detail: "Name may only contain letters, numbers, spaces, hyphens and underscores, and may not start or end with a space", pointer: "/data/attributes/name" });
    }
    s.name = a.name;
  }
  if (a.description !== undefined) s.description = a.description;
  if (a["auto-destroy-activity-duration"] !== undefined) {
    const d = a["auto-destroy-activity-duration"];
    if (d !== null && (!AUTO_DESTROY_DURATION.test(d) || parseInt(d, 10) <= 0)) {
      throw ApiError.of("invalid_attribute", { detail: "Auto destroy activity duration has an incorrect format, we expect up to 4 numeric digits and 1 unit ('d' or 'h')", pointer: "/data/attributes/auto-destroy-activity-duration" });
    }
    s.duration = d;
  }
  const poolGiven = rel?.["default-agent-pool"] !== undefined ? (rel["default-agent-pool"].data?.id ?? null) : a["default-agent-pool-id"];
  let mode = a["default-execution-mode"] !== undefined ? a["default-execution-mode"] : current?.default_execution_mode ?? null;
  const so = a["setting-overwrites"];
  if ((so?.["execution-mode"] === false || so?.["default-execution-mode"] === false) && a["default-execution-mode"] === undefined) mode = null;
  const pool = poolGiven !== undefined ? poolGiven : mode === "agent" ? (current?.default_agent_pool_id ?? null) : null;
  if (mode === "agent" && !pool) throw ApiError.of("invalid_attribute", { detail: "Agent pool must be specified when using 'agent' execution mode", pointer: "/data/attributes/default-agent-pool-id" });
  if (mode !== "agent" && pool) throw ApiError.of("invalid_attribute", { detail: "Agent pool must not be specified unless using 'agent' execution mode", pointer: "/data/attributes/default-agent-pool-id" });
  if (pool) {
    const row = await primary(c).prepare("SELECT id FROM agent_pools WHERE id = ? AND organization_name = ?").bind(pool, org).first();
    if (!row) throw ApiError.of("invalid_attribute", { detail: "Agent pool not found", pointer: "/data/attributes/default-agent-pool-id" });
  }
  s.mode = mode;
  s.pool = pool;
  return s;
}

function bindingsOf(rel: z.infer<typeof relationships>) {
  const data = rel?.["tag-bindings"]?.data;
  if (!data) return undefined;
  const inputs = data.map((d) => ({ key: d.attributes.key, value: d.attributes.value ?? "" }));
  const f = checkBindings(inputs, "/data/relationships/tag-bindings/data");
  if (f) throw ApiError.of(f.code, { detail: f.detail, pointer: f.pointer });
  if (new Set(inputs.map((b) => b.key)).size > LIMITS.tagBindingsPerResource) {
    throw ApiError.of("invalid_attribute", { detail: `Tag bindings cannot exceed ${LIMITS.tagBindingsPerResource} per resource`, pointer: "/data/relationships/tag-bindings/data" });
  }
  return inputs;
}

async function write(c: Context<AppEnv>, stmts: D1PreparedStatement[]): Promise<void> {
  try {
    await primary(c).batch(stmts);
  } catch (err) {
    if (String(err).includes("UNIQUE")) throw ApiError.of("invalid_attribute", { detail: "Name has already been taken", pointer: "/data/attributes/name" });
    if (isProjectLimitError(err)) throw ApiError.of("invalid_attribute", { detail: `Tag bindings cannot exceed ${LIMITS.tagBindingsPerResource} per resource`, pointer: "/data/relationships/tag-bindings/data" });
    throw err;
  }
}

projects.openapi(
  createRoute({ method: "post", path: "/organizations/{organization_name}/projects", tags, summary: "Create a project", request: { params: orgParam, body: jsonBody(createBody) }, responses: { ...ok("The project", 201), ...errorResponses } }),
  async (c) => {
    const db = primary(c);
    const access = await requireOrgAccess(db, c.get("principal"), c.req.valid("param").organization_name);
    if (!canManageProjects(access)) throw ApiError.of("not_found");
    const d = c.req.valid("json").data;
    const s = await settingsOf(c, access.organization.name, d.attributes, d.relationships);
    const bindings = bindingsOf(d.relationships);
    const id = newId("prj");
    const now = nowIso();
    await write(c, [
      db
        .prepare("INSERT INTO projects (id, organization_name, name, description, created_at, attrs, default_execution_mode, default_agent_pool_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
        .bind(id, access.organization.name, s.name!, s.description ?? null, now, JSON.stringify({ "auto-destroy-activity-duration": s.duration ?? null }), s.mode ?? null, s.pool ?? null),
      ...(bindings ? replaceProjectBindingsStatements(db, id, bindings, now) : []),
    ]);
    const project = await db.prepare(`${SELECT} WHERE p.id = ?`).bind(id).first<ProjectRow>();
    return jsonapi(c, { data: serializeProject(project!, access) }, 201);
  },
);

projects.openapi(
  createRoute({
    method: "get",
    path: "/organizations/{organization_name}/projects",
    tags,
    summary: "List projects",
    request: { params: orgParam, query: z.object({ q: z.string().max(255).optional(), "filter[names]": z.string().max(4000).optional(), sort: z.enum(["name", "-name"]).optional(), include: z.string().max(200).optional(), "page[number]": z.string().max(20).optional(), "page[size]": z.string().max(20).optional() }).passthrough() },
    responses: { ...ok("A page of projects"), ...errorResponses },
  }),
  async (c) => {
    const db = primary(c);
    const access = await requireOrgAccess(db, c.get("principal"), c.req.valid("param").organization_name);
    const page = readPage(c);
    const { q, "filter[names]": names, sort } = c.req.valid("query");
    const where = ["p.organization_name = ?"];
    const binds: unknown[] = [access.organization.name];
    if (q) {
      where.push("p.name LIKE ? ESCAPE '\\'");
      binds.push(`%${q.replace(/[\\%_]/g, (m) => `\\${m}`)}%`);
    }
    if (names) {
      where.push("p.name IN (SELECT value FROM json_each(?))");
      binds.push(JSON.stringify(names.split(",").map((n) => n.trim())));
    }
    // filter[tagged][i][key|value]: AND across i over the project's bindings; an empty value means any.
    const params = new URL(c.req.url).searchParams;
    const tagged = new Map<string, { key?: string; value?: string }>();
    for (const [k, v] of params) {
      const m = /^filter\[tagged\]\[(\d{1,3})\]\[(key|value)\]$/.exec(k);
      if (m) tagged.set(m[1], { ...tagged.get(m[1]), [m[2]]: v });
    }
    for (const f of tagged.values()) {
      if (!f.key) continue;
      where.push(`EXISTS (SELECT 1 FROM project_tag_bindings b WHERE b.project_id = p.id AND b.key = ?${f.value ? " AND b.value = ?" : ""})`);
      binds.push(f.key, ...(f.value ? [f.value] : []));
    }
    const rows = await db.prepare(`${SELECT} WHERE ${where.join(" AND ")} ORDER BY p.name COLLATE NOCASE ${sort === "-name" ? "DESC" : "ASC"}, p.id`).bind(...binds).all<ProjectRow>();
    const visible: ProjectRow[] = [];
    for (const p of rows.results) if (await canReadProject(c, access, p.id)) visible.push(p);
    const slice = visible.slice((page.number - 1) * page.size, page.number * page.size);
    const data = slice.map((p) => serializeProject(p, access));
    const inc = await withBindings(c, data);
    return jsonapi(c, paginated(c, data, page, visible.length, { ...inc, meta: { "status-counts": { total: rows.results.length, matching: visible.length } } }));
  },
);

projects.openapi(
  createRoute({ method: "get", path: "/projects/{project_id}", tags, summary: "Show a project", request: { params: projectParam, query: z.object({ include: z.string().max(200).optional() }).passthrough() }, responses: { ...ok("The project"), ...errorResponses } }),
  async (c) => {
    const { project, access } = await loadProject(c, c.req.valid("param").project_id, false);
    const data = serializeProject(project, access);
    return jsonapi(c, { data, ...(await withBindings(c, [data])) });
  },
);

projects.openapi(
  createRoute({ method: "patch", path: "/projects/{project_id}", tags, summary: "Update a project", request: { params: projectParam, body: jsonBody(updateBody) }, responses: { ...ok("The project"), ...errorResponses } }),
  async (c) => {
    const { project, access } = await loadProject(c, c.req.valid("param").project_id, true);
    const d = c.req.valid("json").data;
    const s = await settingsOf(c, project.organization_name, d.attributes ?? {}, d.relationships, project);
    const bindings = bindingsOf(d.relationships);
    const db = primary(c);
    const attrs = { ...(JSON.parse(project.attrs) as Record<string, unknown>) };
    if (s.duration !== undefined) attrs["auto-destroy-activity-duration"] = s.duration;
    await write(c, [
      db
        .prepare("UPDATE projects SET name = ?, description = ?, attrs = ?, default_execution_mode = ?, default_agent_pool_id = ? WHERE id = ?")
        .bind(s.name ?? project.name, s.description !== undefined ? s.description : project.description, JSON.stringify(attrs), s.mode ?? null, s.pool ?? null, project.id),
      ...(bindings ? replaceProjectBindingsStatements(db, project.id, bindings, nowIso()) : []),
    ]);
    const updated = await db.prepare(`${SELECT} WHERE p.id = ?`).bind(project.id).first<ProjectRow>();
    return jsonapi(c, { data: serializeProject(updated!, access) });
  },
);

projects.openapi(
  createRoute({
    method: "delete",
    path: "/projects/{project_id}",
    tags,
    summary: "Delete an empty project (never the Default Project)",
    request: { params: projectParam },
    responses: { ...noContentResponse, 409: { description: "The project still contains workspaces" }, ...errorResponses },
  }),
  async (c) => {
    const { project } = await loadProject(c, c.req.valid("param").project_id, true);
    if (project.is_default === 1) throw ApiError.of("invalid_attribute", { detail: "The organization's default project cannot be deleted", pointer: "/data" });
    const db = primary(c);
    // Deleting only while empty is decided by the same statement as the delete, so a racing create cannot be orphaned.
    const [del] = await db.batch([
      db.prepare("DELETE FROM projects WHERE id = ? AND NOT EXISTS (SELECT 1 FROM workspaces WHERE project_id = ?) AND NOT EXISTS (SELECT 1 FROM workspace_names n JOIN workspaces w ON w.id = n.workspace_id WHERE w.project_id = ?)").bind(project.id, project.id, project.id),
    ]);
    if ((del?.meta.changes ?? 0) === 0) throw ApiError.of("conflict", { detail: "Project still contains workspaces; move or delete them first" });
    await db.batch([
      db.prepare("DELETE FROM team_projects WHERE project_id = ?").bind(project.id),
      db.prepare("DELETE FROM project_tag_bindings WHERE project_id = ?").bind(project.id),
    ]);
    return noContent(c);
  },
);
