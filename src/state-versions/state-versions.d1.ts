/** Repository: the Worker's index of state version ids → workspace (state versions themselves live in the DO). */
import type { Db } from "../caller";

export async function insertStateVersionIndex(db: Db, id: string, workspaceId: string, createdAt: string): Promise<void> {
  await db.prepare("INSERT INTO state_version_index (id, workspace_id, created_at) VALUES (?, ?, ?)").bind(id, workspaceId, createdAt).run();
}

export async function deleteStateVersionIndex(db: Db, id: string): Promise<void> {
  await db.prepare("DELETE FROM state_version_index WHERE id = ?").bind(id).run();
}

/** The workspace a state version belongs to (null when unknown). */
export async function workspaceOfStateVersion(db: Db, id: string): Promise<string | null> {
  const row = await db.prepare("SELECT workspace_id FROM state_version_index WHERE id = ?").bind(id).first<{ workspace_id: string }>();
  return row?.workspace_id ?? null;
}
