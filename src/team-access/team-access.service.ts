/**
 * Team access to workspaces and projects: workspace admins manage a workspace's; owners, the
 * organisation token, manage-projects teams and project admins manage a project's. The team must
 * belong to the same organisation.
 */
import { auditStatementsOf } from "../audit/audit.service";
import type { AuditResource } from "../audit/audit.rules";
import { projectRights, requireOrgAccess } from "../auth/access";
import { authorize } from "../auth/requirements";
import type { Caller } from "../caller";
import { ApiError } from "../errors";
import { newId, nowIso } from "../ids";
import { findTeam } from "../teams/teams.d1";
import type { WorkspaceRecord } from "../workspaces/workspace.types";
import { readById, readRef, type WorkspaceRef } from "../workspaces/workspaces.service";
import {
  deleteTeamProject,
  deleteTeamWorkspace,
  findProjectOrganization,
  findTeamProject,
  findTeamWorkspace,
  insertTeamProject,
  insertTeamWorkspace,
  listTeamProjects,
  listTeamWorkspaces,
  projectGrants,
  updateTeamProject,
  updateTeamWorkspace,
  type TeamProject,
  type TeamWorkspace,
} from "./team-access.d1";
import { PRJ_IMPLIED, WS_DEFAULT_CUSTOM, type PrjAccess, type WsCustom, type WsLevel } from "./team-access.rules";

const LEVEL_WORD = (k: string) =>
  k
    .split("-")
    .map((w, i) => (i === 0 ? w[0].toUpperCase() + w.slice(1) : w))
    .join(" ");

const readOnly = (key: string, access: string, pointer: string) =>
  ApiError.of("invalid_attribute", {
    detail: `${LEVEL_WORD(key)} is read-only when access level is '${access}'; use the 'custom' access level to set this attribute.`,
    pointer,
  });

const teamNotFound = () => ApiError.of("not_found", { detail: "Team not found", pointer: "/data/relationships/team/data/id" });

// ---- team-workspaces ----

/** Custom keys may be set only with access "custom" (the real 422 text). */
function customPerms<T extends object>(access: string, given: Partial<T>, defaults: T, pointer: string): T | null {
  const keys = Object.keys(given).filter((k) => given[k as keyof T] !== undefined);
  if (access !== "custom") {
    if (keys.length) throw readOnly(keys[0], access, `${pointer}/${keys[0]}`);
    return null;
  }
  return { ...defaults, ...Object.fromEntries(keys.map((k) => [k, given[k as keyof T]])) } as T;
}

/** Managing a workspace's team access needs admin on it (named by id, or by organisation and name: the web UI). */
async function adminOfWorkspace(caller: Caller, workspace: WorkspaceRef): Promise<WorkspaceRecord> {
  const { record } = await readRef(caller, workspace, "workspace.update");
  return record;
}

/** A workspace access, after checking the caller may read (or, with `admin`, manage) its workspace. */
async function loadTw(caller: Caller, id: string, admin: boolean): Promise<TeamWorkspace & { organizationId: string }> {
  const tw = await findTeamWorkspace(caller.db, id);
  if (!tw) throw ApiError.of("not_found");
  const record = admin ? await adminOfWorkspace(caller, tw.workspaceId) : (await readById(caller, tw.workspaceId)).record;
  return { ...tw, organizationId: record.organizationId };
}

/** A team access as an audit event names it. */
function accessResource(id: string, action: string, meta: Record<string, string>): AuditResource {
  return { id, type: "team_access", action, meta };
}

export async function createTeamWorkspace(
  caller: Caller,
  input: { teamId: string; workspace: WorkspaceRef; access: WsLevel; given: Partial<WsCustom> },
): Promise<TeamWorkspace> {
  const ws = await adminOfWorkspace(caller, input.workspace);
  const team = await findTeam(caller.db, input.teamId);
  if (!team || team.organizationId !== ws.organizationId) throw teamNotFound();
  const perms = customPerms(input.access, input.given, WS_DEFAULT_CUSTOM, "/data/attributes");
  const tw: TeamWorkspace = { id: newId("tws"), teamId: team.id, workspaceId: ws.id, access: input.access, perms: perms ?? {} };
  const audit = auditStatementsOf(
    caller,
    ws.organizationId,
    accessResource(tw.id, "create", { team_id: team.id, workspace_id: ws.id, access: tw.access }),
    true,
  );
  if (!(await insertTeamWorkspace(caller.db, tw, nowIso(), audit))) {
    throw ApiError.of("invalid_attribute", { detail: "Team already has access to this workspace", pointer: "/data/relationships/team/data/id" });
  }
  return tw;
}

/** The workspace's team accesses (readers of the workspace may list them). */
export async function workspaceTeamAccesses(caller: Caller, workspaceId: string): Promise<TeamWorkspace[]> {
  await readById(caller, workspaceId);
  return listTeamWorkspaces(caller.db, workspaceId);
}

export async function showTeamWorkspace(caller: Caller, id: string): Promise<TeamWorkspace> {
  const { organizationId: _, ...tw } = await loadTw(caller, id, false);
  return tw;
}

export async function changeTeamWorkspace(caller: Caller, id: string, input: { access?: WsLevel; given: Partial<WsCustom> }): Promise<TeamWorkspace> {
  const tw = await loadTw(caller, id, true);
  const access = input.access ?? (tw.access as WsLevel);
  const base: WsCustom = access === "custom" && tw.access === "custom" ? { ...WS_DEFAULT_CUSTOM, ...tw.perms } : WS_DEFAULT_CUSTOM;
  const perms = customPerms(access, input.given, base, "/data/attributes");
  const { organizationId, ...current } = tw;
  const next: TeamWorkspace = { ...current, access, perms: perms ?? {} };
  await updateTeamWorkspace(
    caller.db,
    tw.id,
    next.access,
    next.perms,
    auditStatementsOf(caller, organizationId, accessResource(tw.id, "update", { team_id: tw.teamId, workspace_id: tw.workspaceId, access })),
  );
  return next;
}

export async function removeTeamWorkspace(caller: Caller, id: string): Promise<void> {
  const tw = await loadTw(caller, id, true);
  await deleteTeamWorkspace(
    caller.db,
    tw.id,
    auditStatementsOf(caller, tw.organizationId, accessResource(tw.id, "destroy", { team_id: tw.teamId, workspace_id: tw.workspaceId }), true),
  );
}

// ---- team-projects ----

type PrjGiven = { "project-access"?: Record<string, unknown>; "workspace-access"?: Record<string, unknown> };

function tpPerms(access: string, given: PrjGiven, current?: PrjAccess): PrjAccess {
  if (access !== "custom") {
    for (const group of ["project-access", "workspace-access"] as const) {
      const keys = Object.keys(given[group] ?? {});
      if (keys.length) throw readOnly(keys[0], access, `/data/attributes/${group}/${keys[0]}`);
    }
    return PRJ_IMPLIED[access];
  }
  const base = current ?? PRJ_IMPLIED.custom;
  return {
    "project-access": { ...base["project-access"], ...(given["project-access"] ?? {}) },
    "workspace-access": { ...base["workspace-access"], ...(given["workspace-access"] ?? {}) },
  };
}

/**
 * Reading (or, with `manage`, managing) a project's team access: owners, the organisation token,
 * manage-projects teams (read-projects to read), or project admins. Returns the organisation's id.
 */
async function projectManager(caller: Caller, projectId: string, manage: boolean): Promise<string> {
  const project = await findProjectOrganization(caller.db, projectId);
  if (!project) throw ApiError.of("not_found");
  const access = await requireOrgAccess(caller, { id: project.organization_id });
  const grants = access.teamIds.length ? await projectGrants(caller.db, projectId, access.teamIds) : [];
  const rights = projectRights(
    access,
    projectId,
    grants.map((g) => ({ ...g, teamId: "", targetId: projectId })),
  );
  authorize(caller, manage ? "project.manage-teams" : "project.read-teams", { access, project: rights });
  return project.organization_id;
}

async function loadTp(caller: Caller, id: string, manage: boolean): Promise<TeamProject & { organizationId: string }> {
  const tp = await findTeamProject(caller.db, id);
  if (!tp) throw ApiError.of("not_found");
  return { ...tp, organizationId: await projectManager(caller, tp.projectId, manage) };
}

export async function createTeamProject(caller: Caller, input: { teamId: string; projectId: string; access: string; given: PrjGiven }): Promise<TeamProject> {
  const organizationId = await projectManager(caller, input.projectId, true);
  const team = await findTeam(caller.db, input.teamId);
  if (!team || team.organizationId !== organizationId) throw teamNotFound();
  const tp: TeamProject = { id: newId("tprj"), teamId: team.id, projectId: input.projectId, access: input.access, perms: tpPerms(input.access, input.given) };
  const audit = auditStatementsOf(
    caller,
    organizationId,
    accessResource(tp.id, "create", { team_id: team.id, project_id: tp.projectId, access: tp.access }),
    true,
  );
  if (!(await insertTeamProject(caller.db, tp, nowIso(), audit))) {
    throw ApiError.of("invalid_attribute", { detail: "Team already has access to this project", pointer: "/data/relationships/team/data/id" });
  }
  return tp;
}

export async function projectTeamAccesses(caller: Caller, projectId: string): Promise<TeamProject[]> {
  await projectManager(caller, projectId, false);
  return listTeamProjects(caller.db, projectId);
}

export async function showTeamProject(caller: Caller, id: string): Promise<TeamProject> {
  const { organizationId: _, ...tp } = await loadTp(caller, id, false);
  return tp;
}

export async function changeTeamProject(caller: Caller, id: string, input: { access?: string; given: PrjGiven }): Promise<TeamProject> {
  const tp = await loadTp(caller, id, true);
  const access = input.access ?? tp.access;
  const perms = tpPerms(access, input.given, access === "custom" && tp.access === "custom" ? tp.perms : undefined);
  const { organizationId, ...current } = tp;
  const next: TeamProject = { ...current, access, perms };
  await updateTeamProject(
    caller.db,
    tp.id,
    next.access,
    next.perms,
    auditStatementsOf(caller, organizationId, accessResource(tp.id, "update", { team_id: tp.teamId, project_id: tp.projectId, access })),
  );
  return next;
}

export async function removeTeamProject(caller: Caller, id: string): Promise<void> {
  const tp = await loadTp(caller, id, true);
  await deleteTeamProject(
    caller.db,
    tp.id,
    auditStatementsOf(caller, tp.organizationId, accessResource(tp.id, "destroy", { team_id: tp.teamId, project_id: tp.projectId }), true),
  );
}
