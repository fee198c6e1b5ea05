/** D1 statements for team access to workspaces (`team_workspaces`) and projects (`team_projects`). */
import type { Db } from "../caller";

export interface TwRow {
  id: string;
  team_id: string;
  workspace_id: string;
  access: string;
  perms: string;
}

export interface TpRow {
  id: string;
  team_id: string;
  project_id: string;
  access: string;
  perms: string;
}

// ---- team-workspaces ----

/** False when the team already has access to the workspace. */
export async function insertTeamWorkspace(db: Db, row: TwRow, createdAt: string): Promise<boolean> {
  const res = await db
    .prepare("INSERT INTO team_workspaces (id, team_id, workspace_id, access, perms, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")
    .bind(row.id, row.team_id, row.workspace_id, row.access, row.perms, createdAt)
    .run();
  return res.meta.changes === 1;
}

export async function listTeamWorkspaces(db: Db, workspaceId: string): Promise<TwRow[]> {
  return (await db.prepare("SELECT * FROM team_workspaces WHERE workspace_id = ? ORDER BY created_at, id").bind(workspaceId).all<TwRow>()).results;
}

export async function findTeamWorkspace(db: Db, id: string): Promise<TwRow | null> {
  return db.prepare("SELECT * FROM team_workspaces WHERE id = ?").bind(id).first<TwRow>();
}

export async function updateTeamWorkspace(db: Db, id: string, access: string, perms: string): Promise<void> {
  await db.prepare("UPDATE team_workspaces SET access = ?, perms = ? WHERE id = ?").bind(access, perms, id).run();
}

export async function deleteTeamWorkspace(db: Db, id: string): Promise<void> {
  await db.prepare("DELETE FROM team_workspaces WHERE id = ?").bind(id).run();
}

// ---- team-projects ----

export async function findProjectOrganization(db: Db, projectId: string): Promise<{ id: string; organization_id: string } | null> {
  return db.prepare("SELECT id, organization_id FROM projects WHERE id = ?").bind(projectId).first<{ id: string; organization_id: string }>();
}

/** The given teams' grants on one project. */
export async function projectGrants(db: Db, projectId: string, teamIds: string[]): Promise<Array<{ access: string; perms: string }>> {
  const grants = await db
    .prepare("SELECT access, perms FROM team_projects WHERE project_id = ? AND team_id IN (SELECT value FROM json_each(?))")
    .bind(projectId, JSON.stringify(teamIds))
    .all<{ access: string; perms: string }>();
  return grants.results;
}

/** False when the team already has access to the project. */
export async function insertTeamProject(db: Db, row: TpRow, createdAt: string): Promise<boolean> {
  const res = await db
    .prepare("INSERT INTO team_projects (id, team_id, project_id, access, perms, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")
    .bind(row.id, row.team_id, row.project_id, row.access, row.perms, createdAt)
    .run();
  return res.meta.changes === 1;
}

export async function listTeamProjects(db: Db, projectId: string): Promise<TpRow[]> {
  return (await db.prepare("SELECT * FROM team_projects WHERE project_id = ? ORDER BY created_at, id").bind(projectId).all<TpRow>()).results;
}

export async function findTeamProject(db: Db, id: string): Promise<TpRow | null> {
  return db.prepare("SELECT * FROM team_projects WHERE id = ?").bind(id).first<TpRow>();
}

export async function updateTeamProject(db: Db, id: string, access: string, perms: string): Promise<void> {
  await db.prepare("UPDATE team_projects SET access = ?, perms = ? WHERE id = ?").bind(access, perms, id).run();
}

export async function deleteTeamProject(db: Db, id: string): Promise<void> {
  await db.prepare("DELETE FROM team_projects WHERE id = ?").bind(id).run();
}
