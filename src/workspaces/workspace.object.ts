import { DurableObject } from "cloudflare:workers";
import type { Bindings } from "../env";
import { fail, ok, type Failure, type Result } from "../errors";
import { ConfigurationVersions } from "../configuration-versions/configuration-versions.object";
import type { ConfigurationVersionRecord } from "../configuration-versions/configuration-versions.types";
import type { CreateCvInput, CvBackingAction } from "../configuration-versions/configuration-versions.store";
import { Runs, type AppendLogInput } from "../runs/runs.object";
import { RunTriggers, type TriggerDelivery } from "../run-triggers/run-triggers.object";
import { Notifications, type ConfigResult } from "../notifications/notifications.object";
import type { DeliveryResponse, NotificationConfig } from "../notifications/notifications.types";
import { RunTasks, type WorkspaceTaskResult } from "../run-tasks/run-tasks.object";
import type { TaskCallback, TaskResult, TaskStage, TaskStageName, WorkspaceTask } from "../run-tasks/run-tasks.types";
import type { Actor, ArtifactKind, CancelSignal, ClaimInput, CreateRunInput, FinishInput, Job, Phase } from "../runs/runs.types";
import type { RunActionInput, RunComment, RunEvent, RunRecord, RunsRpc } from "../runs/runs.types";
import { StateVersions } from "../state-versions/state-versions.object";
import type { BackingAction, BlobKind, CreateVersionInput, RollbackInput, StateVersionView } from "../state-versions/state-versions.store";
import type { TagChange } from "../tags/workspace-tags.rules";
import { Variables, type VariableResult } from "../variables/variables.object";
import type { StoredVariable, VariablePatch } from "../variables/variables.types";
import type { ConsumerChange } from "./consumers.rules";
import type { Change, Stored, WorkspaceHost, WorkspaceResult } from "./workspace.host";
import { migrate, resealAll } from "./workspace.migrations";
import { deriveSealer, useSealer } from "../platform/seal";
import { Outbox } from "./workspace.outbox";
import { WorkspaceRecords } from "./workspace-record.object";
import { AutoDestroy } from "./auto-destroy.object";
import { inheritedExecution } from "./workspaces.d1";
import { Vcs, type VcsDeliveryInput } from "../vcs/vcs.object";
import { isFailure } from "./workspace.rules";
import type { ArtifactUploadInput } from "../runs/runs.types";
import { AuditLog } from "../audit/audit.object";
import type { AuditEvent } from "../audit/audit.rules";
import type { CreateInput, DataRetentionPolicy, Faults, Guard, LockHolder, UpdateInput, WorkspaceRecord } from "./workspace.types";

/**
 * One SQLite-backed Durable Object per workspace (named by its id): the single writer of that workspace. It hosts one
 * capability per resource it holds (`<resource>.object.ts`: the record, state versions, variables, configuration
 * versions, runs, the automatic destroy, the connected repository, run triggers, notifications, run tasks), each owning its tables and reaching the object through `WorkspaceHost` alone. Every mutation is
 * read-check-write with no await in between, commits together with an outbox row, then upserts the D1 index
 * (workspace.outbox.ts); the one alarm retries the outbox until D1 has it, and expires the runs' job leases.
 */
export class WorkspaceObject extends DurableObject<Bindings> implements WorkspaceHost, RunsRpc {
  private readonly states = new StateVersions(this);
  private readonly cvs: ConfigurationVersions = new ConfigurationVersions(this, (w, cv, now) => this.runs.queueForUpload(w, cv, now));
  private readonly runs: Runs = new Runs(
    this,
    this.states,
    this.cvs,
    (w, run, from) => {
      this.runTriggers.onRunStatus(w, run, from);
      this.notifications.onRunStatus(w, run, from);
      this.runTasks.onRunStatus(w, run);
    },
    { plan: (run, now) => this.runTasks.plan(run, now), enter: (run, stage, now) => this.runTasks.enter(run, stage, now) },
  );
  private readonly variables = new Variables(this);
  private readonly record = new WorkspaceRecords(this, this.states, this.runs);
  /** The execution defaults the workspace inherits from its project and organisation (the index's). */
  private readonly inherited = (w: WorkspaceRecord) => inheritedExecution(this.env.DB, w.organizationId, w.projectId);
  private readonly autoDestroy = new AutoDestroy(this, (w, input) => this.runs.queueWithin(w, input), this.inherited);
  private readonly vcs: Vcs = new Vcs(this, this.runs, this.cvs, { env: this.env, defaults: this.inherited, indexed: () => this.outbox.pending() === 0 });
  private readonly notifications = new Notifications(this, this.env);
  private readonly runTasks: RunTasks = new RunTasks(this, this.env, {
    proceed: (w, runId, stage, passed, now) => this.runs.afterStage(w, runId, stage, passed, now),
    run: (runId) => this.runs.peek(runId),
  });
  private readonly runTriggers = new RunTriggers(this, this.env, (w, input) => this.runs.queueWithin(w, input));
  /** The audit trail's events of committed changes, until D1 has them. */
  private readonly audit = new AuditLog(this.sql);
  /** What a commit writes to D1, in batch order: the workspace row (tags, project hold), the state-version and configuration-version maps, run rows, audit events. */
  private readonly outbox = new Outbox(
    { sql: this.sql, storage: this.ctx.storage, env: this.env, drained: () => this.arm(), deleted: (record) => this.erase(record) },
    [this.record.indexer, this.states.indexer, this.cvs.indexer, this.runs.indexer, this.audit.indexer],
  );

  constructor(ctx: DurableObjectState, env: Bindings) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      useSealer(this.sql, await deriveSealer(env, ctx.id.toString()));
      this.migrate();
    });
  }

  /**
   * The schema steps of a store written by earlier code (none for a new object: its tables are made on first use), then
   * the sealing of whatever is not sealed under the current key (`resealAll`).
   */
  private migrate(): void {
    if (migrate(this)) void this.ctx.storage.setAlarm(Date.now());
    resealAll(this.sql);
  }

  // ---- the host (workspace.host.ts) ----

  get sql(): SqlStorage {
    return this.ctx.storage.sql;
  }

  get bookmark(): string | null {
    return this.outbox.bookmark;
  }

  load(): Stored {
    return this.record.load();
  }

  live(): WorkspaceRecord | Failure {
    const s = this.load();
    return s.kind === "live" ? s.record : fail("not_found");
  }

  guarded(guard: Guard | undefined): WorkspaceRecord | Failure {
    const current = this.live();
    if (isFailure(current) || !guard) return current;
    return current.projectId === guard.projectId && current.organizationId === guard.organizationId ? current : fail("stale_authorization");
  }

  /** Writes the record, its outbox entry and the change's audit event in one implicit transaction (no await in between). */
  commit(kind: "live" | "deleted", record: WorkspaceRecord, audit?: AuditEvent): void {
    this.record.store(kind, JSON.stringify(record));
    this.outbox.add(kind === "deleted");
    this.audit.add(audit);
  }

  async mutate(input: { guard?: Guard }, change: Change, index: "before" | "after" = "before"): Promise<WorkspaceResult> {
    const current = this.guarded(input.guard);
    if (isFailure(current)) return current;
    const next = change(structuredClone(current));
    if (isFailure(next)) return next;
    next.version = current.version + 1;
    this.commit("live", next, input.guard?.audit);
    if (index === "after") {
      // The commit armed the alarm: should this write fail or the object stop, the alarm retries it.
      void this.outbox.flush(this.outbox.callFaults, false);
      return ok(next, null);
    }
    await this.outbox.flush(this.outbox.callFaults);
    return ok(next, this.outbox.bookmark);
  }

  async index(callFaults = true): Promise<string | null> {
    await this.outbox.flush(callFaults ? this.outbox.callFaults : undefined);
    return this.outbox.bookmark;
  }

  faults(): Faults | undefined {
    return this.env.FAULT_INJECTION === "1" ? this.outbox.callFaults : undefined;
  }

  /** Test helpers wait on it (test/helpers.ts `indexSettled`). */
  protected get flushChain(): Promise<void> {
    return this.outbox.flushing;
  }

  // ---- RPC methods: the workspace record (workspace-record.object.ts) ----

  async create(input: CreateInput): Promise<WorkspaceResult> {
    const created = await this.record.create(input);
    if (created.ok && created.value.settings["vcs-repo"]) this.vcs.noteOrigin(input.origin);
    return created;
  }
  async get(): Promise<WorkspaceResult> {
    return this.record.get();
  }
  async update(input: UpdateInput): Promise<WorkspaceResult> {
    const updated = await this.record.update(input);
    if (updated.ok && input.attributes.vcsRepo) this.vcs.noteOrigin(input.origin);
    return updated;
  }
  async changeTags(input: { change: TagChange; purge?: string[]; now: string; guard?: Guard }): Promise<WorkspaceResult> {
    return this.record.changeTags(input);
  }
  async changeConsumers(input: { change: ConsumerChange; now: string; guard?: Guard }): Promise<WorkspaceResult> {
    return this.record.changeConsumers(input);
  }
  async setSshKey(input: { keyId: string | null; now: string; guard?: Guard }): Promise<WorkspaceResult> {
    return this.record.setSshKey(input);
  }
  async setRetention(input: { policy: DataRetentionPolicy | null; guard?: Guard }): Promise<WorkspaceResult> {
    return this.record.setRetention(input);
  }
  async lock(input: { holder: LockHolder; reason: string; now: string; guard?: Guard }): Promise<WorkspaceResult> {
    return this.record.lock(input);
  }
  async unlock(input: { holder: LockHolder; now?: string; guard?: Guard }): Promise<WorkspaceResult> {
    return this.record.unlock(input, false);
  }
  async forceUnlock(input: { now?: string; guard?: Guard } = {}): Promise<WorkspaceResult> {
    return this.record.unlock(input, true);
  }
  async remove(opts: { safe?: boolean; guard?: Guard } = {}): Promise<Result<null>> {
    return this.record.remove(opts);
  }
  async releaseName(name: string, now: number): Promise<Result<{ released: boolean }>> {
    return this.record.releaseName(name, now);
  }
  /** The record as the index should hold it (for the consistency checker). */
  async indexState(): Promise<Result<{ kind: Stored["kind"]; record: WorkspaceRecord | null; pending: number; armed: boolean }>> {
    return ok(await this.outbox.state(this.load()));
  }

  // ---- variables (variables.object.ts): values arrive sealed ----

  async createVariable(input: { variable: StoredVariable; guard?: Guard }): Promise<VariableResult> {
    return this.variables.create(input);
  }
  async updateVariable(input: { id: string; patch: VariablePatch; guard?: Guard }): Promise<VariableResult> {
    return this.variables.update(input);
  }
  async deleteVariable(input: { id: string; guard?: Guard }): Promise<WorkspaceResult> {
    return this.variables.delete(input);
  }
  async listVariables(): Promise<Result<{ workspace: WorkspaceRecord; variables: StoredVariable[] }>> {
    return this.variables.list();
  }
  async getVariable(id: string): Promise<VariableResult> {
    return this.variables.get(id);
  }

  // ---- state versions (state-versions.object.ts) ----

  async createStateVersion(input: CreateVersionInput & { guard?: Guard }): Promise<Result<StateVersionView>> {
    return this.states.create(input);
  }
  async rollbackStateVersion(input: RollbackInput & { guard?: Guard }): Promise<Result<StateVersionView>> {
    return this.states.rollback(input);
  }
  async appendBlob(input: { id: string; kind: BlobKind; upload: string; bytes: Uint8Array }): Promise<Result<null>> {
    return this.states.appendBlob(input);
  }
  async abortBlob(input: { id: string; kind: BlobKind; upload: string }): Promise<Result<null>> {
    return this.states.abortBlob(input);
  }
  async completeBlob(input: { id: string; kind: BlobKind; upload: string; bytes: Uint8Array; now: string; guard?: Guard }): Promise<Result<null>> {
    return this.states.completeBlob(input);
  }
  async getStateVersion(id: string): Promise<Result<{ stateVersion: StateVersionView; workspace: WorkspaceRecord }>> {
    return this.states.get(id);
  }
  async listStateVersions(input: { offset: number; limit: number; status?: string }): Promise<Result<{ items: StateVersionView[]; total: number }>> {
    return this.states.list(input);
  }
  async readBlobPart(input: { id: string; kind: BlobKind; fromSeq: number }): Promise<Result<{ bytes: Uint8Array; next: number | null }>> {
    return this.states.readBlobPart(input);
  }
  async manageBackingData(input: { id: string; action: BackingAction; guard?: Guard }): Promise<Result<null>> {
    return this.states.manageBackingData(input);
  }

  // ---- configuration versions (configuration-versions.object.ts) ----

  async createConfigurationVersion(input: CreateCvInput & { guard?: Guard }): Promise<Result<{ cv: ConfigurationVersionRecord; workspace: WorkspaceRecord }>> {
    return this.cvs.create(input);
  }
  async getConfigurationVersion(id: string): Promise<Result<{ cv: ConfigurationVersionRecord; workspace: WorkspaceRecord }>> {
    return this.cvs.get(id);
  }
  async listConfigurationVersions(input: { offset: number; limit: number }): Promise<Result<{ items: ConfigurationVersionRecord[]; total: number }>> {
    return this.cvs.list(input);
  }
  async archiveConfigurationVersion(input: { id: string; now: string; guard?: Guard }): Promise<Result<ConfigurationVersionRecord>> {
    return this.cvs.archive(input);
  }
  async manageCvBackingData(input: { id: string; action: CvBackingAction; guard?: Guard }): Promise<Result<null>> {
    return this.cvs.manageBackingData(input);
  }
  async appendCvUpload(input: { id: string; upload: string; bytes: Uint8Array }): Promise<Result<null>> {
    return this.cvs.appendUpload(input);
  }
  async abortCvUpload(input: { id: string; upload: string }): Promise<Result<null>> {
    return this.cvs.abortUpload(input);
  }
  async completeCvUpload(input: { id: string; upload: string; bytes: Uint8Array; sha256: string; now: string }): Promise<Result<ConfigurationVersionRecord>> {
    return this.cvs.completeUpload(input);
  }
  async readCvPart(input: { id: string; fromSeq: number }): Promise<Result<{ bytes: Uint8Array; next: number | null }>> {
    return this.cvs.readPart(input);
  }

  // ---- runs (runs.object.ts; the contract is RunsRpc in src/runs/runs.types.ts) ----

  async createRun(input: CreateRunInput): Promise<Result<{ run: RunRecord; workspace: WorkspaceRecord }>> {
    return this.runs.create(input);
  }
  async getRun(runId: string): Promise<Result<{ run: RunRecord; workspace: WorkspaceRecord }>> {
    return this.runs.get(runId);
  }
  async listRuns(input: { offset: number; limit: number; includePlanOnly: boolean }): Promise<Result<{ items: RunRecord[]; total: number }>> {
    return this.runs.list(input);
  }
  async runAction(input: RunActionInput): Promise<Result<{ run: RunRecord }>> {
    return this.runs.action(input);
  }
  async listRunEvents(runId: string): Promise<Result<RunEvent[]>> {
    return this.runs.events(runId);
  }
  async getComment(id: string): Promise<Result<RunComment>> {
    return this.runs.comment(id);
  }
  async addComment(input: { runId: string; id: string; body: string; now: string; actor: Actor | null }): Promise<Result<RunComment>> {
    return this.runs.addComment(input);
  }
  async readLog(input: { runId: string; phase: Phase; offset: number; limit: number }): Promise<Result<{ bytes: Uint8Array }>> {
    return this.runs.readLog(input);
  }
  async claimJob(input: ClaimInput): Promise<Result<Job>> {
    return this.runs.claim(input);
  }
  async heartbeat(input: { runId: string; phase: Phase; claimId: string; now: string }): Promise<Result<{ signal: CancelSignal }>> {
    return this.runs.heartbeat(input);
  }
  async appendLog(input: AppendLogInput): Promise<Result<{ size: number; signal: CancelSignal }>> {
    return this.runs.appendLog(input);
  }
  async putArtifact(input: { runId: string; claimId: string; kind: ArtifactKind; bytes: Uint8Array }): Promise<Result<null>> {
    return this.runs.putArtifact(input);
  }
  async appendArtifact(input: ArtifactUploadInput): Promise<Result<null>> {
    return this.runs.appendArtifact(input);
  }
  async abortArtifact(input: { runId: string; kind: ArtifactKind; upload: string }): Promise<Result<null>> {
    return this.runs.abortArtifact(input);
  }
  async completeArtifact(input: ArtifactUploadInput): Promise<Result<null>> {
    return this.runs.completeArtifact(input);
  }
  async getArtifact(input: { runId: string; kind: ArtifactKind; maxBytes?: number }): Promise<Result<{ bytes: Uint8Array | null; size: number }>> {
    return this.runs.getArtifact(input);
  }
  async readArtifactPart(input: { runId: string; kind: ArtifactKind; fromSeq: number }): Promise<Result<{ bytes: Uint8Array; next: number | null }>> {
    return this.runs.readArtifactPart(input);
  }
  async finishJob(input: FinishInput): Promise<Result<{ run: RunRecord }>> {
    return this.runs.finish(input);
  }

  // ---- the connected repository (src/vcs/vcs.object.ts) ----

  async vcsDelivery(input: VcsDeliveryInput): Promise<Result<{ queued: boolean }>> {
    const r = this.vcs.receive(input);
    this.arm();
    return r;
  }

  // ---- run triggers (run-triggers.object.ts) ----

  async receiveRunTrigger(input: TriggerDelivery): Promise<Result<{ runId: string | null }>> {
    return this.runTriggers.receive(input);
  }

  // ---- notification configurations (notifications.object.ts) ----

  async createNotification(input: { config: NotificationConfig; guard?: Guard }): Promise<ConfigResult> {
    return this.notifications.create(input);
  }
  async getNotification(id: string): Promise<ConfigResult> {
    return this.notifications.get(id);
  }
  async listNotifications(): Promise<Result<{ items: NotificationConfig[]; workspace: WorkspaceRecord }>> {
    return this.notifications.list();
  }
  async updateNotification(input: { config: NotificationConfig; readAt: string; guard?: Guard }): Promise<ConfigResult> {
    return this.notifications.update(input);
  }
  async deleteNotification(input: { id: string; guard?: Guard }): Promise<Result<null>> {
    return this.notifications.delete(input);
  }
  async recordNotificationResponse(input: { id: string; response: DeliveryResponse }): Promise<ConfigResult> {
    return this.notifications.record(input);
  }

  // ---- run tasks (run-tasks.object.ts) ----

  async createWorkspaceTask(input: { task: WorkspaceTask; guard?: Guard }): Promise<WorkspaceTaskResult> {
    return this.runTasks.create(input);
  }
  async getWorkspaceTask(id: string): Promise<WorkspaceTaskResult> {
    return this.runTasks.get(id);
  }
  async listWorkspaceTasks(): Promise<Result<{ items: WorkspaceTask[]; workspace: WorkspaceRecord }>> {
    return this.runTasks.list();
  }
  async updateWorkspaceTask(input: {
    id: string;
    enforcementLevel?: WorkspaceTask["enforcementLevel"];
    stages?: TaskStageName[];
    guard?: Guard;
  }): Promise<WorkspaceTaskResult> {
    return this.runTasks.update(input);
  }
  async deleteWorkspaceTask(input: { id: string; guard?: Guard }): Promise<Result<null>> {
    return this.runTasks.delete(input);
  }
  async listTaskStages(runId: string): Promise<Result<{ stages: TaskStage[]; results: TaskResult[] }>> {
    return this.runTasks.stages(runId);
  }
  async getTaskStage(id: string): Promise<Result<{ stage: TaskStage; results: TaskResult[]; run: RunRecord }>> {
    return this.runTasks.stage(id);
  }
  async getTaskResult(id: string): Promise<Result<{ result: TaskResult; run: RunRecord }>> {
    return this.runTasks.result(id);
  }
  async taskCallback(input: TaskCallback): Promise<Result<{ result: TaskResult }>> {
    return this.runTasks.callback(input);
  }

  // ---- test-only (src/platform/hops.ts `countedNamespace` calls these in place of a method) ----

  /** Fault injection (FAULT_INJECTION=1): makes RPC call `method(...args)` with `faults` applied to the index write it flushes. */
  withFaults(faults: Faults, method: string, args: unknown[]): Promise<unknown> {
    const call = this.rpc(method, args, "withFaults");
    return this.outbox.withFaults(faults, call);
  }

  /** The hop trace (EXPOSE_HOPS=1): makes RPC call `method(...args)` and says how many index writes it waited for. */
  async traced(faults: Faults | null, method: string, args: unknown[]): Promise<{ value: unknown; indexWrites: number }> {
    const call = this.rpc(method, args, "traced");
    return this.outbox.traced(() => (faults ? this.withFaults(faults, method, args) : Promise.resolve(call())));
  }

  private rpc(method: string, args: unknown[], by: string): () => unknown {
    const fn = (this as unknown as Record<string, unknown>)[method];
    if (method === "traced" || method === "withFaults" || typeof fn !== "function") throw new Error(`${by}: no RPC method ${method}`);
    return () => fn.apply(this, args);
  }

  // ---- the one alarm: the outbox's retries, then each capability's due work ----

  async alarm(): Promise<void> {
    await this.outbox.flush(undefined);
    await this.runs.expireLeases();
    await this.autoDestroy.fire();
    await this.vcs.fire();
    await this.runTriggers.deliver();
    await this.notifications.deliver();
    await this.runTasks.deliver();
    if (!(await this.outbox.retryLeft())) this.arm();
  }

  /**
   * With the outbox drained, the alarm is set for the earliest due time of any capability (a job lease, an automatic
   * destroy, the connected repository's work), or cleared. While index writes are pending the flush owns the alarm, and this runs again once it drains.
   */
  private arm(): void {
    if (this.outbox.pending() > 0) return;
    const live = this.live(); // read once: each read parses the stored record
    const w = isFailure(live) ? null : live;
    const due = [
      this.runs.earliestLease(),
      this.autoDestroy.due(w),
      this.vcs.due(w),
      this.runTriggers.due(),
      this.notifications.due(),
      this.runTasks.due(),
    ].filter((t): t is number => t !== null);
    if (due.length === 0) void this.ctx.storage.deleteAlarm();
    else void this.ctx.storage.setAlarm(Math.min(...due));
  }

  /** D1 has the workspace's delete: every capability drops what it held; the record keeps only its tombstone. */
  private erase(record: WorkspaceRecord): void {
    this.record.erase(record);
    this.states.erase();
    this.variables.erase();
    this.cvs.erase();
    this.runs.erase();
    this.vcs.erase();
    this.runTriggers.erase();
    this.notifications.erase();
    this.runTasks.erase();
  }
}
