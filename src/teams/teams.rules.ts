/** Pure rules of teams: organisation-access dependencies and who may manage what (issue 3). */
import type { OrgAccess } from "../auth/permissions";
import type { Failure } from "../errors";
import { ORG_ACCESS_KEYS } from "./teams.serialize";

export type OrgAccessKey = (typeof ORG_ACCESS_KEYS)[number];
export type OrgAccessInput = Partial<Record<OrgAccessKey, boolean | undefined>>;

/** Managing implies reading: filled in when the request does not set the implied key itself. */
const IMPLIED: Array<[OrgAccessKey, OrgAccessKey]> = [
  ["manage-workspaces", "read-workspaces"],
  ["manage-projects", "read-projects"],
];

/** Keys that need others (the real service refuses the combination; go-tfe's tests set both). */
const REQUIRES: Array<[OrgAccessKey, OrgAccessKey[], string]> = [
  ["manage-workspaces", ["read-workspaces"], "read-workspaces"],
  ["manage-projects", ["read-projects"], "read-projects"],
  ["manage-projects", ["manage-workspaces"], "manage-workspaces"],
  ["read-projects", ["read-workspaces"], "read-workspaces"],
  ["manage-teams", ["manage-membership"], "manage-membership"],
  ["manage-organization-access", ["manage-teams"], "manage-teams"],
  [
    "access-secret-teams",
    ["manage-membership", "manage-teams", "manage-organization-access"],
    "one of manage-membership, manage-teams or manage-organization-access",
  ],
];

/**
 * The organisation access a team ends up with: the stored keys, overwritten by the request's, with
 * implied reads added, or the first dependency the result violates (422).
 */
export function resolveOrgAccess(stored: Record<string, boolean>, given: OrgAccessInput): { ok: true; value: Record<OrgAccessKey, boolean> } | Failure {
  const out = Object.fromEntries(ORG_ACCESS_KEYS.map((k) => [k, given[k] ?? stored[k] === true])) as Record<OrgAccessKey, boolean>;
  for (const [k, implied] of IMPLIED) if (out[k] && given[implied] === undefined) out[implied] = true;
  for (const [k, needs, words] of REQUIRES) {
    if (out[k] && !needs.some((n) => out[n])) {
      return {
        ok: false,
        code: "invalid_attribute",
        detail: `${k} requires ${words}`,
        pointer: `/data/attributes/organization-access/${given[needs[0]] === false ? needs[0] : k}`,
      };
    }
  }
  return { ok: true, value: out };
}

/** Who may do what with teams; owners and the organisation token may do everything. */
export function teamRights(access: OrgAccess) {
  const all = access.isOwner || access.isOrgToken;
  const p = access.orgPermissions;
  return {
    /** Create, rename, change visibility, delete teams; manage team tokens. */
    manageTeams: all || p["manage-teams"] === true,
    /** Add and remove members; invite and remove organisation members. */
    manageMembership: all || p["manage-membership"] === true || p["manage-teams"] === true,
    /** Change a team's organisation access. */
    manageOrganizationAccess: all || p["manage-organization-access"] === true,
    /** See secret teams one is not a member of. */
    seeSecretTeams: all || p["manage-teams"] === true || p["access-secret-teams"] === true,
  };
}

/** The parts of a team the rules below look at. */
export interface TeamFacts {
  id: string;
  is_owners: number;
  organization_access: string;
  allow_member_token_management: number;
}

/**
 * Adding, removing or inviting members: the owners team only by owners (the site admin included);
 * anyone else doing it could make themselves, or anyone, an owner. Other teams: manage-membership.
 */
export function mayChangeMembers(access: OrgAccess, team: Pick<TeamFacts, "is_owners">): boolean {
  if (team.is_owners === 1) return access.isOwner;
  return teamRights(access).manageMembership;
}

/**
 * Managing a team's tokens (create, replace, list, revoke). A minted token never has more power
 * than its minter: the owners team's tokens are for owners alone (not the organisation token, which
 * cannot delete the organisation); other teams' tokens for owners, the organisation token and
 * manage-teams holders (as in the real service) when the team holds no organisation permission
 * the caller lacks. A user who is a member of a team allowing member token management holds the
 * team's power already. A team token acts for no member, so without manage-teams it mints nothing,
 * not even siblings that would outlive its own revocation.
 */
export function mayManageTeamTokens(access: OrgAccess, team: TeamFacts): boolean {
  if (team.is_owners === 1) return access.isOwner;
  const principal = access.principal;
  if (principal.kind === "user" && access.teamIds.includes(team.id) && team.allow_member_token_management === 1) return true;
  if (access.isOwner || access.isOrgToken) return true;
  if (!teamRights(access).manageTeams) return false;
  const held = JSON.parse(team.organization_access) as Record<string, unknown>;
  return Object.entries(held).every(([k, v]) => v !== true || access.orgPermissions[k] === true);
}
