/** `include=vars` on workspace reads: each workspace's own variables, as GET /workspaces/:id/vars shows them. */
import type { Bindings } from "../env";
import type { Included } from "../jsonapi/document";
import type { WorkspaceRecord } from "../workspaces/workspace.types";
import type { WorkspaceScope } from "../workspaces/workspaces.service";
import { serializeVariable } from "./variables.serialize";
import { viewOf } from "./variables.service";
import { workspaceObject } from "../workspaces/workspace.stub";

/**
 * Adds the variables of each workspace the caller may read variables of (can-read-variable, as the `vars`
 * relationship and the vars endpoint require); a sensitive value is never opened. One DO call per such workspace
 * that has variables, all in parallel (a page holds at most 100).
 */
export async function includeVariables(env: Bindings, records: WorkspaceRecord[], scope: WorkspaceScope, included: Included): Promise<void> {
  const wanted = records.filter((r) => (r.varIds?.length ?? 0) > 0 && scope.capsOf(r).variables >= 1);
  const organization = scope.access.organization.name;
  const found = await Promise.all(wanted.map((r) => workspaceObject(env, r.id).listVariables()));
  for (const res of found) {
    if (!res.ok) continue; // deleted since it was read
    const w = res.value.workspace;
    const owner = { kind: "workspace" as const, id: w.id, organization, name: w.name };
    for (const v of res.value.variables) included.add(serializeVariable(await viewOf(env, v, owner)));
  }
}
