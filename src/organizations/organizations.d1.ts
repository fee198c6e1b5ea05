/**
 * D1 statements for organisations beyond the single-row reads of organizations.index.ts: creation with
 * what comes with it, the list, the update and the cascade delete.
 */
import type { Db } from "../caller";
import type { Page } from "../jsonapi/document";
import type { Subscription } from "../subscriptions/feature-sets";
import type { OrganizationRow } from "./organizations.index";

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
  s: { organization: string; projectId: string; ownersTeamId: string; serviceUserId: string; creatorId: string; membershipId: string; createdAt: string },
): Promise<void> {
  await db.batch([
    db
      .prepare("INSERT INTO projects (id, organization_name, name, is_default, created_at) VALUES (?, ?, 'Default Project', 1, ?)")
      .bind(s.projectId, s.organization, s.createdAt),
    db
      .prepare(
        "INSERT INTO teams (id, organization_name, name, is_owners, visibility, organization_access, service_user_id, created_at) VALUES (?, ?, 'owners', 1, 'organization', '{}', ?, ?)",
      )
      .bind(s.ownersTeamId, s.organization, s.serviceUserId, s.createdAt),
    db.prepare("INSERT INTO team_members (team_id, user_id) VALUES (?, ?)").bind(s.ownersTeamId, s.creatorId),
    db
      .prepare("INSERT INTO organization_memberships (id, organization_name, user_id, created_at) VALUES (?, ?, ?, ?)")
      .bind(s.membershipId, s.organization, s.creatorId, s.createdAt),
  ]);
}

/** Which organisations a list may show: all (site admin), a user's (through its teams), or one (a token's). */
export type OrganizationScope = { all: true } | { memberId: string } | { organization: string };

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
): Promise<{ total: number; rows: Array<OrganizationRow & { is_owner: number }> }> {
  const like = `%${filter.q.replace(/[\\%_]/g, (m) => `\\${m}`)}%`;
  let where = "WHERE (o.name LIKE ? ESCAPE '\\' OR o.email LIKE ? ESCAPE '\\')";
  const binds: unknown[] = [like, like];
  if (filter.email) {
    where += " AND o.email = ?";
    binds.push(filter.email);
  }
  if ("memberId" in scope) {
    where += " AND o.name IN (SELECT t.organization_name FROM team_members m JOIN teams t ON t.id = m.team_id WHERE m.user_id = ?)";
    binds.push(scope.memberId);
  } else if ("organization" in scope) {
    where += " AND o.name = ?";
    binds.push(scope.organization);
  }
  const [countRes, rowsRes] = await db.batch([
    db.prepare(`SELECT count(*) AS n FROM organizations o ${where}`).bind(...binds),
    db
      .prepare(
        `SELECT o.*, EXISTS (SELECT 1 FROM team_members m JOIN teams t ON t.id = m.team_id
           WHERE t.organization_name = o.name AND t.is_owners = 1 AND m.user_id = ?) AS is_owner
         FROM organizations o ${where} ORDER BY o.name LIMIT ? OFFSET ?`,
      )
      .bind(ownerId, ...binds, page.size, (page.number - 1) * page.size),
  ]);
  const total = (countRes?.results?.[0] as { n: number } | undefined)?.n ?? 0;
  return { total, rows: (rowsRes?.results ?? []) as Array<OrganizationRow & { is_owner: number }> };
}

export interface OrganizationSettings {
  email: string;
  attrs: Record<string, unknown>;
  defaultExecutionMode: string;
  defaultAgentPoolId: string | null;
  allowForceDeleteWorkspaces: boolean;
}

export async function updateOrganization(db: Db, name: string, s: OrganizationSettings): Promise<void> {
  await db
    .prepare(
      `UPDATE organizations SET email = ?, attrs = ?, default_execution_mode = ?, default_agent_pool_id = ?, allow_force_delete_workspaces = ? WHERE name = ?`,
    )
    .bind(s.email, JSON.stringify(s.attrs), s.defaultExecutionMode, s.defaultAgentPoolId, s.allowForceDeleteWorkspaces ? 1 : 0, name)
    .run();
}

/** Replaces the organisation's subscription (hosted edition); false when the organisation does not exist. */
export async function setOrganizationSubscription(db: Db, name: string, subscription: Subscription): Promise<boolean> {
  const res = await db.prepare("UPDATE organizations SET subscription = ? WHERE name = ?").bind(JSON.stringify(subscription), name).run();
  return res.meta.changes === 1;
}

/** Whether the agent pool exists in the organisation. */
export async function poolExists(db: Db, organization: string, poolId: string): Promise<boolean> {
  return (await db.prepare("SELECT id FROM agent_pools WHERE id = ? AND organization_name = ?").bind(poolId, organization).first()) !== null;
}

/**
 * Deletes an organisation in one D1 batch. Its workspaces' Durable Objects are not visited (no
 * fan-out): their index rows go now, and each DO's record is treated as gone at read time because
 * its organisation (by external id) no longer exists.
 */
export async function deleteOrganization(db: Db, name: string): Promise<void> {
  const teamIds = "(SELECT id FROM teams WHERE organization_name = ?)";
  await db.batch([
    db.prepare(`DELETE FROM team_members WHERE team_id IN ${teamIds}`).bind(name),
    db.prepare("DELETE FROM invitation_teams WHERE membership_id IN (SELECT id FROM organization_memberships WHERE organization_name = ?)").bind(name),
    db.prepare(`DELETE FROM team_workspaces WHERE team_id IN ${teamIds}`).bind(name),
    db.prepare(`DELETE FROM team_projects WHERE team_id IN ${teamIds}`).bind(name),
    db.prepare(`DELETE FROM tokens WHERE team_id IN ${teamIds} OR organization_name = ?`).bind(name, name),
    db.prepare("DELETE FROM teams WHERE organization_name = ?").bind(name),
    db.prepare("DELETE FROM project_tag_bindings WHERE project_id IN (SELECT id FROM projects WHERE organization_name = ?)").bind(name),
    db.prepare("DELETE FROM projects WHERE organization_name = ?").bind(name),
    db.prepare("DELETE FROM organization_memberships WHERE organization_name = ?").bind(name),
    db.prepare("DELETE FROM agent_pools WHERE organization_name = ?").bind(name),
    db.prepare("DELETE FROM oauth_tokens WHERE organization_name = ?").bind(name),
    db.prepare("DELETE FROM oauth_clients WHERE organization_name = ?").bind(name),
    db.prepare("DELETE FROM ssh_keys WHERE organization_name = ?").bind(name),
    db.prepare("DELETE FROM tags WHERE organization_name = ?").bind(name),
    db.prepare("DELETE FROM workspace_tags WHERE organization_name = ?").bind(name),
    db.prepare("DELETE FROM workspace_names WHERE organization_name = ?").bind(name),
    db.prepare("DELETE FROM workspaces WHERE organization_name = ?").bind(name),
    db.prepare("DELETE FROM organization_retention_policies WHERE organization_name = ?").bind(name),
    db.prepare("DELETE FROM organizations WHERE name = ?").bind(name),
  ]);
}
