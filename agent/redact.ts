/**
 * The redacted JSON plan Terraform's `cloud` block renders a remote plan from (`GET plans/:id/json-output-redacted`):
 * `terraform show -json` plus `terraform providers schema -json`, in the shape of Terraform's `jsonformat.Plan`
 * (internal/command/jsonformat/plan.go), with every value marked sensitive replaced. Any reader of the run's plan may
 * read it, so no sensitive value may stay in it. Equal values get equal stand-ins within one plan (so the renderer
 * still tells a changed sensitive value from an unchanged one) and nothing outside the plan can recompute them.
 */
import { createHmac, randomBytes } from "node:crypto";

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

interface Change {
  before?: Json;
  after?: Json;
  before_sensitive?: Json;
  after_sensitive?: Json;
  [k: string]: Json | undefined;
}

interface ShowPlan {
  format_version?: string;
  output_changes?: Record<string, Change>;
  resource_changes?: { change?: Change; [k: string]: unknown }[];
  resource_drift?: { change?: Change; [k: string]: unknown }[];
  relevant_attributes?: unknown[];
  deferred_changes?: unknown[];
  action_invocations?: unknown[];
}

interface ProviderSchemas {
  format_version?: string;
  provider_schemas?: Record<string, unknown>;
}

export function redactedPlan(plan: ShowPlan, schemas: ProviderSchemas, key: Buffer = randomBytes(32)): Record<string, unknown> {
  const standIn = (v: Json): string => `(sensitive value ${createHmac("sha256", key).update(JSON.stringify(v)).digest("hex").slice(0, 12)})`;
  const mask = (value: Json | undefined, sensitive: Json | undefined): Json | undefined => {
    if (sensitive === true) return value === null || value === undefined ? value : standIn(value);
    if (Array.isArray(value) && Array.isArray(sensitive)) return value.map((v, i) => mask(v, sensitive[i]) as Json);
    if (value && typeof value === "object" && !Array.isArray(value) && sensitive && typeof sensitive === "object" && !Array.isArray(sensitive)) {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mask(v, sensitive[k]) as Json]));
    }
    return value;
  };
  const change = (c: Change | undefined): Change | undefined =>
    c && { ...c, before: mask(c.before, c.before_sensitive), after: mask(c.after, c.after_sensitive) };
  const resource = <T extends { change?: Change }>(r: T): T => ({ ...r, change: change(r.change) });
  return {
    plan_format_version: plan.format_version ?? "1.2",
    output_changes: Object.fromEntries(Object.entries(plan.output_changes ?? {}).map(([k, c]) => [k, change(c)])),
    resource_changes: (plan.resource_changes ?? []).map(resource),
    resource_drift: (plan.resource_drift ?? []).map(resource),
    relevant_attributes: plan.relevant_attributes ?? [],
    deferred_changes: plan.deferred_changes ?? [],
    action_invocations: plan.action_invocations ?? [],
    provider_format_version: schemas.format_version ?? "1.0",
    provider_schemas: schemas.provider_schemas ?? {},
  };
}
