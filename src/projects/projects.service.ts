/** Projects (HCP Terraform API docs: Projects): authorise, validate, then write through projects.d1.ts. */
import { projectRights, readsAllProjects, requireOrgAccess, type OrgAccess } from "../auth/access";
import { authorize } from "../auth/requirements";
import type { Caller } from "../caller";
import { ApiError } from "../errors";
import { newId, nowIso } from "../ids";
import type { Page } from "../jsonapi/document";
import { LIMITS } from "../limits";
import { isProjectLimitError, replaceProjectBindingsStatements } from "../tags/project-tags.d1";
import { checkBindings } from "../tags/tags.rules";
import { AUTO_DESTROY_DURATION } from "../workspaces/workspace.fields";
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
  writeProjectBatch,
  type Project,
} from "./projects.d1";
import { PROJECT_NAME, type createProjectBody, type ProjectAttributes, type ProjectRelationships, type updateProjectBody } from "./projects.schemas";
import { workspaceObject } from "../workspaces/workspace.stub";

/** A project with the caller's access to its organisation (what the serialiser needs). */
export interface ProjectView {
  project: Project;
  access: OrgAccess;
}

/** Readers: organisation-wide readers and managers, and teams with access to this project or a workspace in it. */
export async function canReadProject(caller: Caller, access: OrgAccess, projectId: string): Promise<boolean> {
  if (readsAllProjects(access)) return true;
  return (await teamReadableProjectIds(caller.db, access.organization.externalId, access.teamIds)).has(projectId);
}

/** The project and the caller's access to its organisation; 404 unless the caller may read (or manage) it. */
async function loadProject(caller: Caller, id: string, manage: boolean): Promise<ProjectView> {
  const project = await getProject(caller.db, id);
  if (!project) throw ApiError.of("not_found");
  const access = await requireOrgAccess(caller, { id: project.organizationId });
  if (manage) authorize(caller, "projects.manage", { access });
  else authorize(caller, "project.read", { access, project: projectRights(access, id, [], await canReadProject(caller, access, id)) });
  return { project, access };
}

const invalid = (detail: string, attribute: string) => ApiError.of("invalid_attribute", { detail, pointer: `/data/attributes/${attribute}` });

function checkName(name: string): void {
  if (name.length < LIMITS.projectNameMin || name.length > LIMITS.projectNameMax) {
    throw invalid(`Name must be between ${LIMITS.projectNameMin} and ${LIMITS.projectNameMax} characters`, "name");
  }
  // go-tfe's tests match the "Name may only contain" prefix.
  if (!PROJECT_NAME.test(name))
    throw invalid("Name may only contain letters, numbers, spaces, hyphens and underscores, and cannot start or end with a space", "name");
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
async function executionDefaults(caller: Caller, access: OrgAccess, a: ProjectAttributes, rel: ProjectRelationships, current?: Project): Promise<Defaults> {
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
  else if (overwrite === true && !current?.defaultExecutionMode)
    mode = access.organization.defaultExecutionMode; // pin what it inherits now
  else mode = current?.defaultExecutionMode ?? null;

  if (poolGiven !== undefined) pool = poolGiven;
  else if (mode === "agent") {
    const inheritedPool = overwrite === true && !current?.defaultExecutionMode ? access.organization.defaultAgentPoolId : null;
    pool = current?.defaultAgentPoolId ?? inheritedPool;
  } else pool = null;

  if (mode === "agent" && !pool)
    throw ApiError.of("invalid_attribute", { detail: "Agent pool must be specified when using 'agent' execution mode", pointer: poolPointer });
  if (mode !== "agent" && pool)
    throw ApiError.of("invalid_attribute", { detail: "Agent pool must not be specified unless using 'agent' execution mode", pointer: poolPointer });
  if (pool && !(await agentPoolInOrganization(caller.db, pool, access.organization.externalId))) {
    throw poolNotFound(poolPointer);
  }
  return { mode, pool, poolPointer, touched };
}

const poolNotFound = (pointer: string) => ApiError.of("invalid_attribute", { detail: "Agent pool not found", pointer });

function checkDuration(a: ProjectAttributes): void {
  const d = a["auto-destroy-activity-duration"];
  if (d !== undefined && d !== null && (!AUTO_DESTROY_DURATION.test(d) || parseInt(d, 10) <= 0)) {
    throw invalid(
      "Auto destroy activity duration has an incorrect format, we expect up to 4 numeric digits and 1 unit ('d' or 'h')",
      "auto-destroy-activity-duration",
    );
  }
}

function bindingsOf(rel: ProjectRelationships) {
  const data = rel?.["tag-bindings"]?.data;
  if (!data) return undefined;
  const inputs = data.map((d) => ({ key: d.attributes.key, value: d.attributes.value ?? "" }));
  const f = checkBindings(inputs, "/data/relationships/tag-bindings/data");
  if (f) throw ApiError.of(f.code, { detail: f.detail, pointer: f.pointer });
  if (new Set(inputs.map((b) => b.key)).size > LIMITS.tagBindingsPerResource) {
    throw ApiError.of("invalid_attribute", {
      detail: `Tag bindings cannot exceed ${LIMITS.tagBindingsPerResource} per resource`,
      pointer: "/data/relationships/tag-bindings/data",
    });
  }
  return inputs;
}

/** Runs the write's batch, mapping the constraint failures to the API's errors. */
async function write(caller: Caller, stmts: D1PreparedStatement[], poolPointer: string): Promise<void> {
  try {
    await writeProjectBatch(caller.db, stmts);
  } catch (err) {
    if (isUniqueViolation(err)) throw invalid("Name has already been taken", "name");
    // The pool was deleted after the check (migration 0002's trigger refused the write).
    if (isMissingPoolError(err)) throw poolNotFound(poolPointer);
    if (isProjectLimitError(err))
      throw ApiError.of("invalid_attribute", {
        detail: `Tag bindings cannot exceed ${LIMITS.tagBindingsPerResource} per resource`,
        pointer: "/data/relationships/tag-bindings/data",
      });
    throw err;
  }
}

export async function createProject(caller: Caller, organization: string, data: (typeof createProjectBody)["_output"]["data"]): Promise<ProjectView> {
  const db = caller.db;
  const access = await requireOrgAccess(caller, { name: organization });
  authorize(caller, "projects.manage", { access });
  const { attributes: a, relationships: rel } = data;
  checkName(a.name);
  checkDuration(a);
  const d = await executionDefaults(caller, access, a, rel);
  const bindings = bindingsOf(rel);
  const id = newId("prj");
  const now = nowIso();
  await write(
    caller,
    [
      insertProjectStatement(db, {
        id,
        organizationId: access.organization.externalId,
        name: a.name,
        description: a.description ?? null,
        attrs: { "auto-destroy-activity-duration": a["auto-destroy-activity-duration"] ?? null },
        mode: d.mode,
        pool: d.pool,
        createdAt: now,
      }),
      ...(bindings ? replaceProjectBindingsStatements(db, id, bindings, now) : []),
    ],
    d.poolPointer,
  );
  return { project: (await getProject(db, id))!, access };
}

export interface ProjectQuery {
  q?: string;
  names?: string[];
  /** filter[tagged][i]: AND across entries over the project's bindings; an absent value means any. */
  tagged: Array<{ key: string; value?: string }>;
  /** `sort`: by name either way; absent, the default order (see `listProjects`). */
  sort?: "name" | "-name";
}

/** The page of projects the caller may read, with the matching and total counts. */
export async function listProjectsFor(
  caller: Caller,
  organization: string,
  query: ProjectQuery,
  page: Page,
): Promise<{ projects: Project[]; matching: number; total: number; access: OrgAccess }> {
  const db = caller.db;
  const access = await requireOrgAccess(caller, { name: organization });
  const readable = readsAllProjects(access) ? null : [...(await teamReadableProjectIds(db, access.organization.externalId, access.teamIds))];
  const result = await listProjects(db, {
    organizationId: access.organization.externalId,
    readable,
    ...query,
    limit: page.size,
    offset: (page.number - 1) * page.size,
  });
  return { ...result, access };
}

export async function showProject(caller: Caller, id: string): Promise<ProjectView> {
  return loadProject(caller, id, false);
}

export async function updateProject(caller: Caller, id: string, data: (typeof updateProjectBody)["_output"]["data"]): Promise<ProjectView> {
  const { project, access } = await loadProject(caller, id, true);
  const { attributes: a = {}, relationships: rel } = data;
  if (a.name !== undefined) checkName(a.name);
  checkDuration(a);
  const d = await executionDefaults(caller, access, a, rel, project);
  const bindings = bindingsOf(rel);
  const db = caller.db;
  // Only what the request names is written, so concurrent PATCHes of different attributes both land.
  const row = updateProjectStatement(db, project.id, {
    name: a.name,
    description: a.description,
    autoDestroyActivityDuration: a["auto-destroy-activity-duration"],
    defaults: d.touched ? { mode: d.mode, pool: d.pool } : undefined,
  });
  await write(
    caller,
    [
      ...(row ? [row] : []),
      ...(bindings ? [...replaceProjectBindingsStatements(db, project.id, bindings, nowIso()), orphanBindingsCleanup(db, project.id)] : []),
    ],
    d.poolPointer,
  );
  const updated = await getProject(db, project.id);
  if (!updated) throw ApiError.of("not_found"); // deleted concurrently
  return { project: updated, access };
}

/**
 * References older than their lease whose workspace (asked of its DO, the truth) is not in the
 * project are left by creates or moves that failed or died midway: they no longer hold the project.
 * A workspace that is in it keeps blocking the delete until its index write lands.
 */
async function dropStaleRefs(caller: Caller, projectId: string): Promise<void> {
  const now = Date.now();
  for (const ref of await projectRefs(caller.db, projectId)) {
    if (now - ref.claimed_at <= PROJECT_REF_MS) continue;
    const res = await workspaceObject(caller.env, ref.workspace_id).get();
    if (res.ok && res.value.projectId === projectId) continue;
    await releaseProject(caller.db, projectId, ref.workspace_id);
  }
}

export async function deleteProject(caller: Caller, id: string): Promise<void> {
  const { project } = await loadProject(caller, id, true);
  // Status codes the real service leaves undocumented, chosen here: the Default Project is a
  // property of the organisation, so deleting it is an invalid request (422); a project that still holds
  // workspaces is a conflict with the current state that moving or deleting them resolves (409).
  if (project.isDefault) throw ApiError.of("invalid_attribute", { detail: "The Default Project cannot be deleted" });
  await dropStaleRefs(caller, project.id);
  if (!(await deleteEmptyProject(caller.db, project.id))) {
    throw ApiError.of("conflict", { detail: "Project still contains workspaces; move or delete them first" });
  }
}
