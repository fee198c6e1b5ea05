/**
 * The workspace object's automatic destroy (auto-destroy.ts has the rules): a due time for the object's one alarm, and
 * the alarm's step that queues the destroy run through the runs capability, in one critical section with the record.
 */
import type { Failure } from "../errors";
import type { CreateRunInput, RunRecord } from "../runs/runs.types";
import { autoDestroyDue, fireAutoDestroy } from "./auto-destroy";
import type { WorkspaceHost } from "./workspace.host";
import { isFailure, type Defaults } from "./workspace.rules";
import type { WorkspaceRecord } from "./workspace.types";

export class AutoDestroy {
  constructor(
    private readonly host: WorkspaceHost,
    private readonly queue: (w: WorkspaceRecord, input: CreateRunInput) => RunRecord | Failure,
    /** The execution defaults the workspace inherits (read from the index); null when its organisation is gone. */
    private readonly defaults: (w: WorkspaceRecord) => Promise<Defaults | null>,
  ) {}

  /** When the alarm must next act for it (epoch ms), or null. `record`: the workspace as last committed, if known. */
  due(record?: WorkspaceRecord | null): number | null {
    const w = record === undefined ? this.host.live() : record;
    return w && !isFailure(w) ? autoDestroyDue(w) : null;
  }

  /** The alarm's step: nothing unless a destroy is due now. */
  async fire(): Promise<void> {
    const w = this.host.live();
    if (isFailure(w) || (autoDestroyDue(w) ?? Number.POSITIVE_INFINITY) > Date.now()) return;
    // An organisation gone (its workspaces answer 404) runs nothing: the due time is only marked as acted on.
    const defaults = (await this.defaults(w)) ?? { executionMode: "local" as const, agentPoolId: null };
    await this.host.mutate({}, (current) => fireAutoDestroy(this.queue, current, defaults, Date.now()));
  }
}
