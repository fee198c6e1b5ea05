/** D1 statements for agent pools and the references that keep one in use. */
import type { Db } from "../caller";

interface PoolRow {
  id: string;
  organization_id: string;
  name: string;
  organization_scoped: number;
  allowed_workspaces: string;
  allowed_projects: string;
  excluded_workspaces: string;
  created_at: string;
}

export interface AgentPool {
  id: string;
  organizationId: string;
  name: string;
  /** Every workspace of the organisation may use it (else only the allowed ones). */
  organizationScoped: boolean;
  allowedWorkspaces: string[];
  allowedProjects: string[];
  excludedWorkspaces: string[];
  createdAt: string;
}

function toAgentPool(row: PoolRow): AgentPool {
  return {
    id: row.id,
    organizationId: row.organization_id,
    name: row.name,
    organizationScoped: row.organization_scoped === 1,
    allowedWorkspaces: JSON.parse(row.allowed_workspaces) as string[],
    allowedProjects: JSON.parse(row.allowed_projects) as string[],
    excludedWorkspaces: JSON.parse(row.excluded_workspaces) as string[],
    createdAt: row.created_at,
  };
}

/** The list's `sort` values and their ORDER BY (names case-insensitively). */
const ORDERS = {
  name: "name COLLATE NOCASE ASC",
  "-name": "name COLLATE NOCASE DESC",
  "created-at": "created_at ASC",
  "-created-at": "created_at DESC",
} as const;
export type PoolSort = keyof typeof ORDERS;
export const isPoolSort = (s: string): s is PoolSort => Object.hasOwn(ORDERS, s);

/** What a PATCH may change; absent fields are left as stored. */
export type PoolChanges = Partial<Pick<AgentPool, "name" | "organizationScoped" | "allowedWorkspaces" | "allowedProjects" | "excludedWorkspaces">>;

export async function findPool(db: Db, id: string): Promise<AgentPool | null> {
  const row = await db.prepare("SELECT * FROM agent_pools WHERE id = ?").bind(id).first<PoolRow>();
  return row ? toAgentPool(row) : null;
}

export async function listPools(db: Db, organizationId: string, sort: PoolSort): Promise<AgentPool[]> {
  const rows = await db.prepare(`SELECT * FROM agent_pools WHERE organization_id = ? ORDER BY ${ORDERS[sort]}, id`).bind(organizationId).all<PoolRow>();
  return rows.results.map(toAgentPool);
}

/** Workspaces naming each pool (the index's `agent_pool_id`), in one query for a whole page. */
export async function workspacesUsing(db: Db, organizationId: string, poolIds: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>(poolIds.map((id) => [id, []]));
  if (poolIds.length === 0) return out;
  const rows = await db
    .prepare(
      `SELECT id, agent_pool_id FROM workspaces
         WHERE organization_id = ? AND agent_pool_id IN (SELECT value FROM json_each(?)) ORDER BY created_at, id`,
    )
    .bind(organizationId, JSON.stringify(poolIds))
    .all<{ id: string; agent_pool_id: string }>();
  for (const r of rows.results) out.get(r.agent_pool_id)?.push(r.id);
  return out;
}

/** Which of `ids` are workspaces / projects of the organisation. */
export async function knownIds(db: Db, table: "workspaces" | "projects", organizationId: string, ids: string[]): Promise<Set<string>> {
  const found = await db
    .prepare(`SELECT id FROM ${table} WHERE organization_id = ? AND id IN (SELECT value FROM json_each(?))`)
    .bind(organizationId, JSON.stringify(ids))
    .all<{ id: string }>();
  return new Set(found.results.map((f) => f.id));
}

/** A workspace's or project's id by its exact name in the organisation. */
export async function idByName(db: Db, table: "workspaces" | "projects", organizationId: string, name: string): Promise<string | null> {
  const row = await db.prepare(`SELECT id FROM ${table} WHERE organization_id = ? AND name = ?`).bind(organizationId, name).first<{ id: string }>();
  return row?.id ?? null;
}

export async function insertPool(db: Db, pool: AgentPool): Promise<void> {
  await db
    .prepare(
      "INSERT INTO agent_pools (id, organization_id, name, organization_scoped, allowed_workspaces, allowed_projects, excluded_workspaces, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(
      pool.id,
      pool.organizationId,
      pool.name,
      pool.organizationScoped ? 1 : 0,
      JSON.stringify(pool.allowedWorkspaces),
      JSON.stringify(pool.allowedProjects),
      JSON.stringify(pool.excludedWorkspaces),
      pool.createdAt,
    )
    .run();
}

/** Writes only the given fields, so concurrent PATCHes of different fields both land. */
export async function updatePoolColumns(db: Db, id: string, changes: PoolChanges): Promise<void> {
  const columns: Array<[string, unknown]> = [
    ["name", changes.name],
    ["organization_scoped", changes.organizationScoped === undefined ? undefined : changes.organizationScoped ? 1 : 0],
    ["allowed_workspaces", changes.allowedWorkspaces && JSON.stringify(changes.allowedWorkspaces)],
    ["allowed_projects", changes.allowedProjects && JSON.stringify(changes.allowedProjects)],
    ["excluded_workspaces", changes.excludedWorkspaces && JSON.stringify(changes.excludedWorkspaces)],
  ];
  const sets = columns.filter(([, v]) => v !== undefined);
  if (sets.length === 0) return;
  await db
    .prepare(`UPDATE agent_pools SET ${sets.map(([k]) => `${k} = ?`).join(", ")} WHERE id = ?`)
    .bind(...sets.map(([, v]) => v), id)
    .run();
}

/** Deletes the pool unless anything names it, decided in the statement itself; false when nothing was deleted. */
export async function deleteUnusedPool(db: Db, pool: AgentPool): Promise<boolean> {
  const res = await db
    .prepare(
      `DELETE FROM agent_pools WHERE id = ?
         AND NOT EXISTS (SELECT 1 FROM workspaces WHERE organization_id = ? AND agent_pool_id = ?)
         AND NOT EXISTS (SELECT 1 FROM organizations WHERE external_id = ? AND default_agent_pool_id = ?)
         AND NOT EXISTS (SELECT 1 FROM projects WHERE organization_id = ? AND default_agent_pool_id = ?)`,
    )
    .bind(pool.id, pool.organizationId, pool.id, pool.organizationId, pool.id, pool.organizationId, pool.id)
    .run();
  return res.meta.changes > 0;
}

/** How many workspaces, organisations (as default) and projects (as default) name the pool. */
export async function poolUses(db: Db, pool: AgentPool): Promise<{ workspaces: number; organization: number; projects: number }> {
  const [ws, org, prj] = await db.batch<{ n: number }>([
    db.prepare("SELECT count(*) AS n FROM workspaces WHERE organization_id = ? AND agent_pool_id = ?").bind(pool.organizationId, pool.id),
    db.prepare("SELECT count(*) AS n FROM organizations WHERE external_id = ? AND default_agent_pool_id = ?").bind(pool.organizationId, pool.id),
    db.prepare("SELECT count(*) AS n FROM projects WHERE organization_id = ? AND default_agent_pool_id = ?").bind(pool.organizationId, pool.id),
  ]);
  const n = (r: D1Result<{ n: number }> | undefined) => r?.results[0]?.n ?? 0;
  return { workspaces: n(ws), organization: n(org), projects: n(prj) };
}
