import { DurableObject } from "cloudflare:workers";
import type { Bindings } from "../env";
import { fail, ok, type Failure, type Result } from "../errors";
import { ConfigurationVersions } from "../configuration-versions/configuration-versions.object";
import { Runs } from "../runs/runs.object";
import { RunTriggers } from "../run-triggers/run-triggers.object";
import { Notifications } from "../notifications/notifications.object";
import { RunTasks } from "../run-tasks/run-tasks.object";
import type { RunsRpc } from "../runs/runs.types";
import { StateVersions } from "../state-versions/state-versions.object";
import { Variables } from "../variables/variables.object";
import type { Change, Stored, WorkspaceHost, WorkspaceResult } from "./workspace.host";
import { migrate, resealAll } from "./workspace.migrations";
import { deriveSealer, useSealer } from "../platform/seal";
import { Outbox } from "./workspace.outbox";
import { WorkspaceRecords } from "./workspace-record.object";
import { AutoDestroy } from "./auto-destroy.object";
import { inheritedExecution } from "./workspaces.d1";
import { Vcs, type VcsDeliveryInput } from "../vcs/vcs.object";
import { isFailure } from "./workspace.rules";
import { AuditLog } from "../audit/audit.object";
import type { AuditEvent } from "../audit/audit.rules";
import type { CreateInput, Faults, Guard, LockHolder, UpdateInput, WorkspaceRecord } from "./workspace.types";

/**
 * One SQLite-backed Durable Object per workspace (named by its id): the single writer of that workspace. It hosts one
 * capability per resource it holds (`<resource>.object.ts`: the record, state versions, variables, configuration
 * versions, runs, the automatic destroy, the connected repository, run triggers, notifications, run tasks), each
 * owning its tables and reaching the object through `WorkspaceHost` alone. Every mutation is read-check-write with no
 * await in between, commits the record's row as its outbox entry, then upserts the D1 index (workspace.outbox.ts); the
 * one alarm retries the outbox until D1 has it, then serves each capability's due work.
 */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the merged interface's methods (DELEGATED) are defined on the prototype below.
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
  /** What a commit writes to D1, in batch order: the workspace row (tags, project hold), the state-version and configuration-version maps, run rows, audit events, run task attachments. */
  private readonly outbox = new Outbox(
    { sql: this.sql, storage: this.ctx.storage, env: this.env, drained: () => this.arm(), deleted: (record) => this.erase(record) },
    [this.record.indexer, this.states.indexer, this.cvs.indexer, this.runs.indexer, this.audit.indexer, this.runTasks.indexer],
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

  // ---- RPC methods with more than a delegation (the others: DELEGATED, below the class) ----

  async create(input: CreateInput): Promise<WorkspaceResult> {
    const created = await this.record.create(input);
    if (created.ok && created.value.settings["vcs-repo"]) this.vcs.noteOrigin(input.origin);
    return created;
  }
  async update(input: UpdateInput): Promise<WorkspaceResult> {
    const updated = await this.record.update(input);
    if (updated.ok && input.attributes.vcsRepo) this.vcs.noteOrigin(input.origin);
    return updated;
  }
  async unlock(input: { holder: LockHolder; now?: string; guard?: Guard }): Promise<WorkspaceResult> {
    return this.record.unlock(input, false);
  }
  async forceUnlock(input: { now?: string; guard?: Guard } = {}): Promise<WorkspaceResult> {
    return this.record.unlock(input, true);
  }
  /** The record as the index should hold it (for the consistency checker). */
  async indexState(): Promise<Result<{ kind: Stored["kind"]; record: WorkspaceRecord | null; pending: number; armed: boolean }>> {
    return ok(await this.outbox.state(this.load()));
  }
  /** A repository event for the connected workspace (src/vcs/vcs.object.ts): stored, then worked from the alarm. */
  async vcsDelivery(input: VcsDeliveryInput): Promise<Result<{ queued: boolean }>> {
    const r = this.vcs.receive(input);
    this.arm();
    return r;
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
    const times = [this.runs.earliestLease(), this.autoDestroy.due(w), this.vcs.due(w), this.runTriggers.due(), this.notifications.due(), this.runTasks.due()];
    const due = times.filter((t): t is number => t !== null);
    if (due.length === 0) void this.ctx.storage.deleteAlarm();
    else void this.ctx.storage.setAlarm(Math.min(...due));
  }

  /** D1 has the workspace's delete: every capability drops what it held; the record keeps only its tombstone. */
  private erase(record: WorkspaceRecord): void {
    this.record.erase(record);
    for (const held of [this.states, this.variables, this.cvs, this.runs, this.vcs, this.runTriggers, this.notifications, this.runTasks]) held.erase();
  }
}

/**
 * The RPC methods that hand the call to one capability as it is: method → [capability, its method]. Workers RPC
 * exposes methods of the class's prototype (not instance fields), so each is defined there below; callers see the
 * capability method's own signature (`Delegated`).
 */
const DELEGATED = {
  get: ["record", "get"],
  changeTags: ["record", "changeTags"],
  changeConsumers: ["record", "changeConsumers"],
  setSshKey: ["record", "setSshKey"],
  setRetention: ["record", "setRetention"],
  lock: ["record", "lock"],
  remove: ["record", "remove"],
  releaseName: ["record", "releaseName"],
  // variables (variables.object.ts): values arrive sealed
  createVariable: ["variables", "create"],
  updateVariable: ["variables", "update"],
  deleteVariable: ["variables", "delete"],
  listVariables: ["variables", "list"],
  getVariable: ["variables", "get"],
  // state versions (state-versions.object.ts)
  createStateVersion: ["states", "create"],
  rollbackStateVersion: ["states", "rollback"],
  appendBlob: ["states", "appendBlob"],
  abortBlob: ["states", "abortBlob"],
  completeBlob: ["states", "completeBlob"],
  getStateVersion: ["states", "get"],
  listStateVersions: ["states", "list"],
  readBlobPart: ["states", "readBlobPart"],
  manageBackingData: ["states", "manageBackingData"],
  // configuration versions (configuration-versions.object.ts)
  createConfigurationVersion: ["cvs", "create"],
  getConfigurationVersion: ["cvs", "get"],
  listConfigurationVersions: ["cvs", "list"],
  archiveConfigurationVersion: ["cvs", "archive"],
  manageCvBackingData: ["cvs", "manageBackingData"],
  appendCvUpload: ["cvs", "appendUpload"],
  abortCvUpload: ["cvs", "abortUpload"],
  completeCvUpload: ["cvs", "completeUpload"],
  readCvPart: ["cvs", "readPart"],
  // runs (runs.object.ts; the contract is RunsRpc in src/runs/runs.types.ts)
  createRun: ["runs", "create"],
  getRun: ["runs", "get"],
  listRuns: ["runs", "list"],
  runAction: ["runs", "action"],
  listRunEvents: ["runs", "events"],
  getComment: ["runs", "comment"],
  addComment: ["runs", "addComment"],
  readLog: ["runs", "readLog"],
  claimJob: ["runs", "claim"],
  heartbeat: ["runs", "heartbeat"],
  appendLog: ["runs", "appendLog"],
  putArtifact: ["runs", "putArtifact"],
  appendArtifact: ["runs", "appendArtifact"],
  abortArtifact: ["runs", "abortArtifact"],
  completeArtifact: ["runs", "completeArtifact"],
  getArtifact: ["runs", "getArtifact"],
  readArtifactPart: ["runs", "readArtifactPart"],
  finishJob: ["runs", "finish"],
  // run triggers (run-triggers.object.ts)
  receiveRunTrigger: ["runTriggers", "receive"],
  // notification configurations (notifications.object.ts)
  createNotification: ["notifications", "create"],
  getNotification: ["notifications", "get"],
  listNotifications: ["notifications", "list"],
  updateNotification: ["notifications", "update"],
  deleteNotification: ["notifications", "delete"],
  recordNotificationResponse: ["notifications", "record"],
  // run tasks (run-tasks.object.ts)
  createWorkspaceTask: ["runTasks", "create"],
  getWorkspaceTask: ["runTasks", "get"],
  listWorkspaceTasks: ["runTasks", "list"],
  updateWorkspaceTask: ["runTasks", "update"],
  deleteWorkspaceTask: ["runTasks", "delete"],
  listTaskStages: ["runTasks", "stages"],
  getTaskStage: ["runTasks", "stage"],
  getTaskResult: ["runTasks", "result"],
  taskCallback: ["runTasks", "callback"],
} as const satisfies Record<string, readonly [keyof Capabilities, string]>;

/** The capabilities a DELEGATED method may name (the object's fields of those names). */
interface Capabilities {
  record: WorkspaceRecords;
  variables: Variables;
  states: StateVersions;
  cvs: ConfigurationVersions;
  runs: Runs;
  runTriggers: RunTriggers;
  notifications: Notifications;
  runTasks: RunTasks;
}

type Method<C extends keyof Capabilities, M> = M extends keyof Capabilities[C] ? Capabilities[C][M] : never;
/** Each delegated method as callers see it: the capability's parameters, its result as a promise (an RPC's). */
type Delegated = {
  [K in keyof typeof DELEGATED]: Method<(typeof DELEGATED)[K][0], (typeof DELEGATED)[K][1]> extends (...args: infer A) => infer R
    ? (...args: A) => Promise<Awaited<R>>
    : never;
};

// Declaration merging: the class's instances have the delegated methods, defined on its prototype here.
export interface WorkspaceObject extends Delegated {}
for (const [name, [capability, method]] of Object.entries(DELEGATED)) {
  Object.defineProperty(WorkspaceObject.prototype, name, {
    configurable: true,
    writable: true,
    async value(this: WorkspaceObject, ...args: unknown[]) {
      const target = (this as unknown as Record<string, Record<string, (...a: unknown[]) => unknown>>)[capability]!;
      return target[method]!.apply(target, args);
    },
  });
}
