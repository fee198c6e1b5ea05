/**
 * Repository: the D1 index of runs and of their jobs (migration 0020). The runs live in their workspace's Durable
 * Object; only that object writes these rows, in the batch of its index flush (version-guarded, so an older write
 * never overwrites a newer one). The Worker reads them to find a run's workspace and to hand queued jobs to agents
 * (an organisation's runs are listed by runs.list.d1.ts).
 */
import type { Db } from "../caller";
import type { JobIndexRow, RunRow } from "./runs.store";
import type { Phase, RunRecord, RunStatus } from "./runs.types";

/**
 * Statements that make D1's rows of these runs and their jobs equal to the object's; written only while the
 * organisation exists (as the workspace row), so a deleted organisation's queue never reappears for agents.
 */
export function runIndexStatements(db: Db, runs: Array<{ row: RunRow; jobs: JobIndexRow[] }>): D1PreparedStatement[] {
  const statements: D1PreparedStatement[] = [];
  for (const { row, jobs } of runs) {
    const run = JSON.parse(row.record) as RunRecord;
    statements.push(
      db
        .prepare(
          `INSERT INTO runs (id, workspace_id, organization_id, status, created_at, plan_only, is_destroy, source, message,
             created_by, agent_pool_id, doc, version)
           SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM organizations WHERE external_id = ?)
           ON CONFLICT(id) DO UPDATE SET status = excluded.status, message = excluded.message, doc = excluded.doc,
             version = excluded.version
           WHERE excluded.version > runs.version`,
        )
        .bind(
          run.id,
          run.workspaceId,
          run.organizationId,
          run.status,
          run.createdAt,
          run.planOnly ? 1 : 0,
          run.isDestroy ? 1 : 0,
          run.source,
          run.message,
          run.createdBy?.id ?? null,
          row.pool_id,
          row.record,
          row.version,
          run.organizationId,
        ),
    );
    for (const job of jobs) {
      statements.push(
        db
          .prepare(
            `INSERT INTO run_jobs (run_id, phase, workspace_id, organization_id, agent_pool_id, status, queued_at, version)
             SELECT ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM organizations WHERE external_id = ?)
             ON CONFLICT(run_id, phase) DO UPDATE SET agent_pool_id = excluded.agent_pool_id, status = excluded.status,
               queued_at = excluded.queued_at, version = excluded.version
             WHERE excluded.version > run_jobs.version`,
          )
          .bind(job.run_id, job.phase, run.workspaceId, run.organizationId, job.pool_id, job.status, job.queued_at, row.version, run.organizationId),
      );
    }
  }
  return statements;
}

/** A deleted workspace's runs leave the index with it. */
export function dropRunIndexStatements(db: Db, workspaceId: string): D1PreparedStatement[] {
  return [db.prepare("DELETE FROM run_jobs WHERE workspace_id = ?").bind(workspaceId), db.prepare("DELETE FROM runs WHERE workspace_id = ?").bind(workspaceId)];
}

export interface RunIndexRow {
  workspaceId: string;
  organizationId: string;
  status: RunStatus;
}

/** Where a run lives and its status as last indexed (null when unknown). */
export async function runIndexRow(db: Db, runId: string): Promise<RunIndexRow | null> {
  const row = await db
    .prepare("SELECT workspace_id, organization_id, status FROM runs WHERE id = ?")
    .bind(runId)
    .first<{ workspace_id: string; organization_id: string; status: RunStatus }>();
  return row ? { workspaceId: row.workspace_id, organizationId: row.organization_id, status: row.status } : null;
}

export interface QueuedJob {
  runId: string;
  phase: Phase;
  workspaceId: string;
  organizationId: string;
  queuedAt: string;
}

/**
 * Jobs waiting for an agent of `poolId` (null: the default pool), in turn by organisation: those of the organisation
 * the pool served longest ago first (one never served before any other, migration 0029), each organisation's
 * oldest first. Round-robin across the organisations that wait, so none starves another.
 */
export async function queuedJobs(db: Db, poolId: string | null, limit: number): Promise<QueuedJob[]> {
  const rows = await db
    .prepare(
      `SELECT j.run_id, j.phase, j.workspace_id, j.organization_id, j.queued_at FROM run_jobs j
       LEFT JOIN agent_pool_turns t ON t.pool_key = coalesce(?1, '') AND t.organization_id = j.organization_id
       WHERE j.agent_pool_id IS ?1 AND j.status = 'queued'
       ORDER BY coalesce(t.last_claimed_at, ''), j.queued_at, j.run_id LIMIT ?2`,
    )
    .bind(poolId, limit)
    .all<{ run_id: string; phase: Phase; workspace_id: string; organization_id: string; queued_at: string }>();
  return rows.results.map((r) => ({ runId: r.run_id, phase: r.phase, workspaceId: r.workspace_id, organizationId: r.organization_id, queuedAt: r.queued_at }));
}
