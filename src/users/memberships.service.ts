/** Organisation memberships: invitations, their acceptance and removal, and who sees what of them. */
import { includesOf } from "../jsonapi/validation";
import { allows, authorize } from "../auth/requirements";
import { requireOrgAccess, type OrgAccess } from "../auth/access";
import { seesMemberEmails } from "../auth/team-rights";
import type { Caller, Db } from "../caller";
import { ApiError } from "../errors";
import { newId, nowIso } from "../ids";
import type { Page } from "../jsonapi/document";
import { teamNames, teamsIn, ownersTeamStanding } from "../teams/teams.d1";
import { redactEmail, viewerUserId } from "./memberships.rules";
import {
  acceptInvitation as acceptInvitationRows,
  deleteMembership,
  insertInvitation,
  invitationOf,
  membershipById,
  membershipTeams,
  organizationMemberships,
  type Membership,
} from "./memberships.d1";
import { checkEmail } from "./users.service";
import { foldAscii } from "../platform/text-match";

/** Memberships as the caller may see them, each with its teams, and what was asked to be included. */
export interface MembershipsView {
  memberships: Membership[];
  /** The teams of each of `memberships`, in the same order. */
  teams: string[][];
  includeUsers: boolean;
  /** The included teams (null: not asked for). */
  includedTeams: Array<{ id: string; name: string }> | null;
}

const MEMBERSHIP_INCLUDES = ["user", "teams"] as const;

/** `include` of membership reads: `user` and `teams` (anything else is the 400 go-tfe maps to ErrInvalidIncludeValue). */
function readIncludes(raw: string | undefined): Set<string> {
  return new Set(includesOf(raw, MEMBERSHIP_INCLUDES));
}

/** Memberships with their teams, plus the included teams asked for. */
async function viewOf(db: Db, all: Membership[], include: Set<string>, access: OrgAccess | null): Promise<MembershipsView> {
  // Addresses only for those who may see them; `null` access: the membership's own user.
  const memberships = access ? all.map((m) => redactEmail(access, m)) : all;
  const byOrg = new Map<string, Membership[]>();
  for (const m of memberships) byOrg.set(m.organizationId, [...(byOrg.get(m.organizationId) ?? []), m]);
  const teamsOf = new Map<string, string[]>();
  for (const [org, ms] of byOrg) {
    for (const [userId, ids] of await membershipTeams(
      db,
      org,
      ms.map((m) => m.userId),
    ))
      teamsOf.set(`${org}\u0000${userId}`, ids);
  }
  let includedTeams: MembershipsView["includedTeams"] = null;
  if (include.has("teams")) {
    const ids = [...new Set([...teamsOf.values()].flat())];
    includedTeams = ids.length ? await teamNames(db, ids) : [];
  }
  return {
    memberships,
    teams: memberships.map((m) => teamsOf.get(`${m.organizationId}\u0000${m.userId}`) ?? []),
    includeUsers: include.has("user"),
    includedTeams,
  };
}

/**
 * Invites a user (by email) with the teams it will join on acceptance. An address an inviter types proves nothing:
 * the invitation names the user who proved that address (src/users/users.d1.ts, `emailProvenSql`), else a new account
 * created for this invitation alone, which only its link (made by this organisation) or a site admin hands to
 * someone (the real service sends an email instead). Unconfirmed changes never match.
 */
export async function inviteMember(caller: Caller, organization: string, input: { email: string; teamIds: string[] }): Promise<MembershipsView> {
  const db = caller.db;
  const access = await requireOrgAccess(caller, { name: organization });
  authorize(caller, "membership.manage", { access });
  const { email } = input;
  checkEmail(email);
  const org = access.organization.externalId;
  const teamIds = [...new Set(input.teamIds)];
  if (teamIds.length) {
    const found = await teamsIn(db, org, teamIds);
    if (found.length !== teamIds.length) throw ApiError.of("not_found", { detail: "Team not found", pointer: "/data/relationships/teams/data" });
    // Inviting into the owners team makes an owner: owners only.
    if (found.some((t) => !allows(caller.principal, "teams.change-members", { access, team: membersOnly(t) })))
      throw ApiError.of("not_found", { detail: "Team not found", pointer: "/data/relationships/teams/data" });
  }
  const username = `${email
    .split("@")[0]
    .replace(/[^A-Za-z0-9_.-]/g, "-")
    .slice(0, 50)}-${newId("u").slice(2, 8)}`;
  const id = newId("ou");
  // The teams are granted when the invitation is accepted, not before.
  const placeholder = { id: newId("user"), username };
  if (!(await insertInvitation(db, { id, organizationId: org, email, placeholder, teamIds, createdAt: nowIso() }))) {
    throw ApiError.of("invalid_attribute", { detail: "User is already a member of this organization", pointer: "/data/attributes/email" });
  }
  const membership = await membershipById(db, id);
  if (!membership) throw ApiError.of("internal");
  // The real service embeds the user in the create response (go-tfe compares it with later reads).
  return viewOf(db, [membership], new Set(["user"]), access);
}

export async function listMemberships(
  caller: Caller,
  organization: string,
  query: { q?: string; "filter[email]"?: string; "filter[status]"?: string; include?: string },
  page: Page,
): Promise<{ view: MembershipsView; total: number }> {
  const db = caller.db;
  const access = await requireOrgAccess(caller, { name: organization });
  const include = readIncludes(query.include);
  const emails = query["filter[email]"]
    ? query["filter[email]"]
        .split(",")
        // lower() in SQL folds ASCII only.
        .map((e) => foldAscii(e.trim()))
        .filter(Boolean)
    : null;
  const { memberships, total } = await organizationMemberships(
    db,
    access.organization.externalId,
    { seesAllEmails: seesMemberEmails(access), userId: viewerUserId(access) },
    { status: query["filter[status]"] ?? null, emails, q: query.q?.trim() ? query.q.trim() : null },
    page,
  );
  return { view: await viewOf(db, memberships, include, access), total };
}

/** The facts `teams.change-members` looks at (who may change a team's members depends on whether it is the owners team). */
const membersOnly = (t: { id: string; isOwners: boolean }) => ({ ...t, organizationAccess: {}, allowMemberTokenManagement: false });

/** A membership, with the caller's access to its organisation (null: the invited user reading its own invitation). */
async function loadMembership(caller: Caller, id: string, manage: boolean): Promise<{ m: Membership; access: OrgAccess | null }> {
  const m = await membershipById(caller.db, id);
  if (!m) throw ApiError.of("not_found");
  const p = caller.principal;
  // The invited user reads its own invitation before it has any standing in the organisation.
  if (!manage && m.status === "invited" && p.kind === "user" && p.userId === m.userId) {
    authorize(caller, "membership.read", { userId: m.userId });
    return { m, access: null };
  }
  const access = await requireOrgAccess(caller, { id: m.organizationId });
  authorize(caller, manage ? "membership.manage" : "membership.read", { access });
  return { m, access };
}

export async function showMembership(caller: Caller, id: string, includeParam: string | undefined): Promise<MembershipsView> {
  const include = readIncludes(includeParam);
  const { m, access } = await loadMembership(caller, id, false);
  return viewOf(caller.db, [m], include, access);
}

/**
 * Accepts an invitation: only its invited user, while that user owns the invited address and either proved it or
 * was created for this invitation (an invitation attaches to no one else; src/users/memberships.d1.ts).
 */
export async function acceptInvitation(caller: Caller, id: string): Promise<MembershipsView> {
  const db = caller.db;
  const p = caller.principal;
  const invitation = await invitationOf(db, id, p.kind === "user" ? p.userId : "");
  const owns = invitation && (invitation.invitedEmail === null || (invitation.email ?? "").toLowerCase() === invitation.invitedEmail.toLowerCase());
  if (!invitation || !owns || !invitation.mayAccept) throw ApiError.of("not_found");
  authorize(caller, "user.self", { userId: p.kind === "user" ? p.userId : undefined });
  if (invitation.status !== "invited")
    throw ApiError.of("invalid_attribute", { detail: "The invitation has already been accepted", pointer: "/data/attributes/status" });
  await acceptInvitationRows(db, id);
  const m = await membershipById(db, id);
  if (!m) throw ApiError.of("not_found");
  return viewOf(db, [m], new Set(), null);
}

/** Removes a user from the organisation and its teams; the owners team keeps at least one member. */
export async function removeMembership(caller: Caller, id: string): Promise<void> {
  const { m, access } = await loadMembership(caller, id, true);
  const owners = await ownersTeamStanding(caller.db, m.organizationId, m.userId);
  if (owners) {
    // Removing an owner changes the owners team: owners only.
    if (owners.member && !allows(caller.principal, "teams.change-members", { access, team: membersOnly({ id: "", isOwners: true }) }))
      throw ApiError.of("not_found");
    if (owners.member && owners.others === 0)
      throw ApiError.of("invalid_attribute", { detail: "The owners team must keep at least one member", pointer: "/data" });
  }
  await deleteMembership(caller.db, m);
}
