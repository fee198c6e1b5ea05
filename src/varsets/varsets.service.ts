/**
 * Variable sets. Organisation-level: reading them needs `read-workspaces` or `manage-workspaces`
 * (owners, the organisation token and the site admin hold every organisation permission); creating, changing,
 * applying and deleting them, and writing their variables, needs `manage-workspaces` ("Manage all workspaces"
 * includes managing variable sets in the real permission model). A set a project owns is also read by teams
 * whose access to that project has `project-access.variable-sets` read, and managed with write (the admin role
 * implies it). Readers of a workspace's variables also see the sets reaching it (`/workspaces/:id/varsets`,
 * `all-vars`). Anyone else gets 404, as for another organisation's set.
 */
import { includesOf } from "../jsonapi/validation";
import { auditStatementsOf } from "../audit/audit.service";
import { variableChangeMeta } from "../variables/variables.service";
import { loadGrants, projectRights, requireOrgAccess, type OrgAccess } from "../auth/access";
import { allows, authorize, type Action } from "../auth/requirements";
import type { ProjectRights } from "../auth/permissions";
import type { Caller } from "../caller";
import { ApiError } from "../errors";
import { newId, nowIso } from "../ids";
import type { Page, Resource } from "../jsonapi/document";
import { LIMITS } from "../limits";
import { showProject } from "../projects/projects.service";
import { newVariable, patchOf, viewOf } from "../variables/variables.service";
import { applyPatch, checkKey } from "../variables/variables.rules";
import type { VariableCreateAttributes, VariableUpdateAttributes } from "../variables/variables.schemas";
import type { VariableView } from "../variables/variables.types";
import { isFailure } from "../workspaces/workspace.rules";
import { readById } from "../workspaces/workspaces.service";
import * as repo from "./varsets.d1";
import { includeForSets } from "./varsets.include";
import type { Varset } from "./varsets.d1";
import type { VarsetCreateData, VarsetUpdateData } from "./varsets.schemas";

export function readsVarsets(access: OrgAccess): boolean {
  return allows(access.principal, "varsets.read", { access });
}

/** A set with whether the caller may see its whole scope (the workspaces and projects it is applied to). */
export interface VarsetRead {
  varset: Varset;
  full: boolean;
}

/** `include` values of set reads (varsets.include.ts); `stacks` is accepted and resolves to nothing (no stacks here). */
const INCLUDES = new Set(["vars", "workspaces", "projects", "stacks"]);

export function parseVarsetInclude(raw: string | undefined): string[] {
  return includesOf(raw, INCLUDES);
}

const toPage = (p: Page) => ({ offset: (p.number - 1) * p.size, limit: p.size });

const invalid = (detail: string, pointer: string) => ApiError.of("invalid_attribute", { detail, pointer });

/**
 * The caller's rights on the project owning a set (or named as a new set's parent), for `varsets.read` / `manage`;
 * looked up (one D1 read) only when the organisation permissions do not already decide.
 */
async function owningProjectRights(caller: Caller, access: OrgAccess, projectId: string | null, action: Action): Promise<ProjectRights | undefined> {
  if (!projectId || allows(access.principal, action, { access })) return undefined;
  const grants = await loadGrants(caller.db, access, [], [projectId]);
  return projectRights(access, projectId, grants.projects);
}

async function load(caller: Caller, id: string, manage: boolean): Promise<{ varset: Varset; access: OrgAccess }> {
  const varset = await repo.getVarset(caller.db, id);
  if (!varset) throw ApiError.of("not_found");
  const access = await requireOrgAccess(caller, { id: varset.organizationId });
  const action = manage ? "varsets.manage" : "varsets.read";
  authorize(caller, action, { access, project: await owningProjectRights(caller, access, varset.projectId, action) });
  return { varset, access };
}

async function reload(caller: Caller, id: string): Promise<Varset> {
  const v = await repo.getVarset(caller.db, id);
  if (!v) throw ApiError.of("not_found");
  return v;
}

function checkName(name: string): void {
  if (name.trim().length === 0) throw invalid("Name can't be blank", "/data/attributes/name");
}

/** Whether the caller may manage a set it has read (the UI offers the set's forms only then; each change authorises again). */
export async function mayManageVarset(caller: Caller, access: OrgAccess, varset: Varset): Promise<boolean> {
  return allows(access.principal, "varsets.manage", { access, project: await owningProjectRights(caller, access, varset.projectId, "varsets.manage") });
}

/** A set the caller may manage (404 otherwise): what refused input is explained to. */
export async function manageableVarset(caller: Caller, id: string): Promise<Varset> {
  return (await load(caller, id, true)).varset;
}

export async function listOrganizationVarsets(caller: Caller, organization: string, q: string | undefined, page: Page, include: string[] = []) {
  const access = await requireOrgAccess(caller, { name: organization });
  authorize(caller, "varsets.read", { access });
  const res = await repo.listVarsets(caller.db, access.organization.externalId, q, toPage(page));
  return { ...res, full: true, included: await includeForSets(caller, access, res.items, include, true) };
}

/** The workspaces of a request body, all in the set's organisation (and its project, for a project-owned set). */
async function checkWorkspaces(
  caller: Caller,
  varset: Pick<Varset, "organizationId" | "organization" | "projectId" | "global">,
  ids: string[],
  base: string,
): Promise<void> {
  if (ids.length > 0 && varset.global) throw invalid("A global variable set applies to every workspace; it cannot be applied to particular ones", base);
  const found = await repo.workspacesIn(caller.db, varset.organizationId, ids);
  ids.forEach((id, i) => {
    const project = found.get(id);
    if (project === undefined) throw invalid(`Workspace ${id} not found in organization ${varset.organization}`, `${base}/${i}/id`);
    if (varset.projectId && project !== varset.projectId) throw invalid(`Workspace ${id} is not in the variable set's project`, `${base}/${i}/id`);
  });
}

async function checkProjects(
  caller: Caller,
  varset: Pick<Varset, "organizationId" | "organization" | "projectId" | "global">,
  ids: string[],
  base: string,
): Promise<void> {
  if (ids.length > 0 && varset.global) throw invalid("A global variable set applies to every project; it cannot be applied to particular ones", base);
  const found = await repo.projectsIn(caller.db, varset.organizationId, ids);
  ids.forEach((id, i) => {
    if (!found.has(id)) throw invalid(`Project ${id} not found in organization ${varset.organization}`, `${base}/${i}/id`);
    if (varset.projectId && id !== varset.projectId) throw invalid("A project-owned variable set can only be applied to its own project", `${base}/${i}/id`);
  });
}

export async function createVarset(caller: Caller, organization: string, data: VarsetCreateData): Promise<Varset> {
  const access = await requireOrgAccess(caller, { name: organization });
  const parent = data.relationships?.parent?.data ?? null;
  // A set for a project: who manages that project's sets may create it (the project is checked to be the organisation's below).
  const parentProject = parent?.type === "projects" ? parent.id : null;
  authorize(caller, "varsets.manage", { access, project: await owningProjectRights(caller, access, parentProject, "varsets.manage") });
  const org = access.organization.name;
  const orgId = access.organization.externalId;
  const a = data.attributes;
  checkName(a.name);
  let projectId: string | null = null;
  if (parent?.type === "organizations" && parent.id.toLowerCase() !== org.toLowerCase()) {
    throw invalid("The parent organization must be the organization the set is created in", "/data/relationships/parent/data/id");
  }
  if (parent?.type === "projects") {
    if (!(await repo.projectsIn(caller.db, orgId, [parent.id])).has(parent.id)) {
      throw invalid(`Project ${parent.id} not found in organization ${org}`, "/data/relationships/parent/data/id");
    }
    if (a.global) throw invalid("A project-owned variable set cannot be global", "/data/attributes/global");
    projectId = parent.id;
  }
  const shape = { organizationId: orgId, organization: org, projectId, global: a.global ?? false };
  const workspaceIds = (data.relationships?.workspaces?.data ?? []).map((w) => w.id);
  const projectIds = (data.relationships?.projects?.data ?? []).map((p) => p.id);
  await checkWorkspaces(caller, shape, workspaceIds, "/data/relationships/workspaces/data");
  await checkProjects(caller, shape, projectIds, "/data/relationships/projects/data");
  const id = newId("varset");
  const inserted = await repo.insertVarset(
    caller.db,
    {
      id,
      organizationId: orgId,
      name: a.name,
      description: a.description ?? "",
      global: shape.global,
      priority: a.priority ?? false,
      projectId,
      now: nowIso(),
    },
    auditStatementsOf(caller, orgId, { id, type: "varset", action: "create", meta: { name: a.name, global: shape.global } }),
  );
  if (!inserted) throw ApiError.of("name_taken", { pointer: "/data/attributes/name" });
  await repo.applyToWorkspaces(caller.db, id, workspaceIds);
  await repo.applyToProjects(caller.db, id, projectIds);
  return reload(caller, id);
}

export async function showVarset(caller: Caller, id: string, include: string[] = []): Promise<VarsetRead & { included: Resource[] }> {
  const { varset, access } = await load(caller, id, false);
  return { varset, full: true, included: await includeForSets(caller, access, [varset], include, true) };
}

export async function updateVarset(caller: Caller, id: string, data: VarsetUpdateData, include: string[] = []): Promise<VarsetRead & { included: Resource[] }> {
  const { varset, access } = await load(caller, id, true);
  const a = data.attributes ?? {};
  if (a.name !== undefined) checkName(a.name);
  if (a.global === true && varset.projectId) throw invalid("A project-owned variable set cannot be global", "/data/attributes/global");
  const workspaceIds = data.relationships?.workspaces?.data.map((w) => w.id);
  if (workspaceIds) await checkWorkspaces(caller, { ...varset, global: a.global ?? varset.global }, workspaceIds, "/data/relationships/workspaces/data");
  const changes: repo.VarsetChanges = {};
  if (a.name !== undefined) changes.name = a.name;
  if (a.description !== undefined) changes.description = a.description ?? "";
  if (a.global !== undefined) changes.global = a.global;
  if (a.priority !== undefined) changes.priority = a.priority;
  if (workspaceIds) changes.workspaceIds = workspaceIds;
  const audit = auditStatementsOf(caller, varset.organizationId, {
    id,
    type: "varset",
    action: "update",
    meta: { name: a.name ?? varset.name, changed: [...Object.keys(a), ...(workspaceIds ? ["workspaces"] : [])].sort().join(",") },
  });
  if (!(await repo.updateVarset(caller.db, id, changes, nowIso(), audit))) throw ApiError.of("name_taken", { pointer: "/data/attributes/name" });
  const updated = await reload(caller, id);
  return { varset: updated, full: true, included: await includeForSets(caller, access, [updated], include, true) };
}

export async function deleteVarset(caller: Caller, id: string): Promise<void> {
  const { varset } = await load(caller, id, true);
  const audit = auditStatementsOf(caller, varset.organizationId, { id, type: "varset", action: "destroy", meta: { name: varset.name } }, true);
  if (!(await repo.deleteVarset(caller.db, id, audit))) throw ApiError.of("not_found");
}

export async function changeWorkspaces(caller: Caller, id: string, op: "add" | "remove", ids: string[]): Promise<void> {
  const { varset } = await load(caller, id, true);
  // Removing is idempotent (a workspace deleted meanwhile has already left the set).
  const audit = auditStatementsOf(caller, varset.organizationId, {
    id,
    type: "varset",
    action: op === "add" ? "apply_workspaces" : "remove_workspaces",
    meta: { workspace_ids: ids.join(",") },
  });
  if (op === "remove") return repo.removeFromWorkspaces(caller.db, id, ids, audit);
  await checkWorkspaces(caller, varset, ids, "/data");
  await repo.applyToWorkspaces(caller.db, id, ids, audit);
}

export async function changeProjects(caller: Caller, id: string, op: "add" | "remove", ids: string[]): Promise<void> {
  const { varset } = await load(caller, id, true);
  const audit = auditStatementsOf(caller, varset.organizationId, {
    id,
    type: "varset",
    action: op === "add" ? "apply_projects" : "remove_projects",
    meta: { project_ids: ids.join(",") },
  });
  if (op === "remove") return repo.removeFromProjects(caller.db, id, ids, audit);
  await checkProjects(caller, varset, ids, "/data");
  await repo.applyToProjects(caller.db, id, ids, audit);
}

/** Sets reaching a workspace (applied to it, to its project, or global): needs read on its variables. */
export async function listWorkspaceVarsets(caller: Caller, workspaceId: string, page: Page, include: string[] = []) {
  const { record, scope } = await readById(caller, workspaceId, "variables.read");
  const res = await repo.listVarsetsForWorkspace(caller.db, record.organizationId, record.id, record.projectId, toPage(page));
  const full = readsVarsets(scope.access);
  return { ...res, full, included: await includeForSets(caller, scope.access, res.items, include, full) };
}

/** Sets applied to a project: organisation-wide readers, or a project grant that reads variables. */
export async function listProjectVarsets(caller: Caller, projectId: string, page: Page, include: string[] = []) {
  const { project, access } = await showProject(caller, projectId);
  const full = readsVarsets(access);
  const grants = full ? { projects: [] } : await loadGrants(caller.db, access, [], [project.id]);
  authorize(caller, "project.read-variables", { access, project: projectRights(access, project.id, grants.projects) });
  const res = await repo.listVarsetsForProject(caller.db, project.id, toPage(page));
  return { ...res, full, included: await includeForSets(caller, access, res.items, include, full) };
}

// ---- the sets' variables ----

const owner = (varsetId: string): VariableView["owner"] => ({ kind: "varset", id: varsetId });

export async function listVarsetVariables(caller: Caller, varsetId: string): Promise<VariableView[]> {
  await load(caller, varsetId, false);
  const vars = await repo.listVarsetVariables(caller.db, varsetId);
  return Promise.all(vars.map((v) => viewOf(caller.env, v, owner(varsetId))));
}

export async function readVarsetVariable(caller: Caller, varsetId: string, id: string): Promise<VariableView> {
  await load(caller, varsetId, false);
  const v = await repo.getVarsetVariable(caller.db, varsetId, id);
  if (!v) throw ApiError.of("not_found");
  return viewOf(caller.env, v, owner(varsetId));
}

export async function createVarsetVariable(caller: Caller, varsetId: string, a: VariableCreateAttributes): Promise<VariableView> {
  const { varset } = await load(caller, varsetId, true);
  const bad = checkKey(a.key, a.category);
  if (bad) throw ApiError.of(bad.code, { detail: bad.detail, pointer: bad.pointer });
  const v = await newVariable(caller.env, a);
  const audit = auditStatementsOf(
    caller,
    varset.organizationId,
    { id: v.id, type: "variable", action: "create", meta: { varset_id: varsetId, key: v.key, category: v.category, sensitive: v.sensitive } },
    true,
  );
  const res = await repo.insertVarsetVariable(caller.db, varsetId, v, audit);
  if (res === "taken") throw ApiError.of("key_taken", { pointer: "/data/attributes/key" });
  if (res === "full") throw invalid(`A variable set has at most ${LIMITS.variablesPerVarset} variables`, "/data");
  if (res === "gone") throw ApiError.of("not_found");
  return viewOf(caller.env, v, owner(varsetId));
}

/** Read, check the rules, write if unchanged since the read (retried when a concurrent update got there first). */
export async function updateVarsetVariable(caller: Caller, varsetId: string, id: string, a: VariableUpdateAttributes): Promise<VariableView> {
  const { varset } = await load(caller, varsetId, true);
  const patch = await patchOf(caller.env, id, a);
  for (let attempt = 0; attempt < 5; attempt++) {
    const current = await repo.getVarsetVariable(caller.db, varsetId, id);
    if (!current) throw ApiError.of("not_found");
    const next = applyPatch(current, patch);
    if (isFailure(next)) throw ApiError.of(next.code, { detail: next.detail, pointer: next.pointer });
    const audit = auditStatementsOf(
      caller,
      varset.organizationId,
      { id, type: "variable", action: "update", meta: { varset_id: varsetId, ...variableChangeMeta(null, a) } },
      true,
    );
    const res = await repo.updateVarsetVariable(caller.db, varsetId, current.versionId, next, audit);
    if (res === "taken") throw ApiError.of("key_taken", { pointer: "/data/attributes/key" });
    if (res === "ok") return viewOf(caller.env, next, owner(varsetId));
  }
  throw ApiError.of("conflict", { detail: "The variable changed concurrently; retry the request" });
}

export async function deleteVarsetVariable(caller: Caller, varsetId: string, id: string): Promise<void> {
  const { varset } = await load(caller, varsetId, true);
  const audit = auditStatementsOf(caller, varset.organizationId, { id, type: "variable", action: "destroy", meta: { varset_id: varsetId } }, true);
  if (!(await repo.deleteVarsetVariable(caller.db, varsetId, id, audit))) throw ApiError.of("not_found");
}
