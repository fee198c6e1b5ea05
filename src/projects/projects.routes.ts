/** Projects (tfe-api-notes §2.2): every workspace belongs to one; every organisation has a "Default Project". */
import { createRoute } from "@hono/zod-openapi";
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
import {
  agentPoolInOrganization,
  deleteEmptyProject,
  getProject,
  insertProjectStatement,
  isMissingPoolError,
  isUniqueViolation,
  listProjects,
  orphanBindingsCleanup,
  PROJECT_REF_MS,
  projectRefs,
  releaseProject,
  teamReadableProjectIds,
  updateProjectStatement,
  type ProjectRow,
} from "./projects.index";
import {
  createProjectBody,
  listProjectsQuery,
  orgParam,
  PROJECT_NAME,
  projectParam,
  showProjectQuery,
  updateProjectBody,
  type ProjectAttributes,
  type ProjectRelationships,
} from "./projects.schemas";
import { canManageProjects, readsAllProjects, serializeProject } from "./projects.serialize";

const tags = ["Projects"];
export const projects = router();

/** Readers: organisation-wide readers and managers, and teams with access to this project or a workspace in it. */
export async function canReadProject(c: Context<AppEnv>, access: OrgAccess, projectId: string): Promise<boolean> {
  if (readsAllProjects(access)) return true;
  return (await teamReadableProjectIds(primary(c), access.organization.name, access.teamIds)).has(projectId);
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

/** The project and the caller's access to its organisation; 404 unless the caller may read (or manage) it. */
async function loadProject(c: Context<AppEnv>, id: string, manage: boolean): Promise<{ project: ProjectRow; access: OrgAccess }> {
  const db = primary(c);
  const project = await getProject(db, id);
  if (!project) throw ApiError.of("not_found");
  const access = await requireOrgAccess(db, c.get("principal"), project.organization_name);
  if (manage ? !canManageProjects(access) : !(await canReadProject(c, access, id))) throw ApiError.of("not_found");
  return { project, access };
}

const invalid = (detail: string, attribute: string) => ApiError.of("invalid_attribute", { detail, pointer: `/data/attributes/${attribute}` });

function checkName(name: string): void {
  if (name.length < LIMITS.projectNameMin || name.length > LIMITS.projectNameMax) {
    throw invalid(`Name must be between ${LIMITS.projectNameMin} and ${LIMITS.projectNameMax} characters`, "name");
  }
  // go-tfe's tests match the "Name may only contain" prefix.
  if (!PROJECT_NAME.test(name)) throw invalid("Name may only contain letters, numbers, spaces, hyphens and underscores, and cannot start or end with a space", "name");
}

interface Defaults {
  mode: string | null;
  pool: string | null;
  /** Where a pool problem is reported: the relationship when given, else the attribute. */
  poolPointer: string;
  /** Whether the request said anything about execution defaults (an update writes them only then). */
  touched: boolean;
}

/**
 * The project's own execution defaults after a create or update. `default-execution-mode: null`, or an
 * execution-mode overwrite of false, means inherit the organisation's (stored as null); the pool may come as
 * the `default-agent-pool-id` attribute or the `default-agent-pool` relationship and must be in the organisation.
 */
async function executionDefaults(c: Context<AppEnv>, access: OrgAccess, a: ProjectAttributes, rel: ProjectRelationships, current?: ProjectRow): Promise<Defaults> {
  const so = a["setting-overwrites"] ?? {};
  const modeOverwrite = so["execution-mode"] ?? so["default-execution-mode"];
  const poolOverwrite = so["agent-pool"] ?? so["default-agent-pool"];
  if (modeOverwrite !== undefined && poolOverwrite !== undefined && modeOverwrite !== poolOverwrite) {
    throw invalid("If agent-pool and execution-mode are both included in setting-overwrites, their values must be the same.", "setting-overwrites");
  }
  const overwrite = modeOverwrite ?? poolOverwrite;
  const relPool = rel?.["default-agent-pool"];
  const attrPool = a["default-agent-pool-id"];
  if (relPool !== undefined && attrPool !== undefined && (relPool.data?.id ?? null) !== attrPool) {
    throw ApiError.of("invalid_attribute", {
      detail: "default-agent-pool-id and the default-agent-pool relationship name different agent pools",
      pointer: "/data/relationships/default-agent-pool",
    });
  }
  const poolGiven = relPool !== undefined ? (relPool.data?.id ?? null) : attrPool;
  const poolPointer = relPool !== undefined ? "/data/relationships/default-agent-pool" : "/data/attributes/default-agent-pool-id";
  const touched = a["default-execution-mode"] !== undefined || poolGiven !== undefined || overwrite !== undefined;

  let mode: string | null;
  let pool: string | null;
  if (a["default-execution-mode"] !== undefined) mode = a["default-execution-mode"];
  else if (overwrite === false) mode = null;
  else if (overwrite === true && !current?.default_execution_mode) mode = access.organization.defaultExecutionMode; // pin what it inherits now
  else mode = current?.default_execution_mode ?? null;

  if (poolGiven !== undefined) pool = poolGiven;
  else if (mode === "agent") {
    const inheritedPool = overwrite === true && !current?.default_execution_mode ? access.organization.defaultAgentPoolId : null;
    pool = current?.default_agent_pool_id ?? inheritedPool;
  } else pool = null;

  if (mode === "agent" && !pool) throw ApiError.of("invalid_attribute", { detail: "Agent pool must be specified when using 'agent' execution mode", pointer: poolPointer });
  if (mode !== "agent" && pool) throw ApiError.of("invalid_attribute", { detail: "Agent pool must not be specified unless using 'agent' execution mode", pointer: poolPointer });
  if (pool && !(await agentPoolInOrganization(primary(c), pool, access.organization.name))) {
    throw poolNotFound(poolPointer);
  }
  return { mode, pool, poolPointer, touched };
}

const poolNotFound = (pointer: string) => ApiError.of("invalid_attribute", { detail: "Agent pool not found", pointer });

function checkDuration(a: ProjectAttributes): void {
  const d = a["auto-destroy-activity-duration"];
  if (d !== undefined && d !== null && (!AUTO_DESTROY_DURATION.test(d) || parseInt(d, 10) <= 0)) {
    throw invalid("Auto destroy activity duration has an incorrect format, we expect up to 4 numeric digits and 1 unit ('d' or 'h')", "auto-destroy-activity-duration");
  }
}

function bindingsOf(rel: ProjectRelationships) {
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

/** One D1 batch (one transaction): the project row and its bindings land together or not at all. */
async function write(c: Context<AppEnv>, stmts: D1PreparedStatement[], poolPointer: string): Promise<void> {
  if (stmts.length === 0) return;
  try {
    await primary(c).batch(stmts);
  } catch (err) {
    if (isUniqueViolation(err)) throw invalid("Name has already been taken", "name");
    // The pool was deleted after the check (migration 0002's trigger refused the write).
    if (isMissingPoolError(err)) throw poolNotFound(poolPointer);
    if (isProjectLimitError(err)) throw ApiError.of("invalid_attribute", { detail: `Tag bindings cannot exceed ${LIMITS.tagBindingsPerResource} per resource`, pointer: "/data/relationships/tag-bindings/data" });
    throw err;
  }
}

projects.openapi(
  createRoute({ method: "post", path: "/organizations/{organization_name}/projects", tags, summary: "Create a project", request: { params: orgParam, body: jsonBody(createProjectBody) }, responses: { ...ok("The project", 201), ...errorResponses } }),
  async (c) => {
    const db = primary(c);
    const access = await requireOrgAccess(db, c.get("principal"), c.req.valid("param").organization_name);
    if (!canManageProjects(access)) throw ApiError.of("not_found");
    const { attributes: a, relationships: rel } = c.req.valid("json").data;
    checkName(a.name);
    checkDuration(a);
    const d = await executionDefaults(c, access, a, rel);
    const bindings = bindingsOf(rel);
    const id = newId("prj");
    const now = nowIso();
    await write(c, [
      insertProjectStatement(db, {
        id,
        organization: access.organization.name,
        name: a.name,
        description: a.description ?? null,
        attrs: { "auto-destroy-activity-duration": a["auto-destroy-activity-duration"] ?? null },
        mode: d.mode,
        pool: d.pool,
        createdAt: now,
      }),
      ...(bindings ? replaceProjectBindingsStatements(db, id, bindings, now) : []),
    ], d.poolPointer);
    return jsonapi(c, { data: serializeProject((await getProject(db, id))!, access) }, 201);
  },
);

projects.openapi(
  createRoute({ method: "get", path: "/organizations/{organization_name}/projects", tags, summary: "List projects", request: { params: orgParam, query: listProjectsQuery }, responses: { ...ok("A page of projects"), ...errorResponses } }),
  async (c) => {
    const db = primary(c);
    const access = await requireOrgAccess(db, c.get("principal"), c.req.valid("param").organization_name);
    const page = readPage(c);
    const { q, "filter[names]": names, sort } = c.req.valid("query");
    // filter[tagged][i][key|value]: AND across i over the project's bindings; an empty value means any.
    const tagged = new Map<string, { key?: string; value?: string }>();
    for (const [k, v] of new URL(c.req.url).searchParams) {
      const m = /^filter\[tagged\]\[(\d{1,3})\]\[(key|value)\]$/.exec(k);
      if (m) tagged.set(m[1], { ...tagged.get(m[1]), [m[2]]: v });
    }
    const readable = readsAllProjects(access) ? null : [...(await teamReadableProjectIds(db, access.organization.name, access.teamIds))];
    const result = await listProjects(db, {
      organization: access.organization.name,
      readable,
      q: q || undefined,
      names: names !== undefined ? names.split(",").map((n) => n.trim()).filter(Boolean) : undefined,
      tagged: [...tagged.values()].filter((t): t is { key: string; value?: string } => !!t.key),
      descending: sort === "-name",
      limit: page.size,
      offset: (page.number - 1) * page.size,
    });
    const data = result.rows.map((p) => serializeProject(p, access));
    const inc = await withBindings(c, data);
    return jsonapi(c, paginated(c, data, page, result.matching, { ...inc, meta: { "status-counts": { total: result.total, matching: result.matching } } }));
  },
);

projects.openapi(
  createRoute({ method: "get", path: "/projects/{project_id}", tags, summary: "Show a project", request: { params: projectParam, query: showProjectQuery }, responses: { ...ok("The project"), ...errorResponses } }),
  async (c) => {
    const { project, access } = await loadProject(c, c.req.valid("param").project_id, false);
    const data = serializeProject(project, access);
    return jsonapi(c, { data, ...(await withBindings(c, [data])) });
  },
);

projects.openapi(
  createRoute({ method: "patch", path: "/projects/{project_id}", tags, summary: "Update a project", request: { params: projectParam, body: jsonBody(updateProjectBody) }, responses: { ...ok("The project"), ...errorResponses } }),
  async (c) => {
    const { project, access } = await loadProject(c, c.req.valid("param").project_id, true);
    const { attributes: a = {}, relationships: rel } = c.req.valid("json").data;
    if (a.name !== undefined) checkName(a.name);
    checkDuration(a);
    const d = await executionDefaults(c, access, a, rel, project);
    const bindings = bindingsOf(rel);
    const db = primary(c);
    // Only what the request names is written, so concurrent PATCHes of different attributes both land.
    const row = updateProjectStatement(db, project.id, {
      name: a.name,
      description: a.description,
      autoDestroyActivityDuration: a["auto-destroy-activity-duration"],
      defaults: d.touched ? { mode: d.mode, pool: d.pool } : undefined,
    });
    await write(c, [
      ...(row ? [row] : []),
      ...(bindings ? [...replaceProjectBindingsStatements(db, project.id, bindings, nowIso()), orphanBindingsCleanup(db, project.id)] : []),
    ], d.poolPointer);
    const updated = await getProject(db, project.id);
    if (!updated) throw ApiError.of("not_found"); // deleted concurrently
    return jsonapi(c, { data: serializeProject(updated, access) });
  },
);

/**
 * References older than their lease whose workspace (asked of its DO, the truth) is not in the
 * project are left by creates or moves that failed or died midway: they no longer hold the project.
 * A workspace that is in it keeps blocking the delete until its index write lands.
 */
async function dropStaleRefs(c: Context<AppEnv>, projectId: string): Promise<void> {
  const now = Date.now();
  for (const ref of await projectRefs(primary(c), projectId)) {
    if (now - ref.claimed_at <= PROJECT_REF_MS) continue;
    const res = await c.env.WORKSPACES.getByName(ref.workspace_id).get();
    if (res.ok && res.workspace.projectId === projectId) continue;
    await releaseProject(primary(c), projectId, ref.workspace_id);
  }
}

projects.openapi(
  createRoute({
    method: "delete",
    path: "/projects/{project_id}",
    tags,
    summary: "Delete an empty project (never the Default Project)",
    description: "A project that still contains workspaces is refused with 409; the Default Project with 422. Team access and tag bindings of the project are deleted with it.",
    request: { params: projectParam },
    responses: { ...noContentResponse, 409: { description: "The project still contains workspaces" }, ...errorResponses },
  }),
  async (c) => {
    const { project } = await loadProject(c, c.req.valid("param").project_id, true);
    // Status codes the real service leaves undocumented (issue 2 asks us to choose): the Default Project is a
    // property of the organisation, so deleting it is an invalid request (422); a project that still holds
    // workspaces is a conflict with the current state that moving or deleting them resolves (409).
    if (project.is_default === 1) throw ApiError.of("invalid_attribute", { detail: "The Default Project cannot be deleted" });
    await dropStaleRefs(c, project.id);
    if (!(await deleteEmptyProject(primary(c), project.id))) {
      throw ApiError.of("conflict", { detail: "Project still contains workspaces; move or delete them first" });
    }
    return noContent(c);
  },
);
