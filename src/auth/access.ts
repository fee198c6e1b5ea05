import type { Caller, Db } from "../caller";
import { ApiError } from "../errors";
import type { Organization, OrgRef } from "./organization.d1";
import { accessRows, orgWithCallerTeams, teamGrants, type AccessTeam, type Grant, type ProjectDefaults } from "./access.d1";
import {
  FULL_ACCESS,
  NO_ACCESS,
  PLAN_RUN_CAPABILITIES,
  REMOTE_STATE_CAPABILITIES,
  RUN_CAPABILITIES,
  createAllowed,
  effectiveCapabilities,
  forceDeleteAllowed,
  orgWideCapabilities,
  permissionFlags,
  type Capabilities,
  type GrantLevel,
  type OrgAccess,
  type OrgPermissions,
  type PermissionFlags,
  standingOf,
  projectVariableSetsLevel,
  type ProjectRights,
} from "./permissions";
import type { Principal } from "./principal";
import { authorize } from "./requirements";

export type { OrgAccess, OrgPermissions } from "./permissions";
export type { Grant, ProjectDefaults } from "./access.d1";

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

const NO_ORG_PERMISSIONS: OrgPermissions = Object.fromEntries(Object.keys(ALL_ORG_PERMISSIONS).map((k) => [k, false])) as OrgPermissions;

/**
 * Loads the caller's access to an organisation in one D1 round trip.
 * Returns null when the organisation does not exist or the caller has no standing in it (→ 404).
 */
export async function loadOrgAccess(
  db: D1Database | D1DatabaseSession,
  principal: Principal,
  ref: OrgRef,
  opts: OrgAccessOptions = {},
): Promise<OrgAccess | null> {
  const { org, teams } = await orgWithCallerTeams(db, principal, ref);
  if (!org) return null;
  return buildOrgAccess(principal, org, teams, opts);
}

export interface OrgAccessOptions {
  /**
   * The organisation's own settings (update, delete, its token): owners and the site admin reach them
   * with user tokens even when the organisation refuses user tokens, as owners do through the real
   * service's UI, so that the setting can always be switched back.
   */
  ownerSettings?: boolean;
}

/** Whether a UI session outlived an organisation's `session-timeout` (idle) or `session-remember` (lifetime), in minutes. */
export function sessionEnded(session: { createdAt: string; lastSeenAt: string }, attrs: Record<string, unknown>, nowMs: number): boolean {
  const minutes = (k: string) => (typeof attrs[k] === "number" ? (attrs[k] as number) * 60_000 : null);
  const idle = minutes("session-timeout");
  const lifetime = minutes("session-remember");
  return (idle !== null && nowMs - Date.parse(session.lastSeenAt) > idle) || (lifetime !== null && nowMs - Date.parse(session.createdAt) > lifetime);
}

export function buildOrgAccess(principal: Principal, organization: Organization, teams: AccessTeam[], opts: OrgAccessOptions = {}): OrgAccess | null {
  const isSiteAdmin = principal.kind === "user" && principal.isSiteAdmin;
  const isOrgToken = principal.kind === "organization" && principal.organizationId === organization.externalId;
  const isOwner = teams.some((t) => t.isOwners);
  // A run token stands in its own organisation (reading it and its entitlements), with no permission there: what it
  // holds on its one workspace is `workspaceCapabilities`'.
  const isRun = principal.kind === "run" && principal.organizationId === organization.externalId;
  // An organisation may refuse user tokens (`user-tokens-enabled: false`): 401 as for an unknown token,
  // the site admin's included (go-tfe checks that its user-token client can no longer read the
  // organisation). Owners and the site admin keep their way back: the organisation's update and
  // delete and its organisation token (`ownerSettings`), as the real service's UI keeps them.
  if (principal.kind === "user" && organization.attrs["user-tokens-enabled"] === false && !((isOwner || isSiteAdmin) && opts.ownerSettings)) {
    throw ApiError.of("unauthorized");
  }
  // A user token older than the organisation's user token TTL policy allows no longer reaches the organisation's
  // resources (the tfe provider's tfe_org_max_token_ttl_policy docs: "stop working and return an Unauthorized error").
  if (principal.kind === "user" && principal.tokenCreatedAt && typeof organization.userTokenTtlMs === "number") {
    if (Date.parse(principal.tokenCreatedAt) + organization.userTokenTtlMs <= Date.now()) throw ApiError.of("unauthorized");
  }
  // A person's web UI session ends, in this organisation, once idle longer than its session-timeout or older than its
  // session-remember (minutes; null: the service's own session lifetime alone).
  if (principal.kind === "user" && principal.session && sessionEnded(principal.session, organization.attrs, Date.now())) throw ApiError.of("session_expired");
  if (!isSiteAdmin && !isOrgToken && !isRun && teams.length === 0) return null;
  // `collaborator-auth-policy: two_factor_mandatory`: a member without a confirmed authenticator reaches nothing of the
  // organisation, through a session or its own token (a token is no way around the policy), until it enrols. Owners
  // keep the organisation's own settings, to switch the policy back; site admins stand by the installation, not
  // membership; team and organisation tokens are no person's.
  if (
    principal.kind === "user" &&
    !isSiteAdmin &&
    !principal.twoFactor &&
    organization.attrs["collaborator-auth-policy"] === "two_factor_mandatory" &&
    !(isOwner && opts.ownerSettings)
  )
    throw ApiError.of("two_factor_required");

  // `sso-required` (docs/behaviour.md): the members' web UI sessions started with a password reach nothing of the
  // organisation; an SSO session or a token does. Owners keep theirs as HCP Terraform's break-glass (its SSO docs: all
  // non-owner members must sign in through SSO); site admins stand by the installation.
  if (principal.kind === "user" && principal.session?.method === "password" && organization.attrs["sso-required"] === true && !isOwner && !isSiteAdmin)
    throw ApiError.of("sso_required");

  let orgPermissions: OrgPermissions = { ...NO_ORG_PERMISSIONS };
  if (isSiteAdmin || isOwner || isOrgToken) orgPermissions = { ...ALL_ORG_PERMISSIONS };
  else {
    for (const t of teams) {
      for (const [k, v] of Object.entries(t.organizationAccess)) if (v === true) orgPermissions[k] = true;
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

/** The caller's standing in the organisation, authorised as `organization.read` (404 without one). */
export async function requireOrgAccess(
  caller: { db: D1Database | D1DatabaseSession; principal: Principal; authorized?: Set<string> },
  ref: OrgRef,
  opts: OrgAccessOptions = {},
): Promise<OrgAccess> {
  const access = await loadOrgAccess(caller.db, caller.principal, ref, opts);
  authorize(caller, "organization.read", { access });
  return access!;
}

/**
 * Loads a row of an organisation's resource (through its repository's finder) and the caller's standing in its
 * organisation (404 when the row or the standing is missing).
 */
export async function loadOwned<T extends { organizationId: string }>(
  caller: Caller,
  find: (db: Db, id: string) => Promise<T | null>,
  id: string,
): Promise<{ item: T; access: OrgAccess }> {
  const item = await find(caller.db, id);
  if (!item) throw ApiError.of("not_found");
  return { item, access: await requireOrgAccess(caller, { id: item.organizationId }) };
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

const levels = (grants: Grant[], targetId: string): GrantLevel[] =>
  grants.filter((g) => g.targetId === targetId).map((g) => ({ access: g.access, perms: g.perms }));

/** What of a workspace decides who may read its state during runs (its remote state sharing). */
export interface StateSharing {
  id: string;
  projectId: string;
  settings?: { "global-remote-state": boolean; "project-remote-state": boolean };
  remoteStateConsumers?: readonly string[];
}

/**
 * Whether runs of workspace `reader` (in `workspace`'s organisation, and in project `readerProject` when known) may
 * read `workspace`'s state: every workspace of the organisation with global sharing, of its project with project
 * sharing, else its remote-state consumers (workspaces API: global-remote-state, project-remote-state).
 */
export function sharesStateWith(workspace: StateSharing, reader: string, readerProject: string | undefined): boolean {
  if (reader === workspace.id) return false;
  if (workspace.settings?.["global-remote-state"]) return true;
  if (workspace.settings?.["project-remote-state"]) return readerProject !== undefined && readerProject === workspace.projectId;
  return workspace.remoteStateConsumers?.includes(reader) ?? false;
}

/** Capabilities of the caller on one workspace (see `effectiveCapabilities`). */
export function workspaceCapabilities(access: OrgAccess, workspace: StateSharing, grants: { workspaces: Grant[]; projects: Grant[] }): Capabilities {
  const p = access.principal;
  // A run holds its own workspace, and reads the state of those sharing theirs with it (`access` is its organisation).
  if (p.kind === "run") {
    if (p.workspaceId === workspace.id) return p.phase === "plan" ? PLAN_RUN_CAPABILITIES : RUN_CAPABILITIES;
    return sharesStateWith(workspace, p.workspaceId, p.projectId) ? REMOTE_STATE_CAPABILITIES : NO_ACCESS;
  }
  return effectiveCapabilities(standingOf(access), levels(grants.workspaces, workspace.id), levels(grants.projects, workspace.projectId));
}

/**
 * What the caller holds on one project, from its standing and its teams' grants on the project.
 * `viaWorkspaces`: one of its teams holds a grant on a workspace of the project (reading the
 * project then), which the caller looks up only when nothing cheaper decided.
 */
export function projectRights(access: OrgAccess, projectId: string, projectGrants: Grant[], viaWorkspaces = false): ProjectRights {
  const p = access.orgPermissions;
  const orgWide = access.isOwner || access.isOrgToken || p["manage-projects"] === true;
  const here = projectGrants.filter((g) => g.targetId === projectId).map((g) => ({ access: g.access, perms: g.perms }));
  const projectAccess = (perms: Record<string, unknown>) => (perms["project-access"] ?? {}) as Record<string, unknown>;
  const admin =
    orgWide || here.some((g) => g.access === "admin" || (g.access === "custom" && ["update", "delete"].includes(String(projectAccess(g.perms).settings))));
  const manageTeams = orgWide || here.some((g) => g.access === "admin" || (g.access === "custom" && projectAccess(g.perms).teams === "manage"));
  const readsAll = orgWide || p["read-projects"] === true || p["manage-workspaces"] === true || p["read-workspaces"] === true;
  return {
    read: readsAll || here.length > 0 || viaWorkspaces,
    admin,
    manageTeams,
    readTeams: orgWide || p["read-projects"] === true || here.length > 0,
    createWorkspaces: createAllowed(standingOf(access), here),
    readVariables: p["read-workspaces"] === true || p["manage-workspaces"] === true || effectiveCapabilities(standingOf(access), [], here).variables >= 1,
    readVariableSets: orgWide || here.some((g) => projectVariableSetsLevel(g) >= 1),
    manageVariableSets: orgWide || here.some((g) => projectVariableSetsLevel(g) >= 2),
  };
}

/** Whether every project of the organisation is readable from the standing alone (no grant lookup needed). */
export function readsAllProjects(access: OrgAccess): boolean {
  return projectRights(access, "", []).read;
}

/** Force delete: owners always; workspace admins when the organisation sets allow-force-delete-workspaces. */
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
  ref: OrgRef,
  workspaceIds: string[],
  projectIds: string[],
): Promise<{ access: OrgAccess; grants: { workspaces: Grant[]; projects: Grant[] }; projects: Map<string, ProjectDefaults> } | null> {
  const rows = await accessRows(db, principal, ref, workspaceIds, projectIds);
  if (!rows.org) return null;
  const access = buildOrgAccess(principal, rows.org, rows.teams);
  if (!access) return null;
  return { access, grants: rows.grants, projects: new Map(rows.projects.map((p) => [p.id, p])) };
}
