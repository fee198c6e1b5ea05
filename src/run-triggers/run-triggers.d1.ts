/**
 * D1 statements for run triggers (migrations/0034). Only triggers whose workspace and source are both still indexed
 * are read or counted: a deleted workspace's triggers vanish with its `workspaces` row, as the real service drops them.
 */
import type { Db } from "../caller";
import { LIMITS } from "../limits";

interface RunTriggerRow {
  id: string;
  organization_id: string;
  workspace_id: string;
  sourceable_id: string;
  created_at: string;
  workspace_name: string;
  sourceable_name: string;
}

export interface RunTrigger {
  id: string;
  organizationId: string;
  /** The workspace that gets a run. */
  workspaceId: string;
  workspaceName: string;
  /** The workspace whose applies queue it. */
  sourceableId: string;
  sourceableName: string;
  createdAt: string;
}

function toRunTrigger(row: RunTriggerRow): RunTrigger {
  return {
    id: row.id,
    organizationId: row.organization_id,
    workspaceId: row.workspace_id,
    workspaceName: row.workspace_name,
    sourceableId: row.sourceable_id,
    sourceableName: row.sourceable_name,
    createdAt: row.created_at,
  };
}

const SELECT = `SELECT t.*, w.name AS workspace_name, s.name AS sourceable_name
  FROM run_triggers t JOIN workspaces w ON w.id = t.workspace_id JOIN workspaces s ON s.id = t.sourceable_id`;

export async function findRunTrigger(db: Db, id: string): Promise<RunTrigger | null> {
  const row = await db.prepare(`${SELECT} WHERE t.id = ?`).bind(id).first<RunTriggerRow>();
  return row ? toRunTrigger(row) : null;
}

/** `inbound`: the triggers that queue runs in the workspace (its sources); `outbound`: those its applies fire. */
export async function listRunTriggers(db: Db, workspaceId: string, direction: "inbound" | "outbound"): Promise<RunTrigger[]> {
  const column = direction === "inbound" ? "t.workspace_id" : "t.sourceable_id";
  const rows = await db.prepare(`${SELECT} WHERE ${column} = ? ORDER BY t.created_at, t.id`).bind(workspaceId).all<RunTriggerRow>();
  return rows.results.map(toRunTrigger);
}

/** The workspaces a source's apply queues runs in (read by the source's object when it delivers). */
export async function runTriggerTargets(db: Db, sourceableId: string): Promise<string[]> {
  const rows = await db.prepare(`${SELECT} WHERE t.sourceable_id = ? ORDER BY t.created_at, t.id`).bind(sourceableId).all<RunTriggerRow>();
  return rows.results.map((r) => r.workspace_id);
}

/**
 * Inserts the trigger unless the workspace already has it or already has the most sources it may (one statement, so
 * two racing creates cannot both pass the count). Answers why not, or null once inserted.
 */
export async function insertRunTrigger(db: Db, t: Omit<RunTrigger, "workspaceName" | "sourceableName">): Promise<"duplicate" | "limit" | null> {
  const inserted = await db
    .prepare(
      `INSERT INTO run_triggers (id, organization_id, workspace_id, sourceable_id, created_at)
       SELECT ?1, ?2, ?3, ?4, ?5
       WHERE (SELECT count(*) FROM run_triggers x JOIN workspaces s ON s.id = x.sourceable_id WHERE x.workspace_id = ?3) < ?6
       ON CONFLICT (workspace_id, sourceable_id) DO NOTHING`,
    )
    .bind(t.id, t.organizationId, t.workspaceId, t.sourceableId, t.createdAt, LIMITS.runTriggerSourcesMax)
    .run();
  if (inserted.meta.changes > 0) return null;
  const existing = await db.prepare("SELECT 1 FROM run_triggers WHERE workspace_id = ? AND sourceable_id = ?").bind(t.workspaceId, t.sourceableId).first();
  return existing ? "duplicate" : "limit";
}

export async function deleteRunTrigger(db: Db, id: string): Promise<void> {
  await db.prepare("DELETE FROM run_triggers WHERE id = ?").bind(id).run();
}
