/**
 * Who may do what with teams, their members and their tokens: pure predicates over the caller's standing, which the
 * requirement table (src/auth/requirements.ts) and the services read.
 */
import type { OrgAccess } from "./permissions";

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
  isOwners: boolean;
  /** The organisation permissions the team holds. */
  organizationAccess: Record<string, unknown>;
  allowMemberTokenManagement: boolean;
}

/**
 * Adding, removing or inviting members: the owners team only by owners (the site admin included);
 * anyone else doing it could make themselves, or anyone, an owner. Other teams: manage-membership.
 */
export function mayChangeMembers(access: OrgAccess, team: Pick<TeamFacts, "isOwners">): boolean {
  if (team.isOwners) return access.isOwner;
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
  if (team.isOwners) return access.isOwner;
  const principal = access.principal;
  if (principal.kind === "user" && access.teamIds.includes(team.id) && team.allowMemberTokenManagement) return true;
  if (access.isOwner || access.isOrgToken) return true;
  if (!teamRights(access).manageTeams) return false;
  return Object.entries(team.organizationAccess).every(([k, v]) => v !== true || access.orgPermissions[k] === true);
}

/**
 * Members' addresses are for those who manage membership (owners, the organisation token,
 * manage-membership) and the site admin; every other member sees its own address only, as the real
 * service shows other users' addresses to no one else.
 */
export function seesMemberEmails(access: OrgAccess): boolean {
  return access.isOwner || access.isOrgToken || teamRights(access).manageMembership;
}
