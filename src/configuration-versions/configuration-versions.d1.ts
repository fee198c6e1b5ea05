/**
 * Repository: the index of configuration version ids → workspace and organisation (the versions themselves live in
 * the workspace's DO). Written only by that DO, in the same batch as its index row (the outbox flush), so the Worker
 * never writes it and a crash cannot leave a row for a version that was never committed.
 */
import type { Db } from "../caller";
import type { WorkspaceRecord } from "../workspaces/workspace.types";

/** Index rows for versions the DO has not indexed yet (idempotent: a retried flush changes nothing). */
export function cvIndexStatement(db: Db, w: Pick<WorkspaceRecord, "id" | "organizationId">, cvs: Array<{ id: string }>): D1PreparedStatement {
  return db
    .prepare(
      `INSERT OR IGNORE INTO configuration_versions (id, workspace_id, organization_id)
       SELECT json_extract(value, '$.id'), ?, ? FROM json_each(?)`,
    )
    .bind(w.id, w.organizationId, JSON.stringify(cvs.map((cv) => ({ id: cv.id }))));
}

/** A deleted workspace's configuration versions leave the index with it. */
export function dropCvIndexStatement(db: Db, workspaceId: string): D1PreparedStatement {
  return db.prepare("DELETE FROM configuration_versions WHERE workspace_id = ?").bind(workspaceId);
}

/** The workspace a configuration version belongs to (null when unknown). */
export async function workspaceOfCv(db: Db, id: string): Promise<string | null> {
  const row = await db.prepare("SELECT workspace_id FROM configuration_versions WHERE id = ?").bind(id).first<{ workspace_id: string }>();
  return row?.workspace_id ?? null;
}
