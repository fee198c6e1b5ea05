/**
 * The run engine of one workspace (docs/runs.md): each function is one synchronous step inside the object's critical
 * section, changing runs, jobs, logs and the workspace record `w` (the caller commits `w` with them). The rules are
 * pure (runs.rules.ts); this module adds their effects: the queue and its lock, jobs, log framing, events, metrics.
 */
import { LIMITS } from "../limits";
import { fail, type Failure } from "../errors";
import { onUnlock } from "../state-versions/state-versions.store";
import { lock } from "../workspaces/lock.rules";
import { isFailure } from "../workspaces/workspace.rules";
import type { WorkspaceRecord } from "../workspaces/workspace.types";
import { promoteProvisional, resolveCvForRun } from "../configuration-versions/configuration-versions.store";
import type { ConfigurationVersionRecord } from "../configuration-versions/configuration-versions.types";
import { newId } from "../ids";
import { claimRow, closeJob, expiredJobs, liveJob, queueJob, renewLease, type JobRow } from "./jobs.store";
import { appendAgentLog, applyPreamble, closeLog, openLog } from "./logs.store";
import {
  bypassesQueue,
  cancel,
  checkForceExecute,
  confirm,
  discard,
  finishApply,
  finishPlan,
  forceCancel,
  isFinal,
  losePhase,
  metrics,
  newRun,
  queuePhase,
  startPhase,
} from "./runs.rules";
import {
  activeRun,
  addEvent,
  childId,
  getRun,
  getRunRow,
  insertComment,
  insertRun,
  latestRuns,
  saveRun,
  setCurrentRun,
  toRun,
  waitingRuns,
} from "./runs.store";
import type { Actor, CancelSignal, ClaimInput, CreateRunInput, FinishInput, Phase, RunActionInput, RunComment, RunRecord } from "./runs.types";

export const LOST_AGENT_LINE = "\nError: the agent running this phase stopped responding\n";

/** The agent pool a workspace's jobs go to: its own pool in agent mode, else the default pool (null). */
export function workspacePool(w: WorkspaceRecord): string | null {
  return w.settings["execution-mode"] === "agent" ? w.settings["agent-pool-id"] : null;
}

// ---- the queue ----

/**
 * Starts the head of the queue if nothing holds it and the workspace is unlocked: the run takes the lock and its
 * phase is queued for an agent. A user's lock keeps the head pending, shown as the current run meanwhile.
 */
export function advance(sql: SqlStorage, w: WorkspaceRecord, now: string): void {
  if (activeRun(sql)) return;
  const head = waitingRuns(sql)[0];
  if (!head) return;
  const run = toRun(head);
  if (w.lock.locked) {
    if (w.lock.holder?.type !== "runs" && run.status === "pending") setCurrentRun(w, run);
    return;
  }
  const locked = lock(w, { type: "runs", id: run.id }, "", now);
  if (isFailure(locked)) return;
  const phase = queuePhase(run, now);
  if (isFailure(phase)) return;
  queueJob(sql, run.id, phase, head.pool_id, now);
  setCurrentRun(w, run);
  saveRun(sql, w, run, true);
}

/** A run reached a final status: it frees the queue and its lock, and the next run starts, in the same commit. */
function settle(sql: SqlStorage, w: WorkspaceRecord, run: RunRecord, now: string): void {
  saveRun(sql, w, run, false);
  const h = w.lock.holder;
  if (w.lock.locked && h?.type === "runs" && h.id === run.id) {
    w.lock = { locked: false, reason: null, holder: null, lockedAt: null };
    // As a user's unlock does: a finalized intermediate state version the run left becomes current. Forced, so a
    // pending version (an upload the agent never finished) cannot keep the workspace locked by a finished run.
    onUnlock(sql, w, now, { force: true });
  }
  if (run.status === "applied" || run.status === "errored") {
    w.runMetrics = metrics(latestRuns(sql, 30, ["applied", "errored"]));
  }
  if (run.status === "applied") {
    promoteProvisional(sql, w, run.configurationVersionId);
    discardStaleSavedPlans(sql, w, run.id, now);
  }
  advance(sql, w, now);
}

/** Saved plans still waiting for confirmation were made against the state this apply replaced: they are discarded. */
function discardStaleSavedPlans(sql: SqlStorage, w: WorkspaceRecord, appliedId: string, now: string): void {
  for (const saved of latestRuns(sql, LIMITS.savedPlansDiscardMax, ["planned_and_saved"])) {
    if (saved.id === appliedId || discard(saved, now)) continue;
    addEvent(sql, { runId: saved.id, action: "discarded", now, actor: null, description: `Run ${appliedId} changed the state this plan was made against` });
    saveRun(sql, w, saved, false);
  }
}

/** Saves a changed run, settling it if final. */
function store(sql: SqlStorage, w: WorkspaceRecord, run: RunRecord, now: string): void {
  if (isFinal(run.status)) settle(sql, w, run, now);
  else saveRun(sql, w, run);
}

// ---- creation and actions ----

export function createRun(sql: SqlStorage, w: WorkspaceRecord, input: CreateRunInput): RunRecord | Failure {
  const cv = resolveCvForRun(sql, input.configurationVersionId, w.currentConfigurationVersionId);
  if (isFailure(cv)) return cv;
  const run = newRun(input, {
    workspaceId: w.id,
    organizationId: w.organizationId,
    workspaceAutoApply: w.settings["auto-apply"],
    allowDestroyPlan: w.settings["allow-destroy-plan"],
    configurationVersion: cv,
  });
  if (isFailure(run)) return run;
  const poolId = input.agentPoolId !== undefined ? input.agentPoolId : workspacePool(w);
  insertRun(sql, run, { canAutoApply: input.creator.canApply, poolId });
  addEvent(sql, { runId: run.id, action: "queued", now: input.now, actor: input.creator.actor });
  if (bypassesQueue(run)) {
    queuePhase(run, input.now);
    queueJob(sql, run.id, "plan", poolId, input.now);
    saveRun(sql, w, run);
  } else {
    advance(sql, w, input.now);
  }
  return getRun(sql, run.id)!;
}

/**
 * A configuration version that asked for `auto-queue-runs` finished its first upload: it queues a run, in the same
 * critical section, as its creator's (the API-driven workflow: the run auto-applies when the workspace says so and
 * the version's creator could apply). A version stored before creators were recorded queues a run of nobody's,
 * which never applies by itself.
 */
export function queueRunForUpload(sql: SqlStorage, w: WorkspaceRecord, cv: ConfigurationVersionRecord, now: string): WorkspaceRecord | Failure {
  const run = createRun(sql, w, {
    id: newId("run"),
    now,
    configurationVersionId: cv.id,
    options: { source: "tfe-configuration-version" },
    creator: cv.creator ?? { actor: null, canApply: false },
    ...(cv.agentPoolId !== undefined ? { agentPoolId: cv.agentPoolId } : {}),
  });
  return isFailure(run) ? run : w;
}

const EVENT: Record<RunActionInput["action"], string> = {
  apply: "confirmed",
  discard: "discarded",
  cancel: "canceled",
  "force-cancel": "force_canceled",
  "force-execute": "force_executed",
};

export function runAction(sql: SqlStorage, w: WorkspaceRecord, input: RunActionInput): RunRecord | Failure {
  const row = getRunRow(sql, input.runId);
  if (!row) return fail("not_found");
  const now = input.now;
  const target = toRun(row);
  const outcome = act(sql, w, target, row.active === 1, input);
  if (outcome) return outcome;
  // Read again after force-execute: the queue started the target, not the record `act` was given.
  const run = input.action === "force-execute" ? getRun(sql, input.runId)! : target;
  addEvent(sql, { runId: run.id, action: EVENT[input.action], now, actor: input.by.actor });
  if (input.comment) insertComment(sql, run, { id: childId("wsc", run.id), body: input.comment, now, actor: input.by.actor });
  store(sql, w, run, now);
  // A confirmed saved plan takes the lock here if it is free.
  advance(sql, w, now);
  return getRun(sql, run.id)!;
}

/** The transition of one action on `run` (the caller saves it); a failure changes nothing. */
function act(sql: SqlStorage, w: WorkspaceRecord, run: RunRecord, active: boolean, input: RunActionInput): Failure | null {
  const now = input.now;
  switch (input.action) {
    case "apply": {
      const refused = confirm(run, input.by.actor, now);
      if (refused) return refused;
      // The run holding the queue applies at once; a confirmed saved plan waits for the lock (`advance`).
      if (active) {
        queuePhase(run, now);
        queueJob(sql, run.id, "apply", getRunRow(sql, run.id)!.pool_id, now);
      }
      return null;
    }
    case "discard":
      return discard(run, now);
    case "cancel": {
      const how = cancel(run, now);
      if (isFailure(how)) return how;
      if (how === "at-once") {
        closeJob(sql, run.id, "plan");
        closeJob(sql, run.id, "apply");
      }
      return null;
    }
    case "force-cancel": {
      const phase = forceCancel(run, now);
      if (isFailure(phase)) return phase;
      closeJob(sql, run.id, phase);
      closeLog(sql, run.id, phase);
      return null;
    }
    case "force-execute":
      return forceExecute(sql, w, run, now);
  }
}

/** Discards the run holding the lock and every earlier pending run, so that `target` is next (it starts in `advance`). */
function forceExecute(sql: SqlStorage, w: WorkspaceRecord, target: RunRecord, now: string): Failure | null {
  const h = w.lock.holder;
  const blocker = w.lock.locked && h?.type === "runs" && h.id !== target.id ? getRun(sql, h.id) : null;
  const refused = checkForceExecute(target, blocker);
  if (refused) return refused;
  const targetSeq = getRunRow(sql, target.id)!.seq;
  for (const row of waitingRuns(sql)) {
    if (row.seq >= targetSeq || row.status !== "pending") continue;
    const earlier = toRun(row);
    if (discard(earlier, now) === null) saveRun(sql, w, earlier);
  }
  discard(blocker!, now);
  settle(sql, w, blocker!, now);
  return null;
}

export function addComment(
  sql: SqlStorage,
  w: WorkspaceRecord,
  input: { runId: string; id: string; body: string; now: string; actor: Actor | null },
): RunComment | Failure {
  const run = getRun(sql, input.runId);
  if (!run) return fail("not_found");
  const comment = insertComment(sql, run, input);
  saveRun(sql, w, run);
  return comment;
}

// ---- jobs ----

export function claimJob(sql: SqlStorage, w: WorkspaceRecord, input: ClaimInput): { job: JobRow; run: RunRecord } | Failure {
  const run = getRun(sql, input.runId);
  if (!run) return fail("not_found");
  if (run.status !== (input.phase === "plan" ? "plan_queued" : "apply_queued")) return fail("job_unavailable");
  const job = claimRow(sql, run.id, input.phase, input.agent, Date.parse(input.now));
  if (isFailure(job)) return job;
  startPhase(run, input.phase, input.agent, input.now);
  const version = run.terraformVersion ?? w.settings["engine-version"] ?? "1";
  openLog(sql, run.id, input.phase, input.phase === "apply" ? applyPreamble(version) : null);
  saveRun(sql, w, run);
  return { job, run };
}

/** An agent call about its job: the lease is renewed, and the run's signal answered. */
export function touchJob(
  sql: SqlStorage,
  input: { runId: string; phase: Phase | null; claimId: string; now: string },
): { job: JobRow; signal: CancelSignal } | Failure {
  const nowMs = Date.parse(input.now);
  const job = liveJob(sql, input.runId, input.phase, input.claimId, nowMs);
  if (isFailure(job)) return job;
  renewLease(sql, job, nowMs);
  return { job, signal: getRun(sql, input.runId)?.signal ?? null };
}

export function appendLog(
  sql: SqlStorage,
  input: { runId: string; phase: Phase; claimId: string; offset: number; bytes: Uint8Array; now: string },
): { size: number; signal: CancelSignal } | Failure {
  const touched = touchJob(sql, input);
  if (isFailure(touched)) return touched;
  const size = appendAgentLog(sql, touched.job, input.offset, input.bytes);
  return isFailure(size) ? size : { size, signal: touched.signal };
}

/** The agent reports its phase: the run, the phase and the log's ETX change in this one commit. */
export function finishJob(sql: SqlStorage, w: WorkspaceRecord, input: FinishInput): RunRecord | Failure {
  const job = liveJob(sql, input.runId, input.phase, input.claimId, Date.parse(input.now));
  if (isFailure(job)) return job;
  const row = getRunRow(sql, input.runId)!;
  const run = toRun(row);
  if (input.terraformVersion) run.terraformVersion = input.terraformVersion;
  const counts = {
    additions: input.resourceAdditions ?? 0,
    changes: input.resourceChanges ?? 0,
    destructions: input.resourceDestructions ?? 0,
    imports: input.resourceImports ?? 0,
  };
  closeJob(sql, run.id, input.phase);
  closeLog(sql, run.id, input.phase, input.status === "errored" && input.error ? `\nError: ${input.error}\n` : undefined);
  if (input.phase === "apply") {
    finishApply(run, { status: input.status, counts }, input.now);
    store(sql, w, run, input.now);
    return getRun(sql, run.id)!;
  }
  const { queueApply } = finishPlan(
    run,
    { status: input.status, hasChanges: input.hasChanges ?? false, counts, autoApplies: run.autoApply && row.can_auto_apply === 1 },
    input.now,
  );
  if (queueApply && row.active === 1) {
    queuePhase(run, input.now);
    queueJob(sql, run.id, "apply", row.pool_id, input.now);
  }
  store(sql, w, run, input.now);
  return getRun(sql, run.id)!;
}

/** Jobs whose lease ran out: the phase and the run end `errored`, and the queue moves on. Answers whether any did. */
export function expireLeases(sql: SqlStorage, w: WorkspaceRecord, nowMs: number): boolean {
  const now = new Date(nowMs).toISOString();
  const expired = expiredJobs(sql, nowMs);
  for (const job of expired) {
    closeJob(sql, job.run_id, job.phase);
    const run = getRun(sql, job.run_id);
    if (!run || run.status !== (job.phase === "plan" ? "planning" : "applying")) continue;
    closeLog(sql, run.id, job.phase, LOST_AGENT_LINE);
    losePhase(run, job.phase, now);
    settle(sql, w, run, now);
  }
  return expired.length > 0;
}
