/**
 * D1 statements for run tasks (migrations/0037): the organisation's tasks, and the index of the workspaces' attachments
 * (each workspace's object holds its own; this copy answers a task's `workspace_tasks`). Attachments of a workspace
 * no longer indexed are never read: readers join `workspaces`.
 */
import type { Db } from "../caller";
import type { Enforcement, TaskStageName, WorkspaceTask } from "./run-tasks.types";

interface RunTaskRow {
  id: string;
  organization_id: string;
  name: string;
  url: string;
  description: string | null;
  category: string;
  hmac_key: string | null;
  enabled: number;
  created_at: string;
}

export interface RunTask {
  id: string;
  organizationId: string;
  name: string;
  url: string;
  description: string | null;
  category: string;
  /** Sealed; never answered. */
  sealedHmacKey: string | null;
  enabled: boolean;
  createdAt: string;
}

const toRunTask = (r: RunTaskRow): RunTask => ({
  id: r.id,
  organizationId: r.organization_id,
  name: r.name,
  url: r.url,
  description: r.description,
  category: r.category,
  sealedHmacKey: r.hmac_key,
  enabled: r.enabled === 1,
  createdAt: r.created_at,
});

export async function findRunTask(db: Db, id: string): Promise<RunTask | null> {
  const row = await db.prepare("SELECT * FROM run_tasks WHERE id = ?").bind(id).first<RunTaskRow>();
  return row ? toRunTask(row) : null;
}

export async function listRunTasks(db: Db, organizationId: string): Promise<RunTask[]> {
  const rows = await db.prepare("SELECT * FROM run_tasks WHERE organization_id = ? ORDER BY created_at, id").bind(organizationId).all<RunTaskRow>();
  return rows.results.map(toRunTask);
}

export async function insertRunTask(db: Db, t: RunTask): Promise<void> {
  await db
    .prepare("INSERT INTO run_tasks (id, organization_id, name, url, description, category, hmac_key, enabled, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
    .bind(t.id, t.organizationId, t.name, t.url, t.description, t.category, t.sealedHmacKey, t.enabled ? 1 : 0, t.createdAt)
    .run();
}

export async function saveRunTask(db: Db, t: RunTask): Promise<void> {
  await db
    .prepare("UPDATE run_tasks SET name = ?, url = ?, description = ?, category = ?, hmac_key = ?, enabled = ? WHERE id = ?")
    .bind(t.name, t.url, t.description, t.category, t.sealedHmacKey, t.enabled ? 1 : 0, t.id)
    .run();
}

/** The task and its attachments' index rows (the objects' attachments to it then find no task, and are skipped). */
export async function deleteRunTask(db: Db, id: string): Promise<void> {
  await db.batch([db.prepare("DELETE FROM workspace_run_tasks WHERE task_id = ?").bind(id), db.prepare("DELETE FROM run_tasks WHERE id = ?").bind(id)]);
}

export interface IndexedWorkspaceTask {
  id: string;
  taskId: string;
  workspaceId: string;
  enforcementLevel: Enforcement;
  stages: TaskStageName[];
  createdAt: string;
}

export async function attachmentsOf(db: Db, taskId: string): Promise<IndexedWorkspaceTask[]> {
  const rows = await db
    .prepare(
      `SELECT a.id, a.task_id, a.workspace_id, a.enforcement_level, a.stages, a.created_at FROM workspace_run_tasks a
       JOIN workspaces w ON w.id = a.workspace_id WHERE a.task_id = ? ORDER BY a.created_at, a.id`,
    )
    .bind(taskId)
    .all<{ id: string; task_id: string; workspace_id: string; enforcement_level: Enforcement; stages: string; created_at: string }>();
  return rows.results.map((r) => ({
    id: r.id,
    taskId: r.task_id,
    workspaceId: r.workspace_id,
    enforcementLevel: r.enforcement_level,
    stages: JSON.parse(r.stages) as TaskStageName[],
    createdAt: r.created_at,
  }));
}

/**
 * The workspace's attachments as the index holds them, rewritten whole by its object's outbox (a workspace has a few):
 * those of a task deleted meanwhile are left out, as the task's deletion dropped its rows.
 */
export function attachmentStatements(db: Db, workspaceId: string, tasks: WorkspaceTask[]): D1PreparedStatement[] {
  return [
    dropAttachmentsStatement(db, workspaceId),
    ...tasks.map((t) =>
      db
        .prepare(
          `INSERT INTO workspace_run_tasks (id, task_id, workspace_id, enforcement_level, stages, created_at)
           SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE EXISTS (SELECT 1 FROM run_tasks WHERE id = ?2)`,
        )
        .bind(t.id, t.taskId, workspaceId, t.enforcementLevel, JSON.stringify(t.stages), t.createdAt),
    ),
  ];
}

/** A workspace's attachments leave the index (before its rewrite, or with the workspace). */
export function dropAttachmentsStatement(db: Db, workspaceId: string): D1PreparedStatement {
  return db.prepare("DELETE FROM workspace_run_tasks WHERE workspace_id = ?").bind(workspaceId);
}
