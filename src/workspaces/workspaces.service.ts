/** Worker-side workspace operations shared by the routes: resolve, authorise, serialise. */
import type { Context } from "hono";
import { loadAccessBatch, flagsFor, workspaceCapabilities, type OrgAccess, type Grant, type ProjectDefaultsRow } from "../auth/access";
import { canRead } from "../auth/permissions";
import type { Capabilities } from "../auth/permissions";
import { primary } from "../db";
import { edition, type AppEnv, type Bindings } from "../env";
import { ApiError, unwrap } from "../errors";
import type { Resource } from "../jsonapi/document";
import type { Defaults } from "./workspace.rules";
import type { WorkspaceRecord, Faults } from "./workspace.types";
import { parseDoc, selectByName } from "./workspaces.index";
import { serializeWorkspace } from "./workspaces.serialize";
import { deadTagIds } from "../tags/tags.index";
import { keyOnlyTagIds, withoutDeadTags } from "../tags/workspace-tags.logic";

export function workspaceStub(env: Bindings, id: string) {
  return env.WORKSPACES.getByName(id);
}

/** Test-only fault injection, honoured only when FAULT_INJECTION=1. */
export function faultsOf(c: Context<AppEnv>): Faults | undefined {
  if (c.env.FAULT_INJECTION !== "1") return undefined;
  const n = Number(c.req.header("X-Fault-Fail-Index-Writes") ?? "0");
  // Holds the index write after the DO commit (the crash test kills the process inside that window).
  const delay = Number(c.req.header("X-Fault-Delay-Index-Writes-Ms") ?? "0");
  if (!(n > 0) && !(delay > 0)) return undefined;
  return { ...(n > 0 ? { failIndexWrites: Math.min(n, 100) } : {}), ...(delay > 0 ? { delayIndexWritesMs: Math.min(delay, 10_000) } : {}) } as Faults;
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
  c: Context<AppEnv>,
  organization: string,
  records: WorkspaceRecord[],
  extraProjectIds: string[] = [],
): Promise<WorkspaceScope | null> {
  const db = primary(c);
  const projectIds = [...new Set([...records.map((r) => r.projectId), ...extraProjectIds])];
  // Key-only tags of deleted organisation tags are dead (issue 6): asked of D1 alongside the access batch.
  // Deleted SSH keys are unassigned at read time (no fan-out to the workspaces that used them).
  const sshKeyIds = [...new Set(records.map((r) => r.sshKeyId).filter((k): k is string => !!k))];
  const [loaded, deadTags, liveKeys] = await Promise.all([
    loadAccessBatch(db, c.get("principal"), organization, records.map((r) => r.id), projectIds),
    records.some((r) => keyOnlyTagIds(r.tags).length > 0) ? deadTagIds(db, organization) : null,
    sshKeyIds.length
      ? db.prepare("SELECT id FROM ssh_keys WHERE id IN (SELECT value FROM json_each(?))").bind(JSON.stringify(sshKeyIds)).all<{ id: string }>().then((r) => new Set(r.results.map((k) => k.id)))
      : null,
  ]);
  if (!loaded) return null;
  return scopeFrom(c, loaded, deadTags, liveKeys);
}

/**
 * A scope from access data already loaded (the list loads it in its own batch). `deadTags`: ids of
 * deleted organisation tags; `liveKeys`: the records' SSH key ids that still exist.
 */
export function scopeFrom(
  c: Context<AppEnv>,
  loaded: { access: OrgAccess; grants: { workspaces: Grant[]; projects: Grant[] }; projects: Map<string, ProjectDefaultsRow> },
  deadTags: Set<string> | null,
  liveKeys: Set<string> | null,
): WorkspaceScope {
  const { access, grants, projects } = loaded;
  const ed = edition(c.env);
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

/** A workspace the caller can read, from its Durable Object (show by ID reads the DO). */
export async function readById(c: Context<AppEnv>, id: string): Promise<{ record: WorkspaceRecord; scope: WorkspaceScope; caps: Capabilities }> {
  const res = await workspaceStub(c.env, id).get();
  if (!res.ok) throw ApiError.of("not_found");
  return authorise(c, res.workspace);
}

export async function authorise(
  c: Context<AppEnv>,
  record: WorkspaceRecord,
): Promise<{ record: WorkspaceRecord; scope: WorkspaceScope; caps: Capabilities }> {
  const scope = await loadScope(c, record.organization, [record]);
  // A workspace of a deleted (or re-created) organisation no longer exists.
  if (!scope || scope.access.organization.externalId !== record.organizationId) throw ApiError.of("not_found");
  const caps = scope.capsOf(record);
  if (!canRead(caps)) throw ApiError.of("not_found");
  return { record, scope, caps };
}

/** Name → id through the D1 index (case-insensitive). */
export async function idByName(c: Context<AppEnv>, organization: string, name: string): Promise<string> {
  const row = await selectByName(primary(c), organization, name).first<{ id: string }>();
  if (!row) throw ApiError.of("not_found");
  return row.id;
}

/** A workspace the caller can read, by organisation and name (from the D1 index copy). */
export async function readByName(c: Context<AppEnv>, organization: string, name: string) {
  const row = await selectByName(primary(c), organization, name).first<{ id: string; doc: string }>();
  if (!row) throw ApiError.of("not_found");
  return authorise(c, parseDoc(row));
}

/** Requires a capability; a reader without it gets 404 as from the real service. */
export function requireCap(ok: boolean): void {
  if (!ok) throw ApiError.of("not_found");
}

/** Passes the index write's D1 bookmark to the client (read-your-writes on its next list read). */
export function acknowledge(c: Context<AppEnv>, result: { bookmark?: string | null }): void {
  if (result.bookmark) c.header("X-D1-Bookmark", result.bookmark);
}

export { unwrap };
