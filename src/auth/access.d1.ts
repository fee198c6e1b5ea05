/** The SQL behind access.ts: the organisation, the caller's teams and their grants. */
import type { Db } from "../caller";
import { ORGANIZATION_COLUMNS, orgIdSql, orgWhere, toOrganization, type Organization, type OrganizationRow, type OrgRef } from "./organization.d1";
import type { Principal } from "./principal";

/** The columns of a teams row access reads (`SELECT id, is_owners, organization_access`). */
export interface AccessTeamRow {
  id: string;
  is_owners: number;
  organization_access: string;
}

/** A team of the caller, as much of it as access needs. */
export interface AccessTeam {
  id: string;
  isOwners: boolean;
  /** The organisation permissions it grants (keys set to true). */
  organizationAccess: Record<string, unknown>;
}

export function toAccessTeam(row: AccessTeamRow): AccessTeam {
  return { id: row.id, isOwners: row.is_owners === 1, organizationAccess: JSON.parse(row.organization_access) as Record<string, unknown> };
}

/** A team_workspaces or team_projects row as access reads it (`target_id`: the workspace or project). */
export interface GrantRow {
  team_id: string;
  target_id: string;
  access: string;
  perms: string;
}

/** A team's grant on a workspace or project: its access level and (custom level) its permissions. */
export interface Grant {
  teamId: string;
  targetId: string;
  access: string;
  perms: Record<string, unknown>;
}

export function toGrant(row: GrantRow): Grant {
  return { teamId: row.team_id, targetId: row.target_id, access: row.access, perms: JSON.parse(row.perms) as Record<string, unknown> };
}

/** A projects row's execution defaults, as access reads them. */
export interface ProjectDefaultsRow {
  id: string;
  organization_id: string;
  name?: string;
  default_execution_mode: string | null;
  default_agent_pool_id: string | null;
  auto_destroy_activity_duration?: string | null;
}

/** What a workspace inherits from its project. */
export interface ProjectDefaults {
  id: string;
  organizationId: string;
  /** The project's name, where the read loads it (the list page, a workspace's own read). */
  name?: string;
  /** null: inherit the organisation's. */
  defaultExecutionMode: string | null;
  defaultAgentPoolId: string | null;
  /** Loaded when creating a workspace: the project's auto-destroy-activity-duration, which new workspaces inherit. */
  autoDestroyActivityDuration?: string | null;
}

export function toProjectDefaults(row: ProjectDefaultsRow): ProjectDefaults {
  return {
    id: row.id,
    organizationId: row.organization_id,
    ...(row.name === undefined ? {} : { name: row.name }),
    defaultExecutionMode: row.default_execution_mode,
    defaultAgentPoolId: row.default_agent_pool_id,
    ...(row.auto_destroy_activity_duration === undefined ? {} : { autoDestroyActivityDuration: row.auto_destroy_activity_duration }),
  };
}

const firstOrganization = (r: D1Result | undefined): Organization | null => {
  const row = (r?.results?.[0] ?? null) as OrganizationRow | null;
  return row ? toOrganization(row) : null;
};
const teamsOf = (r: D1Result | undefined): AccessTeam[] => ((r?.results ?? []) as AccessTeamRow[]).map(toAccessTeam);
const grantsOf = (r: D1Result | undefined): Grant[] => ((r?.results ?? []) as GrantRow[]).map(toGrant);
const projectsOf = (r: D1Result | undefined): ProjectDefaults[] => ((r?.results ?? []) as ProjectDefaultsRow[]).map(toProjectDefaults);

/** The organisation, the caller's teams there, their grants and the projects' defaults, as one batch read them. */
export interface AccessRead {
  org: Organization | null;
  teams: AccessTeam[];
  grants: { workspaces: Grant[]; projects: Grant[] };
  projects: ProjectDefaults[];
}

/** The caller's teams in an organisation, as a SQL subquery with its bindings. */
function teamSubquery(principal: Principal, ref: OrgRef): { sql: string; binds: unknown[] } {
  const org = orgIdSql(ref);
  return teamSubqueryIn(principal, org.sql, org.binds);
}

/** The organisations row of `ref` (by name or by id). */
function orgStatement(db: Db, ref: OrgRef): D1PreparedStatement {
  const where = orgWhere(ref);
  return db.prepare(`SELECT ${ORGANIZATION_COLUMNS} FROM organizations WHERE ${where.sql}`).bind(...where.binds);
}

/** The organisation and the caller's teams in it, in one round trip (one batch: one snapshot, even across a rename). */
export async function orgWithCallerTeams(db: Db, principal: Principal, ref: OrgRef): Promise<{ org: Organization | null; teams: AccessTeam[] }> {
  const teams = teamSubquery(principal, ref);
  const [orgRes, teamsRes] = await db.batch([
    orgStatement(db, ref),
    db.prepare(`SELECT id, is_owners, organization_access FROM teams WHERE id IN (${teams.sql})`).bind(...teams.binds),
  ]);
  return { org: firstOrganization(orgRes), teams: teamsOf(teamsRes) };
}

/** The given teams' grants on the given workspaces and projects, in one batch. */
export async function teamGrants(db: Db, teamIds: string[], workspaceIds: string[], projectIds: string[]): Promise<{ workspaces: Grant[]; projects: Grant[] }> {
  const teams = JSON.stringify(teamIds);
  const [ws, prj] = await db.batch([
    db
      .prepare(
        `SELECT team_id, workspace_id AS target_id, access, perms FROM team_workspaces
         WHERE team_id IN (SELECT value FROM json_each(?)) AND workspace_id IN (SELECT value FROM json_each(?))`,
      )
      .bind(teams, JSON.stringify(workspaceIds)),
    db
      .prepare(
        `SELECT team_id, project_id AS target_id, access, perms FROM team_projects
         WHERE team_id IN (SELECT value FROM json_each(?)) AND project_id IN (SELECT value FROM json_each(?))`,
      )
      .bind(teams, JSON.stringify(projectIds)),
  ]);
  return { workspaces: grantsOf(ws), projects: grantsOf(prj) };
}

/**
 * What creating a workspace needs, in one batch: the organisation, the caller's teams, their grants
 * on the target project (the one requested, else the organisation's default, resolved in SQL) and
 * that project's row when it belongs to the organisation (none: it does not exist there).
 */
export async function createAccessRows(db: Db, principal: Principal, ref: OrgRef, requestedProject: string | null): Promise<AccessRead> {
  const teams = teamSubquery(principal, ref);
  const where = orgWhere(ref);
  const org = orgIdSql(ref);
  const project = `(SELECT COALESCE(?, default_project_id) FROM organizations WHERE ${where.sql})`;
  const projectBinds = [requestedProject, ...where.binds];
  const results = await db.batch([
    orgStatement(db, ref),
    db.prepare(`SELECT id, is_owners, organization_access FROM teams WHERE id IN (${teams.sql})`).bind(...teams.binds),
    db
      .prepare(`SELECT team_id, project_id AS target_id, access, perms FROM team_projects WHERE project_id = ${project} AND team_id IN (${teams.sql})`)
      .bind(...projectBinds, ...teams.binds),
    db
      .prepare(
        `SELECT id, organization_id, default_execution_mode, default_agent_pool_id,
                json_extract(attrs, '$."auto-destroy-activity-duration"') AS auto_destroy_activity_duration
         FROM projects WHERE id = ${project} AND organization_id = ${org.sql}`,
      )
      .bind(...projectBinds, ...org.binds),
  ]);
  return {
    org: firstOrganization(results[0]),
    teams: teamsOf(results[1]),
    grants: { workspaces: [], projects: grantsOf(results[2]) },
    projects: projectsOf(results[3]),
  };
}

/** The caller's teams in the organisation whose id is a SQL expression (with its bindings). */
export function teamSubqueryIn(principal: Principal, organizationSql: string, organizationBinds: unknown[]): { sql: string; binds: unknown[] } {
  if (principal.kind === "user") {
    return {
      sql: `SELECT m.team_id FROM team_members m JOIN teams t ON t.id = m.team_id WHERE m.user_id = ? AND t.organization_id = ${organizationSql}`,
      binds: [principal.userId, ...organizationBinds],
    };
  }
  if (principal.kind === "team")
    return { sql: `SELECT id FROM teams WHERE id = ? AND organization_id = ${organizationSql}`, binds: [principal.teamId, ...organizationBinds] };
  return { sql: "SELECT id FROM teams WHERE 0", binds: [] };
}

/**
 * The organisation, the caller's teams, their grants on the given workspaces and projects, and the
 * projects' execution defaults, in one batch.
 */
export async function accessRows(db: Db, principal: Principal, ref: OrgRef, workspaceIds: string[], projectIds: string[]): Promise<AccessRead> {
  const teams = teamSubquery(principal, ref);
  const results = await db.batch([
    orgStatement(db, ref),
    db.prepare(`SELECT id, is_owners, organization_access FROM teams WHERE id IN (${teams.sql})`).bind(...teams.binds),
    db
      .prepare(
        `SELECT team_id, workspace_id AS target_id, access, perms FROM team_workspaces
         WHERE workspace_id IN (SELECT value FROM json_each(?)) AND team_id IN (${teams.sql})`,
      )
      .bind(JSON.stringify(workspaceIds), ...teams.binds),
    db
      .prepare(
        `SELECT team_id, project_id AS target_id, access, perms FROM team_projects
         WHERE project_id IN (SELECT value FROM json_each(?)) AND team_id IN (${teams.sql})`,
      )
      .bind(JSON.stringify(projectIds), ...teams.binds),
    db
      .prepare(
        `SELECT id, organization_id, default_execution_mode, default_agent_pool_id FROM projects
         WHERE id IN (SELECT value FROM json_each(?))`,
      )
      .bind(JSON.stringify(projectIds)),
  ]);
  return {
    org: firstOrganization(results[0]),
    teams: teamsOf(results[1]),
    grants: { workspaces: grantsOf(results[2]), projects: grantsOf(results[3]) },
    projects: projectsOf(results[4]),
  };
}
