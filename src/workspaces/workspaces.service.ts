/** Worker-side workspace operations shared by the services: resolve, authorise, serialise. */
import { loadAccessBatch, flagsFor, workspaceCapabilities, type OrgAccess, type Grant, type ProjectDefaultsRow } from "../auth/access";
import { authorize, type Action } from "../auth/requirements";
import type { Capabilities } from "../auth/permissions";
import type { Caller } from "../caller";
import { edition, type Bindings } from "../env";
import { ApiError } from "../errors";
import type { Resource } from "../jsonapi/document";
import type { Defaults } from "./workspace.rules";
import type { WorkspaceRecord } from "./workspace.types";
import { liveSshKeyIds } from "./workspaces.d1";
import { parseDoc, selectByName } from "./workspaces.index";
import { serializeWorkspace } from "./workspaces.serialize";
import { deadTagIds } from "../tags/tags.index";
import { keyOnlyTagIds, withoutDeadTags } from "../tags/workspace-tags.logic";

export function workspaceStub(env: Bindings, id: string) {
  return env.WORKSPACES.getByName(id);
}

/** Authorisation and serialisation context for workspaces of one organisation. */
export interface WorkspaceScope {
  access: OrgAccess;
  grants: { workspaces: Grant[]; projects: Grant[] };
  projects: Map<string, ProjectDefaultsRow>;
  capsOf(r: WorkspaceRecord): Capabilities;
  serialize(r: WorkspaceRecord): Resource;
}

export function defaultsFor(access: OrgAccess, project: ProjectDefaultsRow | undefined): Defaults {
  if (project?.default_execution_mode) {
    return {
      executionMode: project.default_execution_mode as Defaults["executionMode"],
      agentPoolId: project.default_agent_pool_id,
    };
  }
  return { executionMode: access.organization.defaultExecutionMode, agentPoolId: access.organization.defaultAgentPoolId };
}

/** Loads the caller's access for these workspaces (one D1 batch); null when the org is not visible. */
export async function loadScope(
  caller: Caller,
  organization: string,
  records: WorkspaceRecord[],
  extraProjectIds: string[] = [],
): Promise<WorkspaceScope | null> {
  const db = caller.db;
  const projectIds = [...new Set([...records.map((r) => r.projectId), ...extraProjectIds])];
  // Key-only tags of deleted organisation tags are dead (issue 6): asked of D1 alongside the access batch.
  // Deleted SSH keys are unassigned at read time (no fan-out to the workspaces that used them).
  const sshKeyIds = [...new Set(records.map((r) => r.sshKeyId).filter((k): k is string => !!k))];
  const [loaded, deadTags, liveKeys] = await Promise.all([
    loadAccessBatch(db, caller.principal, organization, records.map((r) => r.id), projectIds),
    records.some((r) => keyOnlyTagIds(r.tags).length > 0) ? deadTagIds(db, organization) : null,
    sshKeyIds.length ? liveSshKeyIds(db, sshKeyIds) : null,
  ]);
  if (!loaded) return null;
  return scopeFrom(caller.env, loaded, deadTags, liveKeys);
}

/**
 * A scope from access data already loaded (the list loads it in its own batch). `deadTags`: ids of
 * deleted organisation tags; `liveKeys`: the records' SSH key ids that still exist.
 */
export function scopeFrom(
  env: Bindings,
  loaded: { access: OrgAccess; grants: { workspaces: Grant[]; projects: Grant[] }; projects: Map<string, ProjectDefaultsRow> },
  deadTags: Set<string> | null,
  liveKeys: Set<string> | null,
): WorkspaceScope {
  const { access, grants, projects } = loaded;
  const ed = edition(env);
  const capsOf = (r: WorkspaceRecord) => workspaceCapabilities(access, r, grants);
  return {
    access,
    grants,
    projects,
    capsOf,
    serialize: (r) =>
      serializeWorkspace(deadTags ? { ...r, tags: withoutDeadTags(r.tags, deadTags) } : r, {
        flags: flagsFor(access, capsOf(r)),
        defaults: defaultsFor(access, projects.get(r.projectId)),
        edition: ed,
        sshKeyExists: r.sshKeyId ? (liveKeys?.has(r.sshKeyId) ?? false) : undefined,
      }),
  };
}

/** A workspace named by id, or by organisation and name (resolved through the D1 index). */
export type WorkspaceRef = string | { organization: string; name: string };

/** The workspace's id (a name is looked up case-insensitively in the D1 index). */
export async function resolveId(caller: Caller, ref: WorkspaceRef): Promise<string> {
  return typeof ref === "string" ? ref : idByName(caller, ref.organization, ref.name);
}

export interface Readable {
  record: WorkspaceRecord;
  scope: WorkspaceScope;
  caps: Capabilities;
}

/** A workspace the caller can read, from its Durable Object (show by ID reads the DO). */
export async function readById(caller: Caller, id: string, action: Action = "workspace.read"): Promise<Readable> {
  const res = await workspaceStub(caller.env, id).get();
  if (!res.ok) throw ApiError.of("not_found");
  return authoriseOn(caller, res.value, action);
}

/** Who cannot read a workspace cannot learn it exists (404); readers then need the route's action. */
async function authoriseOn(caller: Caller, record: WorkspaceRecord, action: Action): Promise<Readable> {
  const scope = await loadScope(caller, record.organization, [record]);
  // A workspace of a deleted (or re-created) organisation no longer exists.
  if (!scope || scope.access.organization.externalId !== record.organizationId) throw ApiError.of("not_found");
  const caps = scope.capsOf(record);
  authorize(caller, "workspace.read", { access: scope.access, caps });
  if (action !== "workspace.read") authorize(caller, action, { access: scope.access, caps });
  return { record, scope, caps };
}

/** Name → id through the D1 index (case-insensitive). */
export async function idByName(caller: Caller, organization: string, name: string): Promise<string> {
  const row = await selectByName(caller.db, organization, name).first<{ id: string }>();
  if (!row) throw ApiError.of("not_found");
  return row.id;
}

/** A workspace the caller can read, by organisation and name (from the D1 index copy). */
export async function readByName(caller: Caller, organization: string, name: string, action: Action = "workspace.read"): Promise<Readable> {
  const row = await selectByName(caller.db, organization, name).first<{ id: string; doc: string }>();
  if (!row) throw ApiError.of("not_found");
  return authoriseOn(caller, parseDoc(row), action);
}
