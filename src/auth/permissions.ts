/**
 * Effective permissions of a caller on a workspace: one pure function over every grant the
 * caller holds (site admin, owners, organisation token, team organisation-access, team project
 * access, team workspace access). Grants are cumulative: the most permissive wins per capability.
 */
import type { Organization } from "./organization.d1";
import type { Principal } from "./principal";

export type RunsLevel = 0 | 1 | 2 | 3; // none, read, plan, apply
export type VariablesLevel = 0 | 1 | 2; // none, read, write
export type StateLevel = 0 | 1 | 2 | 3; // none, read-outputs, read, write

/** Capabilities on one workspace. */
export interface Capabilities {
  runs: RunsLevel;
  variables: VariablesLevel;
  stateVersions: StateLevel;
  sentinelMocks: boolean;
  locking: boolean;
  runTasks: boolean;
  /** read/write settings, manage tags, force-unlock, team access. */
  admin: boolean;
  /** delete the workspace (safe delete; force delete also needs ownership or the org setting). */
  delete: boolean;
  /** move the workspace to another project (needs it on both projects). */
  move: boolean;
}

export const NO_ACCESS: Capabilities = {
  runs: 0,
  variables: 0,
  stateVersions: 0,
  sentinelMocks: false,
  locking: false,
  runTasks: false,
  admin: false,
  delete: false,
  move: false,
};

export const FULL_ACCESS: Capabilities = {
  runs: 3,
  variables: 2,
  stateVersions: 3,
  sentinelMocks: true,
  locking: true,
  runTasks: true,
  admin: true,
  delete: true,
  move: true,
};

/**
 * A run token on its own workspace (docs/runs.md "The run token"): what Terraform on the agent needs to read the
 * workspace and, in the apply phase, write its state as the run holding the lock; nothing that administers, queues
 * runs or changes variables. On any other workspace it holds nothing.
 */
export const RUN_CAPABILITIES: Capabilities = { ...NO_ACCESS, runs: 1, variables: 1, stateVersions: 3, locking: true };
/**
 * A plan phase's token reads the state but never writes it: a plan has no state to save, yet Terraform's local
 * operation persists the state it holds when it is interrupted (internal/backend/local `opWait`), which would give a
 * canceled plan a state version.
 */
export const PLAN_RUN_CAPABILITIES: Capabilities = { ...RUN_CAPABILITIES, stateVersions: 2 };
/**
 * What a run holds on another workspace of its organisation that shares its state with the run's workspace
 * (`global-remote-state`, `project-remote-state` or its remote-state consumers): reading that workspace and its state,
 * as `terraform_remote_state` and `tfe_outputs` do; never its runs, variables or lock.
 */
export const REMOTE_STATE_CAPABILITIES: Capabilities = { ...NO_ACCESS, stateVersions: 2 };

const RUNS: Record<string, RunsLevel> = { none: 0, read: 1, plan: 2, apply: 3 };
const VARIABLES: Record<string, VariablesLevel> = { none: 0, read: 1, write: 2 };
const STATE: Record<string, StateLevel> = { none: 0, "read-outputs": 1, read: 2, write: 3 };

/** Workspace access levels (team-workspaces), per the real role table. */
export function workspaceAccessCapabilities(access: string, custom: Record<string, unknown> = {}): Capabilities {
  switch (access) {
    case "read":
      return { ...NO_ACCESS, runs: 1, variables: 1, stateVersions: 2 };
    case "plan":
      return { ...NO_ACCESS, runs: 2, variables: 1, stateVersions: 2 };
    case "write":
      return { ...NO_ACCESS, runs: 3, variables: 2, stateVersions: 3, sentinelMocks: true, locking: true };
    case "admin":
      return { ...FULL_ACCESS, move: false };
    case "custom":
      return {
        ...NO_ACCESS,
        runs: RUNS[String(custom.runs ?? "read")] ?? 1,
        variables: VARIABLES[String(custom.variables ?? "none")] ?? 0,
        stateVersions: STATE[String(custom["state-versions"] ?? "none")] ?? 0,
        sentinelMocks: custom["sentinel-mocks"] === "read",
        locking: custom["workspace-locking"] === true,
        runTasks: custom["run-tasks"] === true,
      };
    default:
      return NO_ACCESS;
  }
}

/** Project access levels (team-projects) as they apply to the project's workspaces. */
export function projectAccessCapabilities(access: string, custom: Record<string, unknown> = {}): Capabilities {
  switch (access) {
    case "read":
      return { ...NO_ACCESS, runs: 1, variables: 1, stateVersions: 2 };
    case "write":
      return { ...NO_ACCESS, runs: 3, variables: 2, stateVersions: 3, sentinelMocks: true, locking: true };
    case "maintain":
      return { ...FULL_ACCESS, move: false };
    case "admin":
      return FULL_ACCESS;
    case "custom": {
      const w = (custom["workspace-access"] ?? {}) as Record<string, unknown>;
      return {
        ...NO_ACCESS,
        runs: RUNS[String(w.runs ?? "read")] ?? 1,
        variables: VARIABLES[String(w.variables ?? "none")] ?? 0,
        stateVersions: STATE[String(w["state-versions"] ?? "none")] ?? 0,
        sentinelMocks: w["sentinel-mocks"] === "read",
        locking: w.locking === true,
        runTasks: w["run-tasks"] === true,
        delete: w.delete === true,
        move: w.move === true,
      };
    }
    default:
      return NO_ACCESS;
  }
}

/** Whether a custom project grant lets its holder create workspaces in the project. */
export function projectAllowsCreate(access: string, custom: Record<string, unknown> = {}): boolean {
  if (access === "maintain" || access === "admin") return true;
  if (access === "custom") return ((custom["workspace-access"] ?? {}) as Record<string, unknown>).create === true;
  return false;
}

export function union(a: Capabilities, b: Capabilities): Capabilities {
  return {
    runs: Math.max(a.runs, b.runs) as RunsLevel,
    variables: Math.max(a.variables, b.variables) as VariablesLevel,
    stateVersions: Math.max(a.stateVersions, b.stateVersions) as StateLevel,
    sentinelMocks: a.sentinelMocks || b.sentinelMocks,
    locking: a.locking || b.locking,
    runTasks: a.runTasks || b.runTasks,
    admin: a.admin || b.admin,
    delete: a.delete || b.delete,
    move: a.move || b.move,
  };
}

export function canRead(c: Capabilities): boolean {
  return c.runs >= 1;
}

/** One team grant (team-workspaces or team-projects row): its level and custom keys. */
export interface GrantLevel {
  access: string;
  perms: Record<string, unknown>;
}

/** The caller's standing in the workspace's organisation, before any per-workspace grant. */
export interface Standing {
  siteAdmin: boolean;
  /** Member of the owners team (or holder of one of its tokens). */
  owner: boolean;
  /** The organisation's own token. */
  orgToken: boolean;
  /** Union of the caller's teams' organisation-access keys. */
  orgPermissions: Record<string, boolean>;
}

/**
 * Capabilities on every workspace of the organisation from the standing alone: site admins, owners
 * and the organisation token hold everything; `manage-workspaces` is admin of every workspace (moving
 * also needs `manage-projects`); `read-workspaces` reads every workspace.
 */
export function orgWideCapabilities(s: Standing): Capabilities {
  if (s.siteAdmin || s.owner || s.orgToken) return FULL_ACCESS;
  if (s.orgPermissions["manage-workspaces"]) return { ...FULL_ACCESS, move: s.orgPermissions["manage-projects"] === true };
  if (s.orgPermissions["read-workspaces"]) return workspaceAccessCapabilities("read");
  return NO_ACCESS;
}

/**
 * THE effective permission of a caller on one workspace: the standing's organisation-wide
 * capabilities, united with every grant the caller's teams hold on the workspace and on its project.
 * Grants are cumulative; none ever takes a capability away. Every grant level (even `custom` with
 * nothing set) includes reading runs, so "has any grant" ⇔ "can read" (the list query relies on it).
 */
export function effectiveCapabilities(s: Standing, workspaceGrants: GrantLevel[], projectGrants: GrantLevel[]): Capabilities {
  let caps = orgWideCapabilities(s);
  for (const g of workspaceGrants) caps = union(caps, workspaceAccessCapabilities(g.access, g.perms));
  for (const g of projectGrants) caps = union(caps, projectAccessCapabilities(g.access, g.perms));
  return caps;
}

/** Force delete: owners (and the organisation token) always; workspace admins when the organisation allows it. */
export function forceDeleteAllowed(s: Standing, caps: Capabilities, allowForceDeleteWorkspaces: boolean): boolean {
  if (s.siteAdmin || s.owner || s.orgToken) return true;
  return caps.admin && caps.delete && allowForceDeleteWorkspaces;
}

/** Creating a workspace in a project: owners, the organisation token, `manage-workspaces`, or a project grant allowing it. */
export function createAllowed(s: Standing, projectGrants: GrantLevel[]): boolean {
  if (s.siteAdmin || s.owner || s.orgToken || s.orgPermissions["manage-workspaces"]) return true;
  return projectGrants.some((g) => projectAllowsCreate(g.access, g.perms));
}

/** What a caller holds on a project (see `projectRights`). */
export interface ProjectRights {
  read: boolean;
  /** Settings and tag bindings: manage-projects, or a project admin (custom settings update/delete). */
  admin: boolean;
  /** Team access of the project: manage-projects, or a project admin (custom teams manage). */
  manageTeams: boolean;
  /** Reading the project's team access: manage-projects, read-projects or any grant on the project. */
  readTeams: boolean;
  /** Creating workspaces in it (see `createAllowed`). */
  createWorkspaces: boolean;
  /** Reading its variable sets: variable-set readers, or a grant on it that reads variables. */
  readVariables: boolean;
  /** Reading the variable sets it owns: manage-projects, or a grant on it with variable-sets read or write. */
  readVariableSets: boolean;
  /** Creating, changing, applying and deleting the sets it owns: manage-projects, or variable-sets write. */
  manageVariableSets: boolean;
}

const VARIABLE_SETS: Record<string, number> = { none: 0, read: 1, write: 2 };

/**
 * A project grant's level over the variable sets the project owns (0 none, 1 read, 2 write): the admin role
 * implies write (the project permissions reference gives it "Manage variable sets"), other fixed roles none, a
 * custom grant its `project-access.variable-sets` (default none).
 */
export function projectVariableSetsLevel(g: GrantLevel): number {
  if (g.access === "admin") return 2;
  if (g.access !== "custom") return 0;
  const projectAccess = (g.perms["project-access"] ?? {}) as Record<string, unknown>;
  return VARIABLE_SETS[String(projectAccess["variable-sets"] ?? "none")] ?? 0;
}

/** The 21 documented workspace permission flags (plus the ones go-tfe also decodes), from capabilities. */
export interface PermissionFlags {
  [flag: string]: boolean;
}

export function permissionFlags(c: Capabilities, opts: { canForceDelete: boolean; isOrgToken?: boolean }): PermissionFlags {
  return {
    "can-update": c.admin,
    "can-destroy": c.delete,
    "can-queue-run": c.runs >= 2,
    "can-read-run": c.runs >= 1,
    "can-read-variable": c.variables >= 1,
    "can-update-variable": c.variables >= 2,
    "can-read-state-versions": c.stateVersions >= 2,
    "can-read-state-outputs": c.stateVersions >= 1,
    "can-create-state-versions": c.stateVersions >= 3 && !opts.isOrgToken,
    "can-queue-apply": c.runs >= 3,
    "can-lock": c.locking,
    "can-unlock": c.locking,
    "can-force-unlock": c.admin,
    "can-read-settings": c.runs >= 1,
    "can-manage-tags": c.admin,
    "can-manage-run-tasks": c.runTasks,
    "can-force-delete": opts.canForceDelete,
    "can-manage-assessments": c.admin,
    "can-manage-ephemeral-workspaces": c.admin,
    "can-read-assessment-results": c.runs >= 1,
    "can-queue-destroy": c.runs >= 3 && c.admin,
  };
}

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

/** The pure model's view of an OrgAccess. */
export function standingOf(access: OrgAccess): Standing {
  return { siteAdmin: access.isSiteAdmin, owner: access.isOwner, orgToken: access.isOrgToken, orgPermissions: access.orgPermissions };
}

/** Who may create state versions, and so receive upload URLs (organisation tokens cannot, as in the real service). */
export function canUpload(scope: { access: { isOrgToken: boolean } }, caps: { stateVersions: number }): boolean {
  return caps.stateVersions >= 3 && !scope.access.isOrgToken;
}
