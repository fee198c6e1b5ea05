/**
 * D1 statements for organisations: the single-row reads, creation with what comes with it, the list, the update (and
 * rename) and the cascade delete. Every other table names an organisation by its immutable id (`external_id`,
 * migration 0016), so the name is written here alone.
 */
import {
  ORGANIZATION_COLUMNS,
  orgWhere,
  toOrganization,
  type Organization,
  type OrganizationRow,
  type OrgRef,
  type Subscription,
} from "../auth/organization.d1";
import type { Db } from "../caller";
import type { Page } from "../jsonapi/document";
import { appendTo, textMatchSql } from "../platform/text-match";

function selectOrganization(db: D1Database | D1DatabaseSession, ref: OrgRef): D1PreparedStatement {
  const where = orgWhere(ref);
  return db.prepare(`SELECT ${ORGANIZATION_COLUMNS} FROM organizations WHERE ${where.sql}`).bind(...where.binds);
}

export async function findOrganization(db: D1Database | D1DatabaseSession, ref: OrgRef): Promise<Organization | null> {
  const row = await selectOrganization(db, ref).first<OrganizationRow>();
  return row ? toOrganization(row) : null;
}

export interface NewOrganization {
  name: string;
  externalId: string;
  email: string;
  createdAt: string;
  attrs: Record<string, unknown>;
  defaultExecutionMode: string;
  allowForceDeleteWorkspaces: boolean;
  defaultProjectId: string;
}

/** Inserts the organisation row alone; false when the name is taken. */
export async function insertOrganization(db: Db, o: NewOrganization): Promise<boolean> {
  const insert = await db
    .prepare(
      `INSERT INTO organizations (name, external_id, email, created_at, attrs, default_execution_mode, allow_force_delete_workspaces, default_project_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(name) DO NOTHING`,
    )
    .bind(o.name, o.externalId, o.email, o.createdAt, JSON.stringify(o.attrs), o.defaultExecutionMode, o.allowForceDeleteWorkspaces ? 1 : 0, o.defaultProjectId)
    .run();
  return insert.meta.changes === 1;
}

/** What a new organisation comes with, in one batch: its Default Project, its owners team with the creator in it, and the creator's membership. */
export async function seedOrganization(
  db: Db,
  s: { organizationId: string; projectId: string; ownersTeamId: string; serviceUserId: string; creatorId: string; membershipId: string; createdAt: string },
): Promise<void> {
  await db.batch([
    db
      .prepare("INSERT INTO projects (id, organization_id, name, is_default, created_at) VALUES (?, ?, 'Default Project', 1, ?)")
      .bind(s.projectId, s.organizationId, s.createdAt),
    db
      .prepare(
        "INSERT INTO teams (id, organization_id, name, is_owners, visibility, organization_access, service_user_id, created_at) VALUES (?, ?, 'owners', 1, 'organization', '{}', ?, ?)",
      )
      .bind(s.ownersTeamId, s.organizationId, s.serviceUserId, s.createdAt),
    db.prepare("INSERT INTO team_members (team_id, user_id) VALUES (?, ?)").bind(s.ownersTeamId, s.creatorId),
    db
      .prepare("INSERT INTO organization_memberships (id, organization_id, user_id, created_at) VALUES (?, ?, ?, ?)")
      .bind(s.membershipId, s.organizationId, s.creatorId, s.createdAt),
  ]);
}

/** Which organisations a list may show: all (site admin), a user's (through its teams), or one (a token's, by id). */
export type OrganizationScope = { all: true } | { memberId: string } | { organizationId: string };

export interface OrganizationListFilter {
  /** Matches the name or the email. */
  q: string;
  /** The exact email. */
  email?: string;
}

/** A page of organisations and the total count, each with whether `ownerId` is in its owners team. */
export async function listOrganizations(
  db: Db,
  scope: OrganizationScope,
  filter: OrganizationListFilter,
  ownerId: string,
  page: Page,
): Promise<{ total: number; organizations: Array<{ organization: Organization; isOwner: boolean }> }> {
  const { total, rows } = await organizationRowsPage(db, scope, filter, ownerId, page);
  return { total, organizations: rows.map((r) => ({ organization: toOrganization(r), isOwner: r.is_owner === 1 })) };
}

async function organizationRowsPage(
  db: Db,
  scope: OrganizationScope,
  filter: OrganizationListFilter,
  ownerId: string,
  page: Page,
): Promise<{ total: number; rows: Array<OrganizationRow & { is_owner: number }> }> {
  const binds: unknown[] = [];
  const bind = appendTo(binds);
  let where = `WHERE (${textMatchSql("o.name", filter.q, "contains", bind)} OR ${textMatchSql("o.email", filter.q, "contains", bind)})`;
  if (filter.email) {
    where += " AND o.email = ?";
    binds.push(filter.email);
  }
  if ("memberId" in scope) {
    where += " AND o.external_id IN (SELECT t.organization_id FROM team_members m JOIN teams t ON t.id = m.team_id WHERE m.user_id = ?)";
    binds.push(scope.memberId);
  } else if ("organizationId" in scope) {
    where += " AND o.external_id = ?";
    binds.push(scope.organizationId);
  }
  const [countRes, rowsRes] = await db.batch([
    db.prepare(`SELECT count(*) AS n FROM organizations o ${where}`).bind(...binds),
    db
      .prepare(
        `SELECT o.*, EXISTS (SELECT 1 FROM team_members m JOIN teams t ON t.id = m.team_id
           WHERE t.organization_id = o.external_id AND t.is_owners = 1 AND m.user_id = ?) AS is_owner
         FROM organizations o ${where} ORDER BY o.name LIMIT ? OFFSET ?`,
      )
      .bind(ownerId, ...binds, page.size, (page.number - 1) * page.size),
  ]);
  const total = (countRes?.results?.[0] as { n: number } | undefined)?.n ?? 0;
  return { total, rows: (rowsRes?.results ?? []) as Array<OrganizationRow & { is_owner: number }> };
}

export interface OrganizationSettings {
  /** A new name (a rename), or undefined to keep it. */
  name?: string;
  email: string;
  attrs: Record<string, unknown>;
  defaultExecutionMode: string;
  defaultAgentPoolId: string | null;
  allowForceDeleteWorkspaces: boolean;
}

/** What became of an update: the organisation as written, or why nothing was. */
export type OrganizationUpdate = { updated: Organization } | { updated: null; reason: "name_taken" | "gone" };

/**
 * Updates (and with `s.name`, renames) the organisation with this id, provided it still has the name the request
 * addressed it by: a concurrent rename or delete makes this update find nothing ("gone"), as if it had come after
 * them. One statement, so the name is unique across organisations by the primary key alone (a taken name, also one
 * taken concurrently, is "name_taken"). Nothing else changes: every other row names the organisation by its id.
 */
export async function updateOrganization(db: Db, ref: { id: string; name: string }, s: OrganizationSettings): Promise<OrganizationUpdate> {
  try {
    const row = await db
      .prepare(
        `UPDATE organizations SET name = coalesce(?, name), email = ?, attrs = ?, default_execution_mode = ?, default_agent_pool_id = ?,
           allow_force_delete_workspaces = ? WHERE external_id = ? AND name = ? RETURNING *`,
      )
      .bind(
        s.name ?? null,
        s.email,
        JSON.stringify(s.attrs),
        s.defaultExecutionMode,
        s.defaultAgentPoolId,
        s.allowForceDeleteWorkspaces ? 1 : 0,
        ref.id,
        ref.name,
      )
      .first<OrganizationRow>();
    return row ? { updated: toOrganization(row) } : { updated: null, reason: "gone" };
  } catch (err) {
    if (String(err).includes("UNIQUE")) return { updated: null, reason: "name_taken" };
    throw err;
  }
}

/** Replaces the organisation's subscription (hosted edition); false when the organisation does not exist. */
export async function setOrganizationSubscription(db: Db, name: string, subscription: Subscription): Promise<boolean> {
  const res = await db.prepare("UPDATE organizations SET subscription = ? WHERE name = ?").bind(JSON.stringify(subscription), name).run();
  return res.meta.changes === 1;
}

/** Whether the agent pool exists in the organisation. */
export async function poolExists(db: Db, organizationId: string, poolId: string): Promise<boolean> {
  return (await db.prepare("SELECT id FROM agent_pools WHERE id = ? AND organization_id = ?").bind(poolId, organizationId).first()) !== null;
}

/**
 * Deletes an organisation in one D1 batch. Its workspaces' Durable Objects are not visited (no
 * fan-out): their index rows go now, and each DO's record is treated as gone at read time because
 * its organisation (by external id) no longer exists. The organisations row goes first, and only while it still has
 * the name the request addressed (a concurrent rename wins: the delete then removes nothing and answers 404); every
 * other statement deletes only once that row is gone. False when nothing was deleted.
 */
export async function deleteOrganization(db: Db, ref: { id: string; name: string }): Promise<boolean> {
  const gone = "NOT EXISTS (SELECT 1 FROM organizations WHERE external_id = ?1)";
  const teamIds = "(SELECT id FROM teams WHERE organization_id = ?1)";
  const cascade = (sql: string) => db.prepare(`${sql} AND ${gone}`).bind(ref.id);
  const [org] = await db.batch([
    db.prepare("DELETE FROM organizations WHERE external_id = ? AND name = ?").bind(ref.id, ref.name),
    cascade(`DELETE FROM team_members WHERE team_id IN ${teamIds}`),
    cascade("DELETE FROM invitation_teams WHERE membership_id IN (SELECT id FROM organization_memberships WHERE organization_id = ?1)"),
    cascade(`DELETE FROM team_workspaces WHERE team_id IN ${teamIds}`),
    cascade(`DELETE FROM team_projects WHERE team_id IN ${teamIds}`),
    cascade(`DELETE FROM tokens WHERE (team_id IN ${teamIds} OR organization_id = ?1)`),
    cascade("DELETE FROM teams WHERE organization_id = ?1"),
    cascade("DELETE FROM project_tag_bindings WHERE project_id IN (SELECT id FROM projects WHERE organization_id = ?1)"),
    cascade("DELETE FROM projects WHERE organization_id = ?1"),
    cascade("DELETE FROM organization_memberships WHERE organization_id = ?1"),
    cascade("DELETE FROM agent_pools WHERE organization_id = ?1"),
    cascade("DELETE FROM workspace_run_tasks WHERE task_id IN (SELECT id FROM run_tasks WHERE organization_id = ?1)"),
    cascade("DELETE FROM run_tasks WHERE organization_id = ?1"),
    cascade("DELETE FROM oauth_tokens WHERE organization_id = ?1"),
    cascade("DELETE FROM oauth_clients WHERE organization_id = ?1"),
    cascade("DELETE FROM ssh_keys WHERE organization_id = ?1"),
    cascade("DELETE FROM tags WHERE organization_id = ?1"),
    cascade("DELETE FROM deleted_tags WHERE organization_id = ?1"),
    cascade("DELETE FROM reserved_tag_keys WHERE organization_id = ?1"),
    cascade("DELETE FROM workspace_tags WHERE organization_id = ?1"),
    cascade("DELETE FROM workspace_names WHERE organization_id = ?1"),
    cascade("DELETE FROM workspaces WHERE organization_id = ?1"),
    cascade("DELETE FROM run_jobs WHERE organization_id = ?1"),
    cascade("DELETE FROM runs WHERE organization_id = ?1"),
    cascade("DELETE FROM configuration_versions WHERE organization_id = ?1"),
    cascade("DELETE FROM organization_retention_policies WHERE organization_id = ?1"),
    cascade("DELETE FROM token_ttl_policies WHERE organization_id = ?1"),
  ]);
  return (org?.meta.changes ?? 0) > 0;
}
