/** D1 statements of the registry's GPG keys (migration 0032). */
import type { Db } from "../caller";
import { offsetOf, pageWithTotal } from "../platform/paging";

interface KeyRow {
  id: string;
  organization_id: string;
  organization_name: string;
  key_id: string;
  ascii_armor: string;
  created_at: string;
  updated_at: string;
}

export interface GpgKey {
  id: string;
  organizationId: string;
  /** The namespace: the organisation's name. */
  namespace: string;
  keyId: string;
  asciiArmor: string;
  createdAt: string;
  updatedAt: string;
}

const toKey = (r: KeyRow): GpgKey => ({
  id: r.id,
  organizationId: r.organization_id,
  namespace: r.organization_name,
  keyId: r.key_id,
  asciiArmor: r.ascii_armor,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const SELECT = "SELECT k.*, o.name AS organization_name FROM registry_gpg_keys k JOIN organizations o ON o.external_id = k.organization_id";

export async function findGpgKey(db: Db, organizationId: string, keyId: string): Promise<GpgKey | null> {
  const row = await db.prepare(`${SELECT} WHERE k.organization_id = ? AND k.key_id = ?`).bind(organizationId, keyId).first<KeyRow>();
  return row ? toKey(row) : null;
}

export async function listGpgKeys(db: Db, organizationId: string, page: { number: number; size: number }): Promise<{ items: GpgKey[]; total: number }> {
  const { rows, total } = await pageWithTotal<KeyRow>(
    db,
    db.prepare(`${SELECT} WHERE k.organization_id = ? ORDER BY k.created_at, k.id LIMIT ? OFFSET ?`).bind(organizationId, page.size, offsetOf(page)),
    db.prepare("SELECT count(*) AS n FROM registry_gpg_keys WHERE organization_id = ?").bind(organizationId),
  );
  return { items: rows.map(toKey), total };
}

/** Inserts the key; false when the organisation has a key of that id already. */
export async function insertGpgKey(db: Db, k: Omit<GpgKey, "namespace">): Promise<boolean> {
  const res = await db
    .prepare(
      `INSERT INTO registry_gpg_keys (id, organization_id, key_id, ascii_armor, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT DO NOTHING`,
    )
    .bind(k.id, k.organizationId, k.keyId, k.asciiArmor, k.createdAt, k.updatedAt)
    .run();
  return res.meta.changes > 0;
}

/** Moves a key to another organisation's namespace; false when that one has the key already (or the key is gone). */
export async function moveGpgKey(db: Db, id: string, organizationId: string, at: string): Promise<boolean> {
  const res = await db
    .prepare(
      `UPDATE registry_gpg_keys SET organization_id = ?1, updated_at = ?2 WHERE id = ?3
         AND NOT EXISTS (SELECT 1 FROM registry_gpg_keys o WHERE o.organization_id = ?1 AND o.key_id = registry_gpg_keys.key_id AND o.id <> ?3)`,
    )
    .bind(organizationId, at, id)
    .run();
  return res.meta.changes > 0;
}

export async function deleteGpgKey(db: Db, id: string): Promise<boolean> {
  return (await db.prepare("DELETE FROM registry_gpg_keys WHERE id = ?").bind(id).run()).meta.changes > 0;
}
