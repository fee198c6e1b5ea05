/**
 * D1 statements for organisation (flat) tags.
 *
 * Race-free design: the `tags` table is a registry of (organisation, name) → id. Whether
 * an organisation tag *exists*, and its `instance-count`, are derived at read time from
 * `workspace_tags` (the rows each workspace's Durable Object writes, idempotently, through its
 * outbox; a flat-tag row carries its `tag_id`; binding rows are never organisation tags):
 * a tag exists while at least one workspace carries it as a flat tag. So two concurrent creators of one name get the one id D1's unique index decides; counts are
 * never incremented, only counted; and the tag leaves the organisation's list exactly when the
 * last carrier's index write lands. Nothing deletes registry rows except an explicit organisation
 * tag delete (DELETE /organizations/:org/tags), and that is one batch with no fan-out: it moves the
 * ids to `deleted_tags`, a flat tag carrying such an id is *dead* — every read ignores it
 * (`deadTagIds`, `LIVE_ROW`) and its workspace purges it on its next tag change. An add racing a
 * delete therefore ends as "add, then delete", never as an attachment to a deleted tag; a name
 * added again later gets a new id.
 */
import type { Db } from "../caller";
import { pageWithTotal } from "../platform/paging";
import { ApiError } from "../errors";
import { newId } from "../ids";
import { appendTo, textMatchSql } from "../platform/text-match";

interface TagRow {
  id: string;
  name: string;
  created_at: string;
  instance_count: number;
}

/** An organisation tag with how many workspaces carry it. */
export interface Tag {
  id: string;
  name: string;
  createdAt: string;
  instanceCount: number;
}

function toTag(row: TagRow): Tag {
  return { id: row.id, name: row.name, createdAt: row.created_at, instanceCount: row.instance_count };
}

/** Carriers of a tag: workspaces holding it as a flat tag. */
const CARRIERS = "SELECT count(*) FROM workspace_tags wt WHERE wt.tag_id = t.id AND wt.kind = 'flat'";

/** A workspace_tags row (alias `wt`) that counts: a binding, or a flat tag whose organisation tag was not deleted. */
export const LIVE_ROW = "(wt.kind = 'binding' OR NOT EXISTS (SELECT 1 FROM deleted_tags d WHERE d.id = wt.tag_id))";

/** Registry ids for these names, creating the missing ones (one id per name, decided by D1). */
export async function ensureTagIds(db: Db, organizationId: string, names: string[], now: string): Promise<Map<string, string>> {
  const unique = [...new Set(names)];
  if (unique.length === 0) return new Map();
  const fresh = JSON.stringify(unique.map((name) => ({ id: newId("tag"), name })));
  const [, sel] = await db.batch([
    db
      .prepare(
        `INSERT INTO tags (id, organization_id, name, created_at)
         SELECT json_extract(j.value, '$.id'), ?, json_extract(j.value, '$.name'), ? FROM json_each(?) j WHERE true
         ON CONFLICT DO NOTHING`,
      )
      .bind(organizationId, now, fresh),
    db.prepare("SELECT id, name FROM tags WHERE organization_id = ? AND name IN (SELECT value FROM json_each(?))").bind(organizationId, JSON.stringify(unique)),
  ]);
  const rows = (sel?.results ?? []) as Array<{ id: string; name: string }>;
  const out = new Map(rows.map((r) => [r.name, r.id]));
  if (out.size !== unique.length) throw new Error("tag registry: missing rows after insert");
  return out;
}

/**
 * Organisation tags by id. `visible`: only tags that currently exist (carried by a workspace) —
 * what adding by id needs; otherwise any id the organisation ever had (removal is idempotent).
 */
export async function tagsById(db: Db, organizationId: string, ids: string[], visible: boolean): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .prepare(
      `SELECT t.id, t.name FROM tags t WHERE t.organization_id = ? AND t.id IN (SELECT value FROM json_each(?))
       ${visible ? `AND (${CARRIERS}) > 0` : ""}`,
    )
    .bind(organizationId, JSON.stringify(ids))
    .all<{ id: string; name: string }>();
  return new Map(rows.results.map((r) => [r.id, r.name]));
}

/** One tag by id, in any organisation, with its instance count. */
export async function tagById(db: Db, id: string): Promise<(Tag & { organizationId: string }) | null> {
  const row = await db
    .prepare(`SELECT t.id, t.name, t.created_at, t.organization_id, (${CARRIERS}) AS instance_count FROM tags t WHERE t.id = ?`)
    .bind(id)
    .first<TagRow & { organization_id: string }>();
  return row ? { ...toTag(row), organizationId: row.organization_id } : null;
}

/** Registry rows (with counts) for these tag ids; ids missing from the result are dead. */
export async function tagRowsById(db: Db, ids: string[]): Promise<Map<string, Tag>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .prepare(`SELECT t.id, t.name, t.created_at, (${CARRIERS}) AS instance_count FROM tags t WHERE t.id IN (SELECT value FROM json_each(?))`)
    .bind(JSON.stringify(ids))
    .all<TagRow>();
  return new Map(rows.results.map((r) => [r.id, toTag(r)]));
}

/** Ids of the organisation's deleted tags (tombstones: usually none, one small indexed read). */
export async function deadTagIds(db: Db, organizationId: string): Promise<Set<string>> {
  const rows = await db.prepare("SELECT id FROM deleted_tags WHERE organization_id = ?").bind(organizationId).all<{ id: string }>();
  return new Set(rows.results.map((r) => r.id));
}

/** Deletes organisation tags in one batch: every workspace entry carrying them is dead at once. */
export async function deleteTags(db: Db, organizationId: string, ids: string[], now: string): Promise<void> {
  const list = JSON.stringify(ids);
  await db.batch([
    db
      .prepare(
        `INSERT INTO deleted_tags (id, organization_id, name, deleted_at)
         SELECT id, organization_id, name, ? FROM tags WHERE organization_id = ? AND id IN (SELECT value FROM json_each(?))
         ON CONFLICT DO NOTHING`,
      )
      .bind(now, organizationId, list),
    db.prepare("DELETE FROM tags WHERE organization_id = ? AND id IN (SELECT value FROM json_each(?))").bind(organizationId, list),
  ]);
}

/** The organisation's tags (those carried by at least one workspace), by name, one page. */
export async function listOrganizationTags(
  db: Db,
  organizationId: string,
  opts: { q?: string; excludeWorkspaceId?: string; limit: number; offset: number },
): Promise<{ tags: Tag[]; total: number }> {
  const { rows, total } = await organizationTagRows(db, organizationId, opts);
  return { tags: rows.map(toTag), total };
}

async function organizationTagRows(
  db: Db,
  organizationId: string,
  opts: { q?: string; excludeWorkspaceId?: string; limit: number; offset: number },
): Promise<{ rows: TagRow[]; total: number }> {
  const ex = opts.excludeWorkspaceId ?? null;
  const binds: unknown[] = [organizationId];
  const named = opts.q ? textMatchSql("t.name", opts.q, "contains", appendTo(binds)) : "1";
  binds.push(ex, ex);
  const grouped = `SELECT t.id, t.name, t.created_at, count(*) AS instance_count
    FROM tags t JOIN workspace_tags wt ON wt.tag_id = t.id AND wt.kind = 'flat'
    WHERE t.organization_id = ?
      AND ${named}
      AND (? IS NULL OR t.id NOT IN (SELECT tag_id FROM workspace_tags WHERE workspace_id = ? AND tag_id IS NOT NULL))
    GROUP BY t.id`;
  return pageWithTotal<TagRow>(
    db,
    db.prepare(`${grouped} ORDER BY t.name LIMIT ? OFFSET ?`).bind(...binds, opts.limit, opts.offset),
    db.prepare(`SELECT count(*) AS n FROM (${grouped})`).bind(...binds),
  );
}

export function tagNotFound(pointer: string, id: string): ApiError {
  return ApiError.of("not_found", { detail: `Tag not found: ${id}`, pointer });
}
