/**
 * The list filters of runs: the operations a run performs, its status group, and the query's conditions (HCP
 * Terraform API docs: Runs, "Run Operations" and "Run Status Groups"). Pure.
 */
import { isFinal } from "./runs.rules";
import type { RunRecord, RunStatus } from "./runs.types";

export const RUN_OPERATIONS = ["plan_only", "plan_and_apply", "save_plan", "refresh_only", "destroy", "empty_apply"] as const;
export type RunOperation = (typeof RUN_OPERATIONS)[number];

/** The operations a run performs (a run may match several: a destroy is also a plan and apply). */
export function operationsOf(run: Pick<RunRecord, "planOnly" | "savePlan" | "refreshOnly" | "isDestroy" | "allowEmptyApply">): Set<RunOperation> {
  const ops = new Set<RunOperation>();
  if (run.planOnly) ops.add("plan_only");
  else if (run.savePlan) ops.add("save_plan");
  else ops.add("plan_and_apply");
  if (run.refreshOnly) ops.add("refresh_only");
  if (run.isDestroy) ops.add("destroy");
  if (run.allowEmptyApply) ops.add("empty_apply");
  return ops;
}

export const STATUS_GROUPS = ["non_final", "final", "discardable"] as const;
/** The docs' `discardable` group (statuses awaiting a decision after the plan). */
const DISCARDABLE_GROUP: ReadonlySet<string> = new Set([
  "planned",
  "planned_and_saved",
  "cost_estimated",
  "policy_checked",
  "policy_override",
  "post_plan_running",
  "post_plan_completed",
]);

export function inStatusGroup(status: RunStatus, group: string): boolean {
  if (group === "final") return isFinal(status);
  if (group === "non_final") return !isFinal(status);
  if (group === "discardable") return DISCARDABLE_GROUP.has(status);
  return false;
}

/** A list request's filters, parsed once (each list is comma-separated; absent: no condition). */
export interface RunFilters {
  operations: string[] | null;
  statuses: string[] | null;
  sources: string[] | null;
  statusGroup: string | null;
  /** Created at or after this instant (`filter[timeframe]`). */
  since: string | null;
  /** Created before this instant (an integer year names that year). */
  until: string | null;
  agentPoolNames: string[] | null;
  workspaceNames: string[] | null;
  /** `search[user]`, `search[commit]`, `search[basic]`: the first two take priority over basic, as the docs say. */
  user: string | null;
  commit: string | null;
  basic: string | null;
}

const list = (raw: string | undefined) => {
  if (raw === undefined) return null;
  const values = raw
    .split(",")
    .map((v) => v.trim())
    .filter(Boolean);
  return values.length ? values : null;
};
const text = (raw: string | undefined) => (raw === undefined || raw.trim() === "" ? null : raw.trim());

/**
 * The filters of a list query. `defaultYear`: the organisation's list covers the past year unless
 * `filter[timeframe]` says otherwise; the workspace's every run. Returns the name of a bad parameter instead.
 */
export function parseRunFilters(q: Record<string, string | undefined>, now: number, defaultYear: boolean): RunFilters | { bad: string; detail: string } {
  const operations = list(q["filter[operation]"]);
  for (const op of operations ?? [])
    if (!(RUN_OPERATIONS as readonly string[]).includes(op)) return { bad: "filter[operation]", detail: `unknown run operation: ${op}` };
  const statusGroup = text(q["filter[status_group]"]);
  if (statusGroup !== null && !(STATUS_GROUPS as readonly string[]).includes(statusGroup))
    return { bad: "filter[status_group]", detail: `unknown status group: ${statusGroup}` };
  let since: string | null = null;
  let until: string | null = null;
  const timeframe = text(q["filter[timeframe]"]) ?? (defaultYear ? "year" : null);
  if (timeframe === "year") since = new Date(now - 365 * 24 * 3600 * 1000).toISOString();
  else if (timeframe !== null && timeframe !== "all") {
    if (!/^\d{4}$/.test(timeframe)) return { bad: "filter[timeframe]", detail: 'must be "year" or a four-digit year' };
    since = `${timeframe}-01-01T00:00:00.000Z`;
    until = `${Number(timeframe) + 1}-01-01T00:00:00.000Z`;
  }
  return {
    operations,
    statuses: list(q["filter[status]"]),
    sources: list(q["filter[source]"]),
    statusGroup,
    since,
    until,
    agentPoolNames: list(q["filter[agent_pool_names]"]),
    workspaceNames: list(q["filter[workspace_names]"]),
    user: text(q["search[user]"]),
    commit: text(q["search[commit]"]),
    basic: text(q["search[basic]"]),
  };
}

/**
 * Whether a run passes the filters but `agentPoolNames` (the service compares its workspace's pool). Plan-only runs are left out unless `filter[operation]` names them (go-tfe's
 * TestRunsListQueryParams). Runs here come from the API, never VCS: they have no VCS user or commit, so a
 * user or commit search matches none, and a basic search matches the run's id or message.
 */
export function matchesFilters(run: RunRecord, f: RunFilters): boolean {
  const ops = operationsOf(run);
  if (f.operations ? !f.operations.some((o) => ops.has(o as RunOperation)) : ops.has("plan_only")) return false;
  if (f.statuses && !f.statuses.includes(run.status)) return false;
  if (f.sources && !f.sources.includes(run.source)) return false;
  if (f.statusGroup && !inStatusGroup(run.status, f.statusGroup)) return false;
  if (f.since && run.createdAt < f.since) return false;
  if (f.until && run.createdAt >= f.until) return false;
  if (f.user !== null || f.commit !== null) return false;
  if (f.basic !== null) {
    const needle = f.basic.toLowerCase();
    if (!run.id.toLowerCase().includes(needle) && !run.message.toLowerCase().includes(needle)) return false;
  }
  return true;
}
