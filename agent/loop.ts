/**
 * The agent's loop: register, report its status every `statusMs`, and in each of `concurrency` slots long-poll
 * `jobs/next` and run the job it is handed (claim → prepare → run → stream → finish, in job.ts).
 * `stop()` takes no new job and lets running ones finish; `interrupt()` also cancels them (SIGINT to Terraform).
 * An agent without a sandbox stops at registration when the service says its pool serves several organisations.
 */
import { AgentClient, ApiError } from "./client.ts";
import { type JobOptions, type RunningJob, startJob } from "./job.ts";
import { AGENT_VERSION, type Registration } from "./protocol.ts";

export interface AgentOptions extends JobOptions {
  url: string;
  token: string;
  name: string;
  concurrency?: number;
  statusMs?: number;
  /** The pause after an empty poll that came back early, and the first backoff after a failed one. */
  idleDelayMs?: number;
  fetch?: typeof fetch;
  retryDelayMs?: number;
}

/** The service refused the agent token, or the agent refuses to serve its pool: polling on would not help. */
export class AgentRefusedError extends Error {}

/** Whether the pool serves several organisations: the default pool, or a service that did not say (it may be). */
export function sharedPool(registration: Registration): boolean {
  return typeof registration.pool?.organizationId !== "string" || registration.pool.organizationId === "";
}

export class Agent {
  readonly client: AgentClient;
  private readonly opts: AgentOptions;
  private readonly log: (message: string) => void;
  private readonly running = new Set<RunningJob>();
  private agentId: string | null = null;
  private renewing: Promise<void> | null = null;
  private stopping = false;
  private readonly wake = new AbortController();
  private statusTimer: ReturnType<typeof setInterval> | null = null;
  private readonly schemaCache = new Map<string, Buffer>();

  constructor(options: AgentOptions) {
    this.opts = options;
    this.log = options.log ?? (() => {});
    this.client = new AgentClient({ url: options.url, token: options.token, fetch: options.fetch, retryDelayMs: options.retryDelayMs });
  }

  get id(): string | null {
    return this.agentId;
  }

  /** Runs until `stop()` and every started job has finished. Rejects with AgentRefusedError on a refused token. */
  async run(): Promise<void> {
    const id = await this.register();
    if (!id) return;
    this.log(`registered as ${id} (${this.opts.name}); polling ${this.client.origin} for jobs`);
    this.statusTimer = setInterval(() => void this.sendStatus(), this.opts.statusMs ?? 10_000);
    try {
      await this.sendStatus();
      const slots = Array.from({ length: Math.max(1, this.opts.concurrency ?? 1) }, () => this.slot());
      // Every slot ends (a running job finishes) before the agent says it exited.
      const ended = await Promise.allSettled(slots);
      const failed = ended.find((r) => r.status === "rejected");
      if (failed) throw (failed as PromiseRejectedResult).reason;
    } finally {
      if (this.statusTimer) clearInterval(this.statusTimer);
      await this.client.status(this.agentId ?? id, "exited").catch(() => {});
      this.log("exited");
    }
  }

  /** Takes no new job; running jobs finish. */
  stop(): void {
    this.stopping = true;
    this.wake.abort();
  }

  /** Stops and cancels the running jobs as a user's cancel would. */
  interrupt(): void {
    this.stop();
    for (const job of this.running) job.control.onSignal("cancel");
  }

  private async register(): Promise<string | null> {
    let delay = this.opts.idleDelayMs ?? 1_000;
    while (!this.stopping) {
      try {
        const registration = await this.client.register(this.opts.name, AGENT_VERSION);
        if (!this.opts.sandbox && sharedPool(registration)) {
          this.stop();
          await this.client.status(registration.id, "exited").catch(() => {});
          throw new AgentRefusedError(
            "this agent's token serves the default pool, shared by every organisation: its jobs must run in a sandbox, and --no-sandbox is only for a single organisation's own agent pool",
          );
        }
        this.agentId = registration.id;
        return registration.id;
      } catch (err) {
        if (err instanceof AgentRefusedError) throw err;
        this.refused(err);
        this.log(`registering failed: ${message(err)}; retrying`);
        await this.pause(delay);
        delay = Math.min(delay * 2, 30_000);
      }
    }
    return null;
  }

  private async slot(): Promise<void> {
    let delay = this.opts.idleDelayMs ?? 1_000;
    while (!this.stopping) {
      const agentId = this.agentId!;
      const started = Date.now();
      let job: Awaited<ReturnType<AgentClient["nextJob"]>>;
      try {
        job = await this.client.nextJob(agentId);
        delay = this.opts.idleDelayMs ?? 1_000;
      } catch (err) {
        this.refused(err);
        if (err instanceof ApiError && err.status === 404) {
          await this.registerAgain(agentId);
          continue;
        }
        this.log(`polling for jobs failed: ${message(err)}`);
        await this.pause(delay);
        delay = Math.min(delay * 2, 30_000);
        continue;
      }
      if (!job) {
        // A server that answers at once instead of holding the poll must not be polled in a tight loop.
        if (Date.now() - started < (this.opts.idleDelayMs ?? 1_000)) await this.pause(this.opts.idleDelayMs ?? 1_000);
        continue;
      }
      // The claim happened: the job runs even if the agent is stopping, or it would wait out its lease.
      this.log(`${job.run} ${job.phase}: claimed`);
      const running = startJob(job, this.client.job(job), { ...this.opts, schemaCache: this.schemaCache });
      this.running.add(running);
      void this.sendStatus();
      await running.done.catch((err) => this.log(`${job.run} ${job.phase}: ${message(err)}`));
      this.running.delete(running);
      void this.sendStatus();
    }
  }

  /**
   * The service no longer knows this agent (it removes one silent for a day): register again, once for all slots.
   */
  private registerAgain(stale: string): Promise<void> {
    if (this.agentId !== stale) return Promise.resolve();
    this.renewing ??= (async () => {
      this.log(`the service no longer knows ${stale}; registering again`);
      const id = await this.register();
      if (id) this.log(`registered as ${id} (${this.opts.name})`);
    })().finally(() => {
      this.renewing = null;
    });
    return this.renewing;
  }

  private async sendStatus(): Promise<void> {
    if (!this.agentId) return;
    try {
      await this.client.status(this.agentId, this.running.size > 0 ? "busy" : "idle");
    } catch (err) {
      this.log(`status update failed: ${message(err)}`);
    }
  }

  private refused(err: unknown): void {
    if (err instanceof ApiError && (err.status === 401 || err.status === 403)) {
      this.stop();
      throw new AgentRefusedError(`the service refused the agent token (${err.message})`);
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.wake.signal.aborted) return resolve();
      const t = setTimeout(resolve, ms);
      this.wake.signal.addEventListener(
        "abort",
        () => {
          clearTimeout(t);
          resolve();
        },
        { once: true },
      );
    });
  }
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
