/** `include=current_configuration_version` on workspace reads (HCP Terraform API docs, Workspaces: Available Related Resources). */
import type { Bindings } from "../env";
import type { Included } from "../jsonapi/document";
import type { WorkspaceRecord } from "../workspaces/workspace.types";
import type { WorkspaceScope } from "../workspaces/workspaces.service";
import { serializeConfigurationVersion } from "./configuration-versions.serialize";
import { workspaceObject } from "../workspaces/workspace.stub";

/**
 * Adds the current configuration version of each workspace whose runs the caller may read (as its own endpoint
 * requires). One DO call per workspace that has one, all in parallel (a page holds at most 100).
 */
export async function includeConfigurationVersions(
  env: Bindings,
  records: WorkspaceRecord[],
  scope: WorkspaceScope,
  values: Set<string>,
  included: Included,
): Promise<void> {
  if (!values.has("current_configuration_version") && !values.has("current_configuration_version.ingress_attributes")) return;
  const wanted = records.filter((r) => r.currentConfigurationVersionId && scope.capsOf(r).runs >= 1);
  const found = await Promise.all(wanted.map((r) => workspaceObject(env, r.id).getConfigurationVersion(r.currentConfigurationVersionId!)));
  for (const res of found) if (res.ok) included.add(serializeConfigurationVersion(res.value.cv));
}
