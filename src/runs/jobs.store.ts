/**
 * The jobs of a workspace's runs (docs/runs.md, "Jobs and leases"): one `run_jobs` row per phase handed to agents,
 * claimed by compare-and-set under a lease. Synchronous helpers over the object's SQLite.
 */
import { fail, type Failure } from "../errors";
import { randomBase62 } from "../ids";
import { LEASE_MS } from "./runs.rules";
import type { Phase } from "./runs.types";

export type JobRow = {
  run_id: string;
  phase: Phase;
  status: "queued" | "claimed" | "done";
  agent_id: string | null;
  claim_id: string | null;
  lease_until: number | null;
  attempt: number;
  pool_id: string | null;
  queued_at: string;
  agent_bytes: number;
};

export function getJob(sql: SqlStorage, runId: string, phase: Phase): JobRow | null {
  return sql.exec<JobRow>("SELECT * FROM run_jobs WHERE run_id = ? AND phase = ?", runId, phase).toArray()[0] ?? null;
}

/** A phase became `*_queued`: its job waits for an agent of `poolId` (null: the default pool). */
export function queueJob(sql: SqlStorage, runId: string, phase: Phase, poolId: string | null, now: string): void {
  sql.exec(
    `INSERT INTO run_jobs (run_id, phase, status, pool_id, queued_at) VALUES (?, ?, 'queued', ?, ?)
     ON CONFLICT (run_id, phase) DO UPDATE SET status = 'queued', agent_id = NULL, claim_id = NULL, lease_until = NULL,
       pool_id = excluded.pool_id, queued_at = excluded.queued_at`,
    runId,
    phase,
    poolId,
    now,
  );
}

/** The compare-and-set `queued → claimed`: a fresh claim id and a lease. */
export function claimRow(sql: SqlStorage, runId: string, phase: Phase, agent: { id: string; poolId: string | null }, nowMs: number): JobRow | Failure {
  const job = getJob(sql, runId, phase);
  if (job?.status !== "queued") return fail("job_unavailable");
  if (job.pool_id !== agent.poolId) return fail("job_unavailable", "The job belongs to another agent pool");
  return sql
    .exec<JobRow>(
      `UPDATE run_jobs SET status = 'claimed', agent_id = ?, claim_id = ?, lease_until = ?, attempt = attempt + 1
       WHERE run_id = ? AND phase = ? AND status = 'queued' RETURNING *`,
      agent.id,
      randomBase62(24),
      nowMs + LEASE_MS,
      runId,
      phase,
    )
    .one();
}

/** The job an agent's call is about, if its claim is still live: a wrong claim, an expired lease or a closed job is lost. */
export function liveJob(sql: SqlStorage, runId: string, phase: Phase | null, claimId: string, nowMs: number): JobRow | Failure {
  const job = sql
    .exec<JobRow>("SELECT * FROM run_jobs WHERE run_id = ? AND claim_id = ? AND (? IS NULL OR phase = ?)", runId, claimId, phase, phase)
    .toArray()[0];
  if (job?.status !== "claimed" || (job.lease_until ?? 0) < nowMs) return fail("job_lost");
  return job;
}

export function renewLease(sql: SqlStorage, job: JobRow, nowMs: number): void {
  sql.exec("UPDATE run_jobs SET lease_until = ? WHERE run_id = ? AND phase = ?", nowMs + LEASE_MS, job.run_id, job.phase);
}

/**
 * The job ended (finished, canceled, lost): no agent call about it succeeds any more, so an artifact upload it left
 * unfinished (staged as `<kind>@<upload>`, logs.store.ts) can never complete, and its pieces go with it.
 */
export function closeJob(sql: SqlStorage, runId: string, phase: Phase): void {
  sql.exec("UPDATE run_jobs SET status = 'done', lease_until = NULL WHERE run_id = ? AND phase = ?", runId, phase);
  sql.exec("DELETE FROM run_artifacts WHERE run_id = ? AND kind LIKE '%@%'", runId);
}

export function addAgentBytes(sql: SqlStorage, job: JobRow, n: number): void {
  sql.exec("UPDATE run_jobs SET agent_bytes = agent_bytes + ? WHERE run_id = ? AND phase = ?", n, job.run_id, job.phase);
}

export function expiredJobs(sql: SqlStorage, nowMs: number): JobRow[] {
  return sql.exec<JobRow>("SELECT * FROM run_jobs WHERE status = 'claimed' AND lease_until < ?", nowMs).toArray();
}

/** When the next lease runs out (epoch ms), for the alarm. */
export function earliestLease(sql: SqlStorage): number | null {
  return sql.exec<{ t: number | null }>("SELECT min(lease_until) AS t FROM run_jobs WHERE status = 'claimed'").one().t;
}
