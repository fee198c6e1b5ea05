/** D1 queries for teams and memberships. */
export interface TeamRow {
  id: string;
  /** The organisation's id (migration 0016). */
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

type Db = D1Database | D1DatabaseSession;

export async function findTeam(db: Db, id: string): Promise<TeamRow | null> {
  return db.prepare("SELECT * FROM teams WHERE id = ?").bind(id).first<TeamRow>();
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
