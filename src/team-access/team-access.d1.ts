/** D1 statements for team access to workspaces (`team_workspaces`) and projects (`team_projects`). */
import type { Db } from "../caller";
import type { PrjAccess, WsCustom } from "./team-access.rules";

interface TwRow {
  id: string;
  team_id: string;
  workspace_id: string;
  access: string;
  perms: string;
}

interface TpRow {
  id: string;
  team_id: string;
  project_id: string;
  access: string;
  perms: string;
}

/** A team's access to a workspace (`team-workspaces`). */
export interface TeamWorkspace {
  id: string;
  teamId: string;
  workspaceId: string;
  access: string;
  /** The custom permissions (access `custom`); empty otherwise. */
  perms: Partial<WsCustom>;
}

/** A team's access to a project (`team-projects`). */
export interface TeamProject {
  id: string;
  teamId: string;
  projectId: string;
  access: string;
  perms: PrjAccess;
}

function toTeamWorkspace(row: TwRow): TeamWorkspace {
  return { id: row.id, teamId: row.team_id, workspaceId: row.workspace_id, access: row.access, perms: JSON.parse(row.perms) as Partial<WsCustom> };
}

function toTeamProject(row: TpRow): TeamProject {
  return { id: row.id, teamId: row.team_id, projectId: row.project_id, access: row.access, perms: JSON.parse(row.perms) as PrjAccess };
}

// ---- team-workspaces ----

/** False when the team already has access to the workspace. */
export async function insertTeamWorkspace(db: Db, tw: TeamWorkspace, createdAt: string, after: D1PreparedStatement[] = []): Promise<boolean> {
  const insert = db
    .prepare("INSERT INTO team_workspaces (id, team_id, workspace_id, access, perms, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")
    .bind(tw.id, tw.teamId, tw.workspaceId, tw.access, JSON.stringify(tw.perms), createdAt);
  const [res] = await db.batch([insert, ...after]);
  return res.meta.changes === 1;
}

export async function listTeamWorkspaces(db: Db, workspaceId: string): Promise<TeamWorkspace[]> {
  const rows = await db.prepare("SELECT * FROM team_workspaces WHERE workspace_id = ? ORDER BY created_at, id").bind(workspaceId).all<TwRow>();
  return rows.results.map(toTeamWorkspace);
}

export async function findTeamWorkspace(db: Db, id: string): Promise<TeamWorkspace | null> {
  const row = await db.prepare("SELECT * FROM team_workspaces WHERE id = ?").bind(id).first<TwRow>();
  return row ? toTeamWorkspace(row) : null;
}

export async function updateTeamWorkspace(db: Db, id: string, access: string, perms: Partial<WsCustom>, after: D1PreparedStatement[] = []): Promise<void> {
  await db.batch([db.prepare("UPDATE team_workspaces SET access = ?, perms = ? WHERE id = ?").bind(access, JSON.stringify(perms), id), ...after]);
}

export async function deleteTeamWorkspace(db: Db, id: string, after: D1PreparedStatement[] = []): Promise<void> {
  await db.batch([db.prepare("DELETE FROM team_workspaces WHERE id = ?").bind(id), ...after]);
}

// ---- team-projects ----

export async function findProjectOrganization(db: Db, projectId: string): Promise<{ id: string; organization_id: string } | null> {
  return db.prepare("SELECT id, organization_id FROM projects WHERE id = ?").bind(projectId).first<{ id: string; organization_id: string }>();
}

/** The given teams' grants on one project (access level and permissions). */
export async function projectGrants(db: Db, projectId: string, teamIds: string[]): Promise<Array<{ access: string; perms: Record<string, unknown> }>> {
  const grants = await db
    .prepare("SELECT access, perms FROM team_projects WHERE project_id = ? AND team_id IN (SELECT value FROM json_each(?))")
    .bind(projectId, JSON.stringify(teamIds))
    .all<{ access: string; perms: string }>();
  return grants.results.map((g) => ({ access: g.access, perms: JSON.parse(g.perms) as Record<string, unknown> }));
}

/** False when the team already has access to the project. */
export async function insertTeamProject(db: Db, tp: TeamProject, createdAt: string, after: D1PreparedStatement[] = []): Promise<boolean> {
  const insert = db
    .prepare("INSERT INTO team_projects (id, team_id, project_id, access, perms, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")
    .bind(tp.id, tp.teamId, tp.projectId, tp.access, JSON.stringify(tp.perms), createdAt);
  const [res] = await db.batch([insert, ...after]);
  return res.meta.changes === 1;
}

export async function listTeamProjects(db: Db, projectId: string): Promise<TeamProject[]> {
  const rows = await db.prepare("SELECT * FROM team_projects WHERE project_id = ? ORDER BY created_at, id").bind(projectId).all<TpRow>();
  return rows.results.map(toTeamProject);
}

export async function findTeamProject(db: Db, id: string): Promise<TeamProject | null> {
  const row = await db.prepare("SELECT * FROM team_projects WHERE id = ?").bind(id).first<TpRow>();
  return row ? toTeamProject(row) : null;
}

export async function updateTeamProject(db: Db, id: string, access: string, perms: PrjAccess, after: D1PreparedStatement[] = []): Promise<void> {
  await db.batch([db.prepare("UPDATE team_projects SET access = ?, perms = ? WHERE id = ?").bind(access, JSON.stringify(perms), id), ...after]);
}

export async function deleteTeamProject(db: Db, id: string, after: D1PreparedStatement[] = []): Promise<void> {
  await db.batch([db.prepare("DELETE FROM team_projects WHERE id = ?").bind(id), ...after]);
}
