/**
 * THE requirement table: what each action needs (`REQUIREMENTS`). Each API route names its action in
 * its declaration (`defineRoute`, src/jsonapi/define-route.ts); services call `authorize` with it; the
 * router refuses to answer a route whose declared action was never authorised; the
 * authorisation-matrix test reads both. Rules are pure functions of the caller and a target the
 * service has already loaded, so a check never costs a round trip of its own.
 */
import { ApiError, type ErrorCode } from "../errors";
import { forceDeleteAllowed, standingOf, type Capabilities, type OrgAccess, type ProjectRights } from "./permissions";
import type { Principal } from "./principal";
import { mayChangeMembers, mayManageTeamTokens, teamRights, type TeamFacts } from "./team-rights";

/** Everything a rule may look at, loaded by the service before it asks. */
export interface Target {
  /** The caller's standing in the organisation acted in (null: no standing, 404). */
  access?: OrgAccess | null;
  /** The caller's capabilities on the workspace acted on. */
  caps?: Capabilities;
  /** The team acted on. */
  team?: TeamFacts;
  /** The user acted on. */
  userId?: string;
  /** The caller's rights on the project acted on. */
  project?: ProjectRights;
  /** The agent pool whose tokens are acted on (they follow the pool's management permission). */
  agentPool?: { id: string };
}

interface Requirement {
  /** One line for people (the OpenAPI document and the matrix test's failures show it). */
  summary: string;
  holds: (p: Principal, t: Target) => boolean;
  /** The refusal for callers the rule turns away (404, as for a missing resource, unless the real API documents another status). */
  denied?: (p: Principal, t: Target) => ErrorCode;
}

const org = (t: Target): OrgAccess | null => t.access ?? null;
const ownerOrOrgToken = (a: OrgAccess | null) => !!a && (a.isOwner || a.isOrgToken);
const orgPermission = (a: OrgAccess | null, key: string) => ownerOrOrgToken(a) || a?.orgPermissions[key] === true;
const caps = (t: Target): Capabilities | null => (t.access ? (t.caps ?? null) : null);
const isUser = (p: Principal): p is Extract<Principal, { kind: "user" }> => p.kind === "user";
const siteAdmin = (p: Principal) => isUser(p) && p.isSiteAdmin;

export const REQUIREMENTS = {
  // ---- any caller, or a kind of caller ----
  authenticated: { summary: "any valid token", holds: () => true },
  user: { summary: "a user token", holds: (p) => isUser(p) },
  "site-admin": { summary: "the site admin", holds: (p) => siteAdmin(p) },
  "user.self": { summary: "the user itself, with a user token", holds: (p, t) => isUser(p) && p.userId === t.userId },
  "user.self-or-site-admin": {
    summary: "the user itself, or the site admin (a user's first token)",
    holds: (p, t) => isUser(p) && (p.userId === t.userId || p.isSiteAdmin),
  },

  "token.manage": {
    summary:
      "a user token: its user; a team token: who manages the team's tokens; the organisation token: owners and itself; an agent token: who manages agent pools",
    holds: (p, t) => {
      if (t.agentPool) return orgPermission(org(t), "manage-agent-pools");
      if (t.team) return !!org(t) && mayManageTeamTokens(org(t)!, t.team);
      return t.userId !== undefined ? isUser(p) && p.userId === t.userId : ownerOrOrgToken(org(t));
    },
  },

  // ---- the organisation ----
  "organization.read": { summary: "any standing in the organisation", holds: (_p, t) => !!org(t) },
  "organization.manage": { summary: "owners and the organisation token", holds: (_p, t) => ownerOrOrgToken(org(t)) },
  "organization.audit-trail": {
    summary: "the organisation token or its audit-trails token (HCP refuses user and team tokens)",
    holds: (p, t) => p.kind === "organization" && !!org(t)?.isOrgToken,
  },
  "organization.owner": { summary: "owners (users), not the organisation token", holds: (_p, t) => !!org(t)?.isOwner },
  // Checked by PATCH /organizations/:name (declared `organization.manage`) when the body changes the name.
  "organization.rename": {
    summary: "rename: owners (users and the owners team's tokens), not the organisation token",
    holds: (_p, t) => !!org(t)?.isOwner,
    // The organisation token may change every other setting: it is told it is forbidden, not that nothing is there.
    denied: (_p, t) => (org(t) ? "forbidden" : "not_found"),
  },
  // PATCH token-ttl-policies, and PATCH /organizations/:name when the body changes `max-ttl-enabled`: the policies bound
  // the organisation token's own lifetime, so it may not widen them (no caller extends its own power).
  "organization.token-policy": {
    summary: "token lifetime policies: owners (users and the owners team's tokens), not the organisation token",
    holds: (_p, t) => !!org(t)?.isOwner,
    // The organisation token sees the policies: it is told it is forbidden; whoever may not see them, that nothing is there.
    denied: (_p, t) => (ownerOrOrgToken(org(t)) ? "forbidden" : "not_found"),
  },
  "teams.manage": { summary: "owners, the organisation token, manage-teams", holds: (_p, t) => !!org(t) && teamRights(org(t)!).manageTeams },
  "teams.manage-organization-access": {
    summary: "owners, the organisation token, manage-organization-access",
    holds: (_p, t) => !!org(t) && teamRights(org(t)!).manageOrganizationAccess,
  },
  "teams.change-members": {
    summary: "manage-membership; the owners team by owners only",
    holds: (_p, t) => !!org(t) && !!t.team && mayChangeMembers(org(t)!, t.team),
  },
  "teams.manage-tokens": {
    summary: "manage-teams for teams holding no more than the caller; the owners team by owners only",
    holds: (_p, t) => !!org(t) && !!t.team && mayManageTeamTokens(org(t)!, t.team),
  },
  "membership.read": {
    summary: "any standing in the organisation, or the invited user reading its own invitation",
    holds: (p, t) => !!org(t) || (isUser(p) && t.userId !== undefined && p.userId === t.userId),
  },
  "membership.manage": {
    summary: "owners, the organisation token, manage-membership",
    holds: (_p, t) => !!org(t) && teamRights(org(t)!).manageMembership,
  },
  "projects.manage": { summary: "owners, the organisation token, manage-projects", holds: (_p, t) => orgPermission(org(t), "manage-projects") },
  "workspaces.manage": {
    summary: "owners, the organisation token, manage-workspaces",
    holds: (_p, t) => orgPermission(org(t), "manage-workspaces"),
  },
  "vcs.manage": { summary: "owners, the organisation token, manage-vcs-settings", holds: (_p, t) => orgPermission(org(t), "manage-vcs-settings") },
  "ssh-keys.create": {
    summary: "owners and manage-vcs-settings, not the organisation token",
    holds: (_p, t) => orgPermission(org(t), "manage-vcs-settings") && !org(t)!.isOrgToken,
  },
  "registry-modules.manage": {
    summary: "owners, the organisation token, manage-modules",
    holds: (_p, t) => orgPermission(org(t), "manage-modules"),
  },
  "registry-providers.manage": {
    summary: "owners, the organisation token, manage-providers (providers, their versions and platforms, GPG keys)",
    holds: (_p, t) => orgPermission(org(t), "manage-providers"),
  },
  "agent-pools.manage": {
    summary: "owners, the organisation token, manage-agent-pools",
    holds: (_p, t) => orgPermission(org(t), "manage-agent-pools"),
  },
  "run-tasks.manage": {
    summary: "owners, the organisation token, manage-run-tasks",
    holds: (_p, t) => orgPermission(org(t), "manage-run-tasks"),
  },
  "run-tasks.read": {
    summary: "owners, the organisation token, manage-run-tasks, manage-workspaces (who attach tasks to workspaces)",
    holds: (_p, t) => orgPermission(org(t), "manage-run-tasks") || orgPermission(org(t), "manage-workspaces"),
  },

  // `project`: the rights on the project owning the set acted on (a project-owned set), or on the parent of one created.
  "varsets.read": {
    summary: "owners, the organisation token, read-workspaces or manage-workspaces; a project's own sets: its variable-sets read",
    holds: (_p, t) => orgPermission(org(t), "read-workspaces") || orgPermission(org(t), "manage-workspaces") || (!!org(t) && !!t.project?.readVariableSets),
  },
  "varsets.manage": {
    summary: "owners, the organisation token, manage-workspaces; a project's own sets: its variable-sets write",
    holds: (_p, t) => orgPermission(org(t), "manage-workspaces") || (!!org(t) && !!t.project?.manageVariableSets),
  },

  // ---- a project ----
  "project.read": { summary: "a reader of the project", holds: (_p, t) => !!org(t) && !!t.project?.read },
  "project.admin": { summary: "manage-projects, or a project admin", holds: (_p, t) => !!org(t) && !!t.project?.admin },
  "project.read-teams": { summary: "manage-projects, read-projects, or a grant on the project", holds: (_p, t) => !!org(t) && !!t.project?.readTeams },
  "project.manage-teams": { summary: "manage-projects, or a project admin", holds: (_p, t) => !!org(t) && !!t.project?.manageTeams },
  "project.read-variables": {
    summary: "variable-set readers, or a project grant reading variables",
    holds: (_p, t) => !!org(t) && !!t.project?.readVariables,
  },
  "workspace.create": {
    summary: "owners, manage-workspaces, or a project grant allowing workspace creation",
    holds: (_p, t) => !!org(t) && !!t.project?.createWorkspaces,
  },

  // ---- a workspace ----
  "workspace.read": {
    summary: "read runs; a run token also the workspaces sharing their state with its own",
    holds: (p, t) => (caps(t)?.runs ?? 0) >= 1 || (p.kind === "run" && (caps(t)?.stateVersions ?? 0) >= 1),
  },
  "workspace.update": { summary: "workspace admin", holds: (_p, t) => !!caps(t)?.admin },
  "workspace.manage-tags": { summary: "workspace admin (can-manage-tags)", holds: (_p, t) => !!caps(t)?.admin },
  "workspace.lock": { summary: "lock and unlock (write, or custom workspace-locking)", holds: (_p, t) => !!caps(t)?.locking },
  "workspace.force-unlock": { summary: "workspace admin", holds: (_p, t) => !!caps(t)?.admin },
  "workspace.delete": { summary: "delete (safe delete)", holds: (_p, t) => !!caps(t)?.delete },
  "workspace.move": { summary: "move between projects (on both)", holds: (_p, t) => !!caps(t)?.move },
  "workspace.force-delete": {
    summary: "owners; workspace admins when the organisation allows force delete",
    holds: (_p, t) => !!caps(t) && forceDeleteAllowed(standingOf(org(t)!), caps(t)!, org(t)!.organization.allowForceDeleteWorkspaces),
    // Readers are told they are forbidden (the documented 403); others cannot see the workspace at all (404).
    denied: (_p, t) => ((caps(t)?.runs ?? 0) >= 1 ? "force_delete_forbidden" : "not_found"),
  },
  // ---- runs and configuration versions of a workspace (docs/runs.md); never the organisation token ----
  "runs.read": { summary: "runs: read (runs, plans, applies, logs, events, comments, configuration versions)", holds: (_p, t) => (caps(t)?.runs ?? 0) >= 1 },
  "runs.queue": {
    summary: "runs: plan (queue plans, upload configuration, comment), not the organisation token",
    holds: (_p, t) => (caps(t)?.runs ?? 0) >= 2 && !org(t)!.isOrgToken,
  },
  "runs.apply": {
    summary: "runs: apply (apply, discard, cancel, force-execute), not the organisation token",
    holds: (_p, t) => (caps(t)?.runs ?? 0) >= 3 && !org(t)!.isOrgToken,
  },
  "runs.destroy": {
    summary: "queue destroy plans: runs: apply and workspace admin, not the organisation token",
    holds: (_p, t) => (caps(t)?.runs ?? 0) >= 3 && !!caps(t)?.admin && !org(t)!.isOrgToken,
  },
  "runs.force-cancel": {
    summary: "force-cancel: workspace admin, not the organisation token",
    holds: (_p, t) => !!caps(t)?.admin && !org(t)!.isOrgToken,
  },
  "runs.read-json-plan": { summary: "the unredacted JSON plan: workspace admin", holds: (_p, t) => !!caps(t)?.admin },
  "runs.read-errored-state": {
    summary: "the state an apply could not save: state versions: read and workspace admin",
    holds: (_p, t) => (caps(t)?.stateVersions ?? 0) >= 2 && !!caps(t)?.admin,
  },
  "variables.read": { summary: "variables: read", holds: (_p, t) => (caps(t)?.variables ?? 0) >= 1 },
  "variables.write": { summary: "variables: write", holds: (_p, t) => (caps(t)?.variables ?? 0) >= 2 },
  "state.read-outputs": { summary: "state versions: read-outputs", holds: (_p, t) => (caps(t)?.stateVersions ?? 0) >= 1 },
  "state.read": { summary: "state versions: read", holds: (_p, t) => (caps(t)?.stateVersions ?? 0) >= 2 },
  "state.create": {
    summary: "state versions: write, never the organisation token",
    holds: (_p, t) => (caps(t)?.stateVersions ?? 0) >= 3 && !org(t)!.isOrgToken,
  },
} satisfies Record<string, Requirement>;

export type Action = keyof typeof REQUIREMENTS;

/**
 * The only actions a run token may ever be granted (docs/runs.md "The run token"); on top, its capabilities hold on
 * its own workspace only (src/auth/access.ts) and the auth middleware admits it to a short list of routes.
 */
const RUN_TOKEN_ACTIONS: ReadonlySet<Action> = new Set<Action>([
  "organization.read",
  "workspace.read",
  "workspace.lock",
  "runs.read",
  "variables.read",
  "state.read-outputs",
  "state.read",
  "state.create",
]);

/** All an audit-trails token may be granted: its organisation's standing, to read the organisation's audit trail. */
const AUDIT_TRAILS_TOKEN_ACTIONS: ReadonlySet<Action> = new Set<Action>(["organization.read", "organization.audit-trail"]);

const holds = (principal: Principal, action: Action, target: Target): boolean =>
  (principal.kind !== "run" || RUN_TOKEN_ACTIONS.has(action)) &&
  (principal.kind !== "organization" || !principal.auditTrailsOnly || AUDIT_TRAILS_TOKEN_ACTIONS.has(action)) &&
  (REQUIREMENTS[action] as Requirement).holds(principal, target);

/** Whether the rule of `action` holds for the caller on the target. */
export function allows(principal: Principal, action: Action, target: Target = {}): boolean {
  return holds(principal, action, target);
}

/**
 * The one authorisation check: throws the requirement's refusal (404 by default, as the real service
 * hides what a caller may not see) unless it holds, and records that the action was authorised.
 */
export function authorize(caller: { principal: Principal; authorized?: Set<string> }, action: Action, target: Target = {}): void {
  const rule = REQUIREMENTS[action] as Requirement;
  if (!holds(caller.principal, action, target)) throw ApiError.of(rule.denied?.(caller.principal, target) ?? "not_found");
  caller.authorized?.add(action);
}
