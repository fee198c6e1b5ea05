/**
 * Repository: the index of state version ids → workspace (the versions themselves live in the DO).
 * Written only by the workspace's DO, in the same batch as its index row (the outbox flush), so
 * the Worker never writes it and a crash cannot leave a row for a version that was never committed.
 */
import type { Db } from "../caller";
import { parentOfId } from "../ids";

/** Index rows for state versions the DO has not indexed yet (idempotent: a retried flush changes nothing). */
export function stateVersionIndexStatement(db: Db, workspaceId: string, versions: Array<{ id: string; created_at: string }>): D1PreparedStatement {
  return db
    .prepare(
      `INSERT OR IGNORE INTO state_version_index (id, workspace_id, created_at)
       SELECT json_extract(value, '$.id'), ?, json_extract(value, '$.created_at') FROM json_each(?)`,
    )
    .bind(workspaceId, JSON.stringify(versions));
}

/** A deleted workspace's state versions leave the index with it. */
export function dropStateVersionIndexStatement(db: Db, workspaceId: string): D1PreparedStatement {
  return db.prepare("DELETE FROM state_version_index WHERE workspace_id = ?").bind(workspaceId);
}

/**
 * The workspace a state version belongs to (null when unknown): named by the id itself (src/ids.ts, `newChildId`),
 * else the index's map, which ids from before it use. A named workspace still has to hold the version to show it.
 */
export async function workspaceOfStateVersion(db: Db, id: string): Promise<string | null> {
  const named = parentOfId(id, "ws");
  if (named) return named;
  const row = await db.prepare("SELECT workspace_id FROM state_version_index WHERE id = ?").bind(id).first<{ workspace_id: string }>();
  return row?.workspace_id ?? null;
}
