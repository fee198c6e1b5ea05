/** `include` on workspace reads (spec §4.6): related resources in a top-level `included`. */
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";
import { Included, type Resource } from "../jsonapi/document";
import { serializeOrganization } from "../organizations/organizations.serialize";
import type { WorkspaceRecord } from "./workspace.types";
import type { WorkspaceScope } from "./workspaces.service";

/** Every value the docs, go-tfe and the real API's OpenAPI document send. */
export const INCLUDE_VALUES = new Set([
  "current_configuration_version",
  "current_configuration_version.ingress_attributes",
  "current_run",
  "current_run.configuration_version",
  "current_run.configuration_version.ingress_attributes",
  "current_run.plan",
  "current_run.apply",
  "latest_run",
  "latest_run.plan",
  "latest_run.configuration_version",
  "latest_run.configuration_version.ingress_attributes",
  "locked_by",
  "organization",
  "outputs",
  "project",
  "readme",
  "effective_tag_bindings",
  "current_state_version",
  "current-state-version",
  "current_state_version.resources_processed",
  "current_assessment_result",
  "agent_pool",
  "vars",
  "no_code_module_version",
  "no_code_module_version.no_code_module",
  "no_code_module_version.no_code_module.latest_version",
]);

export function parseInclude(raw: string | undefined): string[] {
  if (!raw) return [];
  const values = raw.split(",").map((v) => v.trim()).filter((v) => v.length > 0);
  for (const v of values) {
    if (!INCLUDE_VALUES.has(v)) {
      throw ApiError.of("invalid_include", { detail: `Invalid include parameter: ${v}`, parameter: "include" });
    }
  }
  return values;
}

/** Resolves includes for a set of workspaces; resources this service does not hold resolve to nothing. */
export async function includeFor(
  c: Context<AppEnv>,
  records: WorkspaceRecord[],
  scope: WorkspaceScope,
  raw: string | undefined,
): Promise<{ included?: Resource[] }> {
  const values = parseInclude(raw);
  if (values.length === 0) return {};
  const included = new Included();
  for (const v of values) {
    if (v === "organization") included.add(serializeOrganization(scope.access.organization));
  }
  void c;
  void records;
  return included.items.length ? { included: included.items } : {};
}
