/**
 * The run state machine as pure functions over a RunRecord (docs/runs.md, "States"). Nothing here does I/O: the
 * store (runs.store.ts, jobs.store.ts) reads, calls these, and writes in one synchronous section.
 */
import { fail, type Failure } from "../errors";
import type { Actor, CreateRunInput, PhaseRecord, PhaseStatus, RunOptions, RunRecord, RunStatus } from "./runs.types";

export const DEFAULT_MESSAGE = "Queued manually via the Terraform Enterprise API";
/** How long after a cancel a force-cancel becomes available (OTF's ForceCancelCoolOff; HCP's is not documented). */
export const FORCE_CANCEL_COOL_OFF_MS = 10_000;
/** A claimed job's lease; every agent call about the job renews it. */
export const LEASE_MS = 60_000;

export const FINAL_STATUSES: ReadonlySet<RunStatus> = new Set(["applied", "planned_and_finished", "discarded", "errored", "canceled"]);
const CONFIRMABLE: ReadonlySet<RunStatus> = new Set(["planned", "planned_and_saved"]);
const DISCARDABLE: ReadonlySet<RunStatus> = new Set(["pending", "planned", "planned_and_saved"]);
/** Canceled at once: nothing is executing. */
const CANCEL_AT_ONCE: ReadonlySet<RunStatus> = new Set([
  "pending",
  "plan_queued",
  "confirmed",
  "apply_queued",
  // Waiting on run tasks: no agent holds the run.
  "pre_plan_running",
  "pre_plan_completed",
  "post_plan_running",
  "post_plan_completed",
  "pre_apply_running",
  "pre_apply_completed",
]);
/** Canceled by signalling the agent, which stops Terraform and reports. */
const RUNNING: ReadonlySet<RunStatus> = new Set(["planning", "applying"]);
/** The phase statuses the log reader treats as the end of the stream. */
export const TERMINAL_PHASE: ReadonlySet<PhaseStatus> = new Set(["finished", "errored", "canceled", "unreachable"]);

export const isFinal = (status: RunStatus): boolean => FINAL_STATUSES.has(status);

/** Plan-only runs (speculative configuration or `plan-only`) and save-plan planning skip the queue and the lock. */
export const bypassesQueue = (run: RunRecord): boolean => run.planOnly || run.savePlan;

/** The `actions` flags of a run at `now` (force-cancel depends on the cool-off). */
export function runActions(
  run: RunRecord,
  now: string,
): {
  "is-cancelable": boolean;
  "is-confirmable": boolean;
  "is-discardable": boolean;
  "is-force-cancelable": boolean;
} {
  const running = RUNNING.has(run.status);
  return {
    "is-cancelable": CANCEL_AT_ONCE.has(run.status) || (running && run.signal === null),
    "is-confirmable": CONFIRMABLE.has(run.status),
    "is-discardable": DISCARDABLE.has(run.status),
    "is-force-cancelable":
      running && run.signal === "cancel" && run.forceCancelAvailableAt !== null && Date.parse(now) >= Date.parse(run.forceCancelAvailableAt),
  };
}

/** `plan_queued` → `plan-queued-at`. */
export const statusKey = (status: string): string => `${status.replace(/_/g, "-")}-at`;

function newPhase(id: string, now: string): PhaseRecord {
  return {
    id,
    status: "pending",
    statusTimestamps: { "pending-at": now },
    resourceAdditions: 0,
    resourceChanges: 0,
    resourceDestructions: 0,
    resourceImports: 0,
    agent: null,
  };
}

const PHASE_KEY: Partial<Record<PhaseStatus, string>> = {
  queued: "queued-at",
  running: "started-at",
  finished: "finished-at",
  errored: "errored-at",
  canceled: "canceled-at",
};

/** Moves a phase to `status`, stamping its `<x>-at` key. */
export function setPhase(phase: PhaseRecord, status: PhaseStatus, now: string): void {
  phase.status = status;
  const key = PHASE_KEY[status];
  if (key) phase.statusTimestamps[key] = now;
}

/** Moves a run to `status`, stamping its `<status>-at` key. */
export function setStatus(run: RunRecord, status: RunStatus, now: string): void {
  run.status = status;
  run.statusTimestamps[statusKey(status)] = now;
}

/** Phases that never ran become unreachable; a queued one canceled. */
function closePhases(run: RunRecord, now: string, queuedBecomes: PhaseStatus): void {
  for (const phase of [run.plan, run.apply]) {
    if (phase.status === "pending") setPhase(phase, "unreachable", now);
    else if (phase.status === "queued") setPhase(phase, queuedBecomes, now);
  }
}

export interface NewRunContext {
  workspaceId: string;
  organizationId: string;
  workspaceAutoApply: boolean;
  /** The workspace's `allow-destroy-plan`: false refuses destroy runs. */
  allowDestroyPlan: boolean;
  configurationVersion: { id: string; speculative: boolean };
}

/** Options as sent, with the defaults of a new run; a bad combination is a 422 naming the attribute. */
export function newRun(input: CreateRunInput, ctx: NewRunContext): RunRecord | Failure {
  const o: Partial<RunOptions> = input.options;
  const A = "/data/attributes";
  if (o.refreshOnly && o.isDestroy) return fail("invalid_attribute", "refresh-only runs cannot be destroy runs", `${A}/refresh-only`);
  if (o.isDestroy && !ctx.allowDestroyPlan) {
    return fail("invalid_attribute", "Destroy plans are not allowed in this workspace: its allow-destroy-plan setting is false", `${A}/is-destroy`);
  }
  const planOnly = ctx.configurationVersion.speculative || (o.planOnly ?? false);
  if (o.savePlan && planOnly) return fail("invalid_attribute", "save-plan runs cannot be plan-only", `${A}/save-plan`);
  const suffix = input.id.slice("run-".length);
  return {
    id: input.id,
    workspaceId: ctx.workspaceId,
    organizationId: ctx.organizationId,
    configurationVersionId: ctx.configurationVersion.id,
    status: "pending",
    statusTimestamps: { "plan-queueable-at": input.now },
    createdAt: input.now,
    createdBy: input.creator.actor,
    confirmedBy: null,
    canceledAt: null,
    forceCancelAvailableAt: null,
    signal: null,
    hasChanges: false,
    positionInQueue: 0,
    plan: newPhase(`plan-${suffix}`, input.now),
    apply: newPhase(`apply-${suffix}`, input.now),
    commentIds: [],
    message: o.message ? o.message : DEFAULT_MESSAGE,
    isDestroy: o.isDestroy ?? false,
    refresh: o.refresh ?? true,
    refreshOnly: o.refreshOnly ?? false,
    planOnly,
    savePlan: o.savePlan ?? false,
    autoApply: o.autoApply ?? ctx.workspaceAutoApply,
    allowEmptyApply: o.allowEmptyApply ?? false,
    allowConfigGeneration: o.allowConfigGeneration ?? false,
    targetAddrs: o.targetAddrs ?? null,
    replaceAddrs: o.replaceAddrs ?? null,
    variables: o.variables ?? [],
    terraformVersion: o.terraformVersion ?? null,
    source: o.source ?? "tfe-api",
    triggerReason: o.triggerReason ?? "manual",
  };
}

/** `pending` (or a confirmed saved plan) → its phase is queued for an agent. */
export function queuePhase(run: RunRecord, now: string): "plan" | "apply" | Failure {
  if (run.status === "pending" || run.status === "pre_plan_completed") {
    setStatus(run, "plan_queued", now);
    setPhase(run.plan, "queued", now);
    return "plan";
  }
  if (run.status === "confirmed" || run.status === "pre_apply_completed") {
    setStatus(run, "apply_queued", now);
    setPhase(run.apply, "queued", now);
    return "apply";
  }
  return conflict(`Run is ${run.status} and cannot be queued`);
}

/** An agent claimed the queued phase. */
export function startPhase(run: RunRecord, phase: "plan" | "apply", agent: PhaseRecord["agent"], now: string): void {
  setStatus(run, phase === "plan" ? "planning" : "applying", now);
  setPhase(run[phase], "running", now);
  run[phase].agent = agent;
}

export interface PlanOutcome {
  status: "finished" | "errored" | "canceled";
  hasChanges: boolean;
  counts: { additions: number; changes: number; destructions: number; imports: number };
  /** The run may apply on its own (its `auto-apply`, and its creator may apply). */
  autoApplies: boolean;
}

function setCounts(phase: PhaseRecord, c: PlanOutcome["counts"]): void {
  phase.resourceAdditions = c.additions;
  phase.resourceChanges = c.changes;
  phase.resourceDestructions = c.destructions;
  phase.resourceImports = c.imports;
}

/**
 * The plan phase ended: the run's status, `has-changes` and the plan's status change together. Answers whether the
 * apply is to be queued now (auto-apply).
 */
export function finishPlan(run: RunRecord, o: PlanOutcome, now: string): { queueApply: boolean } {
  return recordPlan(run, o, now) ? concludePlan(run, o.autoApplies, now) : { queueApply: false };
}

/**
 * The plan phase's own end: on a failure or cancel the run ends (false); on success the plan's counts and
 * `has-changes` are recorded (true), the run's next status left to `concludePlan` (post-plan run tasks come between).
 */
export function recordPlan(run: RunRecord, o: PlanOutcome, now: string): boolean {
  // A plan that finished after a cancel was asked for ends canceled: nothing may apply it.
  const status = o.status === "finished" && run.signal !== null ? "canceled" : o.status;
  if (status !== "finished") {
    setPhase(run.plan, status, now);
    setPhase(run.apply, "unreachable", now);
    setStatus(run, status === "errored" ? "errored" : "canceled", now);
    if (status === "canceled" && run.canceledAt === null) run.canceledAt = now;
    run.signal = null;
    return false;
  }
  setCounts(run.plan, o.counts);
  run.plan.hasChanges = o.hasChanges;
  run.hasChanges = o.hasChanges;
  setPhase(run.plan, "finished", now);
  return true;
}

/** After a finished plan (and its post-plan tasks): the run's status, and whether its apply is to be queued now. */
export function concludePlan(run: RunRecord, autoApplies: boolean, now: string): { queueApply: boolean } {
  if (run.planOnly || (!run.hasChanges && !run.allowEmptyApply)) {
    setPhase(run.apply, "unreachable", now);
    setStatus(run, "planned_and_finished", now);
    return { queueApply: false };
  }
  if (run.savePlan) {
    setStatus(run, "planned_and_saved", now);
    return { queueApply: false };
  }
  setStatus(run, "planned", now);
  if (!autoApplies) return { queueApply: false };
  setStatus(run, "confirmed", now);
  return { queueApply: true };
}

/** A mandatory run task failed at a stage: the run ends errored, what had not run unreachable. */
export function stopForTasks(run: RunRecord, now: string): void {
  closePhases(run, now, "unreachable");
  setStatus(run, "errored", now);
  run.signal = null;
}

/** The apply phase ended. */
export function finishApply(run: RunRecord, o: { status: "finished" | "errored" | "canceled"; counts: PlanOutcome["counts"] }, now: string): void {
  setCounts(run.apply, o.counts);
  setPhase(run.apply, o.status, now);
  setStatus(run, o.status === "finished" ? "applied" : o.status, now);
  if (o.status === "canceled" && run.canceledAt === null) run.canceledAt = now;
  run.signal = null;
}

/** A phase whose agent stopped answering (its lease expired). */
export function losePhase(run: RunRecord, phase: "plan" | "apply", now: string): void {
  setPhase(run[phase], "errored", now);
  if (phase === "plan") setPhase(run.apply, "unreachable", now);
  setStatus(run, "errored", now);
  run.signal = null;
}

const conflict = (detail: string): Failure => fail("run_transition", detail);

/** `actions/apply`: a confirmable run is confirmed (its apply then waits for the lock). */
export function confirm(run: RunRecord, by: Actor | null, now: string): Failure | null {
  if (!CONFIRMABLE.has(run.status)) return conflict(`Run is ${run.status} and cannot be confirmed`);
  run.confirmedBy = by;
  setStatus(run, "confirmed", now);
  return null;
}

export function discard(run: RunRecord, now: string): Failure | null {
  if (!DISCARDABLE.has(run.status)) return conflict(`Run is ${run.status} and cannot be discarded`);
  closePhases(run, now, "unreachable");
  setStatus(run, "discarded", now);
  return null;
}

/**
 * `actions/cancel`: a run that is not executing ends `canceled` at once ("at-once"); an executing phase gets the
 * cancel signal and ends when its agent reports ("signalled").
 */
export function cancel(run: RunRecord, now: string): "at-once" | "signalled" | Failure {
  const coolOff = new Date(Date.parse(now) + FORCE_CANCEL_COOL_OFF_MS).toISOString();
  if (CANCEL_AT_ONCE.has(run.status)) {
    closePhases(run, now, "canceled");
    setStatus(run, "canceled", now);
    run.canceledAt = now;
    // Kept set after a cancel: go-tfe polls for it (TestRunsCanceledAt).
    run.forceCancelAvailableAt = coolOff;
    return "at-once";
  }
  if (RUNNING.has(run.status) && run.signal === null) {
    run.signal = "cancel";
    run.canceledAt = now;
    run.forceCancelAvailableAt = coolOff;
    return "signalled";
  }
  return conflict(`Run is ${run.status} and cannot be canceled`);
}

/** `actions/force-cancel`: after a cancel and its cool-off, the run ends `canceled` at once. */
export function forceCancel(run: RunRecord, now: string): "plan" | "apply" | Failure {
  if (!runActions(run, now)["is-force-cancelable"]) return conflict(`Run is ${run.status} and cannot be force-canceled`);
  const phase = run.status === "planning" ? "plan" : "apply";
  setPhase(run[phase], "canceled", now);
  closePhases(run, now, "canceled");
  setStatus(run, "canceled", now);
  run.statusTimestamps["force-canceled-at"] = now;
  run.signal = "force-cancel";
  return phase;
}

/** Where a `force-execute` may go: the target is pending and the run holding the lock may be discarded. */
export function checkForceExecute(target: RunRecord, blocker: RunRecord | null): Failure | null {
  if (target.status !== "pending" || bypassesQueue(target)) return fail("run_force_execute_forbidden", "Run is not pending");
  if (!blocker) return fail("run_force_execute_forbidden", "The workspace is not locked by another run");
  if (!DISCARDABLE.has(blocker.status)) return conflict(`Run ${blocker.id} is ${blocker.status} and cannot be discarded`);
  return null;
}

export interface RunMetrics {
  applyDurationAverage: number | null;
  planDurationAverage: number | null;
  runFailures: number;
  runsCount: number;
}

const duration = (p: PhaseRecord): number | null => {
  const start = p.statusTimestamps["started-at"];
  const end = p.statusTimestamps["finished-at"] ?? p.statusTimestamps["errored-at"];
  return start && end ? Date.parse(end) - Date.parse(start) : null;
};

const average = (xs: number[]): number | null => (xs.length ? Math.round(xs.reduce((a, b) => a + b, 0) / xs.length) : null);

/** The workspace's metrics over its latest runs that applied or errored (newest first, at most 30). */
export function metrics(runs: RunRecord[]): RunMetrics {
  const counted = runs.filter((r) => r.status === "applied" || r.status === "errored").slice(0, 30);
  return {
    applyDurationAverage: average(counted.map((r) => duration(r.apply)).filter((d): d is number => d !== null)),
    planDurationAverage: average(counted.map((r) => duration(r.plan)).filter((d): d is number => d !== null)),
    runFailures: counted.filter((r) => r.status === "errored").length,
    runsCount: counted.length,
  };
}
