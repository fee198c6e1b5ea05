import { ApiError } from "../errors";
import { toOrganization, type Organization } from "../organizations/organizations.index";
import { accessRows, orgWithCallerTeams, teamGrants, type AccessTeamRow, type Grant, type ProjectDefaultsRow } from "./access.d1";
import {
  FULL_ACCESS,
  createAllowed,
  effectiveCapabilities,
  forceDeleteAllowed,
  orgWideCapabilities,
  permissionFlags,
  type Capabilities,
  type GrantLevel,
  type PermissionFlags,
  type Standing,
} from "./permissions";
import type { Principal } from "./principal";

/** Organisation-level permissions a team grants (`organization-access`). */
export interface OrgPermissions {
  "manage-workspaces": boolean;
  "manage-projects": boolean;
  "read-workspaces": boolean;
  "read-projects": boolean;
  "manage-membership": boolean;
  "manage-teams": boolean;
  "manage-organization-access": boolean;
  "manage-vcs-settings": boolean;
  "manage-agent-pools": boolean;
  [key: string]: boolean;
}

/** What a caller may do in one organisation, before looking at a particular workspace. */
export interface OrgAccess {
  organization: Organization;
  principal: Principal;
  isSiteAdmin: boolean;
  /** Member of (or token of) the owners team. */
  isOwner: boolean;
  isOrgToken: boolean;
  teamIds: string[];
  orgPermissions: OrgPermissions;
  /** Capabilities on every workspace of the organisation (owners, manage-workspaces, read-workspaces). */
  base: Capabilities;
}

export type { Grant, ProjectDefaultsRow } from "./access.d1";

const ALL_ORG_PERMISSIONS: OrgPermissions = {
  "manage-workspaces": true,
  "manage-projects": true,
  "read-workspaces": true,
  "read-projects": true,
  "manage-membership": true,
  "manage-teams": true,
  "manage-organization-access": true,
  "manage-vcs-settings": true,
  "manage-agent-pools": true,
};

const NO_ORG_PERMISSIONS: OrgPermissions = Object.fromEntries(
  Object.keys(ALL_ORG_PERMISSIONS).map((k) => [k, false]),
) as OrgPermissions;

/**
 * Loads the caller's access to an organisation in one D1 round trip.
 * Returns null when the organisation does not exist or the caller has no standing in it (→ 404).
 */
export async function loadOrgAccess(
  db: D1Database | D1DatabaseSession,
  principal: Principal,
  organizationName: string,
  opts: OrgAccessOptions = {},
): Promise<OrgAccess | null> {
  const { org, teams } = await orgWithCallerTeams(db, principal, organizationName);
  if (!org) return null;
  return buildOrgAccess(principal, toOrganization(org), teams, opts);
}

export interface OrgAccessOptions {
  /**
   * The organisation's own settings (update, delete, its token): owners and the site admin reach them
   * with user tokens even when the organisation refuses user tokens, as owners do through the real
   * service's UI, so that the setting can always be switched back.
   */
  ownerSettings?: boolean;
}

export function buildOrgAccess(principal: Principal, organization: Organization, teams: AccessTeamRow[], opts: OrgAccessOptions = {}): OrgAccess | null {
  const isSiteAdmin = principal.kind === "user" && principal.isSiteAdmin;
  const isOrgToken = principal.kind === "organization" && principal.organization.toLowerCase() === organization.name.toLowerCase();
  const isOwner = teams.some((t) => t.is_owners === 1);
  // An organisation may refuse user tokens (`user-tokens-enabled: false`): 401 as for an unknown token,
  // the site admin's included (go-tfe checks that its user-token client can no longer read the
  // organisation). Owners and the site admin keep their way back: the organisation's update and
  // delete and its organisation token (`ownerSettings`), as the real service's UI keeps them.
  if (principal.kind === "user" && organization.attrs["user-tokens-enabled"] === false && !((isOwner || isSiteAdmin) && opts.ownerSettings)) {
    throw ApiError.of("unauthorized");
  }
  if (!isSiteAdmin && !isOrgToken && teams.length === 0) return null;

  let orgPermissions: OrgPermissions = { ...NO_ORG_PERMISSIONS };
  if (isSiteAdmin || isOwner || isOrgToken) orgPermissions = { ...ALL_ORG_PERMISSIONS };
  else {
    for (const t of teams) {
      const granted = JSON.parse(t.organization_access) as Record<string, unknown>;
      for (const [k, v] of Object.entries(granted)) if (v === true) orgPermissions[k] = true;
    }
  }
  const base = orgWideCapabilities({ siteAdmin: isSiteAdmin, owner: isOwner, orgToken: isOrgToken, orgPermissions });
  return {
    organization,
    principal,
    isSiteAdmin,
    isOwner: isOwner || isSiteAdmin,
    isOrgToken,
    teamIds: teams.map((t) => t.id),
    orgPermissions,
    base,
  };
}

export async function requireOrgAccess(
  db: D1Database | D1DatabaseSession,
  principal: Principal,
  organizationName: string,
  opts: OrgAccessOptions = {},
): Promise<OrgAccess> {
  const access = await loadOrgAccess(db, principal, organizationName, opts);
  if (!access) throw ApiError.of("not_found");
  return access;
}

/** Team grants on the given workspaces and projects, in one batch. */
export async function loadGrants(
  db: D1Database | D1DatabaseSession,
  access: OrgAccess,
  workspaceIds: string[],
  projectIds: string[],
): Promise<{ workspaces: Grant[]; projects: Grant[] }> {
  if (access.teamIds.length === 0 || access.base === FULL_ACCESS) return { workspaces: [], projects: [] };
  return teamGrants(db, access.teamIds, workspaceIds, projectIds);
}

/** The pure model's view of an OrgAccess. */
export function standingOf(access: OrgAccess): Standing {
  return { siteAdmin: access.isSiteAdmin, owner: access.isOwner, orgToken: access.isOrgToken, orgPermissions: access.orgPermissions };
}

const levels = (grants: Grant[], targetId: string): GrantLevel[] =>
  grants.filter((g) => g.target_id === targetId).map((g) => ({ access: g.access, perms: JSON.parse(g.perms) as Record<string, unknown> }));

/** Capabilities of the caller on one workspace (see `effectiveCapabilities`). */
export function workspaceCapabilities(
  access: OrgAccess,
  workspace: { id: string; projectId: string },
  grants: { workspaces: Grant[]; projects: Grant[] },
): Capabilities {
  return effectiveCapabilities(standingOf(access), levels(grants.workspaces, workspace.id), levels(grants.projects, workspace.projectId));
}

/** Whether the caller may create workspaces in a project. */
export function canCreateWorkspaceIn(access: OrgAccess, projectId: string, projectGrants: Grant[]): boolean {
  return createAllowed(standingOf(access), levels(projectGrants, projectId));
}

/** Force delete: owners always; workspace admins when the organisation allows it (spec §4.8). */
export function canForceDelete(access: OrgAccess, caps: Capabilities): boolean {
  return forceDeleteAllowed(standingOf(access), caps, access.organization.allowForceDeleteWorkspaces);
}

export function flagsFor(access: OrgAccess, caps: Capabilities): PermissionFlags {
  return permissionFlags(caps, { canForceDelete: canForceDelete(access, caps), isOrgToken: access.isOrgToken });
}

/**
 * Everything needed to authorise and serialise workspaces of one organisation, in one D1 batch:
 * the organisation, the caller's teams, their grants on the given workspaces and projects, and the
 * projects' execution defaults.
 */
export async function loadAccessBatch(
  db: D1Database | D1DatabaseSession,
  principal: Principal,
  organizationName: string,
  workspaceIds: string[],
  projectIds: string[],
): Promise<{ access: OrgAccess; grants: { workspaces: Grant[]; projects: Grant[] }; projects: Map<string, ProjectDefaultsRow> } | null> {
  const rows = await accessRows(db, principal, organizationName, workspaceIds, projectIds);
  if (!rows.org) return null;
  const access = buildOrgAccess(principal, toOrganization(rows.org), rows.teams);
  if (!access) return null;
  return { access, grants: rows.grants, projects: new Map(rows.projects.map((p) => [p.id, p])) };
}
