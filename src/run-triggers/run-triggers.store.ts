/** The SQL of the run trigger tables in the workspace's object (RUN_TRIGGER_TABLES in workspace.migrations.ts). */

export interface PendingTrigger {
  sourceRunId: string;
  message: string;
  attempts: number;
}

/** An apply whose targets are still to be told; a second record of the same run changes nothing. */
export function recordApply(sql: SqlStorage, sourceRunId: string, message: string, now: string, dueMs: number): void {
  sql.exec("INSERT OR IGNORE INTO run_trigger_outbox (source_run_id, message, created_at, next_at) VALUES (?, ?, ?, ?)", sourceRunId, message, now, dueMs);
}

export function dueApplies(sql: SqlStorage, nowMs: number): PendingTrigger[] {
  return sql
    .exec<{ source_run_id: string; message: string; attempts: number }>(
      "SELECT source_run_id, message, attempts FROM run_trigger_outbox WHERE next_at <= ? ORDER BY created_at",
      nowMs,
    )
    .toArray()
    .map((r) => ({ sourceRunId: r.source_run_id, message: r.message, attempts: r.attempts }));
}

export function earliestApply(sql: SqlStorage): number | null {
  return sql.exec<{ t: number | null }>("SELECT min(next_at) AS t FROM run_trigger_outbox").one().t;
}

export function delivered(sql: SqlStorage, sourceRunId: string): void {
  sql.exec("DELETE FROM run_trigger_outbox WHERE source_run_id = ?", sourceRunId);
}

export function retryLater(sql: SqlStorage, sourceRunId: string, nextMs: number): void {
  sql.exec("UPDATE run_trigger_outbox SET attempts = attempts + 1, next_at = ? WHERE source_run_id = ?", nextMs, sourceRunId);
}

/** The run a source run already queued here (null: it queued none), or undefined when it was never received. */
export function receivedRun(sql: SqlStorage, sourceRunId: string): string | null | undefined {
  const row = sql.exec<{ run_id: string | null }>("SELECT run_id FROM run_trigger_received WHERE source_run_id = ?", sourceRunId).toArray()[0];
  return row ? row.run_id : undefined;
}

export function markReceived(sql: SqlStorage, sourceRunId: string, runId: string | null, now: string): void {
  sql.exec("INSERT OR IGNORE INTO run_trigger_received (source_run_id, run_id, received_at) VALUES (?, ?, ?)", sourceRunId, runId, now);
}

export function eraseRunTriggers(sql: SqlStorage): void {
  sql.exec("DELETE FROM run_trigger_outbox");
  sql.exec("DELETE FROM run_trigger_received");
}
