/** State versions (HCP Terraform API docs: State Versions): authorise on the workspace, then ask its Durable Object. */
import { audited } from "../audit/audit.service";
import { actingUserId, lockHolderOf } from "../auth/principal";
import type { Caller } from "../caller";
import { edition } from "../env";
import { ApiError, unwrap } from "../errors";
import { newChildId, nowIso } from "../ids";
import type { Page } from "../jsonapi/document";
import type { WorkspaceRecord } from "../workspaces/workspace.types";
import { guardOf, idByName, mutateAs, type Readable, readById, readByName } from "../workspaces/workspaces.service";
import { workspaceOfStateVersion } from "./state-versions.d1";
import { canUpload } from "../auth/permissions";
import type { BackingAction, StateVersionView } from "./state-versions.store";
import { workspaceObject } from "../workspaces/workspace.stub";

/** A state version with what the caller may see of it. */
export interface StateVersionRead {
  workspaceId: string;
  sv: StateVersionView;
  /** Sensitive outputs and download URLs: state `read` (can-read-state-versions). */
  canReadState: boolean;
  uploads: boolean;
}

/** Access a read needs: 1 for outputs (read-outputs), 2 for the state version itself (state read). */
export type StateNeed = 1 | 2;

export interface StateVersionInput {
  serial: number;
  md5: string;
  lineage?: string;
  state?: string;
  "json-state"?: string;
  "json-state-outputs"?: string;
  intermediate?: boolean;
}

function decodeBase64(value: string | undefined, pointer: string): Uint8Array | null {
  if (value === undefined) return null;
  try {
    const bin = atob(value);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  } catch {
    throw ApiError.of("invalid_attribute", { detail: "must be base64", pointer });
  }
}

const stateAction = (need: StateNeed) => (need >= 2 ? "state.read" : "state.read-outputs");

/** Creates a state version; the caller must hold the workspace's lock (the DO checks). */
export async function createStateVersion(caller: Caller, workspaceId: string, a: StateVersionInput): Promise<StateVersionView> {
  // Organisation tokens cannot upload state (real service rule).
  const { record } = await readById(caller, workspaceId, "state.create");
  const state = decodeBase64(a.state, "/data/attributes/state");
  const jsonState = decodeBase64(a["json-state"], "/data/attributes/json-state");
  const jsonOutputs = decodeBase64(a["json-state-outputs"], "/data/attributes/json-state-outputs");
  const id = newChildId("sv", workspaceId);
  const now = nowIso();
  const p = caller.principal;
  const result = await workspaceObject(caller.env, workspaceId).createStateVersion({
    id,
    holder: lockHolderOf(p),
    serial: a.serial,
    md5: a.md5,
    lineage: a.lineage ?? null,
    intermediate: a.intermediate === true,
    state,
    jsonState,
    jsonOutputs,
    now,
    createdBy: actingUserId(p),
    guard: audited(caller, guardOf(record), { id, type: "state_version", action: "create", meta: { workspace_id: workspaceId, serial: a.serial } }),
  });
  // The DO indexes the version (state_version_index) in the flush that follows its answer; its id names the workspace,
  // so reading it back needs no index.
  return unwrap(result).value;
}

/**
 * Rolls the workspace back to one of its state versions: a new current version copying it. The same power
 * as creating a state version, and the caller must hold the lock (the DO checks, as for a create).
 */
export async function rollbackStateVersion(caller: Caller, workspaceId: string, sourceId: string): Promise<StateVersionView> {
  const { record } = await readById(caller, workspaceId, "state.create");
  const p = caller.principal;
  const id = newChildId("sv", workspaceId);
  const result = await workspaceObject(caller.env, workspaceId).rollbackStateVersion({
    id,
    sourceId,
    holder: lockHolderOf(p),
    now: nowIso(),
    createdBy: actingUserId(p),
    guard: audited(caller, guardOf(record), { id, type: "state_version", action: "rollback", meta: { workspace_id: workspaceId, source_id: sourceId } }),
  });
  return unwrap(result).value;
}

/**
 * Finds the workspace of a state version and checks the caller may read it: the state version itself
 * (with its download URLs) needs state `read` (can-read-state-versions); its outputs need only
 * `read-outputs` (can-read-state-outputs), sensitive values then being hidden.
 */
export async function readStateVersion(caller: Caller, id: string, need: StateNeed = 2): Promise<StateVersionRead> {
  const workspaceId = await workspaceOfStateVersion(caller.db, id);
  if (!workspaceId) throw ApiError.of("not_found");
  const { caps, scope } = await readById(caller, workspaceId, stateAction(need));
  const res = unwrap(await workspaceObject(caller.env, workspaceId).getStateVersion(id));
  return { workspaceId, sv: res.value.stateVersion, canReadState: caps.stateVersions >= 2, uploads: canUpload(scope, caps) };
}

/**
 * A state version of the workspace named by organisation and name (404 when the version is another workspace's), with
 * the workspace as its object holds it now: its current version and lock as fresh as the version itself. `action`:
 * `state.read` as `GET /state-versions/:id`, or `state.create` for a caller about to roll back to it.
 */
export async function readWorkspaceStateVersion(
  caller: Caller,
  ref: { organization: string; name: string },
  id: string,
  action: "state.read" | "state.create" = "state.read",
): Promise<StateVersionRead & { readable: Readable; record: WorkspaceRecord }> {
  const readable = await readByName(caller, ref.organization, ref.name, action);
  const { caps, scope } = readable;
  const res = unwrap(await workspaceObject(caller.env, readable.record.id).getStateVersion(id));
  return {
    workspaceId: readable.record.id,
    sv: res.value.stateVersion,
    canReadState: caps.stateVersions >= 2,
    uploads: canUpload(scope, caps),
    readable,
    record: res.value.workspace,
  };
}

/** The workspace's current state version (404 when none). */
export async function currentStateVersion(caller: Caller, workspaceId: string, need: StateNeed = 2): Promise<StateVersionRead> {
  // From the object: a state version's upload answers before the index shows it current (docs/consistency.md).
  const { record, caps, scope } = await readById(caller, workspaceId, stateAction(need), true);
  if (!record.currentStateVersionId) throw ApiError.of("not_found");
  const res = unwrap(await workspaceObject(caller.env, workspaceId).getStateVersion(record.currentStateVersionId));
  return { workspaceId, sv: res.value.stateVersion, canReadState: caps.stateVersions >= 2, uploads: canUpload(scope, caps) };
}

/** The current state version whose resources the workspace lists (null: no state yet); readers of the workspace may. */
export async function resourcesState(caller: Caller, workspaceId: string): Promise<StateVersionView | null> {
  const { record } = await readById(caller, workspaceId, "workspace.read");
  if (!record.currentStateVersionId) return null;
  const res = await workspaceObject(caller.env, workspaceId).getStateVersion(record.currentStateVersionId);
  return res.ok ? res.value.stateVersion : null;
}

/** A page of a workspace's state versions, newest first. */
export async function listStateVersions(
  caller: Caller,
  workspace: { organization: string; name: string },
  status: string | undefined,
  page: Page,
): Promise<{ workspaceId: string; items: StateVersionView[]; total: number; uploads: boolean; readable: Readable }> {
  const workspaceId = await idByName(caller, workspace.organization, workspace.name);
  const readable = await readById(caller, workspaceId, "state.read");
  const { caps, scope } = readable;
  const res = unwrap(await workspaceObject(caller.env, workspaceId).listStateVersions({ offset: (page.number - 1) * page.size, limit: page.size, status }));
  return { workspaceId, items: res.value.items, total: res.value.total, uploads: canUpload(scope, caps), readable };
}

/**
 * Terraform Enterprise's backing-data actions (data retention; the self-hosted edition only): soft delete
 * a state version's blobs, restore them, or delete them for good. Workspace admins; one DO call.
 */
export async function manageStateVersionBackingData(caller: Caller, id: string, action: BackingAction): Promise<void> {
  if (edition(caller.env) !== "self-hosted") throw ApiError.of("not_found");
  const workspaceId = await workspaceOfStateVersion(caller.db, id);
  if (!workspaceId) throw ApiError.of("not_found");
  await mutateAs(caller, workspaceId, "workspace.update", (_r, guard) => workspaceObject(caller.env, workspaceId).manageBackingData({ id, action, guard }));
}
