/** D1 statements for SSH keys (names only: the key value is never stored). */
import type { Db } from "../caller";

interface SshKeyRow {
  id: string;
  organization_id: string;
  name: string;
  created_at: string;
}

export interface SshKey {
  id: string;
  organizationId: string;
  name: string;
  createdAt: string;
}

function toSshKey(row: SshKeyRow): SshKey {
  return { id: row.id, organizationId: row.organization_id, name: row.name, createdAt: row.created_at };
}

export async function findSshKey(db: Db, id: string): Promise<SshKey | null> {
  const row = await db.prepare("SELECT * FROM ssh_keys WHERE id = ?").bind(id).first<SshKeyRow>();
  return row ? toSshKey(row) : null;
}

export async function listSshKeys(db: Db, organizationId: string): Promise<SshKey[]> {
  return (await db.prepare("SELECT * FROM ssh_keys WHERE organization_id = ? ORDER BY created_at, id").bind(organizationId).all<SshKeyRow>()).results.map(
    toSshKey,
  );
}

export async function insertSshKey(db: Db, key: SshKey): Promise<void> {
  await db
    .prepare("INSERT INTO ssh_keys (id, organization_id, name, created_at) VALUES (?, ?, ?, ?)")
    .bind(key.id, key.organizationId, key.name, key.createdAt)
    .run();
}

export async function renameSshKey(db: Db, id: string, name: string): Promise<void> {
  await db.prepare("UPDATE ssh_keys SET name = ? WHERE id = ?").bind(name, id).run();
}

export async function deleteSshKey(db: Db, id: string): Promise<void> {
  await db.prepare("DELETE FROM ssh_keys WHERE id = ?").bind(id).run();
}
