/** Repository: the workspace routes' own D1 lookups (references, consumers) beside workspaces.index.ts. */
import type { Db } from "../caller";
import type { WorkspaceRecord } from "./workspace.types";

/** Which of these SSH key ids still exist (deleted keys are unassigned at read time). */
export async function liveSshKeyIds(db: Db, ids: string[]): Promise<Set<string>> {
  const rows = await db.prepare("SELECT id FROM ssh_keys WHERE id IN (SELECT value FROM json_each(?))").bind(JSON.stringify(ids)).all<{ id: string }>();
  return new Set(rows.results.map((k) => k.id));
}

export async function agentPoolExists(db: Db, id: string, organizationId: string): Promise<boolean> {
  return !!(await db.prepare("SELECT id FROM agent_pools WHERE id = ? AND organization_id = ?").bind(id, organizationId).first());
}

export async function oauthTokenExists(db: Db, id: string, organizationId: string): Promise<boolean> {
  return !!(await db.prepare("SELECT id FROM oauth_tokens WHERE id = ? AND organization_id = ?").bind(id, organizationId).first());
}

export async function projectExists(db: Db, id: string, organizationId: string): Promise<boolean> {
  return !!(await db.prepare("SELECT id FROM projects WHERE id = ? AND organization_id = ?").bind(id, organizationId).first());
}

export async function sshKeyExists(db: Db, id: string, organizationId: string): Promise<boolean> {
  return !!(await db.prepare("SELECT id FROM ssh_keys WHERE id = ? AND organization_id = ?").bind(id, organizationId).first());
}

/** Index documents of the given workspaces of one organisation (missing ids are simply absent). */
export async function workspaceDocsByIds(db: Db, organizationId: string, ids: string[]): Promise<Array<{ doc: string }>> {
  const rows = await db
    .prepare("SELECT doc FROM workspaces WHERE organization_id = ? AND id IN (SELECT value FROM json_each(?))")
    .bind(organizationId, JSON.stringify(ids))
    .all<{ doc: string }>();
  return rows.results;
}

/** As workspaceDocsByIds, by name (case-insensitively, as the index's names compare). */
export async function workspaceDocsByNames(db: Db, organizationId: string, names: string[]): Promise<Array<{ doc: string }>> {
  const rows = await db
    .prepare("SELECT doc FROM workspaces WHERE organization_id = ? AND name IN (SELECT value FROM json_each(?))")
    .bind(organizationId, JSON.stringify(names))
    .all<{ doc: string }>();
  return rows.results;
}

/** Which workspaces may read a workspace's state: a SQL condition on `workspaces w` with its bindings. */
export interface ConsumerScope {
  sql: string;
  binds: unknown[];
}

export function consumerScope(record: WorkspaceRecord): ConsumerScope {
  const s = record.settings;
  // Global sharing: every other workspace of the organisation; project sharing: of the same project;
  // otherwise the explicit list (deleted workspaces drop out here, at read time).
  if (s["global-remote-state"]) return { sql: "w.organization_id = ? AND w.id <> ?", binds: [record.organizationId, record.id] };
  if (s["project-remote-state"])
    return { sql: "w.organization_id = ? AND w.project_id = ? AND w.id <> ?", binds: [record.organizationId, record.projectId, record.id] };
  return {
    sql: "w.organization_id = ? AND w.id IN (SELECT value FROM json_each(?))",
    binds: [record.organizationId, JSON.stringify(record.remoteStateConsumers)],
  };
}

/** One page of consumers and their count, in one batch. */
export async function consumerPage(db: Db, where: ConsumerScope, limit: number, offset: number): Promise<{ docs: Array<{ doc: string }>; total: number }> {
  const [count, pageRows] = await db.batch([
    db.prepare(`SELECT count(*) AS n FROM workspaces w WHERE ${where.sql}`).bind(...where.binds),
    db.prepare(`SELECT w.doc FROM workspaces w WHERE ${where.sql} ORDER BY w.created_at, w.id LIMIT ? OFFSET ?`).bind(...where.binds, limit, offset),
  ]);
  return { docs: (pageRows?.results ?? []) as Array<{ doc: string }>, total: (count?.results?.[0] as { n: number } | undefined)?.n ?? 0 };
}

/** Every consumer, in list order (for callers whose visibility is decided per workspace). */
export async function allConsumers(db: Db, where: ConsumerScope): Promise<Array<{ doc: string }>> {
  const rows = await db
    .prepare(`SELECT w.doc FROM workspaces w WHERE ${where.sql} ORDER BY w.created_at, w.id`)
    .bind(...where.binds)
    .all<{ doc: string }>();
  return rows.results;
}
