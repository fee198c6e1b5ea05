import type { Resource } from "../jsonapi/document";
import type { TeamRow } from "./teams.d1";

/** Every organisation-access key a team carries (the owners team has all of them). */
export const ORG_ACCESS_KEYS = [
  "manage-policies",
  "manage-policy-overrides",
  "delegate-policy-overrides",
  "manage-workspaces",
  "manage-vcs-settings",
  "manage-providers",
  "manage-modules",
  "manage-run-tasks",
  "manage-projects",
  "read-workspaces",
  "read-projects",
  "manage-membership",
  "manage-teams",
  "manage-organization-access",
  "access-secret-teams",
  "manage-agent-pools",
] as const;

export function organizationAccess(row: TeamRow): Record<string, boolean> {
  const stored = JSON.parse(row.organization_access) as Record<string, boolean>;
  return Object.fromEntries(ORG_ACCESS_KEYS.map((k) => [k, row.is_owners === 1 ? true : stored[k] === true]));
}

/** What the caller may do with a team (the `permissions` object). */
export interface TeamCallerRights {
  manageTeams: boolean;
  manageMembership: boolean;
  manageOrganizationAccess: boolean;
  /** Per team where it differs from manageTeams / manageMembership (the owners team, stronger teams). */
  manageTokens?: boolean;
  changeMembers?: boolean;
}

/** `organization`: the name of the team's organisation as the request read it (rows name it by id). */
export function serializeTeam(row: TeamRow, organization: string, members: string[], rights: TeamCallerRights, memberships: string[] = []): Resource {
  const owners = row.is_owners === 1;
  return {
    id: row.id,
    type: "teams",
    attributes: {
      name: row.name,
      "is-unified": false,
      "organization-access": organizationAccess(row),
      visibility: row.visibility,
      "sso-team-id": row.sso_team_id,
      "users-count": members.length,
      "allow-member-token-management": row.allow_member_token_management === 1,
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
    links: { self: `/api/v2/teams/${row.id}` },
  };
}
