/** `include=outputs` and `include=current_state_version` on workspace reads (HCP Terraform API docs, Workspaces: Available Related Resources). */
import type { Bindings } from "../env";
import type { Included } from "../jsonapi/document";
import type { WorkspaceRecord } from "../workspaces/workspace.types";
import type { WorkspaceScope } from "../workspaces/workspaces.service";
import { canUpload } from "../auth/permissions";
import { serializeOutputs, serializeStateVersion } from "./state-versions.serialize";
import { workspaceObject } from "../workspaces/workspace.stub";

/**
 * Adds the current state version and/or its outputs of each readable workspace. One DO call per
 * workspace that has a current state version, all in parallel (a page holds at most 100).
 */
export async function includeStateVersions(
  env: Bindings,
  origin: string,
  records: WorkspaceRecord[],
  scope: WorkspaceScope,
  values: Set<string>,
  included: Included,
): Promise<void> {
  const outputs = values.has("outputs");
  const current = values.has("current_state_version") || values.has("current-state-version");
  if (!outputs && !current) return;
  // Outputs need read-outputs; the state version itself needs state read (checked below).
  const wanted = records.filter((r) => r.currentStateVersionId && scope.capsOf(r).stateVersions >= (outputs ? 1 : 2));
  const found = await Promise.all(wanted.map(async (r) => ({ r, res: await workspaceObject(env, r.id).getStateVersion(r.currentStateVersionId!) })));
  for (const { r, res } of found) {
    if (!res.ok) continue; // deleted since it was listed
    // Sensitive values only for callers who may read the state itself.
    if (outputs) for (const o of serializeOutputs(res.value.stateVersion, "workspace-outputs", scope.capsOf(r).stateVersions >= 2)) included.add(o);
    // The state version carries download URLs of the raw state: only for state readers, as its own endpoint.
    if (current && scope.capsOf(r).stateVersions >= 2) {
      included.add(await serializeStateVersion(env, origin, r.id, res.value.stateVersion, { canUpload: canUpload(scope, scope.capsOf(r)) }));
    }
  }
}
