/**
 * Repository: the organisation-wide reads of the D1 run index (migration 0020, written by the workspaces' objects):
 * pages of an organisation's runs for its run list and queue, its capacity, and agent pools by name.
 */
import type { Db } from "../caller";
import type { RunRecord, RunStatus } from "./runs.types";

export interface OrganizationScan {
  organizationId: string;
  /** Only these workspaces (null: all). */
  workspaceIds: string[] | null;
  /** Only these statuses (null: all). */
  statuses: RunStatus[] | null;
  /** Created at or after / before (ISO 8601; null: unbounded). */
  since: string | null;
  until: string | null;
  /** Oldest first (the queue) instead of newest first (the list). */
  oldestFirst: boolean;
  offset: number;
  limit: number;
}

/** One slice of an organisation's runs in list order, as their records. */
export async function organizationRunSlice(db: Db, q: OrganizationScan): Promise<RunRecord[]> {
  const where = ["organization_id = ?"];
  const binds: unknown[] = [q.organizationId];
  if (q.workspaceIds) {
    where.push("workspace_id IN (SELECT value FROM json_each(?))");
    binds.push(JSON.stringify(q.workspaceIds));
  }
  if (q.statuses) {
    where.push("status IN (SELECT value FROM json_each(?))");
    binds.push(JSON.stringify(q.statuses));
  }
  if (q.since) {
    where.push("created_at >= ?");
    binds.push(q.since);
  }
  if (q.until) {
    where.push("created_at < ?");
    binds.push(q.until);
  }
  const order = q.oldestFirst ? "created_at, id" : "created_at DESC, id DESC";
  const rows = await db
    .prepare(`SELECT doc FROM runs WHERE ${where.join(" AND ")} ORDER BY ${order} LIMIT ? OFFSET ?`)
    .bind(...binds, q.limit, q.offset)
    .all<{ doc: string }>();
  return rows.results.map((r) => JSON.parse(r.doc) as RunRecord);
}

/** How many of the organisation's runs wait for an agent (`pending`) and how many are executing (`running`). */
export async function capacityCounts(db: Db, organizationId: string): Promise<{ pending: number; running: number }> {
  const rows = await db
    .prepare(
      `SELECT status, count(*) AS n FROM runs
       WHERE organization_id = ? AND status IN ('plan_queued', 'apply_queued', 'planning', 'applying')
       GROUP BY status`,
    )
    .bind(organizationId)
    .all<{ status: RunStatus; n: number }>();
  let pending = 0;
  let running = 0;
  for (const r of rows.results) {
    if (r.status === "planning" || r.status === "applying") running += r.n;
    else pending += r.n;
  }
  return { pending, running };
}

/** Ids of the organisation's agent pools of these names. */
export async function agentPoolIdsByName(db: Db, organizationId: string, names: string[]): Promise<Set<string>> {
  const rows = await db
    .prepare("SELECT id FROM agent_pools WHERE organization_id = ? AND name IN (SELECT value FROM json_each(?))")
    .bind(organizationId, JSON.stringify(names))
    .all<{ id: string }>();
  return new Set(rows.results.map((r) => r.id));
}
