/** D1 statements for reserved tag keys (migration 0017), and the one query that enforces `disable-overrides`. */
import type { Db } from "../caller";
import { pageWithTotal } from "../platform/paging";

interface ReservedTagKeyRow {
  id: string;
  organization_id: string;
  key: string;
  disable_overrides: number;
  created_at: string;
  updated_at: string;
}

export interface ReservedTagKey {
  id: string;
  organizationId: string;
  key: string;
  /** Workspaces may not bind the key where their project binds it. */
  disableOverrides: boolean;
  createdAt: string;
  updatedAt: string;
}

function toReservedTagKey(row: ReservedTagKeyRow): ReservedTagKey {
  return {
    id: row.id,
    organizationId: row.organization_id,
    key: row.key,
    disableOverrides: row.disable_overrides === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** What a PATCH may change (`updatedAt` always). */
export interface ReservedTagKeyChanges {
  key?: string;
  disableOverrides?: boolean;
  updatedAt: string;
}

export async function findReservedTagKey(db: Db, id: string): Promise<ReservedTagKey | null> {
  const row = await db.prepare("SELECT * FROM reserved_tag_keys WHERE id = ?").bind(id).first<ReservedTagKeyRow>();
  return row ? toReservedTagKey(row) : null;
}

/** One page of the organisation's reserved keys in the order they were added (rowid), and how many it has (one batch). */
export async function listReservedTagKeys(db: Db, organizationId: string, limit: number, offset: number): Promise<{ keys: ReservedTagKey[]; total: number }> {
  const { rows, total } = await pageWithTotal<ReservedTagKeyRow>(
    db,
    db.prepare("SELECT * FROM reserved_tag_keys WHERE organization_id = ? ORDER BY rowid LIMIT ? OFFSET ?").bind(organizationId, limit, offset),
    db.prepare("SELECT count(*) AS n FROM reserved_tag_keys WHERE organization_id = ?").bind(organizationId),
  );
  return { keys: rows.map(toReservedTagKey), total };
}

/** Inserts the row; throws D1's UNIQUE error when the organisation already reserves the key. */
export async function insertReservedTagKey(db: Db, k: ReservedTagKey): Promise<void> {
  await db
    .prepare("INSERT INTO reserved_tag_keys (id, organization_id, key, disable_overrides, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)")
    .bind(k.id, k.organizationId, k.key, k.disableOverrides ? 1 : 0, k.createdAt, k.updatedAt)
    .run();
}

/** Writes only the given fields; false when the row is gone. Throws D1's UNIQUE error on a taken key. */
export async function updateReservedTagKey(db: Db, id: string, changes: ReservedTagKeyChanges): Promise<boolean> {
  const columns: Array<[string, unknown]> = [
    ["key", changes.key],
    ["disable_overrides", changes.disableOverrides === undefined ? undefined : changes.disableOverrides ? 1 : 0],
    ["updated_at", changes.updatedAt],
  ];
  const sets = columns.filter(([, v]) => v !== undefined);
  const res = await db
    .prepare(`UPDATE reserved_tag_keys SET ${sets.map(([k]) => `${k} = ?`).join(", ")} WHERE id = ?`)
    .bind(...sets.map(([, v]) => v), id)
    .run();
  return res.meta.changes > 0;
}

/** False when nothing was deleted. */
export async function deleteReservedTagKey(db: Db, id: string): Promise<boolean> {
  const res = await db.prepare("DELETE FROM reserved_tag_keys WHERE id = ?").bind(id).run();
  return res.meta.changes > 0;
}

/**
 * Of `keys`, those a workspace in the project may not bind: the project binds them and the organisation reserves
 * them with overrides disabled.
 */
export async function lockedProjectKeys(db: Db, organizationId: string, projectId: string, keys: string[]): Promise<Set<string>> {
  const rows = await db
    .prepare(
      `SELECT b.key FROM project_tag_bindings b
         JOIN reserved_tag_keys r ON r.organization_id = ? AND r.key = b.key AND r.disable_overrides = 1
         WHERE b.project_id = ? AND b.key IN (SELECT value FROM json_each(?))`,
    )
    .bind(organizationId, projectId, JSON.stringify([...new Set(keys)]))
    .all<{ key: string }>();
  return new Set(rows.results.map((r) => r.key));
}
