/** D1 access for projects: rows, listing, reader sets, writes and the guarded delete. */
import type { Db } from "../caller";
import { appendTo, textMatchSql } from "../platform/text-match";

/** A projects row with its counts (what `SELECT` below and the workspace list's include read). */
export interface ProjectRow {
  id: string;
  organization_id: string;
  name: string;
  description: string | null;
  is_default: number;
  created_at: string;
  /** JSON object: auto-destroy-activity-duration. */
  attrs: string;
  default_execution_mode: string | null;
  default_agent_pool_id: string | null;
  workspace_count: number;
  team_count: number;
}

export interface Project {
  id: string;
  /** The organisation's id (migration 0016). */
  organizationId: string;
  name: string;
  description: string | null;
  /** The organisation's Default Project (it cannot be deleted). */
  isDefault: boolean;
  createdAt: string;
  autoDestroyActivityDuration: string | null;
  /** null: inherit the organisation's default (workspaces read it through `defaultsFor`). */
  defaultExecutionMode: string | null;
  defaultAgentPoolId: string | null;
  workspaceCount: number;
  teamCount: number;
}

export function toProject(row: ProjectRow): Project {
  const attrs = JSON.parse(row.attrs) as Record<string, unknown>;
  return {
    id: row.id,
    organizationId: row.organization_id,
    name: row.name,
    description: row.description,
    isDefault: row.is_default === 1,
    createdAt: row.created_at,
    autoDestroyActivityDuration: (attrs["auto-destroy-activity-duration"] as string | undefined) ?? null,
    defaultExecutionMode: row.default_execution_mode,
    defaultAgentPoolId: row.default_agent_pool_id,
    workspaceCount: row.workspace_count,
    teamCount: row.team_count,
  };
}

// The organisation predicate lets the count use the (organization_id, project_id) index.
const SELECT = `SELECT p.*,
  (SELECT count(*) FROM workspaces w WHERE w.organization_id = p.organization_id AND w.project_id = p.id) AS workspace_count,
  (SELECT count(*) FROM team_projects tp WHERE tp.project_id = p.id) AS team_count
  FROM projects p`;

export async function getProject(db: Db, id: string): Promise<Project | null> {
  const row = await db.prepare(`${SELECT} WHERE p.id = ?`).bind(id).first<ProjectRow>();
  return row ? toProject(row) : null;
}

/**
 * Projects a caller's teams reach without an organisation-wide permission: a team_projects grant,
 * or access to a workspace inside the project (the project is then visible as its container).
 */
export async function teamReadableProjectIds(db: Db, organizationId: string, teamIds: string[]): Promise<Set<string>> {
  if (teamIds.length === 0) return new Set();
  const teams = JSON.stringify(teamIds);
  const rows = await db
    .prepare(
      `SELECT tp.project_id AS id FROM team_projects tp JOIN projects p ON p.id = tp.project_id
         WHERE p.organization_id = ? AND tp.team_id IN (SELECT value FROM json_each(?))
       UNION
       SELECT w.project_id AS id FROM team_workspaces tw JOIN workspaces w ON w.id = tw.workspace_id
         WHERE w.organization_id = ? AND tw.team_id IN (SELECT value FROM json_each(?))`,
    )
    .bind(organizationId, teams, organizationId, teams)
    .all<{ id: string }>();
  return new Set(rows.results.map((r) => r.id));
}

export interface ProjectFilter {
  organizationId: string;
  /** null: every project of the organisation is readable. */
  readable: string[] | null;
  q?: string;
  names?: string[];
  tagged?: { key: string; value?: string }[];
  sort?: "name" | "-name";
  limit: number;
  offset: number;
}

/** One page of matching, readable projects plus the counts the list meta reports. */
export async function listProjects(db: Db, f: ProjectFilter): Promise<{ projects: Project[]; matching: number; total: number }> {
  const { rows, matching, total } = await projectRowsPage(db, f);
  return { projects: rows.map(toProject), matching, total };
}

async function projectRowsPage(db: Db, f: ProjectFilter): Promise<{ rows: ProjectRow[]; matching: number; total: number }> {
  const base = ["p.organization_id = ?"];
  const baseBinds: unknown[] = [f.organizationId];
  if (f.readable !== null) {
    base.push("p.id IN (SELECT value FROM json_each(?))");
    baseBinds.push(JSON.stringify(f.readable));
  }
  const where = [...base];
  const binds = [...baseBinds];
  if (f.q) {
    where.push(textMatchSql("p.name", f.q, "contains", appendTo(binds)));
  }
  if (f.names) {
    where.push("p.name IN (SELECT value FROM json_each(?))");
    binds.push(JSON.stringify(f.names));
  }
  for (const t of f.tagged ?? []) {
    where.push(`EXISTS (SELECT 1 FROM project_tag_bindings b WHERE b.project_id = p.id AND b.key = ?${t.value ? " AND b.value = ?" : ""})`);
    binds.push(t.key, ...(t.value ? [t.value] : []));
  }
  // Without `sort`, the organisation's own projects come by name and the Default Project last: go-tfe
  // (TestProjectsList, "when including effective tags relationship") reads a new project as item 0.
  const order = f.sort === undefined ? "p.is_default, p.name COLLATE NOCASE, p.id" : `p.name COLLATE NOCASE ${f.sort === "-name" ? "DESC" : "ASC"}, p.id`;
  const [page, matching, total] = await db.batch([
    db.prepare(`${SELECT} WHERE ${where.join(" AND ")} ORDER BY ${order} LIMIT ? OFFSET ?`).bind(...binds, f.limit, f.offset),
    db.prepare(`SELECT count(*) AS n FROM projects p WHERE ${where.join(" AND ")}`).bind(...binds),
    db.prepare(`SELECT count(*) AS n FROM projects p WHERE ${base.join(" AND ")}`).bind(...baseBinds),
  ]);
  const count = (r: D1Result | undefined) => (r?.results?.[0] as { n: number } | undefined)?.n ?? 0;
  return { rows: (page?.results ?? []) as ProjectRow[], matching: count(matching), total: count(total) };
}

export async function agentPoolInOrganization(db: Db, poolId: string, organizationId: string): Promise<boolean> {
  return (await db.prepare("SELECT 1 FROM agent_pools WHERE id = ? AND organization_id = ?").bind(poolId, organizationId).first()) !== null;
}

export interface ProjectWrite {
  id: string;
  organizationId: string;
  name: string;
  description: string | null;
  attrs: Record<string, unknown>;
  mode: string | null;
  pool: string | null;
  createdAt: string;
}

export function insertProjectStatement(db: Db, p: ProjectWrite): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO projects (id, organization_id, name, description, created_at, attrs, default_execution_mode, default_agent_pool_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .bind(p.id, p.organizationId, p.name, p.description, p.createdAt, JSON.stringify(p.attrs), p.mode, p.pool);
}

/** The columns a PATCH sets; absent ones are left as stored, so concurrent PATCHes of different fields both land. */
export interface ProjectChanges {
  name?: string;
  description?: string | null;
  autoDestroyActivityDuration?: string | null;
  /** Written together so the pair stays consistent (agent mode has a pool, other modes none). */
  defaults?: { mode: string | null; pool: string | null };
}

export function updateProjectStatement(db: Db, id: string, ch: ProjectChanges): D1PreparedStatement | null {
  const sets: [string, unknown][] = [];
  if (ch.name !== undefined) sets.push(["name = ?", ch.name]);
  if (ch.description !== undefined) sets.push(["description = ?", ch.description]);
  if (ch.autoDestroyActivityDuration !== undefined) {
    sets.push([`attrs = json_set(attrs, '$."auto-destroy-activity-duration"', ?)`, ch.autoDestroyActivityDuration]);
  }
  if (ch.defaults) sets.push(["default_execution_mode = ?", ch.defaults.mode], ["default_agent_pool_id = ?", ch.defaults.pool]);
  if (sets.length === 0) return null;
  return db.prepare(`UPDATE projects SET ${sets.map(([s]) => s).join(", ")} WHERE id = ?`).bind(...sets.map(([, v]) => v), id);
}

/**
 * Deletes the project only while no workspace is in it, and its team access and tag bindings with it, in one
 * transaction: the emptiness check and the delete are one statement, so a workspace indexed concurrently
 * either blocks the delete or is not there. Returns false when workspaces remain.
 */
export async function deleteEmptyProject(db: Db, id: string): Promise<boolean> {
  const gone = "NOT EXISTS (SELECT 1 FROM projects WHERE id = ?)";
  const [del] = await db.batch([
    db
      .prepare(
        `DELETE FROM projects WHERE id = ? AND is_default = 0
           AND NOT EXISTS (SELECT 1 FROM workspaces w WHERE w.organization_id = projects.organization_id AND w.project_id = ?)
           AND NOT EXISTS (SELECT 1 FROM project_refs r WHERE r.project_id = ?)`,
      )
      .bind(id, id, id),
    db.prepare(`DELETE FROM team_projects WHERE project_id = ? AND ${gone}`).bind(id, id),
    db.prepare(`DELETE FROM project_tag_bindings WHERE project_id = ? AND ${gone}`).bind(id, id),
  ]);
  return (del?.meta.changes ?? 0) > 0;
}

export function isUniqueViolation(err: unknown): boolean {
  return String(err).includes("UNIQUE");
}

/** The migration 0002 trigger: the default agent pool was deleted between the check and the write. */
export function isMissingPoolError(err: unknown): boolean {
  return String(err).includes("project_default_agent_pool_missing");
}

/**
 * Appended to a batch that writes a project's bindings: if the project was deleted concurrently (the
 * delete committed between our read and this batch), the bindings just written are dropped again.
 */
export function orphanBindingsCleanup(db: Db, projectId: string): D1PreparedStatement {
  return db.prepare("DELETE FROM project_tag_bindings WHERE project_id = ? AND NOT EXISTS (SELECT 1 FROM projects WHERE id = ?)").bind(projectId, projectId);
}

// ---- project references of workspace creates and moves in flight ----

/** How long a reference may stay without its index row before the project delete asks the workspace's DO. */
export const PROJECT_REF_MS = 30_000;

/**
 * Holds the project for a workspace about to be created in it or moved into it: taken only while the
 * project exists (one statement), so it either blocks a concurrent delete or fails because the delete
 * came first. The workspace's index write drops it once the index row carries the reference.
 */
export async function holdProject(db: Db, projectId: string, organizationId: string, workspaceId: string, now: number): Promise<boolean> {
  const res = await db
    .prepare(
      `INSERT INTO project_refs (project_id, workspace_id, claimed_at)
       SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM projects WHERE id = ? AND organization_id = ?)
       ON CONFLICT (project_id, workspace_id) DO UPDATE SET claimed_at = excluded.claimed_at`,
    )
    .bind(projectId, workspaceId, now, projectId, organizationId)
    .run();
  return res.meta.changes > 0;
}

/** Drops a reference whose create or move the DO refused. */
export async function releaseProject(db: Db, projectId: string, workspaceId: string): Promise<void> {
  await db.prepare("DELETE FROM project_refs WHERE project_id = ? AND workspace_id = ?").bind(projectId, workspaceId).run();
}

/** Statement for the workspace's index batch: a reference its index row now carries (or a deleted workspace's) is redundant. */
export function settledRefsStatement(db: Db, workspaceId: string, deleted: boolean): D1PreparedStatement {
  return deleted
    ? db.prepare("DELETE FROM project_refs WHERE workspace_id = ?").bind(workspaceId)
    : db
        .prepare("DELETE FROM project_refs WHERE workspace_id = ? AND project_id = (SELECT project_id FROM workspaces WHERE id = ?)")
        .bind(workspaceId, workspaceId);
}

export async function projectRefs(db: Db, projectId: string): Promise<Array<{ workspace_id: string; claimed_at: number }>> {
  const rows = await db
    .prepare("SELECT workspace_id, claimed_at FROM project_refs WHERE project_id = ?")
    .bind(projectId)
    .all<{ workspace_id: string; claimed_at: number }>();
  return rows.results;
}

/** One D1 batch (one transaction): a project row and its bindings land together or not at all. */
export async function writeProjectBatch(db: Db, stmts: D1PreparedStatement[]): Promise<void> {
  if (stmts.length === 0) return; // D1 refuses an empty batch
  await db.batch(stmts);
}
