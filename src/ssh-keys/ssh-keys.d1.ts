/** D1 statements for SSH keys (names only: the key value is never stored). */
import type { Db } from "../caller";

export interface SshKeyRow {
  id: string;
  organization_id: string;
  name: string;
  created_at: string;
}

export async function findSshKey(db: Db, id: string): Promise<SshKeyRow | null> {
  return db.prepare("SELECT * FROM ssh_keys WHERE id = ?").bind(id).first<SshKeyRow>();
}

export async function listSshKeys(db: Db, organizationId: string): Promise<SshKeyRow[]> {
  return (await db.prepare("SELECT * FROM ssh_keys WHERE organization_id = ? ORDER BY created_at, id").bind(organizationId).all<SshKeyRow>()).results;
}

export async function insertSshKey(db: Db, row: SshKeyRow): Promise<void> {
  await db
    .prepare("INSERT INTO ssh_keys (id, organization_id, name, created_at) VALUES (?, ?, ?, ?)")
    .bind(row.id, row.organization_id, row.name, row.created_at)
    .run();
}

export async function renameSshKey(db: Db, id: string, name: string): Promise<void> {
  await db.prepare("UPDATE ssh_keys SET name = ? WHERE id = ?").bind(name, id).run();
}

export async function deleteSshKey(db: Db, id: string): Promise<void> {
  await db.prepare("DELETE FROM ssh_keys WHERE id = ?").bind(id).run();
}
