/**
 * D1 for workspaces: the index the DO writes through its outbox (`indexUpsertStatements`, `indexDeleteStatements`),
 * name claims, and the Worker's reads of it (by name, references, consumers).
 */
import {
  teamSubqueryIn,
  toAccessTeam,
  toGrant,
  toProjectDefaults,
  type AccessTeam,
  type AccessTeamRow,
  type Grant,
  type GrantRow,
  type ProjectDefaults,
  type ProjectDefaultsRow,
} from "../auth/access.d1";
import type { Principal } from "../auth/principal";
import type { Db } from "../caller";
import { pageWithTotal } from "../platform/paging";
import { JOINED_ORGANIZATION_COLUMNS, orgIdSql, toOrganization, type Organization, type OrganizationRow, type OrgRef } from "../auth/organization.d1";
import { upgradeRecord } from "./workspace.record";
import type { Defaults } from "./workspace.rules";
import type { WorkspaceRecord } from "./workspace.types";

/**
 * Statements that make D1's index row equal to this record (version-guarded, idempotent): the row, its tag rows and
 * its name's claim. `alreadyIndexed`: the tag rows (`tagRowsJson`) and
 * the name this same object last wrote to D1, when it knows them: if the record has the same, those statements are
 * left out (a lock or an attribute change rewrites the one row only).
 */
export function indexUpsertStatements(
  db: D1Database | D1DatabaseSession,
  r: WorkspaceRecord,
  alreadyIndexed?: { tags: string; name: string } | null,
): D1PreparedStatement[] {
  const doc = JSON.stringify(r);
  const tags = tagRowsJson(r); // both tag sets: flat tags and bindings
  const unchanged = alreadyIndexed?.tags === tags && alreadyIndexed.name === r.name;
  // The row is written only while the organisation it was created in still exists (by its id: a rename is no
  // concern of the index, which names the organisation by id alone, migration 0016).
  const sameVersion = "(SELECT version FROM workspaces WHERE id = ?) = ?";
  const row = db
    .prepare(
      `INSERT INTO workspaces (id, organization_id, name, project_id, version, created_at, updated_at,
           latest_change_at, current_run_status, current_run_created_at, ssh_key_id, agent_pool_id, locked, doc)
         SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
         WHERE EXISTS (SELECT 1 FROM organizations WHERE external_id = ?)
         ON CONFLICT(id) DO UPDATE SET organization_id = excluded.organization_id, name = excluded.name,
           project_id = excluded.project_id, version = excluded.version, updated_at = excluded.updated_at,
           latest_change_at = excluded.latest_change_at, current_run_status = excluded.current_run_status,
           current_run_created_at = excluded.current_run_created_at, ssh_key_id = excluded.ssh_key_id,
           agent_pool_id = excluded.agent_pool_id, locked = excluded.locked, doc = excluded.doc
         WHERE excluded.version > workspaces.version`,
    )
    .bind(
      r.id,
      r.organizationId,
      r.name,
      r.projectId,
      r.version,
      r.createdAt,
      r.updatedAt,
      r.latestChangeAt,
      r.currentRun?.status ?? null,
      r.currentRun?.createdAt ?? null,
      r.sshKeyId,
      r.settings["agent-pool-id"],
      r.lock.locked ? 1 : 0,
      doc,
      r.organizationId,
    );
  if (unchanged) return [row];
  return [
    row,
    db.prepare(`DELETE FROM workspace_tags WHERE workspace_id = ? AND ${sameVersion}`).bind(r.id, r.id, r.version),
    db
      .prepare(
        `INSERT INTO workspace_tags (workspace_id, organization_id, kind, key, value, position, tag_id)
         SELECT ?, ?, json_extract(j.value, '$.kind'), json_extract(j.value, '$.key'), json_extract(j.value, '$.value'), j.key, json_extract(j.value, '$.tagId')
         FROM json_each(?) j WHERE ${sameVersion}`,
      )
      .bind(r.id, r.organizationId, tags, r.id, r.version),
    // The name lease becomes permanent; names the workspace no longer has are released.
    db
      .prepare(`UPDATE workspace_names SET committed = 1 WHERE organization_id = ? AND name = ? AND workspace_id = ? AND ${sameVersion}`)
      .bind(r.organizationId, r.name, r.id, r.id, r.version),
    db.prepare(`DELETE FROM workspace_names WHERE workspace_id = ? AND name <> ? AND ${sameVersion}`).bind(r.id, r.name, r.id, r.version),
    // Organisation tags are not deleted here: their existence and instance-count are derived from
    // workspace_tags (flat rows carry their tag_id) at read time (src/tags/tags.d1.ts).
  ];
}

/** The record's tag rows as the index statements bind them (and as the DO remembers what it last indexed). */
export function tagRowsJson(r: WorkspaceRecord): string {
  return JSON.stringify(tagRowsOf(r));
}

/** A workspace_tags row as the index holds it. */
export interface TagRow {
  kind: "flat" | "binding";
  key: string;
  value: string | null;
  tagId: string | null;
}

/**
 * The workspace_tags rows of a record: both tag sets, one row each (migration 0010) —
 * flat tags with their organisation tag id and a NULL value, bindings with their value ("" when
 * key-only) and no tag id. Position is the index in this list.
 */
export function tagRowsOf(r: WorkspaceRecord): TagRow[] {
  const sets = upgradeRecord(r);
  return [
    ...sets.tags.map((t): TagRow => ({ kind: "flat", key: t.key, value: null, tagId: t.tagId })),
    ...sets.tagBindings.map((b): TagRow => ({ kind: "binding", key: b.key, value: b.value, tagId: null })),
  ];
}

/** For the consistency checker: how the index's tag rows differ from the record's (null when they agree). */
export async function tagRowsDifference(db: D1Database | D1DatabaseSession, r: WorkspaceRecord): Promise<string | null> {
  const rows = await db
    .prepare("SELECT kind, key, value, tag_id AS tagId FROM workspace_tags WHERE workspace_id = ? ORDER BY position")
    .bind(r.id)
    .all<TagRow>();
  const line = (t: TagRow) => JSON.stringify([t.kind, t.key, t.value, t.tagId]);
  const have = rows.results.map(line);
  const want = tagRowsOf(r).map(line);
  if (have.length === want.length && have.every((h, i) => h === want[i])) return null;
  return `index tag rows ${have.join(" ")} differ from the record's ${want.join(" ")}`;
}

/** Statements that remove a deleted workspace from the index and free its name. */
export function indexDeleteStatements(db: D1Database | D1DatabaseSession, r: WorkspaceRecord): D1PreparedStatement[] {
  return [
    db.prepare("DELETE FROM workspaces WHERE id = ?").bind(r.id),
    db.prepare("DELETE FROM workspace_tags WHERE workspace_id = ?").bind(r.id),
    db.prepare("DELETE FROM workspace_names WHERE workspace_id = ?").bind(r.id),
    db.prepare("DELETE FROM team_workspaces WHERE workspace_id = ?").bind(r.id),
  ];
}

/** A doc written with one tag set or naming its organisation by name reads as the DO's migrations rewrite it. */
export function parseDoc(row: { doc: string }): WorkspaceRecord {
  return upgradeRecord(JSON.parse(row.doc) as WorkspaceRecord);
}

/** Name lookup (case-insensitive, as uniqueness is), in the organisation as a request names it (one statement). */
export function selectByName(db: D1Database | D1DatabaseSession, organization: OrgRef, name: string): D1PreparedStatement {
  const org = orgIdSql(organization);
  return db.prepare(`SELECT id, version, doc FROM workspaces WHERE organization_id = ${org.sql} AND name = ?`).bind(...org.binds, name);
}

/** The id of the workspace with this name (case-insensitive) in the organisation, or null. */
export async function workspaceIdByName(db: Db, organization: OrgRef, name: string): Promise<string | null> {
  return (await selectByName(db, organization, name).first<{ id: string }>())?.id ?? null;
}

/** How long a name claim may stay uncommitted before another request may reclaim it. */
export const NAME_LEASE_MS = 30_000;

export type ClaimOutcome = { claimed: true } | { claimed: false; holder: string; committed: boolean; claimedAt: number };

/** Claims (organisation id, name) for a workspace id. Case-insensitive, decided by D1's primary key. */
export async function claimName(db: D1Database, organizationId: string, name: string, workspaceId: string, now: number): Promise<ClaimOutcome> {
  const res = await db
    .prepare(
      `INSERT INTO workspace_names (organization_id, name, workspace_id, claimed_at, committed) VALUES (?, ?, ?, ?, 0)
       ON CONFLICT(organization_id, name) DO NOTHING`,
    )
    .bind(organizationId, name, workspaceId, now)
    .run();
  if (res.meta.changes === 1) return { claimed: true };
  const row = await db
    .prepare("SELECT workspace_id, committed, claimed_at FROM workspace_names WHERE organization_id = ? AND name = ?")
    .bind(organizationId, name)
    .first<{ workspace_id: string; committed: number; claimed_at: number }>();
  if (!row) return claimName(db, organizationId, name, workspaceId, now); // released meanwhile
  if (row.workspace_id === workspaceId) return { claimed: true };
  return { claimed: false, holder: row.workspace_id, committed: row.committed === 1, claimedAt: row.claimed_at };
}

/** Drops an uncommitted claim (the DO refused the create or rename, or its holder released it). */
export async function releaseClaim(db: D1Database, organizationId: string, name: string, workspaceId: string): Promise<void> {
  await db
    .prepare("DELETE FROM workspace_names WHERE organization_id = ? AND name = ? AND workspace_id = ? AND committed = 0")
    .bind(organizationId, name, workspaceId)
    .run();
}

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
  const { rows, total } = await pageWithTotal<{ doc: string }>(
    db,
    db.prepare(`SELECT w.doc FROM workspaces w WHERE ${where.sql} ORDER BY w.created_at, w.id LIMIT ? OFFSET ?`).bind(...where.binds, limit, offset),
    db.prepare(`SELECT count(*) AS n FROM workspaces w WHERE ${where.sql}`).bind(...where.binds),
  );
  return { docs: rows, total };
}

/** Every consumer, in list order (for callers whose visibility is decided per workspace). */
export async function allConsumers(db: Db, where: ConsumerScope): Promise<Array<{ doc: string }>> {
  const rows = await db
    .prepare(`SELECT w.doc FROM workspaces w WHERE ${where.sql} ORDER BY w.created_at, w.id`)
    .bind(...where.binds)
    .all<{ doc: string }>();
  return rows.results;
}

/** Everything needed to authorise and serialise one workspace, read from its index row. */
export interface WorkspaceAccessRows {
  /** The workspace as its index row holds it (null: no such workspace). */
  record: WorkspaceRecord | null;
  org: Organization | null;
  teams: AccessTeam[];
  grants: { workspaces: Grant[]; projects: Grant[] };
  projects: ProjectDefaults[];
  deadTagIds: string[];
  liveSshKeyIds: string[];
}

/** The one row `workspaceAccessRows` reads: the organisation's columns and the rest under `acc_` names. */
type AccessRow = OrganizationRow & {
  acc_doc: string;
  acc_teams: string;
  acc_ws_grants: string;
  acc_prj_grants: string;
  acc_project: string | null;
  acc_dead_tags: string;
  acc_ssh_key: string | null;
};

/**
 * One workspace (by id, or by organisation and name) with the caller's access to it, in ONE statement over its index
 * row: the row's doc, its organisation, the caller's teams there, their grants on the workspace and its project, the
 * project's defaults, the organisation's deleted tag ids and whether its SSH key still exists. Lists come back as JSON
 * arrays, so the statement costs one result set rather than one per part (each statement of a batch has a fixed cost
 * in the D1 client and server).
 */
export async function workspaceAccessRows(db: Db, principal: Principal, ref: string | { organization: string; name: string }): Promise<WorkspaceAccessRows> {
  // By name: the organisation's name is resolved to its id in the same statement (one snapshot).
  const where = typeof ref === "string" ? "w.id = ?" : "w.organization_id = (SELECT o2.external_id FROM organizations o2 WHERE o2.name = ?) AND w.name = ?";
  const binds = typeof ref === "string" ? [ref] : [ref.organization, ref.name];
  const teams = teamSubqueryIn(principal, "w.organization_id", []);
  const grants = (table: string, column: string, target: string) =>
    `(SELECT json_group_array(json_object('team_id', g.team_id, 'target_id', g.${column}, 'access', g.access, 'perms', g.perms))
       FROM ${table} g WHERE g.${column} = ${target} AND g.team_id IN (${teams.sql}))`;
  const row = await db
    .prepare(
      `SELECT w.doc AS acc_doc, ${JOINED_ORGANIZATION_COLUMNS},
         (SELECT json_group_array(json_object('id', t.id, 'is_owners', t.is_owners, 'organization_access', t.organization_access))
            FROM teams t WHERE t.id IN (${teams.sql})) AS acc_teams,
         ${grants("team_workspaces", "workspace_id", "w.id")} AS acc_ws_grants,
         ${grants("team_projects", "project_id", "w.project_id")} AS acc_prj_grants,
         (SELECT json_object('id', p.id, 'organization_id', p.organization_id, 'name', p.name,
            'default_execution_mode', p.default_execution_mode, 'default_agent_pool_id', p.default_agent_pool_id)
            FROM projects p WHERE p.id = w.project_id) AS acc_project,
         (SELECT json_group_array(d.id) FROM deleted_tags d WHERE d.organization_id = w.organization_id) AS acc_dead_tags,
         (SELECT k.id FROM ssh_keys k WHERE k.id = w.ssh_key_id) AS acc_ssh_key
       FROM workspaces w LEFT JOIN organizations ON organizations.external_id = w.organization_id
       WHERE ${where}`,
    )
    .bind(...teams.binds, ...teams.binds, ...teams.binds, ...binds)
    .first<AccessRow>();
  if (!row) return { record: null, org: null, teams: [], grants: { workspaces: [], projects: [] }, projects: [], deadTagIds: [], liveSshKeyIds: [] };
  return {
    record: parseDoc({ doc: row.acc_doc }),
    org: row.external_id ? toOrganization(row) : null,
    teams: (JSON.parse(row.acc_teams) as AccessTeamRow[]).map(toAccessTeam),
    grants: {
      workspaces: (JSON.parse(row.acc_ws_grants) as GrantRow[]).map(toGrant),
      projects: (JSON.parse(row.acc_prj_grants) as GrantRow[]).map(toGrant),
    },
    projects: row.acc_project ? [toProjectDefaults(JSON.parse(row.acc_project) as ProjectDefaultsRow)] : [],
    deadTagIds: JSON.parse(row.acc_dead_tags) as string[],
    liveSshKeyIds: row.acc_ssh_key ? [row.acc_ssh_key] : [],
  };
}

/**
 * The execution defaults a workspace inherits while it has no mode of its own: its project's, else its
 * organisation's (the object's automatic destroy reads them); null when the organisation is gone.
 */
export async function inheritedExecution(db: Db, organizationId: string, projectId: string): Promise<Defaults | null> {
  const row = await db
    .prepare(
      `SELECT o.default_execution_mode AS om, o.default_agent_pool_id AS op, p.default_execution_mode AS pm, p.default_agent_pool_id AS pp
       FROM organizations o LEFT JOIN projects p ON p.id = ? AND p.organization_id = o.external_id WHERE o.external_id = ?`,
    )
    .bind(projectId, organizationId)
    .first<{ om: string; op: string | null; pm: string | null; pp: string | null }>();
  if (!row) return null;
  return row.pm
    ? { executionMode: row.pm as Defaults["executionMode"], agentPoolId: row.pp }
    : { executionMode: row.om as Defaults["executionMode"], agentPoolId: row.op };
}
