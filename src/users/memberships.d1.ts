/** All SQL for organisation memberships (D1 `organization_memberships`, `invitation_teams`). */
import type { Db } from "../caller";
import { offsetOf, pageWithTotal } from "../platform/paging";
import type { Page } from "../jsonapi/document";
import { emailProvenSql } from "./users.d1";

interface MembershipRow {
  id: string;
  organization_id: string;
  organization_name: string;
  user_id: string;
  status: string;
  email: string | null;
  username: string;
}

/** An organisation membership (or invitation), with its user's username and the address it shows. */
export interface Membership {
  id: string;
  organizationId: string;
  /** The organisation's current name, joined in (rows name it by id). */
  organizationName: string;
  userId: string;
  /** `active` or `invited`. */
  status: string;
  email: string | null;
  username: string;
}

function toMembership(row: MembershipRow): Membership {
  return {
    id: row.id,
    organizationId: row.organization_id,
    organizationName: row.organization_name,
    userId: row.user_id,
    status: row.status,
    email: row.email,
    username: row.username,
  };
}

/** A membership's address: an invitation's is the invited one (it is bound to it), a member's its user's. */
const MEMBERSHIP_EMAIL = "CASE WHEN m.status = 'invited' AND m.invited_email IS NOT NULL THEN m.invited_email ELSE u.email END";

const SELECT = `SELECT m.id, m.organization_id, o.name AS organization_name, m.user_id, m.status, ${MEMBERSHIP_EMAIL} AS email, u.username
  FROM organization_memberships m JOIN users u ON u.id = m.user_id JOIN organizations o ON o.external_id = m.organization_id`;

export async function membershipsById(db: Db, ids: string[]): Promise<Membership[]> {
  if (ids.length === 0) return [];
  const rows = await db.prepare(`${SELECT} WHERE m.id IN (SELECT value FROM json_each(?))`).bind(JSON.stringify(ids)).all<MembershipRow>();
  return rows.results.map(toMembership);
}

export async function membershipById(db: Db, id: string): Promise<Membership | null> {
  const row = await db.prepare(`${SELECT} WHERE m.id = ?`).bind(id).first<MembershipRow>();
  return row ? toMembership(row) : null;
}

/**
 * Of `userIds`, the users with a membership of the organisation, invited or active, with their own addresses (empty
 * where a user has none): whom an e-mail notification configuration may name (invited members too, as go-tfe's
 * `TestNotificationConfigurationCreate` names one) and, once active, reach. Another organisation's user is not one.
 */
export async function organizationMembers(db: Db, organizationId: string, userIds: string[]): Promise<Array<{ id: string; email: string; active: boolean }>> {
  if (userIds.length === 0) return [];
  const rows = await db
    .prepare(
      `SELECT u.id, coalesce(u.email, '') AS email, m.status = 'active' AS active FROM organization_memberships m JOIN users u ON u.id = m.user_id
       WHERE m.organization_id = ?1 AND m.user_id IN (SELECT value FROM json_each(?2))`,
    )
    .bind(organizationId, JSON.stringify(userIds))
    .all<{ id: string; email: string; active: number }>();
  return rows.results.map((r) => ({ id: r.id, email: r.email, active: r.active === 1 }));
}

/** The memberships of the members of the given teams (a team's `organization-memberships`), per team. */
export async function teamMemberships(db: Db, teamIds: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (teamIds.length === 0) return out;
  const rows = await db
    .prepare(
      `SELECT tm.team_id, om.id FROM team_members tm
       JOIN teams t ON t.id = tm.team_id
       JOIN organization_memberships om ON om.user_id = tm.user_id AND om.organization_id = t.organization_id
       WHERE tm.team_id IN (SELECT value FROM json_each(?1))
       UNION SELECT team_id, membership_id FROM invitation_teams WHERE team_id IN (SELECT value FROM json_each(?1))
       ORDER BY 2`,
    )
    .bind(JSON.stringify(teamIds))
    .all<{ team_id: string; id: string }>();
  for (const r of rows.results) out.set(r.team_id, [...(out.get(r.team_id) ?? []), r.id]);
  return out;
}

/** Each user's teams in the organisation (an invitation's teams included). */
export async function membershipTeams(db: Db, organizationId: string, userIds: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (userIds.length === 0) return out;
  const rows = await db
    .prepare(
      `SELECT x.user_id, t.id FROM (
         SELECT m.user_id, m.team_id FROM team_members m WHERE m.user_id IN (SELECT value FROM json_each(?2))
         UNION SELECT om.user_id, it.team_id FROM invitation_teams it JOIN organization_memberships om ON om.id = it.membership_id
         WHERE om.organization_id = ?1 AND om.user_id IN (SELECT value FROM json_each(?2))
       ) x JOIN teams t ON t.id = x.team_id
       WHERE t.organization_id = ?1 ORDER BY t.name COLLATE NOCASE, t.id`,
    )
    .bind(organizationId, JSON.stringify(userIds))
    .all<{ user_id: string; id: string }>();
  for (const r of rows.results) out.set(r.user_id, [...(out.get(r.user_id) ?? []), r.id]);
  return out;
}

/** A SQL string literal (ids are [A-Za-z0-9-] already; quotes doubled regardless). */
function sqlString(v: string): string {
  return `'${v.replace(/'/g, "''")}'`;
}

/**
 * A page of an organisation's memberships. Filters see only the addresses the viewer may see (all,
 * or only its own user's), so that none can be probed.
 */
export async function organizationMemberships(
  db: Db,
  organizationId: string,
  viewer: { seesAllEmails: boolean; userId: string | null },
  filter: { status: string | null; emails: string[] | null; q: string | null },
  page: Page,
): Promise<{ memberships: Membership[]; total: number }> {
  const visible = viewer.seesAllEmails ? MEMBERSHIP_EMAIL : `CASE WHEN m.user_id = ${sqlString(viewer.userId ?? "")} THEN ${MEMBERSHIP_EMAIL} END`;
  const where = `FROM organization_memberships m JOIN users u ON u.id = m.user_id JOIN organizations o ON o.external_id = m.organization_id
    WHERE m.organization_id = ?
      AND (? IS NULL OR m.status = ?)
      AND (? IS NULL OR lower(${visible}) IN (SELECT value FROM json_each(?)))
      AND (? IS NULL OR instr(lower(coalesce(${visible}, '')), lower(?)) > 0 OR instr(lower(u.username), lower(?)) > 0)`;
  const { status, q } = filter;
  const emailJson = filter.emails ? JSON.stringify(filter.emails) : null;
  const binds = [organizationId, status, status, emailJson, emailJson, q, q, q];
  const { rows, total } = await pageWithTotal<MembershipRow>(
    db,
    db
      .prepare(
        `SELECT m.id, m.organization_id, o.name AS organization_name, m.user_id, m.status, ${MEMBERSHIP_EMAIL} AS email, u.username ${where}
         ORDER BY m.created_at, m.id LIMIT ? OFFSET ?`,
      )
      .bind(...binds, page.size, offsetOf(page)),
    db.prepare(`SELECT count(*) AS n ${where}`).bind(...binds),
  );
  return { memberships: rows.map(toMembership), total };
}

/**
 * Records an invitation of `email` and the teams it will grant on acceptance, in one batch. It names the user who
 * proved that address, else a new account of its own (`placeholder`, created for this invitation only: another
 * organisation's invitation of the same address never names it). False when the organisation already has a
 * membership or invitation for that address or that user.
 */
export async function insertInvitation(
  db: Db,
  inv: { id: string; organizationId: string; email: string; placeholder: { id: string; username: string }; teamIds: string[]; createdAt: string },
): Promise<boolean> {
  const proven = `SELECT u.id FROM users u WHERE u.email = ?3 COLLATE NOCASE AND u.is_service_account = 0 AND ${emailProvenSql("u")}
    ORDER BY u.created_at, u.id LIMIT 1`;
  const taken = `EXISTS (SELECT 1 FROM organization_memberships m JOIN users u ON u.id = m.user_id
    WHERE m.organization_id = ?2 AND (m.invited_email = ?3 COLLATE NOCASE OR u.email = ?3 COLLATE NOCASE))`;
  const [, invited] = await db.batch([
    db
      .prepare(
        `INSERT INTO users (id, username, email, created_for_invitation, created_at) SELECT ?4, ?5, ?3, ?1, ?6
         WHERE NOT EXISTS (${proven}) AND NOT ${taken}`,
      )
      .bind(inv.id, inv.organizationId, inv.email, inv.placeholder.id, inv.placeholder.username, inv.createdAt),
    db
      .prepare(
        `INSERT INTO organization_memberships (id, organization_id, user_id, status, invited_email, created_at)
         SELECT ?1, ?2, coalesce((${proven}), (SELECT id FROM users WHERE id = ?4 AND created_for_invitation = ?1)), 'invited', ?3, ?5
         WHERE NOT ${taken} ON CONFLICT DO NOTHING`,
      )
      .bind(inv.id, inv.organizationId, inv.email, inv.placeholder.id, inv.createdAt),
    ...inv.teamIds.map((t) =>
      db.prepare("INSERT OR IGNORE INTO invitation_teams (membership_id, team_id) SELECT id, ? FROM organization_memberships WHERE id = ?").bind(t, inv.id),
    ),
  ]);
  return invited.meta.changes === 1;
}

/** What accepting an invitation looks at: its state, the address it names, and the named user's standing. */
export interface InvitationStanding {
  status: string;
  invitedEmail: string | null;
  email: string | null;
  /** Whether the user proved its address, or was created for this very invitation (its holder came through it). */
  mayAccept: boolean;
}

/** An invitation's state as seen by the user it names (null: not that user's). */
export async function invitationOf(db: Db, id: string, userId: string): Promise<InvitationStanding | null> {
  const row = await db
    .prepare(
      `SELECT m.status, m.invited_email, u.email, (${emailProvenSql("u")} OR u.created_for_invitation = m.id) AS may_accept
       FROM organization_memberships m JOIN users u ON u.id = m.user_id WHERE m.id = ? AND m.user_id = ?`,
    )
    .bind(id, userId)
    .first<{ status: string; invited_email: string | null; email: string | null; may_accept: number }>();
  return row ? { status: row.status, invitedEmail: row.invited_email, email: row.email, mayAccept: row.may_accept === 1 } : null;
}

/** Activates an invitation and grants its teams, in one batch (a no-op once active). */
export async function acceptInvitation(db: Db, id: string): Promise<void> {
  await db.batch([
    db
      .prepare(
        `INSERT OR IGNORE INTO team_members (team_id, user_id)
         SELECT it.team_id, m.user_id FROM invitation_teams it JOIN organization_memberships m ON m.id = it.membership_id
         WHERE it.membership_id = ? AND m.status = 'invited'`,
      )
      .bind(id),
    db.prepare("UPDATE organization_memberships SET status = 'active' WHERE id = ? AND status = 'invited'").bind(id),
    db.prepare("DELETE FROM invitation_teams WHERE membership_id = ?").bind(id),
  ]);
}

/** Removes a membership with its invitation teams and team memberships, unless that takes out the last owner. */
export async function deleteMembership(db: Db, m: Pick<Membership, "id" | "organizationId" | "userId">): Promise<void> {
  // Guarded in SQL, so that concurrent removals cannot take out the last owner.
  const keepsAnOwner = `NOT EXISTS (SELECT 1 FROM teams t JOIN team_members tm ON tm.team_id = t.id WHERE t.organization_id = ?2 AND t.is_owners = 1 AND tm.user_id = ?1)
    OR EXISTS (SELECT 1 FROM teams t JOIN team_members tm ON tm.team_id = t.id WHERE t.organization_id = ?2 AND t.is_owners = 1 AND tm.user_id != ?1)`;
  await db.batch([
    db.prepare(`DELETE FROM invitation_teams WHERE membership_id = ?3 AND (${keepsAnOwner})`).bind(m.userId, m.organizationId, m.id),
    db.prepare(`DELETE FROM organization_memberships WHERE id = ?3 AND (${keepsAnOwner})`).bind(m.userId, m.organizationId, m.id),
    db
      .prepare(`DELETE FROM team_members WHERE user_id = ?1 AND team_id IN (SELECT id FROM teams WHERE organization_id = ?2) AND (${keepsAnOwner})`)
      .bind(m.userId, m.organizationId),
  ]);
}
