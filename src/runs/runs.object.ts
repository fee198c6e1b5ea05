/**
 * The workspace object's runs (docs/runs.md): the run engine behind its run RPCs, on the tables it makes on first use
 * (RUN_TABLES), and its share of the index write (the run and job rows). Each engine step is synchronous, inside the
 * object's critical section, changing runs, jobs, logs and the workspace record `w` (the host commits `w` with them).
 * The rules are pure (runs.rules.ts); this class adds their effects: the queue and its lock, jobs, log framing, events,
 * metrics. The SQL is in runs.store.ts, jobs.store.ts and logs.store.ts.
 */
import { LIMITS } from "../limits";
import { fail, ok, type Failure, type Result } from "../errors";
import type { ConfigurationVersions } from "../configuration-versions/configuration-versions.object";
import type { ConfigurationVersionRecord } from "../configuration-versions/configuration-versions.types";
import { newId } from "../ids";
import type { StateVersions } from "../state-versions/state-versions.object";
import type { WorkspaceHost } from "../workspaces/workspace.host";
import { ensure, present, RUN_TABLES } from "../workspaces/workspace.migrations";
import type { Indexer } from "../workspaces/workspace.outbox";
import { lock } from "../workspaces/lock.rules";
import { isFailure } from "../workspaces/workspace.rules";
import type { Guard, WorkspaceRecord } from "../workspaces/workspace.types";
import { claimRow, closeJob, earliestLease, expiredJobs, liveJob, queueJob, renewLease, type JobRow } from "./jobs.store";
import {
  abortArtifactUpload,
  appendAgentLog,
  appendArtifactUpload,
  applyPreamble,
  artifactSize,
  closeLog,
  completeArtifactUpload,
  getArtifact,
  openLog,
  readArtifactPart,
  readLog,
  sealArtifactPiece,
} from "./logs.store";
import { dropRunIndexStatements, runIndexStatements } from "./runs.d1";
import {
  bypassesQueue,
  cancel,
  checkForceExecute,
  confirm,
  discard,
  concludePlan,
  finishApply,
  forceCancel,
  isFinal,
  losePhase,
  metrics,
  newRun,
  queuePhase,
  recordPlan,
  setStatus,
  startPhase,
  stopForTasks,
} from "./runs.rules";
import type { TaskStageName } from "../run-tasks/run-tasks.types";
import {
  activeRun,
  addEvent,
  childId,
  eraseRuns,
  getComment,
  getRun,
  getRunRow,
  insertComment,
  insertRun,
  latestRuns,
  listEvents,
  listRuns,
  markIndexed,
  saveRun as writeRun,
  setCurrentRun,
  toRun,
  unindexedRuns,
  waitingRuns,
} from "./runs.store";
import { ARTIFACT_PHASE } from "./runs.types";
import type {
  Actor,
  ArtifactKind,
  ArtifactUploadInput,
  CancelSignal,
  ClaimInput,
  CreateRunInput,
  FinishInput,
  Job,
  Phase,
  RunActionInput,
  RunComment,
  RunEvent,
  RunRecord,
  RunStatus,
} from "./runs.types";

/** Whether the workspace's lock is the run's own. */
const holdsLock = (w: WorkspaceRecord, runId: string) => w.lock.locked && w.lock.holder?.type === "runs" && w.lock.holder.id === runId;

export const LOST_AGENT_LINE = "\nError: the agent running this phase stopped responding\n";

/** The agent pool a workspace's jobs go to: its own pool in agent mode, else the default pool (null). */
export function workspacePool(w: WorkspaceRecord): string | null {
  return w.settings["execution-mode"] === "agent" ? w.settings["agent-pool-id"] : null;
}

const EVENT: Record<RunActionInput["action"], string> = {
  apply: "confirmed",
  discard: "discarded",
  cancel: "canceled",
  "force-cancel": "force_canceled",
  "force-execute": "force_executed",
};

type Unindexed = ReturnType<typeof unindexedRuns>;

/** An agent's piece of its phase's log, at `offset` of its own bytes. */
export type AppendLogInput = { runId: string; phase: Phase; claimId: string; offset: number; bytes: Uint8Array; now: string };

/**
 * Told of every run created (`from` null) and of every status change, in the critical section that commits it, so
 * what follows from it (run triggers, notifications) is recorded in the same commit.
 */
export type RunObserver = (w: WorkspaceRecord, run: RunRecord, from: RunStatus | null) => void;

/** Where a run may wait on other systems: its run tasks (src/run-tasks/run-tasks.object.ts). */
export interface RunGate {
  /** At creation: the run's task stages, made for the stages with attached tasks. */
  plan(run: RunRecord, now: string): NonNullable<RunRecord["taskStages"]>;
  /** The run reached `stage`: true when it waits there (its status set to `<stage>_running`), false to go on. */
  enter(run: RunRecord, stage: TaskStageName, now: string): boolean;
}

const NO_GATE: RunGate = { plan: () => [], enter: () => false };

export class Runs {
  constructor(
    private readonly host: WorkspaceHost,
    private readonly states: Pick<StateVersions, "onUnlock">,
    private readonly cvs: Pick<ConfigurationVersions, "forRun" | "promoteProvisional">,
    private readonly observe: RunObserver = () => {},
    private readonly gate: RunGate = NO_GATE,
  ) {}

  private get sql(): SqlStorage {
    return this.host.sql;
  }

  private get made(): boolean {
    return present(this.host.sql, RUN_TABLES);
  }

  // ---- the RPC methods' logic ----

  async create(input: CreateRunInput): Promise<Result<{ run: RunRecord; workspace: WorkspaceRecord }>> {
    const r = await this.change(input.guard, (w) => this.createRun(w, input), "make");
    return r.ok ? ok({ run: r.value.value, workspace: r.value.workspace }, r.bookmark) : r;
  }

  get(runId: string): Result<{ run: RunRecord; workspace: WorkspaceRecord }> {
    return this.read(runId, (run, workspace) => ok({ run, workspace }));
  }

  list(input: { offset: number; limit: number; includePlanOnly: boolean }): Result<{ items: RunRecord[]; total: number }> {
    const w = this.host.live();
    if (isFailure(w)) return w;
    return ok(this.made ? listRuns(this.sql, input) : { items: [], total: 0 });
  }

  async action(input: RunActionInput): Promise<Result<{ run: RunRecord }>> {
    const r = await this.change(input.guard, (w) => this.runAction(w, input), "not_found");
    return r.ok ? ok({ run: r.value.value }, r.bookmark) : r;
  }

  events(runId: string): Result<RunEvent[]> {
    return this.read(runId, () => ok(listEvents(this.sql, runId)));
  }

  comment(id: string): Result<RunComment> {
    const w = this.host.live();
    if (isFailure(w)) return w;
    const comment = this.made ? getComment(this.sql, id) : null;
    return comment ? ok(comment) : fail("not_found");
  }

  async addComment(input: { runId: string; id: string; body: string; now: string; actor: Actor | null }): Promise<Result<RunComment>> {
    const r = await this.change(undefined, (w) => this.commentOn(w, input), "not_found");
    return r.ok ? ok(r.value.value, r.bookmark) : r;
  }

  readLog(input: { runId: string; phase: Phase; offset: number; limit: number }): Result<{ bytes: Uint8Array }> {
    return this.read(input.runId, () => ok({ bytes: readLog(this.sql, input.runId, input.phase, input.offset, input.limit) }));
  }

  async claim(input: ClaimInput): Promise<Result<Job>> {
    const r = await this.change(undefined, (w) => this.claimJob(w, input), "not_found");
    if (!r.ok) return r;
    const { job, run } = r.value.value;
    return ok({
      runId: run.id,
      phase: input.phase,
      claimId: job.claim_id!,
      leaseUntil: new Date(job.lease_until!).toISOString(),
      run,
      workspace: r.value.workspace,
    });
  }

  /** Lease renewals change no record: nothing is committed for the index. */
  heartbeat(input: { runId: string; phase: Phase; claimId: string; now: string }): Result<{ signal: CancelSignal }> {
    if (this.host.load().kind !== "live" || !this.made) return fail("job_lost");
    const r = this.touchJob(input);
    return isFailure(r) ? r : ok({ signal: r.signal });
  }

  appendLog(input: AppendLogInput): Result<{ size: number; signal: CancelSignal }> {
    if (this.host.load().kind !== "live" || !this.made) return fail("job_lost");
    const touched = this.touchJob(input);
    if (isFailure(touched)) return touched;
    const size = appendAgentLog(this.sql, touched.job, input.offset, input.bytes);
    return isFailure(size) ? size : ok({ size, signal: touched.signal });
  }

  /**
   * One piece of an artifact upload (the job must still hold its claim; `phase` is the phase that stores the kind).
   * Sealed first (Web Crypto awaits); the job's check and the write then run in one synchronous step.
   */
  async appendArtifact(input: ArtifactUploadInput): Promise<Result<null>> {
    if (!this.made) return fail("job_lost");
    const piece = await sealArtifactPiece(this.sql, input.runId, input.kind, input.upload, input.bytes, input.at);
    const r = this.artifactJob(input);
    if (isFailure(r)) return r;
    return appendArtifactUpload(this.sql, input.runId, input.kind, input.upload, piece, input.at) ?? ok(null);
  }

  abortArtifact(input: Omit<ArtifactUploadInput, "bytes" | "claimId" | "phase">): Result<null> {
    if (this.made) abortArtifactUpload(this.sql, input.runId, input.kind, input.upload);
    return ok(null);
  }

  /** The upload's last piece: the artifact replaces any stored one of its kind. */
  async completeArtifact(input: ArtifactUploadInput): Promise<Result<null>> {
    if (!this.made) return fail("job_lost");
    const piece = await sealArtifactPiece(this.sql, input.runId, input.kind, input.upload, input.bytes, input.at);
    const r = this.artifactJob(input);
    if (isFailure(r)) {
      if (this.made) abortArtifactUpload(this.sql, input.runId, input.kind, input.upload);
      return r;
    }
    return completeArtifactUpload(this.sql, input.runId, input.kind, input.upload, piece, input.at) ?? ok(null);
  }

  /** A small artifact in one call (an RPC carries at most 32 MiB; the agent's uploads stream in pieces). */
  putArtifact(input: { runId: string; claimId: string; kind: ArtifactKind; bytes: Uint8Array }): Promise<Result<null>> {
    return this.completeArtifact({ ...input, phase: ARTIFACT_PHASE[input.kind], upload: crypto.randomUUID() });
  }

  private artifactJob(input: ArtifactUploadInput) {
    if (this.host.load().kind !== "live" || !this.made) return fail("job_lost");
    return this.touchJob({ runId: input.runId, phase: input.phase, claimId: input.claimId, now: new Date().toISOString() });
  }

  /** The whole artifact (for small readers: an RPC result is limited to 32 MiB), or `size` alone past `maxBytes`. */
  async getArtifact(input: { runId: string; kind: ArtifactKind; maxBytes?: number }): Promise<Result<{ bytes: Uint8Array | null; size: number }>> {
    const found = this.read<number>(input.runId, () => {
      const size = artifactSize(this.sql, input.runId, input.kind);
      return size === null ? fail("not_found") : ok(size);
    });
    if (!found.ok) return found;
    const size = found.value;
    if (input.maxBytes !== undefined && size > input.maxBytes) return ok({ bytes: null, size });
    return ok({ bytes: (await getArtifact(this.sql, input.runId, input.kind)) ?? new Uint8Array(), size });
  }

  /** An artifact a few MiB per call, from `fromSeq` 0 until `next` is null. */
  async readArtifactPart(input: { runId: string; kind: ArtifactKind; fromSeq: number }): Promise<Result<{ bytes: Uint8Array; next: number | null }>> {
    const found = this.read(input.runId, () => ok(null));
    if (!found.ok) return found;
    const part = await readArtifactPart(this.sql, input.runId, input.kind, input.fromSeq);
    return part ? ok(part) : fail("not_found");
  }

  async finish(input: FinishInput): Promise<Result<{ run: RunRecord }>> {
    const r = await this.change(undefined, (w) => this.finishJob(w, input), "job_lost");
    return r.ok ? ok({ run: r.value.value }, r.bookmark) : r;
  }

  /** The alarm's part: jobs whose lease ran out end errored (one commit for all of them). */
  async expireLeases(): Promise<void> {
    const nowMs = Date.now();
    if (!this.made || expiredJobs(this.sql, nowMs).length === 0) return;
    await this.host.mutate({}, (w) => {
      this.expire(w, nowMs);
      return w;
    });
  }

  /** The newest run of a configuration version (the VCS statuses follow it), or null. */
  ofConfigurationVersion(cvId: string): RunRecord | null {
    if (!this.made) return null;
    const row = this.sql
      .exec<{ id: string }>("SELECT id FROM runs WHERE json_extract(record, '$.configurationVersionId') = ? ORDER BY seq DESC LIMIT 1", cvId)
      .toArray()[0];
    return row ? getRun(this.sql, row.id) : null;
  }

  /** Whether the workspace ever had a run (VCS pushes wait for a first one unless `queue-all-runs`). */
  any(): boolean {
    return this.made && this.sql.exec("SELECT 1 FROM runs LIMIT 1").toArray().length > 0;
  }

  /** When the next lease runs out (epoch ms), for the object's alarm. */
  earliestLease(): number | null {
    return this.made ? earliestLease(this.sql) : null;
  }

  /** Once D1 has the workspace's delete: nothing of its runs survives. */
  erase(): void {
    if (this.made) eraseRuns(this.sql);
  }

  /** The run and job rows in D1: the runs changed since the last index write, or all of the workspace's dropped. */
  readonly indexer: Indexer<Unindexed> = {
    pending: () => (this.made ? unindexedRuns(this.sql) : []),
    statements: (session, { record, deleted }, runs) => (deleted ? dropRunIndexStatements(session, record.id) : runIndexStatements(session, runs ?? [])),
    indexed: (_entry, runs) => {
      if (runs?.length)
        markIndexed(
          this.sql,
          runs.map((r) => ({ id: r.row.id, version: r.row.version })),
        );
    },
  };

  /**
   * One run change committed with the workspace record (and its outbox entry), then flushed to the index. `absent`:
   * without the run tables the change needs none, and fails so; `make`: it is the first to write them.
   */
  private async change<T>(
    guard: Guard | undefined,
    change: (w: WorkspaceRecord) => T | Failure,
    absent: "make" | "not_found" | "job_lost",
  ): Promise<Result<{ value: T; workspace: WorkspaceRecord }>> {
    let value: T | undefined;
    const result = await this.host.mutate({ guard }, (w) => {
      if (absent === "make") ensure(this.sql, RUN_TABLES);
      else if (!this.made) return fail(absent);
      const r = change(w);
      if (isFailure(r)) return r;
      value = r;
      return w;
    });
    return result.ok ? ok({ value: value as T, workspace: result.value }, result.bookmark) : result;
  }

  /** A run of this workspace, read in this object (a run id of another workspace is simply not found). */
  private read<T>(runId: string, read: (run: RunRecord, w: WorkspaceRecord) => Result<T>): Result<T> {
    const w = this.host.live();
    if (isFailure(w)) return w;
    const run = this.made ? getRun(this.sql, runId) : null;
    return run ? read(run, w) : fail("not_found");
  }

  /** Writes a changed run (runs.store.ts `saveRun`) and tells the observer when its status changed. */
  private saveRun(w: WorkspaceRecord, run: RunRecord, active?: boolean): void {
    const from = writeRun(this.sql, w, run, active);
    if (from !== run.status) this.observe(w, run, from);
  }

  // ---- the queue ----

  /**
   * Starts the head of the queue if nothing holds it and the workspace is unlocked: the run takes the lock and its
   * phase is queued for an agent. A user's lock keeps the head pending, shown as the current run meanwhile.
   */
  advance(w: WorkspaceRecord, now: string): void {
    if (!this.made) return;
    const sql = this.sql;
    if (activeRun(sql)) return;
    const head = waitingRuns(sql)[0];
    if (!head) return;
    const run = toRun(head);
    if (w.lock.locked) {
      if (w.lock.holder?.type !== "runs" && run.status === "pending") setCurrentRun(w, run);
      return;
    }
    if (run.status !== "pending" && run.status !== "confirmed") return;
    const locked = lock(w, { type: "runs", id: run.id }, "", now);
    if (isFailure(locked)) return;
    if (run.status === "pending") this.startPlan(run, head.pool_id, now);
    else this.startApply(run, head.pool_id, now);
    setCurrentRun(w, run);
    this.saveRun(w, run, true);
  }

  /** A run reached a final status: it frees the queue and its lock, and the next run starts, in the same commit. */
  private settle(w: WorkspaceRecord, run: RunRecord, now: string): void {
    const sql = this.sql;
    this.saveRun(w, run, false);
    const h = w.lock.holder;
    if (w.lock.locked && h?.type === "runs" && h.id === run.id) {
      w.lock = { locked: false, reason: null, holder: null, lockedAt: null };
      // As a user's unlock does: a finalized intermediate state version the run left becomes current. Forced, so a
      // pending version (an upload the agent never finished) cannot keep the workspace locked by a finished run.
      this.states.onUnlock(w, now, { force: true });
    }
    if (run.status === "applied" || run.status === "errored") {
      w.runMetrics = metrics(latestRuns(sql, 30, ["applied", "errored"]));
    }
    if (run.status === "applied") {
      this.cvs.promoteProvisional(w, run.configurationVersionId);
      this.discardStaleSavedPlans(w, run.id, now);
    }
    this.advance(w, now);
  }

  /** Saved plans still waiting for confirmation were made against the state this apply replaced: they are discarded. */
  private discardStaleSavedPlans(w: WorkspaceRecord, appliedId: string, now: string): void {
    for (const saved of latestRuns(this.sql, LIMITS.savedPlansDiscardMax, ["planned_and_saved"])) {
      if (saved.id === appliedId || discard(saved, now)) continue;
      addEvent(this.sql, {
        runId: saved.id,
        action: "discarded",
        now,
        actor: null,
        description: `Run ${appliedId} changed the state this plan was made against`,
      });
      this.saveRun(w, saved, false);
    }
  }

  /** Saves a changed run, settling it if final. */
  private store(w: WorkspaceRecord, run: RunRecord, now: string): void {
    if (isFinal(run.status)) this.settle(w, run, now);
    else this.saveRun(w, run);
  }

  // ---- creation and actions ----

  private createRun(w: WorkspaceRecord, input: CreateRunInput): RunRecord | Failure {
    const sql = this.sql;
    const cv = this.cvs.forRun(input.configurationVersionId, w.currentConfigurationVersionId);
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
    const stages = this.gate.plan(run, input.now);
    if (stages.length > 0) run.taskStages = stages;
    insertRun(sql, run, { canAutoApply: input.creator.canApply, poolId });
    this.observe(w, run, null);
    addEvent(sql, { runId: run.id, action: "queued", now: input.now, actor: input.creator.actor });
    if (bypassesQueue(run)) {
      this.startPlan(run, poolId, input.now);
      this.saveRun(w, run);
    } else {
      this.advance(w, input.now);
    }
    return getRun(sql, run.id)!;
  }

  /**
   * A configuration version that asked for `auto-queue-runs` finished its first upload: it queues a run, in the same
   * critical section, as its creator's (the API-driven workflow: the run auto-applies when the workspace says so and
   * the version's creator could apply). A version stored before creators were recorded queues a run of nobody's,
   * which never applies by itself.
   */
  /** Queues a run inside another capability's change (the automatic destroy): `w` is the record being changed. */
  queueWithin(w: WorkspaceRecord, input: CreateRunInput): RunRecord | Failure {
    ensure(this.sql, RUN_TABLES);
    return this.createRun(w, input);
  }

  queueForUpload(w: WorkspaceRecord, cv: ConfigurationVersionRecord, now: string): WorkspaceRecord | Failure {
    ensure(this.sql, RUN_TABLES);
    const run = this.createRun(w, {
      id: newId("run"),
      now,
      configurationVersionId: cv.id,
      // A version from a repository: the run's message is the commit's, as the real service shows VCS runs.
      options: { source: "tfe-configuration-version", ...(cv.ingress?.["commit-message"] ? { message: cv.ingress["commit-message"] } : {}) },
      creator: cv.creator ?? { actor: null, canApply: false },
      ...(cv.agentPoolId !== undefined ? { agentPoolId: cv.agentPoolId } : {}),
    });
    return isFailure(run) ? run : w;
  }

  private runAction(w: WorkspaceRecord, input: RunActionInput): RunRecord | Failure {
    const sql = this.sql;
    const row = getRunRow(sql, input.runId);
    if (!row) return fail("not_found");
    const now = input.now;
    const target = toRun(row);
    const outcome = this.act(w, target, row.active === 1, input);
    if (outcome) return outcome;
    // Read again after force-execute: the queue started the target, not the record `act` was given.
    const run = input.action === "force-execute" ? getRun(sql, input.runId)! : target;
    addEvent(sql, { runId: run.id, action: EVENT[input.action], now, actor: input.by.actor });
    if (input.comment) insertComment(sql, run, { id: childId("wsc", run.id), body: input.comment, now, actor: input.by.actor });
    this.store(w, run, now);
    // A confirmed saved plan takes the lock here if it is free.
    this.advance(w, now);
    return getRun(sql, run.id)!;
  }

  /** The transition of one action on `run` (the caller saves it); a failure changes nothing. */
  private act(w: WorkspaceRecord, run: RunRecord, active: boolean, input: RunActionInput): Failure | null {
    const sql = this.sql;
    const now = input.now;
    switch (input.action) {
      case "apply": {
        // An apply only while the run holds the workspace's lock (its state upload needs it).
        if (active && !holdsLock(w, run.id)) return fail("conflict", "The run no longer holds the workspace's lock: it cannot apply");
        const refused = confirm(run, input.by.actor, now);
        if (refused) return refused;
        // The run holding the queue applies at once; a confirmed saved plan waits for the lock (`advance`).
        if (active) this.startApply(run, getRunRow(sql, run.id)!.pool_id, now);
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
        return this.forceExecute(w, run, now);
    }
  }

  /** Discards the run holding the lock and every earlier pending run, so that `target` is next (it starts in `advance`). */
  private forceExecute(w: WorkspaceRecord, target: RunRecord, now: string): Failure | null {
    const sql = this.sql;
    const h = w.lock.holder;
    const blocker = w.lock.locked && h?.type === "runs" && h.id !== target.id ? getRun(sql, h.id) : null;
    const refused = checkForceExecute(target, blocker);
    if (refused) return refused;
    const targetSeq = getRunRow(sql, target.id)!.seq;
    for (const row of waitingRuns(sql)) {
      if (row.seq >= targetSeq || row.status !== "pending") continue;
      const earlier = toRun(row);
      if (discard(earlier, now) === null) this.saveRun(w, earlier);
    }
    discard(blocker!, now);
    this.settle(w, blocker!, now);
    return null;
  }

  private commentOn(w: WorkspaceRecord, input: { runId: string; id: string; body: string; now: string; actor: Actor | null }): RunComment | Failure {
    const run = getRun(this.sql, input.runId);
    if (!run) return fail("not_found");
    const comment = insertComment(this.sql, run, input);
    this.saveRun(w, run);
    return comment;
  }

  // ---- jobs ----

  private claimJob(w: WorkspaceRecord, input: ClaimInput): { job: JobRow; run: RunRecord } | Failure {
    const sql = this.sql;
    const run = getRun(sql, input.runId);
    if (!run) return fail("not_found");
    if (run.status !== (input.phase === "plan" ? "plan_queued" : "apply_queued")) return fail("job_unavailable");
    const job = claimRow(sql, run.id, input.phase, input.agent, Date.parse(input.now));
    if (isFailure(job)) return job;
    startPhase(run, input.phase, input.agent, input.now);
    const version = run.terraformVersion ?? w.settings["engine-version"] ?? "1";
    openLog(sql, run.id, input.phase, input.phase === "apply" ? applyPreamble(version) : null);
    this.saveRun(w, run);
    return { job, run };
  }

  /** An agent call about its job: the lease is renewed, and the run's signal answered. */
  private touchJob(input: { runId: string; phase: Phase | null; claimId: string; now: string }): { job: JobRow; signal: CancelSignal } | Failure {
    const nowMs = Date.parse(input.now);
    const job = liveJob(this.sql, input.runId, input.phase, input.claimId, nowMs);
    if (isFailure(job)) return job;
    renewLease(this.sql, job, nowMs);
    return { job, signal: getRun(this.sql, input.runId)?.signal ?? null };
  }

  /** The agent reports its phase: the run, the phase and the log's ETX change in this one commit. */
  private finishJob(w: WorkspaceRecord, input: FinishInput): RunRecord | Failure {
    const sql = this.sql;
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
      // Post-apply tasks run once the apply is done; the run holds the queue until they end.
      if (run.status === "applied" && this.gate.enter(run, "post_apply", input.now)) this.saveRun(w, run);
      else this.store(w, run, input.now);
      return getRun(sql, run.id)!;
    }
    const autoApplies = run.autoApply && row.can_auto_apply === 1;
    const planned = recordPlan(run, { status: input.status, hasChanges: input.hasChanges ?? false, counts, autoApplies }, input.now);
    if (planned && this.gate.enter(run, "post_plan", input.now)) {
      this.saveRun(w, run);
      return getRun(sql, run.id)!;
    }
    if (planned) this.conclude(w, run, row, input.now);
    this.store(w, run, input.now);
    return getRun(sql, run.id)!;
  }

  /** A finished plan's next status; an apply that follows at once is queued (or waits on its pre-apply tasks). */
  private conclude(w: WorkspaceRecord, run: RunRecord, row: { active: number; pool_id: string | null; can_auto_apply: number }, now: string): void {
    const { queueApply } = concludePlan(run, run.autoApply && row.can_auto_apply === 1, now);
    if (queueApply && row.active === 1 && holdsLock(w, run.id)) this.startApply(run, row.pool_id, now);
  }

  /** The plan is due: queued for an agent, unless pre-plan tasks hold the run first. The caller saves the run. */
  private startPlan(run: RunRecord, poolId: string | null, now: string): void {
    if (this.gate.enter(run, "pre_plan", now)) return;
    queuePhase(run, now);
    queueJob(this.sql, run.id, "plan", poolId, now);
  }

  /** The apply is due: queued for an agent, unless pre-apply tasks hold the run first. The caller saves the run. */
  private startApply(run: RunRecord, poolId: string | null, now: string): void {
    if (this.gate.enter(run, "pre_apply", now)) return;
    queuePhase(run, now);
    queueJob(this.sql, run.id, "apply", poolId, now);
  }

  /**
   * The run tasks of `stage` are over (inside the run tasks' commit): the run goes on from where it waited, or, when
   * a mandatory task failed, ends errored before the next phase. A run no longer waiting there (canceled) stays as it is.
   */
  afterStage(w: WorkspaceRecord, runId: string, stage: TaskStageName, passed: boolean, now: string): void {
    if (!this.made) return;
    const row = getRunRow(this.sql, runId);
    if (!row) return;
    const run = toRun(row);
    if (run.status !== `${stage}_running`) return;
    if (stage === "post_apply") {
      setStatus(run, "post_apply_completed", now);
      setStatus(run, "applied", now);
      this.settle(w, run, now);
      return;
    }
    if (!passed) {
      stopForTasks(run, now);
      this.settle(w, run, now);
      return;
    }
    setStatus(run, `${stage}_completed` as RunStatus, now);
    if (stage === "pre_plan") {
      queuePhase(run, now);
      queueJob(this.sql, run.id, "plan", row.pool_id, now);
    } else if (stage === "pre_apply") {
      queuePhase(run, now);
      queueJob(this.sql, run.id, "apply", row.pool_id, now);
    } else this.conclude(w, run, row, now);
    this.store(w, run, now);
  }

  /** A run of this workspace, as stored (the run tasks read it). */
  peek(runId: string): RunRecord | null {
    return this.made ? getRun(this.sql, runId) : null;
  }

  /** Jobs whose lease ran out: the phase and the run end `errored`, and the queue moves on. */
  private expire(w: WorkspaceRecord, nowMs: number): void {
    const sql = this.sql;
    const now = new Date(nowMs).toISOString();
    for (const job of expiredJobs(sql, nowMs)) {
      closeJob(sql, job.run_id, job.phase);
      const run = getRun(sql, job.run_id);
      if (!run || run.status !== (job.phase === "plan" ? "planning" : "applying")) continue;
      closeLog(sql, run.id, job.phase, LOST_AGENT_LINE);
      losePhase(run, job.phase, now);
      this.settle(w, run, now);
    }
  }
}
