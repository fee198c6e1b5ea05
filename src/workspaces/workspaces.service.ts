/** Worker-side workspace operations shared by the services: resolve, authorise, serialise. */
import { buildOrgAccess, loadAccessBatch, flagsFor, workspaceCapabilities, type OrgAccess, type Grant, type ProjectDefaults } from "../auth/access";
import { authorize, type Action } from "../auth/requirements";
import type { Capabilities } from "../auth/permissions";
import type { Caller } from "../caller";
import { edition, type Bindings } from "../env";
import { ApiError, unwrap, type Result } from "../errors";
import type { Resource } from "../jsonapi/document";
import { effectiveExecution, type Defaults } from "./workspace.rules";
import type { Guard, WorkspaceRecord } from "./workspace.types";
import { liveSshKeyIds, workspaceAccessRows, workspaceIdByName } from "./workspaces.d1";
import { serializeWorkspace } from "./workspaces.serialize";
import { deadTagIds } from "../tags/tags.d1";
import { keyOnlyTagIds, withoutDeadTags } from "../tags/workspace-tags.rules";
import { workspaceObject } from "./workspace.stub";

/** Authorisation and serialisation context for workspaces of one organisation. */
export interface WorkspaceScope {
  access: OrgAccess;
  grants: { workspaces: Grant[]; projects: Grant[] };
  projects: Map<string, ProjectDefaults>;
  capsOf(r: WorkspaceRecord): Capabilities;
  serialize(r: WorkspaceRecord): Resource;
}

export function defaultsFor(access: OrgAccess, project: ProjectDefaults | undefined): Defaults {
  if (project?.defaultExecutionMode) {
    return {
      executionMode: project.defaultExecutionMode as Defaults["executionMode"],
      agentPoolId: project.defaultAgentPoolId,
    };
  }
  return { executionMode: access.organization.defaultExecutionMode, agentPoolId: access.organization.defaultAgentPoolId };
}

/**
 * Loads the caller's access for these workspaces of one organisation, named by its id (one D1 batch); null when
 * the org is not visible (or no longer exists).
 */
export async function loadScope(
  caller: Caller,
  organizationId: string,
  records: WorkspaceRecord[],
  extraProjectIds: string[] = [],
): Promise<WorkspaceScope | null> {
  const db = caller.db;
  const projectIds = [...new Set([...records.map((r) => r.projectId), ...extraProjectIds])];
  // Key-only tags of deleted organisation tags are dead: asked of D1 alongside the access batch.
  // Deleted SSH keys are unassigned at read time (no fan-out to the workspaces that used them).
  const sshKeyIds = [...new Set(records.map((r) => r.sshKeyId).filter((k): k is string => !!k))];
  const [loaded, deadTags, liveKeys] = await Promise.all([
    loadAccessBatch(
      db,
      caller.principal,
      { id: organizationId },
      records.map((r) => r.id),
      projectIds,
    ),
    records.some((r) => keyOnlyTagIds(r.tags).length > 0) ? deadTagIds(db, organizationId) : null,
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
  loaded: { access: OrgAccess; grants: { workspaces: Grant[]; projects: Grant[] }; projects: Map<string, ProjectDefaults> },
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
        // The organisation's name as this request read it: the record names it by id, so a rename never visits it.
        organization: access.organization.name,
        flags: flagsFor(access, capsOf(r)),
        defaults: defaultsFor(access, projects.get(r.projectId)),
        edition: ed,
        sshKeyExists: r.sshKeyId ? (liveKeys?.has(r.sshKeyId) ?? false) : undefined,
      }),
  };
}

/**
 * Where a workspace's runs execute: its own execution mode and pool, else its project's default, else its
 * organisation's (`setting-overwrites`), as the request read them.
 */
export function executionOf(r: Readable): ReturnType<typeof effectiveExecution> {
  return effectiveExecution(r.record.settings, defaultsFor(r.scope.access, r.scope.projects.get(r.record.projectId)));
}

/** A workspace named by id, or by organisation name and name as a URL names it (resolved through the D1 index). */
export type WorkspaceRef = string | { organization: string; name: string };

export interface Readable {
  record: WorkspaceRecord;
  scope: WorkspaceScope;
  caps: Capabilities;
}

/**
 * A workspace and the caller's right to act on it (`action`, after `workspace.read`: who cannot read it cannot learn it
 * exists), from ONE D1 batch over its index row on the nearest instance (docs/consistency.md). A plain read
 * (`workspace.read`) takes the record itself from the workspace's Durable Object, in parallel when the id is known,
 * so a client's read-back sees its own acknowledged write however far the replica trails. A mutation authorises on the
 * index copy and hands the DO a `guard` of the facts it was authorised on, which the DO re-checks in its critical
 * section. `fromObject`: another action's read that needs a field the index may not have yet (the current state
 * version, which the object indexes after it answers).
 */
export async function readById(caller: Caller, id: string, action: Action = "workspace.read", fromObject = action === "workspace.read"): Promise<Readable> {
  return readIndexed(caller, id, action, fromObject);
}

/** As readById, by organisation and name (case-insensitive, as uniqueness is). */
export async function readByName(caller: Caller, organization: string, name: string, action: Action = "workspace.read"): Promise<Readable> {
  return readIndexed(caller, { organization, name }, action, action === "workspace.read");
}

/** A workspace named by id or by organisation and name: one D1 batch either way. */
export async function readRef(caller: Caller, ref: WorkspaceRef, action: Action = "workspace.read"): Promise<Readable> {
  return readIndexed(caller, ref, action, action === "workspace.read");
}

/**
 * A replica may only say yes: what it cannot find or refuses (a workspace just created, a grant just given) may be
 * newer on the primary, which decides. A yes is trusted within the fence (src/platform/replica-fence.ts).
 */
async function readIndexed(caller: Caller, ref: WorkspaceRef, action: Action, fromObject = false): Promise<Readable> {
  try {
    return await readOn(caller, caller.near, ref, action, fromObject);
  } catch (err) {
    if (!(err instanceof ApiError) || (err.status !== 404 && err.status !== 403)) throw err;
    return readOn(caller, caller.db, ref, action, fromObject);
  }
}

async function readOn(caller: Caller, db: Caller["db"], ref: WorkspaceRef, action: Action, fromObject: boolean): Promise<Readable> {
  const byId = typeof ref === "string" ? ref : null;
  const [rows, early] = await Promise.all([
    workspaceAccessRows(db, caller.principal, ref),
    fromObject && byId ? workspaceObject(caller.env, byId).get() : null,
  ]);
  if (!rows.record || !rows.org) throw ApiError.of("not_found");
  let record = rows.record;
  if (fromObject) {
    const res = early ?? (await workspaceObject(caller.env, record.id).get());
    if (!res.ok) throw ApiError.of("not_found");
    // The index row a name found may be older than a rename the object already holds.
    if (typeof ref !== "string" && res.value.name.toLowerCase() !== ref.name.toLowerCase()) throw ApiError.of("not_found");
    const object = res.value;
    // Access was read for the index row's project and key: if the object has moved on, read it for the object's.
    if (object.projectId !== record.projectId || object.organizationId !== record.organizationId || object.sshKeyId !== record.sshKeyId) {
      const scope = await loadScope(caller, object.organizationId, [object]);
      if (!scope) throw ApiError.of("not_found");
      return authoriseOn(caller, object, scope, action);
    }
    record = object;
  }
  const access = buildOrgAccess(caller.principal, rows.org, rows.teams);
  if (!access) throw ApiError.of("not_found");
  const deadTags = keyOnlyTagIds(record.tags).length > 0 ? new Set(rows.deadTagIds) : null;
  const scope = scopeFrom(
    caller.env,
    { access, grants: rows.grants, projects: new Map(rows.projects.map((p) => [p.id, p])) },
    deadTags,
    new Set(rows.liveSshKeyIds),
  );
  return authoriseOn(caller, record, scope, action);
}

/** From the DO itself (the index lagged behind it): the retry path of a mutation whose guard went stale. */
async function readFresh(caller: Caller, id: string, action: Action): Promise<Readable> {
  const res = await workspaceObject(caller.env, id).get();
  if (!res.ok) throw ApiError.of("not_found");
  const scope = await loadScope(caller, res.value.organizationId, [res.value]);
  if (!scope) throw ApiError.of("not_found");
  return authoriseOn(caller, res.value, scope, action);
}

function authoriseOn(caller: Caller, record: WorkspaceRecord, scope: WorkspaceScope, action: Action): Readable {
  // A workspace of a deleted (or re-created) organisation no longer exists.
  if (scope.access.organization.externalId !== record.organizationId) throw ApiError.of("not_found");
  const caps = scope.capsOf(record);
  authorize(caller, "workspace.read", { access: scope.access, caps });
  if (action !== "workspace.read") authorize(caller, action, { access: scope.access, caps });
  return { record, scope, caps };
}

/** The facts a mutation was authorised on, for the DO to re-check (see `Guard`). */
export const guardOf = (record: WorkspaceRecord): Guard => ({ projectId: record.projectId, organizationId: record.organizationId });

/**
 * A mutation of one workspace in one DO round trip: authorised from the index (readById), then `run`
 * with the guard. Should the DO find the guard stale (the workspace moved meanwhile), the caller is
 * authorised again against the DO's own record and the mutation retried once.
 */
export async function mutateAs<T>(
  caller: Caller,
  ref: WorkspaceRef,
  action: Action,
  run: (r: Readable, guard: Guard) => Promise<Result<T>>,
): Promise<{ readable: Readable; value: T; bookmark?: string | null }> {
  let readable = await readIndexed(caller, ref, action);
  let res = await run(readable, guardOf(readable.record));
  if (!res.ok && res.code === "stale_authorization") {
    readable = await readFresh(caller, readable.record.id, action);
    res = await run(readable, guardOf(readable.record));
  }
  const done = unwrap(res);
  return { readable, value: done.value, bookmark: done.bookmark };
}

/** Name → id through the D1 index (case-insensitive), in the organisation of that name. */
export async function idByName(caller: Caller, organization: string, name: string): Promise<string> {
  const id = await workspaceIdByName(caller.db, { name: organization }, name);
  if (!id) throw ApiError.of("not_found");
  return id;
}
