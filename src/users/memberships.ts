/** Organisation memberships: D1 reads and the JSON:API shape, shared by the user and team routes. */
import type { OrgAccess } from "../auth/access";
import type { Resource } from "../jsonapi/document";
import { teamRights } from "../teams/teams.rules";

type Db = D1Database | D1DatabaseSession;

export interface MembershipRow {
  id: string;
  organization_name: string;
  user_id: string;
  status: string;
  email: string | null;
  username: string;
}

/** A membership's address: an invitation's is the invited one (it is bound to it), a member's its user's. */
export const MEMBERSHIP_EMAIL = "CASE WHEN m.status = 'invited' AND m.invited_email IS NOT NULL THEN m.invited_email ELSE u.email END";

const SELECT = `SELECT m.id, m.organization_name, m.user_id, m.status, ${MEMBERSHIP_EMAIL} AS email, u.username
  FROM organization_memberships m JOIN users u ON u.id = m.user_id`;

/**
 * Members' addresses are for those who manage membership (owners, the organisation token,
 * manage-membership) and the site admin; every other member sees its own address only, as the real
 * service shows other users' addresses to no one else.
 */
export function seesMemberEmails(access: OrgAccess): boolean {
  return access.isOwner || access.isOrgToken || teamRights(access).manageMembership;
}

/** The caller's own user id, whose own address it always sees. */
export function viewerUserId(access: OrgAccess): string | null {
  return access.principal.kind === "user" ? access.principal.userId : null;
}

export function redactEmail(access: OrgAccess, m: MembershipRow): MembershipRow {
  return seesMemberEmails(access) || viewerUserId(access) === m.user_id ? m : { ...m, email: null };
}

export async function membershipsById(db: Db, ids: string[]): Promise<MembershipRow[]> {
  if (ids.length === 0) return [];
  const rows = await db.prepare(`${SELECT} WHERE m.id IN (SELECT value FROM json_each(?))`).bind(JSON.stringify(ids)).all<MembershipRow>();
  return rows.results;
}

export async function membershipById(db: Db, id: string): Promise<MembershipRow | null> {
  return db.prepare(`${SELECT} WHERE m.id = ?`).bind(id).first<MembershipRow>();
}

/** The memberships of the members of the given teams (a team's `organization-memberships`), per team. */
export async function teamMemberships(db: Db, teamIds: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (teamIds.length === 0) return out;
  const rows = await db
    .prepare(
      `SELECT tm.team_id, om.id FROM team_members tm
       JOIN teams t ON t.id = tm.team_id
       JOIN organization_memberships om ON om.user_id = tm.user_id AND om.organization_name = t.organization_name
       WHERE tm.team_id IN (SELECT value FROM json_each(?1))
       UNION SELECT team_id, membership_id FROM invitation_teams WHERE team_id IN (SELECT value FROM json_each(?1))
       ORDER BY 2`,
    )
    .bind(JSON.stringify(teamIds))
    .all<{ team_id: string; id: string }>();
  for (const r of rows.results) out.set(r.team_id, [...(out.get(r.team_id) ?? []), r.id]);
  return out;
}

/** Each user's teams in the organisation. */
export async function membershipTeams(db: Db, organization: string, userIds: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (userIds.length === 0) return out;
  const rows = await db
    .prepare(
      `SELECT x.user_id, t.id FROM (
         SELECT m.user_id, m.team_id FROM team_members m WHERE m.user_id IN (SELECT value FROM json_each(?2))
         UNION SELECT om.user_id, it.team_id FROM invitation_teams it JOIN organization_memberships om ON om.id = it.membership_id
         WHERE om.organization_name = ?1 AND om.user_id IN (SELECT value FROM json_each(?2))
       ) x JOIN teams t ON t.id = x.team_id
       WHERE t.organization_name = ?1 ORDER BY t.name COLLATE NOCASE, t.id`,
    )
    .bind(organization, JSON.stringify(userIds))
    .all<{ user_id: string; id: string }>();
  for (const r of rows.results) out.set(r.user_id, [...(out.get(r.user_id) ?? []), r.id]);
  return out;
}

export function serializeMembership(m: MembershipRow, teamIds: string[]): Resource {
  return {
    id: m.id,
    type: "organization-memberships",
    attributes: { status: m.status, email: m.email },
    relationships: {
      organization: { data: { id: m.organization_name, type: "organizations" } },
      user: { data: { id: m.user_id, type: "users" } },
      teams: { data: teamIds.map((id) => ({ id, type: "teams" })) },
    },
    links: { self: `/api/v2/organization-memberships/${m.id}` },
  };
}
