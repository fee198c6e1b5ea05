/** SQL for teams and their members. */
import type { Db } from "../caller";

interface TeamRow {
  id: string;
  organization_id: string;
  name: string;
  is_owners: number;
  visibility: string;
  sso_team_id: string | null;
  organization_access: string;
  allow_member_token_management: number;
  service_user_id: string | null;
  created_at: string;
}

export interface Team {
  id: string;
  /** The organisation's id (migration 0016). */
  organizationId: string;
  name: string;
  isOwners: boolean;
  visibility: string;
  ssoTeamId: string | null;
  /** The organisation permissions it was given (the owners team holds all of them whatever this says). */
  organizationAccess: Record<string, boolean>;
  allowMemberTokenManagement: boolean;
  /** The user its tokens act as. */
  serviceUserId: string | null;
  createdAt: string;
}

function toTeam(row: TeamRow): Team {
  return {
    id: row.id,
    organizationId: row.organization_id,
    name: row.name,
    isOwners: row.is_owners === 1,
    visibility: row.visibility,
    ssoTeamId: row.sso_team_id,
    organizationAccess: JSON.parse(row.organization_access) as Record<string, boolean>,
    allowMemberTokenManagement: row.allow_member_token_management === 1,
    serviceUserId: row.service_user_id,
    createdAt: row.created_at,
  };
}

export async function findTeam(db: Db, id: string): Promise<Team | null> {
  const row = await db.prepare("SELECT * FROM teams WHERE id = ?").bind(id).first<TeamRow>();
  return row ? toTeam(row) : null;
}

export async function teamMembers(db: Db, teamIds: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (teamIds.length === 0) return out;
  // Invited users are listed with the teams they will join; access comes from team_members alone.
  const rows = await db
    .prepare(
      `SELECT team_id, user_id FROM team_members WHERE team_id IN (SELECT value FROM json_each(?1))
       UNION SELECT it.team_id, m.user_id FROM invitation_teams it JOIN organization_memberships m ON m.id = it.membership_id
       WHERE it.team_id IN (SELECT value FROM json_each(?1)) ORDER BY user_id`,
    )
    .bind(JSON.stringify(teamIds))
    .all<{ team_id: string; user_id: string }>();
  for (const r of rows.results) out.set(r.team_id, [...(out.get(r.team_id) ?? []), r.user_id]);
  return out;
}

export async function organizationTeams(db: Db, organizationId: string): Promise<Team[]> {
  const rows = await db.prepare("SELECT * FROM teams WHERE organization_id = ? ORDER BY name COLLATE NOCASE, id").bind(organizationId).all<TeamRow>();
  return rows.results.map(toTeam);
}

/** The given ids that are teams of the organisation. */
export async function teamsIn(db: Db, organizationId: string, ids: string[]): Promise<Array<{ id: string; isOwners: boolean }>> {
  const rows = await db
    .prepare("SELECT id, is_owners FROM teams WHERE organization_id = ? AND id IN (SELECT value FROM json_each(?))")
    .bind(organizationId, JSON.stringify(ids))
    .all<{ id: string; is_owners: number }>();
  return rows.results.map((r) => ({ id: r.id, isOwners: r.is_owners === 1 }));
}

export async function teamNames(db: Db, ids: string[]): Promise<Array<{ id: string; name: string }>> {
  return (
    await db.prepare("SELECT id, name FROM teams WHERE id IN (SELECT value FROM json_each(?))").bind(JSON.stringify(ids)).all<{ id: string; name: string }>()
  ).results;
}

/** False when the name is taken in the organisation. */
export async function insertTeam(db: Db, t: Omit<Team, "isOwners">, after: D1PreparedStatement[] = []): Promise<boolean> {
  const insert = db
    .prepare(
      `INSERT INTO teams (id, organization_id, name, visibility, sso_team_id, organization_access, allow_member_token_management, service_user_id, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    )
    .bind(
      t.id,
      t.organizationId,
      t.name,
      t.visibility,
      t.ssoTeamId,
      JSON.stringify(t.organizationAccess),
      t.allowMemberTokenManagement ? 1 : 0,
      t.serviceUserId,
      t.createdAt,
    );
  const [res] = await db.batch([insert, ...after]);
  return res.meta.changes === 1;
}

/** False when the new name is taken in the organisation. */
export async function updateTeam(
  db: Db,
  t: Pick<Team, "id" | "name" | "visibility" | "ssoTeamId" | "organizationAccess" | "allowMemberTokenManagement">,
  after: D1PreparedStatement[] = [],
): Promise<boolean> {
  try {
    await db.batch([
      db
        .prepare("UPDATE teams SET name = ?, visibility = ?, sso_team_id = ?, organization_access = ?, allow_member_token_management = ? WHERE id = ?")
        .bind(t.name, t.visibility, t.ssoTeamId, JSON.stringify(t.organizationAccess), t.allowMemberTokenManagement ? 1 : 0, t.id),
      ...after,
    ]);
  } catch (err) {
    if (String(err).includes("UNIQUE")) return false;
    throw err;
  }
  return true;
}

/** Deletes a team with its members, invitations, grants and tokens (which fail with 401 from the next request on). */
export async function deleteTeam(db: Db, id: string, after: D1PreparedStatement[] = []): Promise<void> {
  await db.batch([
    db.prepare("DELETE FROM team_members WHERE team_id = ?").bind(id),
    db.prepare("DELETE FROM invitation_teams WHERE team_id = ?").bind(id),
    db.prepare("DELETE FROM team_workspaces WHERE team_id = ?").bind(id),
    db.prepare("DELETE FROM team_projects WHERE team_id = ?").bind(id),
    db.prepare("DELETE FROM tokens WHERE team_id = ?").bind(id),
    db.prepare("DELETE FROM teams WHERE id = ?").bind(id),
    ...after,
  ]);
}

/** How many members a team keeps when the given users leave. */
export async function membersLeft(db: Db, teamId: string, leaving: string[]): Promise<number> {
  const row = await db
    .prepare("SELECT count(*) AS n FROM team_members WHERE team_id = ? AND user_id NOT IN (SELECT value FROM json_each(?))")
    .bind(teamId, JSON.stringify(leaving))
    .first<{ n: number }>();
  return row?.n ?? 0;
}

/**
 * Removes users from a team and from the team's pending invitations. With `keepOne` (the owners
 * team) the guard is repeated inside the delete, so that concurrent removals cannot empty it.
 */
export async function removeMembers(
  db: Db,
  team: Pick<Team, "id" | "organizationId">,
  userIds: string[],
  keepOne: boolean,
  after: D1PreparedStatement[] = [],
): Promise<void> {
  const ids = JSON.stringify(userIds);
  await db.batch([
    db
      .prepare(
        `DELETE FROM team_members WHERE team_id = ?1 AND user_id IN (SELECT value FROM json_each(?2))
         AND (?3 = 0 OR EXISTS (SELECT 1 FROM team_members o WHERE o.team_id = ?1 AND o.user_id NOT IN (SELECT value FROM json_each(?2))))`,
      )
      .bind(team.id, ids, keepOne ? 1 : 0),
    db
      .prepare(
        `DELETE FROM invitation_teams WHERE team_id = ? AND membership_id IN
         (SELECT id FROM organization_memberships WHERE organization_id = ? AND user_id IN (SELECT value FROM json_each(?)))`,
      )
      .bind(team.id, team.organizationId, ids),
    ...after,
  ]);
}

/**
 * Adds users to a team, making them organisation members when they are not; a user whose membership
 * is still an invitation joins the team when it accepts (an invitation team), not before.
 */
export async function addMembers(
  db: Db,
  team: Pick<Team, "id" | "organizationId">,
  users: Array<{ userId: string; membershipId: string }>,
  createdAt: string,
  after: D1PreparedStatement[] = [],
): Promise<void> {
  await db.batch([
    ...users.flatMap(({ userId, membershipId }) => [
      db
        .prepare("INSERT INTO organization_memberships (id, organization_id, user_id, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING")
        .bind(membershipId, team.organizationId, userId, createdAt),
      db
        .prepare(
          `INSERT OR IGNORE INTO team_members (team_id, user_id) SELECT ?1, ?2 WHERE NOT EXISTS
           (SELECT 1 FROM organization_memberships WHERE organization_id = ?3 AND user_id = ?2 AND status = 'invited')`,
        )
        .bind(team.id, userId, team.organizationId),
      db
        .prepare(
          "INSERT OR IGNORE INTO invitation_teams (membership_id, team_id) SELECT id, ? FROM organization_memberships WHERE organization_id = ? AND user_id = ? AND status = 'invited'",
        )
        .bind(team.id, team.organizationId, userId),
    ]),
    ...after,
  ]);
}

/**
 * A user's standing in the organisation's owners team: whether it is a member and how many other
 * members the team has (null: the organisation has no owners team).
 */
export async function ownersTeamStanding(db: Db, organizationId: string, userId: string): Promise<{ member: boolean; others: number } | null> {
  const owners = await db.prepare("SELECT id FROM teams WHERE organization_id = ? AND is_owners = 1").bind(organizationId).first<{ id: string }>();
  if (!owners) return null;
  const member = await db.prepare("SELECT 1 FROM team_members WHERE team_id = ? AND user_id = ?").bind(owners.id, userId).first();
  const others = await db.prepare("SELECT count(*) AS n FROM team_members WHERE team_id = ? AND user_id != ?").bind(owners.id, userId).first<{ n: number }>();
  return { member: member !== null, others: others?.n ?? 0 };
}
