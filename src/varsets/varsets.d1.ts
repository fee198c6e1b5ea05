/**
 * Variable sets in D1 (migration 0011): the sets, their variables (values sealed) and the workspaces
 * and projects they are applied to. All of their SQL lives here. Deleted workspaces, projects and organisations
 * leave the sets' lists through the migration's triggers.
 */
import type { Db } from "../caller";
import { pageWithTotal } from "../platform/paging";
import { LIMITS } from "../limits";
import type { ScopedSetVariables } from "../variables/variables.rules";
import { variableColumns, variableFromRow, type StoredVariable, type VariableRow } from "../variables/variables.types";

interface VarsetRow {
  id: string;
  organization_id: string;
  /** The organisation's current name, joined in by `SELECT_SETS` (rows name it by id, migration 0016). */
  organization_name: string;
  name: string;
  description: string;
  global: number;
  priority: number;
  project_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface Varset {
  id: string;
  organizationId: string;
  /** The organisation's name when the set was read. */
  organization: string;
  name: string;
  description: string;
  global: boolean;
  priority: boolean;
  /** The owning project of a project-owned set. */
  projectId: string | null;
  createdAt: string;
  updatedAt: string;
  workspaceIds: string[];
  projectIds: string[];
  varIds: string[];
}

type VarRow = VariableRow & {
  varset_id: string;
};

const toVariable = variableFromRow;

const placeholders = (n: number) => `(${Array.from({ length: n }, () => "?").join(", ")})`;

/** Sets with their organisation's name (a subquery: a join would make the sets' own `name` ambiguous in WHERE clauses). */
const SELECT_SETS = "SELECT varsets.*, (SELECT o.name FROM organizations o WHERE o.external_id = varsets.organization_id) AS organization_name FROM varsets";

/** Sets with their relationship ids, in two more statements for any number of sets. */
async function withRelations(db: Db, rows: VarsetRow[]): Promise<Varset[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const inList = placeholders(ids.length);
  const [links, vars] = await db.batch<{ varset_id: string; kind: string; target: string }>([
    db
      .prepare(
        `SELECT varset_id, 'workspace' AS kind, workspace_id AS target FROM varset_workspaces WHERE varset_id IN ${inList}
         UNION ALL SELECT varset_id, 'project' AS kind, project_id AS target FROM varset_projects WHERE varset_id IN ${inList}
         ORDER BY 1, 2, 3`,
      )
      .bind(...ids, ...ids),
    db.prepare(`SELECT varset_id, 'var' AS kind, id AS target FROM varset_vars WHERE varset_id IN ${inList} ORDER BY created_at, id`).bind(...ids),
  ]);
  const of = (id: string, kind: string) => [...links.results, ...vars.results].filter((l) => l.varset_id === id && l.kind === kind).map((l) => l.target);
  return rows.map((r) => ({
    id: r.id,
    organizationId: r.organization_id,
    organization: r.organization_name,
    name: r.name,
    description: r.description,
    global: r.global === 1,
    priority: r.priority === 1,
    projectId: r.project_id,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    workspaceIds: of(r.id, "workspace"),
    projectIds: of(r.id, "project"),
    varIds: of(r.id, "var"),
  }));
}

export async function getVarset(db: Db, id: string): Promise<Varset | null> {
  const row = await db.prepare(`${SELECT_SETS} WHERE id = ?`).bind(id).first<VarsetRow>();
  return row ? ((await withRelations(db, [row]))[0] ?? null) : null;
}

export interface VarsetPage {
  offset: number;
  limit: number;
}

async function page(db: Db, where: string, binds: unknown[], p: VarsetPage): Promise<{ items: Varset[]; total: number }> {
  const { rows, total } = await pageWithTotal<VarsetRow>(
    db,
    db.prepare(`${SELECT_SETS} WHERE ${where} ORDER BY name, id LIMIT ? OFFSET ?`).bind(...binds, p.limit, p.offset),
    db.prepare(`SELECT count(*) AS n FROM varsets WHERE ${where}`).bind(...binds),
  );
  return { items: await withRelations(db, rows), total };
}

/** The organisation's sets; `q` matches part of the name (case-insensitive). */
export async function listVarsets(db: Db, organizationId: string, q: string | undefined, p: VarsetPage): Promise<{ items: Varset[]; total: number }> {
  if (!q) return page(db, "organization_id = ?", [organizationId], p);
  return page(db, "organization_id = ? AND instr(lower(name), lower(?)) > 0", [organizationId, q], p);
}

const REACHES_WORKSPACE = `organization_id = ? AND (global = 1
  OR id IN (SELECT varset_id FROM varset_workspaces WHERE workspace_id = ?)
  OR id IN (SELECT varset_id FROM varset_projects WHERE project_id = ?))`;

/** Sets that reach a workspace: applied to it, applied to its project, or global. */
export async function listVarsetsForWorkspace(db: Db, organizationId: string, workspaceId: string, projectId: string, p: VarsetPage) {
  return page(db, REACHES_WORKSPACE, [organizationId, workspaceId, projectId], p);
}

/** Sets applied to a project. */
export async function listVarsetsForProject(db: Db, projectId: string, p: VarsetPage) {
  return page(db, "id IN (SELECT varset_id FROM varset_projects WHERE project_id = ?)", [projectId], p);
}

/** The sets reaching a workspace with their variables and the scope they reach it from (for `all-vars`). */
export async function varsetsReachingWorkspace(db: Db, organizationId: string, workspaceId: string, projectId: string): Promise<ScopedSetVariables[]> {
  const [sets, direct, vars] = await db.batch<VarsetRow | { varset_id: string } | VarRow>([
    db.prepare(`SELECT * FROM varsets WHERE ${REACHES_WORKSPACE}`).bind(organizationId, workspaceId, projectId),
    db.prepare("SELECT varset_id FROM varset_workspaces WHERE workspace_id = ?").bind(workspaceId),
    db
      .prepare(`SELECT * FROM varset_vars WHERE varset_id IN (SELECT id FROM varsets WHERE ${REACHES_WORKSPACE}) ORDER BY created_at, id`)
      .bind(organizationId, workspaceId, projectId),
  ]);
  const applied = new Set((direct.results as Array<{ varset_id: string }>).map((r) => r.varset_id));
  return (sets.results as VarsetRow[]).map((s) => ({
    id: s.id,
    name: s.name,
    priority: s.priority === 1,
    scope: applied.has(s.id) ? "workspace" : s.global === 1 ? "global" : "project",
    variables: (vars.results as VarRow[]).filter((v) => v.varset_id === s.id).map(toVariable),
  }));
}

export interface NewVarset {
  id: string;
  organizationId: string;
  name: string;
  description: string;
  global: boolean;
  priority: boolean;
  projectId: string | null;
  now: string;
}

export function isUniqueViolation(err: unknown): boolean {
  return String(err).includes("UNIQUE");
}

/** Inserts a set; false when the name is taken in the organisation. */
export async function insertVarset(db: Db, v: NewVarset, after: D1PreparedStatement[] = []): Promise<boolean> {
  try {
    const insert = db
      .prepare(
        `INSERT INTO varsets (id, organization_id, name, description, global, priority, project_id, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .bind(v.id, v.organizationId, v.name, v.description, v.global ? 1 : 0, v.priority ? 1 : 0, v.projectId, v.now, v.now);
    await db.batch([insert, ...after]);
    return true;
  } catch (err) {
    if (isUniqueViolation(err)) return false;
    throw err;
  }
}

export interface VarsetChanges {
  name?: string;
  description?: string;
  global?: boolean;
  priority?: boolean;
  /** Replaces the workspaces the set is applied to (already checked to be in its organisation). */
  workspaceIds?: string[];
}

/**
 * Updates a set in one batch; false when the new name is taken. A set made global is no longer applied to
 * particular workspaces or projects (global reaches them all).
 */
export async function updateVarset(db: Db, id: string, ch: VarsetChanges, now: string, after: D1PreparedStatement[] = []): Promise<boolean> {
  const sets: Array<[string, unknown]> = [["updated_at = ?", now]];
  if (ch.name !== undefined) sets.push(["name = ?", ch.name]);
  if (ch.description !== undefined) sets.push(["description = ?", ch.description]);
  if (ch.global !== undefined) sets.push(["global = ?", ch.global ? 1 : 0]);
  if (ch.priority !== undefined) sets.push(["priority = ?", ch.priority ? 1 : 0]);
  const stmts = [db.prepare(`UPDATE varsets SET ${sets.map(([s]) => s).join(", ")} WHERE id = ?`).bind(...sets.map(([, v]) => v), id)];
  if (ch.global === true) {
    stmts.push(db.prepare("DELETE FROM varset_workspaces WHERE varset_id = ?").bind(id));
    stmts.push(db.prepare("DELETE FROM varset_projects WHERE varset_id = ?").bind(id));
  }
  if (ch.workspaceIds !== undefined) {
    stmts.push(db.prepare("DELETE FROM varset_workspaces WHERE varset_id = ?").bind(id));
    for (const ws of ch.workspaceIds) stmts.push(applyWorkspaceStatement(db, id, ws));
  }
  try {
    await db.batch([...stmts, ...after]);
    return true;
  } catch (err) {
    if (isUniqueViolation(err)) return false;
    throw err;
  }
}

export async function deleteVarset(db: Db, id: string, after: D1PreparedStatement[] = []): Promise<boolean> {
  const [res] = await db.batch([db.prepare("DELETE FROM varsets WHERE id = ?").bind(id), ...after]);
  return res.meta.changes > 0;
}

// ---- targets ----

/** Workspaces (id → project) of the organisation among the given ids. */
export async function workspacesIn(db: Db, organizationId: string, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .prepare(`SELECT id, project_id FROM workspaces WHERE organization_id = ? AND id IN ${placeholders(ids.length)}`)
    .bind(organizationId, ...ids)
    .all<{ id: string; project_id: string }>();
  return new Map(rows.results.map((r) => [r.id, r.project_id]));
}

/** Projects of the organisation among the given ids. */
export async function projectsIn(db: Db, organizationId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .prepare(`SELECT id FROM projects WHERE organization_id = ? AND id IN ${placeholders(ids.length)}`)
    .bind(organizationId, ...ids)
    .all<{ id: string }>();
  return new Set(rows.results.map((r) => r.id));
}

/** Guarded: only while the workspace is indexed and the set exists (a concurrent delete wins). */
function applyWorkspaceStatement(db: Db, varsetId: string, workspaceId: string): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO varset_workspaces (varset_id, workspace_id)
       SELECT ?, ? WHERE EXISTS (SELECT 1 FROM workspaces WHERE id = ?) AND EXISTS (SELECT 1 FROM varsets WHERE id = ?)
       ON CONFLICT (varset_id, workspace_id) DO NOTHING`,
    )
    .bind(varsetId, workspaceId, workspaceId, varsetId);
}

export async function applyToWorkspaces(db: Db, varsetId: string, workspaceIds: string[], after: D1PreparedStatement[] = []): Promise<void> {
  if (workspaceIds.length) await db.batch([...workspaceIds.map((ws) => applyWorkspaceStatement(db, varsetId, ws)), ...after]);
}

export async function removeFromWorkspaces(db: Db, varsetId: string, workspaceIds: string[], after: D1PreparedStatement[] = []): Promise<void> {
  if (workspaceIds.length === 0) return;
  await db.batch([
    db.prepare(`DELETE FROM varset_workspaces WHERE varset_id = ? AND workspace_id IN ${placeholders(workspaceIds.length)}`).bind(varsetId, ...workspaceIds),
    ...after,
  ]);
}

export async function applyToProjects(db: Db, varsetId: string, projectIds: string[], after: D1PreparedStatement[] = []): Promise<void> {
  if (projectIds.length === 0) return;
  await db.batch([
    ...projectIds.map((p) =>
      db
        .prepare(
          `INSERT INTO varset_projects (varset_id, project_id)
           SELECT ?, ? WHERE EXISTS (SELECT 1 FROM projects WHERE id = ?) AND EXISTS (SELECT 1 FROM varsets WHERE id = ?)
           ON CONFLICT (varset_id, project_id) DO NOTHING`,
        )
        .bind(varsetId, p, p, varsetId),
    ),
    ...after,
  ]);
}

export async function removeFromProjects(db: Db, varsetId: string, projectIds: string[], after: D1PreparedStatement[] = []): Promise<void> {
  if (projectIds.length === 0) return;
  await db.batch([
    db.prepare(`DELETE FROM varset_projects WHERE varset_id = ? AND project_id IN ${placeholders(projectIds.length)}`).bind(varsetId, ...projectIds),
    ...after,
  ]);
}

// ---- the sets' variables ----

export async function listVarsetVariables(db: Db, varsetId: string): Promise<StoredVariable[]> {
  const rows = await db.prepare("SELECT * FROM varset_vars WHERE varset_id = ? ORDER BY created_at, id").bind(varsetId).all<VarRow>();
  return rows.results.map(toVariable);
}

/** The variables of several sets in one statement, by set id (a list page's `include=vars`). */
export async function listVariablesOfVarsets(db: Db, varsetIds: string[]): Promise<Map<string, StoredVariable[]>> {
  const rows = await db
    .prepare("SELECT * FROM varset_vars WHERE varset_id IN (SELECT value FROM json_each(?)) ORDER BY created_at, id")
    .bind(JSON.stringify(varsetIds))
    .all<VarRow>();
  const bySet = new Map<string, StoredVariable[]>(varsetIds.map((id) => [id, []]));
  for (const row of rows.results) bySet.get(row.varset_id)?.push(toVariable(row));
  return bySet;
}

export async function getVarsetVariable(db: Db, varsetId: string, id: string): Promise<StoredVariable | null> {
  const row = await db.prepare("SELECT * FROM varset_vars WHERE varset_id = ? AND id = ?").bind(varsetId, id).first<VarRow>();
  return row ? toVariable(row) : null;
}

/**
 * Inserts a variable in one statement that also checks the set still exists and is below its variable limit.
 * "taken": the key exists in the category; "full"/"gone": the limit, or a concurrent delete of the set.
 */
export async function insertVarsetVariable(
  db: Db,
  varsetId: string,
  v: StoredVariable,
  after: D1PreparedStatement[] = [],
): Promise<"ok" | "taken" | "full" | "gone"> {
  try {
    const insert = db
      .prepare(
        `INSERT INTO varset_vars (id, varset_id, key, category, value, description, hcl, sensitive, version_id, created_at)
         SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
         WHERE EXISTS (SELECT 1 FROM varsets WHERE id = ?) AND (SELECT count(*) FROM varset_vars WHERE varset_id = ?) < ?`,
      )
      .bind(v.id, varsetId, ...variableColumns(v), v.createdAt, varsetId, varsetId, LIMITS.variablesPerVarset);
    const [res] = await db.batch([insert, ...after]);
    if (res.meta.changes > 0) return "ok";
    return (await db.prepare("SELECT 1 FROM varsets WHERE id = ?").bind(varsetId).first()) ? "full" : "gone";
  } catch (err) {
    if (isUniqueViolation(err)) return "taken";
    throw err;
  }
}

/**
 * Writes a variable's new state only if nobody changed it since it was read (its version id): the caller
 * checked the rules against that version. "stale": re-read and retry; "taken": the key exists.
 */
export async function updateVarsetVariable(
  db: Db,
  varsetId: string,
  expectedVersion: string,
  v: StoredVariable,
  after: D1PreparedStatement[] = [],
): Promise<"ok" | "stale" | "taken"> {
  try {
    const update = db
      .prepare(
        `UPDATE varset_vars SET key = ?, category = ?, value = ?, description = ?, hcl = ?, sensitive = ?, version_id = ?
         WHERE id = ? AND varset_id = ? AND version_id = ?`,
      )
      .bind(...variableColumns(v), v.id, varsetId, expectedVersion);
    const [res] = await db.batch([update, ...after]);
    return res.meta.changes > 0 ? "ok" : "stale";
  } catch (err) {
    if (isUniqueViolation(err)) return "taken";
    throw err;
  }
}

export async function deleteVarsetVariable(db: Db, varsetId: string, id: string, after: D1PreparedStatement[] = []): Promise<boolean> {
  const [res] = await db.batch([db.prepare("DELETE FROM varset_vars WHERE varset_id = ? AND id = ?").bind(varsetId, id), ...after]);
  return res.meta.changes > 0;
}
