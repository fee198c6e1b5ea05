/** Teams and their members: authorisation (teams.rules.ts) and orchestration of the repositories. */
import { includesOf } from "../jsonapi/validation";
import { pageSlice } from "../jsonapi/document";
import { auditOf, auditStatementsOf } from "../audit/audit.service";
import { auditStatements } from "../audit/audit.d1";
import { authorize } from "../auth/requirements";
import { requireOrgAccess, type OrgAccess } from "../auth/access";
import { mayChangeMembers, mayManageTeamTokens, teamRights } from "../auth/team-rights";
import type { Caller, Db } from "../caller";
import { ApiError } from "../errors";
import { newId, nowIso } from "../ids";
import type { Page } from "../jsonapi/document";
import { membershipsById, teamMemberships, type Membership } from "../users/memberships.d1";
import { redactEmail } from "../users/memberships.rules";
import { usernames, usersByIdOrUsername } from "../users/users.d1";
import {
  addMembers,
  deleteTeam as deleteTeamRows,
  findTeam,
  insertTeam,
  membersLeft,
  organizationTeams,
  removeMembers,
  teamMembers,
  updateTeam as updateTeamRow,
  type Team,
} from "./teams.d1";
import { resolveOrgAccess, type OrgAccessInput } from "./teams.rules";

/** What the caller may do with a team (the `permissions` object). */
export interface TeamCallerRights {
  manageTeams: boolean;
  manageMembership: boolean;
  manageOrganizationAccess: boolean;
  /** Per team where it differs from manageTeams / manageMembership (the owners team, stronger teams). */
  manageTokens?: boolean;
  changeMembers?: boolean;
}
import { containsText, foldAscii } from "../platform/text-match";

/** A team with what its serialisation shows: member user ids, membership ids and the caller's rights on it. */
export interface TeamView {
  team: Team;
  /** The organisation's name, as the caller's access read it. */
  organization: string;
  members: string[];
  memberships: string[];
  rights: TeamCallerRights;
}

export interface TeamAttributes {
  name?: string;
  "organization-access"?: OrgAccessInput;
  visibility?: "secret" | "organization";
  "sso-team-id"?: string | null;
  "allow-member-token-management"?: boolean;
}

/** Letters, numbers, -, _ and (as the real service accepts, e.g. go-tfe's "foo bar") inner spaces. */
const TEAM_NAME = /^[A-Za-z0-9_-]+( [A-Za-z0-9_-]+)*$/;

const invalidName = () =>
  ApiError.of("invalid_attribute", { detail: "Name may only contain letters, numbers, spaces, - and _", pointer: "/data/attributes/name" });
const nameTaken = () => ApiError.of("invalid_attribute", { detail: "Name has already been taken", pointer: "/data/attributes/name" });

/** Secret teams are visible to their members and to those who may see secret teams; organisation-visible ones to every member. */
function canSee(access: OrgAccess, team: Team): boolean {
  return teamRights(access).seeSecretTeams || team.visibility === "organization" || access.teamIds.includes(team.id);
}

/** A team the caller may see, with the caller's access to its organisation (404 otherwise). */
export async function loadTeam(caller: Caller, teamId: string): Promise<{ team: Team; access: OrgAccess }> {
  const team = await findTeam(caller.db, teamId);
  if (!team) throw ApiError.of("not_found");
  const access = await requireOrgAccess(caller, { id: team.organizationId });
  if (!canSee(access, team)) throw ApiError.of("not_found");
  return { team, access };
}

async function views(db: Db, teams: Team[], access: OrgAccess): Promise<TeamView[]> {
  const ids = teams.map((t) => t.id);
  const [members, memberships] = await Promise.all([teamMembers(db, ids), teamMemberships(db, ids)]);
  const rights = teamRights(access);
  return teams.map((t) => ({
    team: t,
    organization: access.organization.name,
    members: members.get(t.id) ?? [],
    memberships: memberships.get(t.id) ?? [],
    rights: { ...rights, changeMembers: mayChangeMembers(access, t), manageTokens: mayManageTeamTokens(access, t) },
  }));
}

const view = async (db: Db, team: Team, access: OrgAccess) => (await views(db, [team], access))[0];

function orgAccessOrFail(stored: Record<string, boolean>, given: OrgAccessInput): Record<string, boolean> {
  const r = resolveOrgAccess(stored, given);
  if (!r.ok) throw ApiError.of(r.code, { detail: r.detail, pointer: r.pointer });
  return r.value;
}

export async function createTeam(caller: Caller, organization: string, a: TeamAttributes & { name: string }): Promise<TeamView> {
  const db = caller.db;
  const access = await requireOrgAccess(caller, { name: organization });
  authorize(caller, "teams.manage", { access });
  if (!TEAM_NAME.test(a.name)) throw invalidName();
  if (a.name.toLowerCase() === "owners") throw nameTaken();
  const given = a["organization-access"] ?? {};
  // Granting organisation permissions is itself a permission.
  if (Object.values(given).some((v) => v === true)) authorize(caller, "teams.manage-organization-access", { access });
  const orgAccess = orgAccessOrFail({}, given);
  const id = newId("team");
  const orgId = access.organization.externalId;
  const audit = auditStatementsOf(caller, orgId, { id, type: "team", action: "create", meta: { name: a.name } }, true);
  const inserted = await insertTeam(
    db,
    {
      id,
      organizationId: access.organization.externalId,
      name: a.name,
      visibility: a.visibility ?? "secret",
      ssoTeamId: a["sso-team-id"] ?? null,
      organizationAccess: orgAccess,
      allowMemberTokenManagement: a["allow-member-token-management"] !== false,
      serviceUserId: newId("user"),
      createdAt: nowIso(),
    },
    audit,
  );
  if (!inserted) throw nameTaken();
  return view(db, (await findTeam(db, id))!, access);
}

/** The teams the caller may see, filtered by name (`q`: substring; `names`: exact, case-insensitive). */
export async function listTeams(
  caller: Caller,
  organization: string,
  filter: { q?: string; names?: string },
  page: Page,
): Promise<{ teams: TeamView[]; total: number }> {
  const db = caller.db;
  const access = await requireOrgAccess(caller, { name: organization });
  const { q } = filter;
  const all = await organizationTeams(db, access.organization.externalId);
  const names = filter.names ? new Set(filter.names.split(",").map((s) => foldAscii(s.trim()))) : null;
  const visible = all.filter((t) => canSee(access, t) && (!q || containsText(t.name, q)) && (!names || names.has(foldAscii(t.name))));
  const slice = pageSlice(visible, page);
  return { teams: await views(db, slice, access), total: visible.length };
}

const TEAM_INCLUDES = ["users", "organization-memberships"] as const;

/** A team with the included resources asked for (`include`: users, organization-memberships). */
export async function showTeam(
  caller: Caller,
  teamId: string,
  includeParam: string | undefined,
): Promise<{ team: TeamView; users: Array<{ id: string; username: string }> | null; memberships: Membership[] | null }> {
  const { team, access } = await loadTeam(caller, teamId);
  const include = includesOf(includeParam, TEAM_INCLUDES);
  const db = caller.db;
  const v = await view(db, team, access);
  const users = include.includes("users") ? await usernames(db, v.members) : null;
  // Members' addresses as the membership endpoints show them to this caller.
  const memberships = include.includes("organization-memberships") ? (await membershipsById(db, v.memberships)).map((m) => redactEmail(access, m)) : null;
  return { team: v, users, memberships };
}

export async function updateTeam(caller: Caller, teamId: string, a: TeamAttributes): Promise<TeamView> {
  const { team, access } = await loadTeam(caller, teamId);
  const { "organization-access": givenAccess } = a;
  // Team managers change names and settings; organisation-access managers (who also manage teams) change permissions.
  authorize(caller, "teams.manage", { access });
  if (givenAccess !== undefined) authorize(caller, "teams.manage-organization-access", { access });
  if (team.isOwners) {
    if (a.name !== undefined && a.name !== team.name)
      throw ApiError.of("invalid_attribute", { detail: "The owners team cannot be renamed", pointer: "/data/attributes/name" });
    const off = Object.entries(givenAccess ?? {}).find(([, v]) => v === false);
    if (off)
      throw ApiError.of("invalid_attribute", {
        detail: "The owners team always has every organization permission",
        pointer: `/data/attributes/organization-access/${off[0]}`,
      });
  }
  if (a.name !== undefined && !TEAM_NAME.test(a.name)) throw invalidName();
  if (a.name !== undefined && a.name.toLowerCase() === "owners" && !team.isOwners) throw nameTaken();
  const orgAccess = team.isOwners ? team.organizationAccess : orgAccessOrFail(team.organizationAccess, givenAccess ?? {});
  const db = caller.db;
  const updated = await updateTeamRow(
    db,
    {
      id: team.id,
      name: a.name ?? team.name,
      visibility: a.visibility ?? team.visibility,
      ssoTeamId: a["sso-team-id"] !== undefined ? a["sso-team-id"] : team.ssoTeamId,
      organizationAccess: orgAccess,
      allowMemberTokenManagement: a["allow-member-token-management"] ?? team.allowMemberTokenManagement,
    },
    auditStatementsOf(caller, team.organizationId, {
      id: team.id,
      type: "team",
      action: "update",
      meta: { name: a.name ?? team.name, ...(givenAccess !== undefined ? { organization_access_changed: true } : {}) },
    }),
  );
  if (!updated) throw nameTaken();
  return view(db, (await findTeam(db, team.id))!, access);
}

export async function deleteTeam(caller: Caller, teamId: string): Promise<void> {
  const { team, access } = await loadTeam(caller, teamId);
  authorize(caller, "teams.manage", { access });
  if (team.isOwners) throw ApiError.of("invalid_attribute", { detail: "The owners team cannot be deleted", pointer: "/data" });
  await deleteTeamRows(
    caller.db,
    team.id,
    auditStatementsOf(caller, team.organizationId, { id: team.id, type: "team", action: "destroy", meta: { name: team.name } }),
  );
}

async function teamForMembership(caller: Caller, teamId: string): Promise<Team> {
  const { team, access } = await loadTeam(caller, teamId);
  authorize(caller, "teams.change-members", { access, team });
  return team;
}

/**
 * Adds or removes members (by user id); the owners team keeps at least one member. A user whose
 * organisation membership is still an invitation joins the team when it accepts, not before.
 */
async function changeMembers(caller: Caller, team: Team, userIds: string[], add: boolean): Promise<void> {
  if (userIds.length === 0) return;
  const db = caller.db;
  const audit = auditStatements(
    db,
    userIds.map((userId) =>
      auditOf(caller, team.organizationId, {
        id: userId,
        type: "team_membership",
        action: add ? "add" : "remove",
        meta: { team_id: team.id, team_name: team.name },
      }),
    ),
  );
  if (!add) {
    if (team.isOwners && (await membersLeft(db, team.id, userIds)) === 0) {
      throw ApiError.of("invalid_attribute", { detail: "The owners team must keep at least one member", pointer: "/data" });
    }
    await removeMembers(db, team, userIds, team.isOwners, audit);
    return;
  }
  const now = nowIso();
  await addMembers(
    db,
    team,
    userIds.map((userId) => ({ userId, membershipId: newId("ou") })),
    now,
    audit,
  );
}

/** Adds or removes members named by user id or (go-tfe's `Usernames`) by username. */
export async function changeUsers(caller: Caller, teamId: string, refs: string[], add: boolean): Promise<void> {
  const team = await teamForMembership(caller, teamId);
  const found = await usersByIdOrUsername(caller.db, refs);
  const byRef = new Map<string, string>();
  for (const r of found) {
    byRef.set(r.id, r.id);
    byRef.set(r.username.toLowerCase(), r.id);
  }
  const missing = refs.findIndex((ref) => !byRef.has(ref) && !byRef.has(ref.toLowerCase()));
  if (missing >= 0) throw ApiError.of("not_found", { detail: `User not found: ${refs[missing]}`, pointer: `/data/${missing}/id` });
  await changeMembers(caller, team, [...new Set(refs.map((ref) => byRef.get(ref) ?? byRef.get(ref.toLowerCase())!))], add);
}

/** Adds or removes members named by their organisation membership id. */
export async function changeMemberships(caller: Caller, teamId: string, ids: string[], add: boolean): Promise<void> {
  const team = await teamForMembership(caller, teamId);
  const memberships = await membershipsById(caller.db, ids);
  const byId = new Map(memberships.filter((m) => m.organizationId === team.organizationId).map((m) => [m.id, m.userId]));
  const missing = ids.findIndex((id) => !byId.has(id));
  if (missing >= 0) throw ApiError.of("not_found", { detail: `Organization membership not found: ${ids[missing]}`, pointer: `/data/${missing}/id` });
  await changeMembers(caller, team, [...new Set(ids.map((id) => byId.get(id)!))], add);
}
