import type { Resource } from "../jsonapi/document";
import type { Membership } from "../users/memberships.d1";
import { serializeMembership } from "../users/memberships.serialize";
import type { Team } from "./teams.d1";
import { ORG_ACCESS_KEYS } from "./teams.rules";
import type { TeamCallerRights, TeamView } from "./teams.service";

export function organizationAccess(team: Team): Record<string, boolean> {
  return Object.fromEntries(ORG_ACCESS_KEYS.map((k) => [k, team.isOwners ? true : team.organizationAccess[k] === true]));
}

/** `organization`: the name of the team's organisation as the request read it (rows name it by id). */
export function serializeTeam(team: Team, organization: string, members: string[], rights: TeamCallerRights, memberships: string[] = []): Resource {
  const owners = team.isOwners;
  return {
    id: team.id,
    type: "teams",
    attributes: {
      name: team.name,
      "is-unified": false,
      "organization-access": organizationAccess(team),
      visibility: team.visibility,
      "sso-team-id": team.ssoTeamId,
      "users-count": members.length,
      "allow-member-token-management": team.allowMemberTokenManagement,
      permissions: {
        "can-update-membership": rights.changeMembers ?? rights.manageMembership,
        "can-destroy": rights.manageTeams && !owners,
        "can-update-organization-access": rights.manageOrganizationAccess && !owners,
        "can-update-api-token": rights.manageTokens ?? rights.manageTeams,
        "can-update-visibility": rights.manageTeams,
        "can-update-name": rights.manageTeams && !owners,
      },
    },
    relationships: {
      organization: { data: { id: organization, type: "organizations" } },
      users: { data: members.map((id) => ({ id, type: "users" })) },
      "organization-memberships": { data: memberships.map((id) => ({ id, type: "organization-memberships" })) },
      "authentication-token": { meta: {} },
    },
    links: { self: `/api/v2/teams/${team.id}` },
  };
}

export const serializeTeamView = (v: TeamView): Resource => serializeTeam(v.team, v.organization, v.members, v.rights, v.memberships);

/** A team with the users and memberships its read included (`include`; null: not asked for). */
export function serializeTeamWithIncludes(
  v: TeamView,
  users: Array<{ id: string; username: string }> | null,
  memberships: Membership[] | null,
): { data: Resource; included?: Resource[] } {
  const included: Resource[] = [];
  for (const u of users ?? []) included.push({ id: u.id, type: "users", attributes: { username: u.username }, links: { self: `/api/v2/users/${u.id}` } });
  for (const m of memberships ?? []) included.push(serializeMembership(m, []));
  const data = serializeTeamView(v);
  return included.length ? { data, included } : { data };
}
