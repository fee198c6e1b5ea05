/** The SQL of the run task tables in the workspace's object (RUN_TASK_TABLES in workspace.migrations.ts). */
import { nextSeq, record, records } from "../platform/sql-records";
import type { TaskResult, TaskStage, WorkspaceTask } from "./run-tasks.types";

export function listWorkspaceTasks(sql: SqlStorage): WorkspaceTask[] {
  return records<WorkspaceTask>(sql, "SELECT record FROM workspace_tasks ORDER BY seq");
}

export function getWorkspaceTask(sql: SqlStorage, id: string): WorkspaceTask | null {
  return record<WorkspaceTask>(sql, "SELECT record FROM workspace_tasks WHERE id = ?", id);
}

export function insertWorkspaceTask(sql: SqlStorage, t: WorkspaceTask): void {
  const seq = nextSeq(sql, "workspace_tasks");
  sql.exec("INSERT INTO workspace_tasks (id, seq, record) VALUES (?, ?, ?)", t.id, seq, JSON.stringify(t));
}

export function saveWorkspaceTask(sql: SqlStorage, t: WorkspaceTask): void {
  sql.exec("UPDATE workspace_tasks SET record = ? WHERE id = ?", JSON.stringify(t), t.id);
}

export function deleteWorkspaceTask(sql: SqlStorage, id: string): void {
  sql.exec("DELETE FROM workspace_tasks WHERE id = ?", id);
}

export function insertStage(sql: SqlStorage, s: TaskStage, seq: number): void {
  sql.exec("INSERT INTO task_stages (id, run_id, seq, record) VALUES (?, ?, ?, ?)", s.id, s.runId, seq, JSON.stringify(s));
}

export function saveStage(sql: SqlStorage, s: TaskStage): void {
  sql.exec("UPDATE task_stages SET record = ? WHERE id = ?", JSON.stringify(s), s.id);
}

export function getStage(sql: SqlStorage, id: string): TaskStage | null {
  return record<TaskStage>(sql, "SELECT record FROM task_stages WHERE id = ?", id);
}

export function stagesOfRun(sql: SqlStorage, runId: string): TaskStage[] {
  return records<TaskStage>(sql, "SELECT record FROM task_stages WHERE run_id = ? ORDER BY seq", runId);
}

export function insertResult(sql: SqlStorage, r: TaskResult): void {
  sql.exec("INSERT INTO task_results (id, stage_id, record) VALUES (?, ?, ?)", r.id, r.stageId, JSON.stringify(r));
}

export function getResult(sql: SqlStorage, id: string): TaskResult | null {
  return record<TaskResult>(sql, "SELECT record FROM task_results WHERE id = ?", id);
}

export function resultsOf(sql: SqlStorage, stageId: string): TaskResult[] {
  return records<TaskResult>(sql, "SELECT record FROM task_results WHERE stage_id = ? ORDER BY rowid", stageId);
}

/** Writes a result; `sendAt` and `deadline` (epoch ms, null: none) are its engine state. */
export function saveResult(sql: SqlStorage, r: TaskResult, engine?: { sendAt: number | null; deadline: number | null; attempts?: number }): void {
  if (!engine) {
    sql.exec("UPDATE task_results SET record = ? WHERE id = ?", JSON.stringify(r), r.id);
    return;
  }
  sql.exec(
    "UPDATE task_results SET record = ?, send_at = ?, deadline = ?, attempts = coalesce(?, attempts) WHERE id = ?",
    JSON.stringify(r),
    engine.sendAt,
    engine.deadline,
    engine.attempts ?? null,
    r.id,
  );
}

export interface DueSend {
  id: string;
  attempts: number;
}

export function dueSends(sql: SqlStorage, nowMs: number, limit: number): DueSend[] {
  return sql
    .exec<{ id: string; attempts: number }>("SELECT id, attempts FROM task_results WHERE send_at <= ? ORDER BY send_at LIMIT ?", nowMs, limit)
    .toArray();
}

export function expiredResults(sql: SqlStorage, nowMs: number): string[] {
  return sql
    .exec<{ id: string }>("SELECT id FROM task_results WHERE deadline <= ?", nowMs)
    .toArray()
    .map((r) => r.id);
}

export function earliestTaskWork(sql: SqlStorage): number | null {
  return sql
    .exec<{ t: number | null }>("SELECT min(coalesce(send_at, deadline)) AS t FROM task_results WHERE send_at IS NOT NULL OR deadline IS NOT NULL")
    .one().t;
}

export function eraseRunTasks(sql: SqlStorage): void {
  sql.exec("DELETE FROM workspace_tasks");
  sql.exec("DELETE FROM task_stages");
  sql.exec("DELETE FROM task_results");
}
