/**
 * The SQL of the run tables in the workspace's object (RUN_TABLES in src/workspaces/workspace.migrations.ts,
 * docs/runs.md): their rows, events and comments. Synchronous helpers for the object's critical sections; the
 * transitions with their effects on the queue, the lock and the jobs are the runs capability's (runs.object.ts).
 */
import { nextSeq, record, records } from "../platform/sql-records";
import { randomBase62 } from "../ids";
import type { WorkspaceRecord } from "../workspaces/workspace.types";
import { bypassesQueue } from "./runs.rules";
import type { Actor, RunComment, RunEvent, RunRecord, RunStatus } from "./runs.types";

export type RunRow = {
  id: string;
  seq: number;
  record: string;
  status: string;
  bypass: number;
  plan_only: number;
  active: number;
  can_auto_apply: number;
  pool_id: string | null;
  version: number;
};

export const toRun = (row: Pick<RunRow, "record">): RunRecord => JSON.parse(row.record) as RunRecord;

export function getRunRow(sql: SqlStorage, id: string): RunRow | null {
  return sql.exec<RunRow>("SELECT * FROM runs WHERE id = ?", id).toArray()[0] ?? null;
}

export function getRun(sql: SqlStorage, id: string): RunRecord | null {
  const row = getRunRow(sql, id);
  return row ? withPosition(sql, toRun(row)) : null;
}

/** Newest first; plan-only runs only when asked for (the real workspace list leaves them out). */
export function listRuns(sql: SqlStorage, input: { offset: number; limit: number; includePlanOnly: boolean }): { items: RunRecord[]; total: number } {
  const where = input.includePlanOnly ? "" : "WHERE plan_only = 0";
  const total = sql.exec<{ n: number }>(`SELECT count(*) AS n FROM runs ${where}`).one().n;
  const positions = queuePositions(sql);
  const items = sql
    .exec<RunRow>(`SELECT record FROM runs ${where} ORDER BY seq DESC LIMIT ? OFFSET ?`, input.limit, input.offset)
    .toArray()
    .map((row) => {
      const run = toRun(row);
      run.positionInQueue = positions.get(run.id) ?? 0;
      return run;
    });
  return { items, total };
}

/** The newest runs first (for the metrics). */
export function latestRuns(sql: SqlStorage, limit: number, statuses: string[]): RunRecord[] {
  return sql
    .exec<RunRow>(`SELECT record FROM runs WHERE status IN (SELECT value FROM json_each(?)) ORDER BY seq DESC LIMIT ?`, JSON.stringify(statuses), limit)
    .toArray()
    .map(toRun);
}

/** Runs waiting for the queue, in the order they start: pending ones, and confirmed saved plans without the lock. */
export function waitingRuns(sql: SqlStorage): RunRow[] {
  return sql.exec<RunRow>("SELECT * FROM runs WHERE active = 0 AND ((status = 'pending' AND bypass = 0) OR status = 'confirmed') ORDER BY seq").toArray();
}

/** The run holding the queue, if any. */
export function activeRun(sql: SqlStorage): RunRow | null {
  return sql.exec<RunRow>("SELECT * FROM runs WHERE active = 1 LIMIT 1").toArray()[0] ?? null;
}

function queuePositions(sql: SqlStorage): Map<string, number> {
  return new Map(waitingRuns(sql).map((row, i) => [row.id, i + 1]));
}

function withPosition(sql: SqlStorage, run: RunRecord): RunRecord {
  run.positionInQueue = queuePositions(sql).get(run.id) ?? 0;
  return run;
}

export function insertRun(sql: SqlStorage, run: RunRecord, extra: { canAutoApply: boolean; poolId: string | null }): void {
  const seq = nextSeq(sql, "runs");
  sql.exec(
    `INSERT INTO runs (id, seq, record, status, bypass, plan_only, active, can_auto_apply, pool_id, version)
     VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, 1)`,
    run.id,
    seq,
    JSON.stringify(run),
    run.status,
    bypassesQueue(run) ? 1 : 0,
    run.planOnly ? 1 : 0,
    extra.canAutoApply ? 1 : 0,
    extra.poolId,
  );
  sql.exec("INSERT OR REPLACE INTO runs_unindexed (run_id, version) VALUES (?, 1)", run.id);
}

/**
 * Writes a changed run, marks it for the index, and keeps the workspace's `current-run` (the head of its queue)
 * showing its status. `active`: whether it now holds the queue (unchanged when omitted). Answers the status it had.
 */
export function saveRun(sql: SqlStorage, w: WorkspaceRecord, run: RunRecord, active?: boolean): RunStatus {
  const from = sql.exec<{ status: RunStatus }>("SELECT status FROM runs WHERE id = ?", run.id).one().status;
  const version = sql
    .exec<{ version: number }>(
      "UPDATE runs SET record = ?, status = ?, active = coalesce(?, active), version = version + 1 WHERE id = ? RETURNING version",
      JSON.stringify({ ...run, positionInQueue: 0 }),
      run.status,
      active === undefined ? null : active ? 1 : 0,
      run.id,
    )
    .one().version;
  sql.exec("INSERT OR REPLACE INTO runs_unindexed (run_id, version) VALUES (?, ?)", run.id, version);
  if (w.currentRun?.id === run.id) w.currentRun = { ...w.currentRun, status: run.status };
  return from;
}

export function setCurrentRun(w: WorkspaceRecord, run: RunRecord): void {
  w.currentRun = { id: run.id, status: run.status, createdAt: run.createdAt };
}

/** The runs the index does not have yet, with the versions to clear once it has them. */
export function unindexedRuns(sql: SqlStorage): Array<{ row: RunRow; jobs: JobIndexRow[] }> {
  const rows = sql.exec<RunRow>("SELECT runs.* FROM runs_unindexed JOIN runs ON runs.id = runs_unindexed.run_id ORDER BY runs.seq").toArray();
  return rows.map((row) => ({
    row,
    jobs: sql.exec<JobIndexRow>("SELECT run_id, phase, status, pool_id, queued_at FROM run_jobs WHERE run_id = ?", row.id).toArray(),
  }));
}

export type JobIndexRow = {
  run_id: string;
  phase: string;
  status: string;
  pool_id: string | null;
  queued_at: string;
};

/** Clears the marks the index write carried (a run changed since keeps its mark for the next flush). */
export function markIndexed(sql: SqlStorage, runs: Array<{ id: string; version: number }>): void {
  for (const r of runs) sql.exec("DELETE FROM runs_unindexed WHERE run_id = ? AND version <= ?", r.id, r.version);
}

/** Once D1 has a workspace's delete: nothing of its runs survives. */
export function eraseRuns(sql: SqlStorage): void {
  for (const table of ["runs", "run_events", "run_comments", "run_jobs", "run_logs", "run_artifacts", "runs_unindexed"]) sql.exec(`DELETE FROM ${table}`);
}

// ---- events and comments ----

/** `re-<16 of the run><4>`, `wsc-<16 of the run><4>`: the run is found from the id alone. */
export const childId = (prefix: "re" | "wsc", runId: string): string => `${prefix}-${runId.slice("run-".length)}${randomBase62(4)}`;

export function addEvent(
  sql: SqlStorage,
  input: { runId: string; action: string; now: string; actor: Actor | null; description?: string | null; commentId?: string | null },
): RunEvent {
  const event: RunEvent = {
    id: childId("re", input.runId),
    runId: input.runId,
    action: input.action,
    description: input.description ?? null,
    createdAt: input.now,
    actor: input.actor,
    commentId: input.commentId ?? null,
  };
  const seq = nextSeq(sql, "run_events");
  sql.exec("INSERT INTO run_events (id, run_id, seq, record) VALUES (?, ?, ?, ?)", event.id, event.runId, seq, JSON.stringify(event));
  return event;
}

export function listEvents(sql: SqlStorage, runId: string): RunEvent[] {
  return records<RunEvent>(sql, "SELECT record FROM run_events WHERE run_id = ? ORDER BY seq", runId);
}

export function getEvent(sql: SqlStorage, id: string): RunEvent | null {
  return record<RunEvent>(sql, "SELECT record FROM run_events WHERE id = ?", id);
}

export function getComment(sql: SqlStorage, id: string): RunComment | null {
  return record<RunComment>(sql, "SELECT record FROM run_comments WHERE id = ?", id);
}

/** A comment and its `commented` event; the run lists the comment (the caller saves the run). */
export function insertComment(sql: SqlStorage, run: RunRecord, input: { id: string; body: string; now: string; actor: Actor | null }): RunComment {
  const event = addEvent(sql, { runId: run.id, action: "commented", now: input.now, actor: input.actor, commentId: input.id });
  const comment: RunComment = { id: input.id, runId: run.id, body: input.body, createdAt: input.now, runEventId: event.id };
  sql.exec("INSERT INTO run_comments (id, run_id, record) VALUES (?, ?, ?)", comment.id, comment.runId, JSON.stringify(comment));
  run.commentIds.push(comment.id);
  return comment;
}
