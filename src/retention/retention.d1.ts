/** D1 statements for organisation default retention policies (a workspace's own policy lives in its DO). */
import type { Db } from "../caller";
import type { DataRetentionPolicy } from "../workspaces/workspace.types";

interface OrgPolicyRow {
  id: string;
  type: DataRetentionPolicy["type"];
  delete_older_than_n_days: number | null;
}

export async function findOrgPolicy(db: Db, organizationId: string): Promise<DataRetentionPolicy | null> {
  const row = await db
    .prepare("SELECT id, type, delete_older_than_n_days FROM organization_retention_policies WHERE organization_id = ?")
    .bind(organizationId)
    .first<OrgPolicyRow>();
  return row ? { id: row.id, type: row.type, deleteOlderThanNDays: row.delete_older_than_n_days } : null;
}

export async function upsertOrgPolicy(db: Db, organizationId: string, p: DataRetentionPolicy, createdAt: string): Promise<void> {
  await db
    .prepare(
      `INSERT INTO organization_retention_policies (organization_id, id, type, delete_older_than_n_days, created_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT(organization_id) DO UPDATE SET id = excluded.id, type = excluded.type, delete_older_than_n_days = excluded.delete_older_than_n_days`,
    )
    .bind(organizationId, p.id, p.type, p.deleteOlderThanNDays, createdAt)
    .run();
}

/** False when the organisation had no policy. */
export async function deleteOrgPolicy(db: Db, organizationId: string): Promise<boolean> {
  const res = await db.prepare("DELETE FROM organization_retention_policies WHERE organization_id = ?").bind(organizationId).run();
  return res.meta.changes > 0;
}
