/**
 * The workspace object's run tasks (HCP Terraform API docs: Run Tasks, Run Tasks Integration): the workspace's
 * attachments of its organisation's tasks, and the engine's side of each run's task stages.
 *
 * A run made while tasks are attached gets one task stage per stage they name, each with one result per task
 * (`plan`). When the run reaches such a stage (`enter`, called by the runs capability in the commit that would move
 * the run on), it waits in `<stage>_running` instead, and each result's request is due at once. The alarm sends them
 * (`deliver`, out of any critical section), retries a failed request with backoff up to LIMITS.runTaskAttempts, and
 * gives the integration LIMITS.runTaskTimeoutMs for its callback. Once every result of the stage is final, the stage
 * passes or fails (a mandatory task failed or errored) and the runs capability moves the run on or stops it
 * (`proceed`). Nothing waits in a request or an agent meanwhile: only rows and the object's alarm.
 */
import { organizationName } from "../auth/organization.d1";
import type { Bindings } from "../env";
import { fail, ok, type Result } from "../errors";
import { newChildId } from "../ids";
import { LIMITS } from "../limits";
import { isFinal, setStatus } from "../runs/runs.rules";
import type { RunRecord, RunStatus } from "../runs/runs.types";
import { usernames } from "../users/users.d1";
import { openValue } from "../variables/variables.crypto";
import type { WorkspaceHost } from "../workspaces/workspace.host";
import { ensure, metaValue, present, RUN_TASK_TABLES, setMeta } from "../workspaces/workspace.migrations";
import type { Indexer } from "../workspaces/workspace.outbox";
import { isFailure } from "../workspaces/workspace.rules";
import type { Guard, WorkspaceRecord } from "../workspaces/workspace.types";
import { retryAt, SENDS_PER_ALARM } from "../notifications/notifications.outbound";
import { FINAL_RESULT, stageOutcome, taskPayload } from "./run-tasks.rules";
import { sendTaskRequest } from "./run-tasks.send";
import {
  deleteWorkspaceTask,
  dueSends,
  earliestTaskWork,
  eraseRunTasks,
  expiredResults,
  getResult,
  getStage,
  getWorkspaceTask,
  insertResult,
  insertStage,
  insertWorkspaceTask,
  listWorkspaceTasks,
  resultsOf,
  saveResult,
  saveStage,
  saveWorkspaceTask,
  stagesOfRun,
} from "./run-tasks.store";
import { attachmentStatements, dropAttachmentsStatement, findRunTask } from "./run-tasks.d1";
import { mintTaskToken } from "./run-tasks.token";
import { TASK_STAGES, type TaskCallback, type TaskResult, type TaskStage, type TaskStageName, type WorkspaceTask } from "./run-tasks.types";

export type WorkspaceTaskResult = Result<{ task: WorkspaceTask; workspace: WorkspaceRecord }>;

/** The attachments D1 lacks: the change count they are as of, and all of them (none: D1 has the latest). */
type UnindexedTasks = { version: number; tasks: WorkspaceTask[] } | null;

/** What the run tasks need of the runs capability. */
export interface RunTaskDeps {
  /** The stage is over: the run moves on (`passed`) or stops; `w` is the record being changed. */
  proceed(w: WorkspaceRecord, runId: string, stage: TaskStageName, passed: boolean, now: string): void;
  run(runId: string): RunRecord | null;
}

const stamp = (x: { statusTimestamps: Record<string, string>; updatedAt: string }, status: string, now: string) => {
  x.statusTimestamps[`${status}-at`] = now;
  x.updatedAt = now;
};

export class RunTasks {
  constructor(
    private readonly host: WorkspaceHost,
    private readonly env: Bindings,
    private readonly deps: RunTaskDeps,
  ) {}

  private get made(): boolean {
    return present(this.host.sql, RUN_TASK_TABLES);
  }

  // ---- the workspace's attachments (the RPC methods' logic) ----

  /**
   * The attachments as D1 holds them for a task's `workspace_tasks`: each change counts in `tasks_version` in its
   * commit, and the outbox rewrites the workspace's rows until `tasks_indexed` has caught up.
   */
  readonly indexer: Indexer<UnindexedTasks> = {
    pending: () => {
      // A workspace that never had an attachment has nothing to index (and its flush reads nothing more).
      if (!this.made) return null;
      const version = Number(metaValue(this.host.sql, "tasks_version") ?? 0);
      if (version <= Number(metaValue(this.host.sql, "tasks_indexed") ?? 0)) return null;
      return { version, tasks: listWorkspaceTasks(this.host.sql) };
    },
    statements: (session, { record, deleted }, pending) =>
      deleted ? [dropAttachmentsStatement(session, record.id)] : pending ? attachmentStatements(session, record.id, pending.tasks) : [],
    indexed: (_entry, pending) => {
      if (pending) setMeta(this.host.sql, "tasks_indexed", String(pending.version));
    },
  };

  /** Commits a change of the attachments (`write`, after its checks) with its outbox entry, and answers once D1 has it. */
  private async attachments<T>(guard: Guard | undefined, write: () => Result<T>): Promise<Result<T & { workspace: WorkspaceRecord }>> {
    let done: Result<T> | undefined;
    const result = await this.host.mutate({ guard }, (w) => {
      done = write();
      if (!done.ok) return done;
      setMeta(this.host.sql, "tasks_version", String(Number(metaValue(this.host.sql, "tasks_version") ?? 0) + 1));
      return w;
    });
    if (!result.ok) return result;
    return ok({ ...(done as { ok: true; value: T }).value, workspace: result.value }, result.bookmark);
  }

  create(input: { task: WorkspaceTask; guard?: Guard }): Promise<WorkspaceTaskResult> {
    return this.attachments(input.guard, () => {
      const sql = ensure(this.host.sql, RUN_TASK_TABLES);
      const all = listWorkspaceTasks(sql);
      if (all.some((t) => t.taskId === input.task.taskId))
        return fail("invalid_attribute", "Task has already been attached to this workspace", "/data/relationships/task/data/id");
      if (all.length >= LIMITS.runTasksPerWorkspace) return fail("invalid_attribute", `A workspace may have at most ${LIMITS.runTasksPerWorkspace} run tasks`);
      insertWorkspaceTask(sql, input.task);
      return ok({ task: input.task });
    });
  }

  get(id: string): WorkspaceTaskResult {
    const w = this.host.live();
    if (isFailure(w)) return w;
    const task = this.made ? getWorkspaceTask(this.host.sql, id) : null;
    return task ? ok({ task, workspace: w }) : fail("not_found");
  }

  list(): Result<{ items: WorkspaceTask[]; workspace: WorkspaceRecord }> {
    const w = this.host.live();
    if (isFailure(w)) return w;
    return ok({ items: this.made ? listWorkspaceTasks(this.host.sql) : [], workspace: w });
  }

  update(input: { id: string; enforcementLevel?: WorkspaceTask["enforcementLevel"]; stages?: TaskStageName[]; guard?: Guard }): Promise<WorkspaceTaskResult> {
    return this.attachments(input.guard, () => {
      const current = this.made ? getWorkspaceTask(this.host.sql, input.id) : null;
      if (!current) return fail("not_found");
      const next = {
        ...current,
        ...(input.enforcementLevel ? { enforcementLevel: input.enforcementLevel } : {}),
        ...(input.stages ? { stages: input.stages } : {}),
      };
      saveWorkspaceTask(this.host.sql, next);
      return ok({ task: next });
    });
  }

  async delete(input: { id: string; guard?: Guard }): Promise<Result<null>> {
    const done = await this.attachments(input.guard, () => {
      if (!this.made || !getWorkspaceTask(this.host.sql, input.id)) return fail("not_found");
      deleteWorkspaceTask(this.host.sql, input.id);
      return ok({});
    });
    return done.ok ? ok(null, done.bookmark) : done;
  }

  // ---- a run's task stages and results (reads) ----

  stages(runId: string): Result<{ stages: TaskStage[]; results: TaskResult[] }> {
    const w = this.host.live();
    if (isFailure(w)) return w;
    if (!this.deps.run(runId)) return fail("not_found");
    const stages = this.made ? stagesOfRun(this.host.sql, runId) : [];
    return ok({ stages, results: stages.flatMap((s) => resultsOf(this.host.sql, s.id)) });
  }

  stage(id: string): Result<{ stage: TaskStage; results: TaskResult[]; run: RunRecord }> {
    const w = this.host.live();
    if (isFailure(w)) return w;
    const stage = this.made ? getStage(this.host.sql, id) : null;
    const run = stage ? this.deps.run(stage.runId) : null;
    return stage && run ? ok({ stage, results: resultsOf(this.host.sql, id), run }) : fail("not_found");
  }

  result(id: string): Result<{ result: TaskResult; run: RunRecord }> {
    const w = this.host.live();
    if (isFailure(w)) return w;
    const result = this.made ? getResult(this.host.sql, id) : null;
    const run = result ? this.deps.run(result.runId) : null;
    return result && run ? ok({ result, run }) : fail("not_found");
  }

  // ---- the engine's side ----

  /** At a run's creation: its task stages, one per stage the attached tasks name, each result pending. */
  plan(run: RunRecord, now: string): Array<{ id: string; stage: TaskStageName }> {
    if (!this.made) return [];
    const sql = this.host.sql;
    const tasks = listWorkspaceTasks(sql);
    const made: Array<{ id: string; stage: TaskStageName }> = [];
    for (const [seq, stage] of TASK_STAGES.entries()) {
      const attached = tasks.filter((t) => t.stages.includes(stage));
      if (attached.length === 0) continue;
      const id = newChildId("ts", run.workspaceId);
      const results = attached.map(
        (t): TaskResult => ({
          id: newChildId("taskrs", run.workspaceId),
          stageId: id,
          runId: run.id,
          stage,
          workspaceTaskId: t.id,
          taskId: t.taskId,
          taskName: t.taskName,
          taskUrl: t.taskUrl,
          enforcementLevel: t.enforcementLevel,
          status: "pending",
          message: "",
          url: "",
          outcomes: [],
          statusTimestamps: {},
          createdAt: now,
          updatedAt: now,
        }),
      );
      insertStage(
        sql,
        { id, runId: run.id, stage, status: "pending", statusTimestamps: {}, createdAt: now, updatedAt: now, resultIds: results.map((r) => r.id) },
        seq,
      );
      for (const r of results) insertResult(sql, r);
      made.push({ id, stage });
    }
    return made;
  }

  /**
   * The run reached `stage`: true when it has tasks there, the run then waiting in `<stage>_running` (the caller
   * saves it) and each result's request due at once; false when the run goes straight on.
   */
  enter(run: RunRecord, stage: TaskStageName, now: string): boolean {
    if (!this.made) return false;
    const sql = this.host.sql;
    const s = stagesOfRun(sql, run.id).find((x) => x.stage === stage);
    if (s?.status !== "pending") return false;
    s.status = "running";
    stamp(s, "running", now);
    saveStage(sql, s);
    const due = Date.now();
    for (const r of resultsOf(sql, s.id)) saveResult(sql, r, { sendAt: due, deadline: null, attempts: 0 });
    setStatus(run, `${stage}_running` as RunStatus, now);
    return true;
  }

  /** The runs capability's observer: a run that ended meanwhile (canceled, discarded) cancels what still waits. */
  onRunStatus(_w: WorkspaceRecord, run: RunRecord): void {
    if (!this.made || !isFinal(run.status)) return;
    const sql = this.host.sql;
    const now = new Date().toISOString();
    for (const s of stagesOfRun(sql, run.id)) {
      if (s.status !== "pending" && s.status !== "running") continue;
      s.status = "canceled";
      stamp(s, "canceled", now);
      saveStage(sql, s);
      for (const r of resultsOf(sql, s.id)) {
        if (FINAL_RESULT.has(r.status)) continue;
        r.status = "canceled";
        stamp(r, "canceled", now);
        saveResult(sql, r, { sendAt: null, deadline: null });
      }
    }
  }

  due(): number | null {
    return this.made ? earliestTaskWork(this.host.sql) : null;
  }

  /** The integration's callback (the Worker checked its token names this result). */
  async callback(input: TaskCallback): Promise<Result<{ result: TaskResult }>> {
    let out: TaskResult | null = null;
    const r = await this.host.mutate({}, (w) => {
      const result = this.made ? getResult(this.host.sql, input.resultId) : null;
      if (!result) return fail("not_found");
      if (FINAL_RESULT.has(result.status)) return fail("conflict", `The task result is already ${result.status}`);
      const now = new Date().toISOString();
      result.status = input.status;
      stamp(result, input.status, now);
      if (input.message !== null) result.message = input.message;
      if (input.url !== null) result.url = input.url;
      if (input.outcomes !== null) result.outcomes = input.outcomes;
      const final = input.status !== "running";
      // A `running` update keeps the deadline; a final one ends the wait (and any retry still due).
      if (final) saveResult(this.host.sql, result, { sendAt: null, deadline: null });
      else saveResult(this.host.sql, result);
      out = result;
      if (final) this.settle(w, result.stageId, now);
      return w;
    });
    return r.ok ? ok({ result: out! }, r.bookmark) : r;
  }

  /** The alarm's step: callbacks that never came end errored; the due requests are sent, each answer recorded. */
  async deliver(): Promise<void> {
    if (!this.made) return;
    const nowMs = Date.now();
    if (expiredResults(this.host.sql, nowMs).length > 0) {
      await this.host.mutate({}, (w) => {
        const now = new Date().toISOString();
        for (const id of expiredResults(this.host.sql, Date.now())) {
          const r = getResult(this.host.sql, id)!;
          this.finish(w, r, "errored", `The run task did not answer within ${Math.round(LIMITS.runTaskTimeoutMs / 1000)} seconds`, now);
        }
        return w;
      });
    }
    const pending = dueSends(this.host.sql, nowMs, SENDS_PER_ALARM);
    if (pending.length === 0) return;
    const w = this.host.live();
    if (isFailure(w)) return;
    const organization = await organizationName(this.env.DB, w.organizationId).catch(() => null);
    for (const p of pending) {
      const result = getResult(this.host.sql, p.id);
      if (!result) continue;
      const run = this.deps.run(result.runId);
      const attachment = getWorkspaceTask(this.host.sql, result.workspaceTaskId);
      const task = await findRunTask(this.env.DB, result.taskId).catch(() => null);
      let answer: { accepted: boolean; note: string };
      if (!run || !task || !attachment) answer = { accepted: false, note: "skip:The run task no longer exists" };
      else if (!task.enabled) answer = { accepted: false, note: "skip:The run task is disabled" };
      else {
        result.taskName = task.name;
        result.taskUrl = task.url;
        const expiresAt = Math.floor((Date.now() + LIMITS.runTaskTimeoutMs) / 1000) + 15 * 60;
        const token = await mintTaskToken(this.env, { resultId: result.id, runId: run.id, workspaceId: w.id, planId: run.plan.id, expiresAt });
        const payload = taskPayload({
          accessToken: token,
          stage: result.stage,
          origin: attachment.origin,
          organizationName: organization ?? w.organizationId,
          workspaceId: w.id,
          workspaceName: w.name,
          workingDirectory: w.settings["working-directory"] ?? "",
          run: {
            id: run.id,
            message: run.message,
            createdAt: run.createdAt,
            createdBy: await this.username(run.createdBy?.id ?? null),
            isSpeculative: run.planOnly,
            planId: run.plan.id,
            configurationVersionId: run.configurationVersionId,
          },
          result: { id: result.id, enforcementLevel: result.enforcementLevel },
        });
        let key: string | null = null;
        try {
          key = task.sealedHmacKey ? await openValue(this.env, result.taskId, task.sealedHmacKey) : null;
        } catch {
          key = null;
        }
        const sent = task.sealedHmacKey && key === null ? null : await sendTaskRequest(this.env, task.url, payload, key, attachment.origin);
        answer = sent
          ? { accepted: sent.accepted, note: sent.accepted ? "" : `${sent.url} ${sent.code ? `answered ${sent.code}` : sent.body}` }
          : { accepted: false, note: "The run task's HMAC key cannot be read" };
      }
      await this.host.mutate({}, (wr) => {
        // Read again after the awaits: a callback or a cancel may have settled it meanwhile.
        const current = getResult(this.host.sql, p.id);
        if (current?.status !== "pending") return wr;
        const now = new Date().toISOString();
        current.taskName = result.taskName;
        current.taskUrl = result.taskUrl;
        if (answer.note.startsWith("skip:")) this.finish(wr, current, "unreachable", answer.note.slice(5), now);
        else if (answer.accepted) {
          current.status = "running";
          stamp(current, "running", now);
          saveResult(this.host.sql, current, { sendAt: null, deadline: Date.now() + LIMITS.runTaskTimeoutMs });
        } else if (p.attempts + 1 >= LIMITS.runTaskAttempts) this.finish(wr, current, "errored", `The run task request failed: ${answer.note}`, now);
        else saveResult(this.host.sql, current, { sendAt: retryAt(p.attempts), deadline: null, attempts: p.attempts + 1 });
        return wr;
      });
    }
  }

  /** Once D1 has the workspace's delete. */
  erase(): void {
    if (this.made) eraseRunTasks(this.host.sql);
  }

  // ---- inside a commit ----

  private async username(id: string | null): Promise<string | null> {
    if (!id) return null;
    const [u] = await usernames(this.env.DB, [id]).catch(() => []);
    return u?.username ?? null;
  }

  /** A result ends (errored, unreachable) with a message; its stage may then be over. */
  private finish(w: WorkspaceRecord, r: TaskResult, status: "errored" | "unreachable", message: string, now: string): void {
    r.status = status;
    r.message = message;
    stamp(r, status, now);
    saveResult(this.host.sql, r, { sendAt: null, deadline: null });
    this.settle(w, r.stageId, now);
  }

  /** When every result of a running stage is final: the stage passes or fails, and the run moves on or stops. */
  private settle(w: WorkspaceRecord, stageId: string, now: string): void {
    const s = getStage(this.host.sql, stageId);
    if (s?.status !== "running") return;
    const outcome = stageOutcome(s.stage, resultsOf(this.host.sql, stageId));
    if (!outcome) return;
    s.status = outcome;
    stamp(s, outcome, now);
    saveStage(this.host.sql, s);
    this.deps.proceed(w, s.runId, s.stage, outcome === "passed", now);
  }
}
