/**
 * Automatic destroy (workspaces API: `auto-destroy-at`, `auto-destroy-activity-duration`): when one falls due, the
 * workspace's object queues a destroy run that applies by itself, from its alarm. Due is the workspace's
 * `auto-destroy-at`, else (or if earlier) its last activity — the latest state version, `latest-change-at` — plus
 * its activity duration. Each due time is acted on once (`autoDestroyDoneFor`): a run is queued when there is
 * something to destroy and a way to run it, and a scheduled `auto-destroy-at` is then cleared, as the real service
 * unsets it after its auto-destroy run. Nothing is queued in local execution, while `allow-destroy-plan` is off,
 * without a configuration version, or with no managed resources; the due time still counts as acted on.
 */
import { fail, type Failure } from "../errors";
import { newId } from "../ids";
import type { CreateRunInput, RunRecord } from "../runs/runs.types";
import { AUTO_DESTROY_DURATION } from "./workspace.fields";
import { effectiveExecution, type Defaults } from "./workspace.rules";
import type { WorkspaceRecord } from "./workspace.types";

const UNIT_MS = { h: 3_600_000, d: 86_400_000 } as const;

/** `14d` → milliseconds; null when there is none (or it is not one). */
export function activityDurationMs(duration: string | null): number | null {
  if (duration === null || !AUTO_DESTROY_DURATION.test(duration)) return null;
  const n = Number.parseInt(duration, 10);
  return n > 0 ? n * UNIT_MS[duration.slice(-1) as "h" | "d"] : null;
}

/** When the workspace's automatic destroy falls due (ms since the epoch), or null: none set, or this one acted on. */
export function autoDestroyDue(w: WorkspaceRecord): number | null {
  const at = w.settings["auto-destroy-at"] ? Date.parse(w.settings["auto-destroy-at"]) : null;
  const idle = activityDurationMs(w.settings["auto-destroy-activity-duration"]);
  const afterIdle = idle === null ? null : Date.parse(w.latestChangeAt) + idle;
  const due = at === null ? afterIdle : afterIdle === null ? at : Math.min(at, afterIdle);
  if (due === null || Number.isNaN(due)) return null;
  return w.autoDestroyDoneFor === new Date(due).toISOString() ? null : due;
}

/**
 * The alarm's step, in the object's critical section: when the destroy is due, marks it acted on and queues the
 * destroy run if it can run (`defaults`: the execution defaults the workspace inherits, read from the index). A
 * failure (not due, or no longer) changes nothing.
 */
export function fireAutoDestroy(
  queue: (w: WorkspaceRecord, input: CreateRunInput) => RunRecord | Failure,
  w: WorkspaceRecord,
  defaults: Defaults,
  nowMs: number,
): WorkspaceRecord | Failure {
  const due = autoDestroyDue(w);
  if (due === null || due > nowMs) return fail("conflict", "no automatic destroy is due");
  w.autoDestroyDoneFor = new Date(due).toISOString();
  const exec = effectiveExecution(w.settings, defaults);
  if (exec.mode === "local" || !w.settings["allow-destroy-plan"] || !w.currentConfigurationVersionId || w.resourceCount === 0) return w;
  const run = queue(w, {
    id: newId("run"),
    now: new Date(nowMs).toISOString(),
    configurationVersionId: null,
    options: { isDestroy: true, autoApply: true, message: "Queued by the workspace's automatic destroy" },
    // Nobody's: the schedule an admin set stands for it, and the run applies without a confirmation.
    creator: { actor: null, canApply: true },
    agentPoolId: exec.agentPoolId,
  });
  if ("ok" in run) return w;
  if (w.settings["auto-destroy-at"] && Date.parse(w.settings["auto-destroy-at"]) === due) w.settings["auto-destroy-at"] = null;
  return w;
}
