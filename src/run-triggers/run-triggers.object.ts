/**
 * The workspace object's run triggers (HCP Terraform API docs: Run Triggers). As a source: an apply (a run reaching
 * `applied`) is recorded in the commit that applies it, and the alarm tells each target's object afterwards, out of
 * the source's critical section, retrying with backoff until every target has answered. As a target: a source run is
 * acted on once (a repeated delivery queues nothing), queueing a run with source `tfe-run-trigger` that applies by
 * itself only when the workspace's `auto-apply-run-trigger` is on.
 */
import type { Bindings } from "../env";
import { ok, type Failure, type Result } from "../errors";
import { newId } from "../ids";
import type { CreateRunInput, RunRecord, RunStatus } from "../runs/runs.types";
import type { WorkspaceHost } from "../workspaces/workspace.host";
import { ensure, present, RUN_TRIGGER_TABLES } from "../workspaces/workspace.migrations";
import { effectiveExecution, isFailure } from "../workspaces/workspace.rules";
import type { WorkspaceRecord } from "../workspaces/workspace.types";
import { inheritedExecution } from "../workspaces/workspaces.d1";
import { runTriggerTargets } from "./run-triggers.d1";
import { delivered, dueApplies, earliestApply, eraseRunTriggers, markReceived, receivedRun, recordApply, retryLater } from "./run-triggers.store";

const RETRY_BASE_MS = 1_000;
const RETRY_MAX_MS = 5 * 60_000;

/** What a source's object tells a target's. */
export interface TriggerDelivery {
  sourceRunId: string;
  sourceWorkspaceId: string;
  message: string;
  now: string;
}

/**
 * A target's object as the source's reaches it: the one RPC method it calls. (`workspaceObject` in workspace.stub.ts
 * types the whole object, which imports this capability: a narrow view of the same stub keeps the imports acyclic.)
 */
interface TriggerTarget {
  receiveRunTrigger(input: TriggerDelivery): Promise<Result<{ runId: string | null }>>;
}

/** The run message of a run a trigger queued (docs/behaviour.md "Run triggers"). */
export const triggeredMessage = (sourceName: string, sourceRunId: string): string => `Triggered by run ${sourceRunId} of workspace ${sourceName}`;

export class RunTriggers {
  constructor(
    private readonly host: WorkspaceHost,
    private readonly env: Bindings,
    /** Queues a run inside this capability's change (the runs capability's `queueWithin`). */
    private readonly queue: (w: WorkspaceRecord, input: CreateRunInput) => RunRecord | Failure,
  ) {}

  private get made(): boolean {
    return present(this.host.sql, RUN_TRIGGER_TABLES);
  }

  /** The runs capability's observer: an apply is recorded for the alarm, in the commit that applies it. */
  onRunStatus(w: WorkspaceRecord, run: RunRecord, from: RunStatus | null): void {
    if (run.status !== "applied" || from === "applied") return;
    const now = run.statusTimestamps["applied-at"] ?? new Date().toISOString();
    recordApply(ensure(this.host.sql, RUN_TRIGGER_TABLES), run.id, triggeredMessage(w.name, run.id), now, Date.now());
  }

  /** When the alarm must next deliver (epoch ms), or null. */
  due(): number | null {
    return this.made ? earliestApply(this.host.sql) : null;
  }

  /** The alarm's step: each recorded apply told to every target the index names; a failure is retried later. */
  async deliver(): Promise<void> {
    if (!this.made) return;
    const pending = dueApplies(this.host.sql, Date.now());
    if (pending.length === 0) return;
    const w = this.host.live();
    if (isFailure(w)) {
      for (const p of pending) delivered(this.host.sql, p.sourceRunId);
      return;
    }
    let targets: string[];
    try {
      targets = await runTriggerTargets(this.env.DB, w.id);
    } catch (err) {
      for (const p of pending) this.retry(p.sourceRunId, p.attempts, err);
      return;
    }
    for (const p of pending) {
      const results = await Promise.all(
        targets.map(async (target) => {
          try {
            const r = await (this.env.WORKSPACES.getByName(target) as unknown as TriggerTarget).receiveRunTrigger({
              sourceRunId: p.sourceRunId,
              sourceWorkspaceId: w.id,
              message: p.message,
              now: new Date().toISOString(),
            });
            // A target deleted meanwhile has nothing to queue.
            return r.ok || r.code === "not_found" ? null : `${target}: ${r.code}`;
          } catch (err) {
            return `${target}: ${String(err)}`;
          }
        }),
      );
      const failed = results.filter((r): r is string => r !== null);
      if (failed.length === 0) delivered(this.host.sql, p.sourceRunId);
      else this.retry(p.sourceRunId, p.attempts, failed.join("; "));
    }
  }

  private retry(sourceRunId: string, attempts: number, error: unknown): void {
    const delay = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.min(attempts, 10));
    retryLater(this.host.sql, sourceRunId, Date.now() + delay);
    console.log(JSON.stringify({ level: "warn", msg: "run trigger delivery failed; the alarm retries", run: sourceRunId, error: String(error) }));
  }

  /**
   * A source's apply reaches this target: a run is queued once per source run. Nothing is queued (and the source run
   * still counts as acted on) in local execution, without a configuration version, or when the run is refused.
   */
  async receive(input: TriggerDelivery): Promise<Result<{ runId: string | null }>> {
    const w = this.host.live();
    if (isFailure(w)) return w;
    if (this.made) {
      const known = receivedRun(this.host.sql, input.sourceRunId);
      if (known !== undefined) return ok({ runId: known });
    }
    const defaults = (await inheritedExecution(this.env.DB, w.organizationId, w.projectId)) ?? { executionMode: "local" as const, agentPoolId: null };
    let runId: string | null = null;
    const r = await this.host.mutate({}, (current) => {
      const sql = ensure(this.host.sql, RUN_TRIGGER_TABLES);
      const known = receivedRun(sql, input.sourceRunId);
      if (known !== undefined) {
        runId = known;
        return current;
      }
      const exec = effectiveExecution(current.settings, defaults);
      if (exec.mode !== "local" && current.currentConfigurationVersionId) {
        const run = this.queue(current, {
          id: newId("run"),
          now: input.now,
          configurationVersionId: null,
          options: { message: input.message, source: "tfe-run-trigger", autoApply: current.settings["auto-apply-run-trigger"] },
          // The workspace's admin chose this source: its applies stand for a run of nobody's that may apply by itself.
          creator: { actor: null, canApply: true },
          agentPoolId: exec.agentPoolId,
        });
        if (!isFailure(run)) runId = run.id;
      }
      markReceived(sql, input.sourceRunId, runId, input.now);
      return current;
    });
    return r.ok ? ok({ runId }, r.bookmark) : r;
  }

  /** Once D1 has the workspace's delete. */
  erase(): void {
    if (this.made) eraseRunTriggers(this.host.sql);
  }
}
