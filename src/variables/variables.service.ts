/**
 * Workspace variables: authorise on the workspace (team access `variables`: read ≥ 1, write ≥ 2,
 * i.e. can-read-variable / can-update-variable), seal values here in the Worker, then ask the workspace's
 * Durable Object, the single writer of its variables. A reader without the capability gets 404.
 */
import { audited } from "../audit/audit.service";
import { guardOf } from "../workspaces/workspaces.service";
import type { Caller } from "../caller";
import type { Bindings } from "../env";
import { unwrap } from "../errors";
import { newId, nowIso } from "../ids";
import type { WorkspaceRecord } from "../workspaces/workspace.types";
import { readById } from "../workspaces/workspaces.service";
import { varsetsReachingWorkspace } from "../varsets/varsets.d1";
import { openValue, sealValue } from "./variables.crypto";
import { effectiveVariables, newVersionId } from "./variables.rules";
import type { VariableCreateAttributes, VariableUpdateAttributes } from "./variables.schemas";
import type { StoredVariable, VariablePatch, VariableView } from "./variables.types";
import { workspaceObject } from "../workspaces/workspace.stub";

/** The response view: a sensitive value is never decrypted. */
export async function viewOf(env: Bindings, v: StoredVariable, owner: VariableView["owner"]): Promise<VariableView> {
  const value = v.sensitive ? null : await openValue(env, v.id, v.sealedValue);
  const { id, key, description, category, hcl, sensitive, versionId, createdAt } = v;
  return { id, key, value, description, category, hcl, sensitive, versionId, createdAt, owner };
}

/** `organization`: the workspace's organisation's name as the request read it (records name it by id). */
const ownerOf = (w: WorkspaceRecord, organization: string): VariableView["owner"] => ({ kind: "workspace", id: w.id, organization, name: w.name });

/** A new variable from a create body: id, sealed value, fresh version. */
export async function newVariable(env: Bindings, a: VariableCreateAttributes): Promise<StoredVariable> {
  const id = newId("var");
  return {
    id,
    key: a.key,
    category: a.category,
    sealedValue: await sealValue(env, id, a.value ?? ""),
    description: a.description ?? null,
    hcl: a.hcl ?? false,
    sensitive: a.sensitive ?? false,
    versionId: newVersionId(),
    createdAt: nowIso(),
  };
}

/** A patch from an update body (a new value sealed for this variable). */
export async function patchOf(env: Bindings, id: string, a: VariableUpdateAttributes): Promise<VariablePatch> {
  const patch: VariablePatch = { versionId: newVersionId() };
  if (a.key !== undefined) patch.key = a.key;
  if (a.category !== undefined) patch.category = a.category;
  if (a.value !== undefined) patch.sealedValue = await sealValue(env, id, a.value ?? "");
  if (a.description !== undefined) patch.description = a.description;
  if (a.hcl !== undefined) patch.hcl = a.hcl;
  if (a.sensitive !== undefined) patch.sensitive = a.sensitive;
  return patch;
}

/** An update's event meta: the key and category when they change, and which attributes changed (never a value). */
export function variableChangeMeta(workspaceId: string | null, a: VariableUpdateAttributes): Record<string, string> {
  return {
    ...(workspaceId ? { workspace_id: workspaceId } : {}),
    ...(a.key !== undefined ? { key: a.key } : {}),
    ...(a.category !== undefined ? { category: a.category } : {}),
    changed: Object.keys(a).sort().join(","),
  };
}

/** The workspace's record and its organisation's name, once the caller is authorised on its variables. */
async function authorised(caller: Caller, workspaceId: string, need: 1 | 2): Promise<{ record: WorkspaceRecord; organization: string }> {
  const { record, scope } = await readById(caller, workspaceId, need === 1 ? "variables.read" : "variables.write");
  return { record, organization: scope.access.organization.name };
}

export async function listWorkspaceVariables(caller: Caller, workspaceId: string): Promise<VariableView[]> {
  const { organization } = await authorised(caller, workspaceId, 1);
  const res = unwrap(await workspaceObject(caller.env, workspaceId).listVariables());
  return Promise.all(res.value.variables.map((v) => viewOf(caller.env, v, ownerOf(res.value.workspace, organization))));
}

export async function readWorkspaceVariable(caller: Caller, workspaceId: string, id: string): Promise<VariableView> {
  const { organization } = await authorised(caller, workspaceId, 1);
  const res = unwrap(await workspaceObject(caller.env, workspaceId).getVariable(id));
  return viewOf(caller.env, res.value.variable, ownerOf(res.value.workspace, organization));
}

export async function createWorkspaceVariable(
  caller: Caller,
  workspaceId: string,
  a: VariableCreateAttributes,
): Promise<{ view: VariableView; bookmark?: string | null }> {
  const { record, organization } = await authorised(caller, workspaceId, 2);
  const variable = await newVariable(caller.env, a);
  const guard = audited(caller, guardOf(record), {
    id: variable.id,
    type: "variable",
    action: "create",
    meta: { workspace_id: workspaceId, key: variable.key, category: variable.category, sensitive: variable.sensitive },
  });
  const res = unwrap(await workspaceObject(caller.env, workspaceId).createVariable({ variable, guard }));
  return { view: await viewOf(caller.env, res.value.variable, ownerOf(res.value.workspace, organization)), bookmark: res.bookmark };
}

export async function updateWorkspaceVariable(caller: Caller, workspaceId: string, id: string, a: VariableUpdateAttributes): Promise<VariableView> {
  const { record, organization } = await authorised(caller, workspaceId, 2);
  const guard = audited(caller, guardOf(record), { id, type: "variable", action: "update", meta: variableChangeMeta(workspaceId, a) });
  const res = unwrap(await workspaceObject(caller.env, workspaceId).updateVariable({ id, patch: await patchOf(caller.env, id, a), guard }));
  return viewOf(caller.env, res.value.variable, ownerOf(res.value.workspace, organization));
}

export async function deleteWorkspaceVariable(caller: Caller, workspaceId: string, id: string): Promise<{ bookmark?: string | null }> {
  const { record } = await authorised(caller, workspaceId, 2);
  const guard = audited(caller, guardOf(record), { id, type: "variable", action: "destroy", meta: { workspace_id: workspaceId } });
  return unwrap(await workspaceObject(caller.env, workspaceId).deleteVariable({ id, guard }));
}

/**
 * `all-vars`: the workspace's variables and those of every set reaching it (applied to it, to its project, or
 * global), one per key and category by precedence (variables.rules.ts). Needs read on the workspace's variables.
 */
export async function listEffectiveVariables(caller: Caller, workspaceId: string): Promise<VariableView[]> {
  const { record, organization } = await authorised(caller, workspaceId, 1);
  const [own, sets] = await Promise.all([
    workspaceObject(caller.env, workspaceId).listVariables(),
    varsetsReachingWorkspace(caller.db, record.organizationId, record.id, record.projectId),
  ]);
  const ws = unwrap(own).value;
  const chosen = effectiveVariables(ws.variables, sets);
  return Promise.all(
    chosen.map((c) => viewOf(caller.env, c.variable, c.from === "workspace" ? ownerOf(ws.workspace, organization) : { kind: "varset", id: c.varsetId })),
  );
}
