/**
 * D1 statements for project tag bindings (`project_tag_bindings`, the source of truth read at
 * request time by workspace effective bindings and list filters). Writes are one D1 batch (one
 * transaction); the 10-per-project limit is enforced by a trigger (migration 0005), so concurrent
 * PATCHes can never together exceed it.
 */
import type { Db } from "../caller";
import { newId } from "../ids";

/** A project_tag_bindings row (the workspace list's include reads them too). */
export interface ProjectBindingRow {
  project_id: string;
  key: string;
  value: string;
  id: string;
  position: number;
  created_at: string;
}

/** A project's tag binding ("" value: key-only). */
export interface ProjectBinding {
  id: string;
  projectId: string;
  key: string;
  value: string;
  position: number;
  createdAt: string;
}

export function toProjectBinding(row: ProjectBindingRow): ProjectBinding {
  return { id: row.id, projectId: row.project_id, key: row.key, value: row.value, position: row.position, createdAt: row.created_at };
}

/** The trigger's message (migration 0005); a batch failing with it went over the limit. */
export const PROJECT_LIMIT_MARKER = "project_tag_bindings_limit";

export async function projectBindings(db: Db, projectId: string): Promise<ProjectBinding[]> {
  const rows = await db.prepare("SELECT * FROM project_tag_bindings WHERE project_id = ? ORDER BY position, key").bind(projectId).all<ProjectBindingRow>();
  return rows.results.map(toProjectBinding);
}

/** Bindings of several projects at once (for effective bindings of many workspaces). */
export async function projectBindingsOf(db: Db, projectIds: string[]): Promise<Map<string, ProjectBinding[]>> {
  const out = new Map<string, ProjectBinding[]>();
  if (projectIds.length === 0) return out;
  const rows = await db
    .prepare("SELECT * FROM project_tag_bindings WHERE project_id IN (SELECT value FROM json_each(?)) ORDER BY position, key")
    .bind(JSON.stringify([...new Set(projectIds)]))
    .all<ProjectBindingRow>();
  for (const r of rows.results) {
    const list = out.get(r.project_id) ?? [];
    list.push(toProjectBinding(r));
    out.set(r.project_id, list);
  }
  return out;
}

function upsertStatement(db: Db, projectId: string, key: string, value: string, now: string): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO project_tag_bindings (project_id, key, value, id, position, created_at)
       VALUES (?, ?, ?, ?, (SELECT coalesce(max(position) + 1, 0) FROM project_tag_bindings WHERE project_id = ?), ?)
       ON CONFLICT(project_id, key) DO UPDATE SET value = excluded.value`,
    )
    .bind(projectId, key, value, newId("tb"), projectId, now);
}

/**
 * Adds or updates bindings by key, never removing (PATCH /projects/:id/tag-bindings). Throws the
 * trigger's error (see `isProjectLimitError`) when the project would have more than 10.
 */
function upsertProjectBindingsStatements(db: Db, projectId: string, bindings: Array<{ key: string; value: string }>, now: string): D1PreparedStatement[] {
  return bindings.map((b) => upsertStatement(db, projectId, b.key, b.value, now));
}

/**
 * Replaces the project's whole set (project create/update `relationships.tag-bindings`; [] clears
 * it). Keys kept keep their id and created-at; order follows the request. For the projects module.
 */
export function replaceProjectBindingsStatements(
  db: Db,
  projectId: string,
  bindings: Array<{ key: string; value: string }>,
  now: string,
): D1PreparedStatement[] {
  const keys = JSON.stringify(bindings.map((b) => b.key));
  return [
    db.prepare("DELETE FROM project_tag_bindings WHERE project_id = ? AND key NOT IN (SELECT value FROM json_each(?))").bind(projectId, keys),
    ...bindings.map((b, i) =>
      db
        .prepare(
          `INSERT INTO project_tag_bindings (project_id, key, value, id, position, created_at) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT(project_id, key) DO UPDATE SET value = excluded.value, position = excluded.position`,
        )
        .bind(projectId, b.key, b.value, newId("tb"), i, now),
    ),
  ];
}

/**
 * Adds or updates a project's bindings by key in one batch, one transaction; the trigger of migration
 * 0005 makes the limit hold under races (its error is `isProjectLimitError`).
 */
export async function upsertProjectBindings(db: Db, projectId: string, bindings: Array<{ key: string; value: string }>, now: string): Promise<void> {
  const stmts = upsertProjectBindingsStatements(db, projectId, bindings, now);
  if (stmts.length) await db.batch(stmts); // an empty list changes nothing (D1 refuses an empty batch)
}

export function isProjectLimitError(err: unknown): boolean {
  return String(err instanceof Error ? err.message : err).includes(PROJECT_LIMIT_MARKER);
}
