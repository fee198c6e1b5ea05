/**
 * The Terraform process wrapper: spawns one command at a time in its own process group, streams its stdout and
 * stderr to the job's log, and obeys the job's signal: "cancel" sends SIGINT (Terraform stops gracefully, as on
 * Ctrl-C), "force-cancel" and a lost claim send SIGKILL. A heartbeat every `heartbeatMs` renews the lease and reads
 * the signal between log appends.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { JobLostError } from "./client.ts";
import type { Signal } from "./protocol.ts";

export interface CommandResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Stdout, when captured instead of logged (`terraform show -json`). */
  stdout: Buffer;
}

export interface CommandOptions {
  bin: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** Where output goes (the job's log, through its redactor). */
  output: (chunk: Buffer) => void;
  /** Keep stdout out of the log and return it instead; stderr is still logged. */
  captureStdout?: boolean;
}

export interface JobControlOptions {
  heartbeat: () => Promise<{ signal: Signal }>;
  heartbeatMs?: number;
  /** Reports a heartbeat that failed for a reason other than a lost claim (the lease outlives a few). */
  warn?: (message: string) => void;
}

/** One job's supervision: the signal seen so far, the claim, the running command and the heartbeat. */
export class JobControl {
  private signalSeen: Signal = null;
  private lostError: JobLostError | null = null;
  private current: ChildProcess | null = null;
  private interrupted = false;
  private timer: ReturnType<typeof setInterval> | null = null;
  private readonly opts: JobControlOptions;

  constructor(options: JobControlOptions) {
    this.opts = options;
  }

  get signal(): Signal {
    return this.signalSeen;
  }

  get lost(): JobLostError | null {
    return this.lostError;
  }

  /** Whether the job must not start another command. */
  get stopping(): boolean {
    return this.signalSeen !== null || this.lostError !== null;
  }

  startHeartbeat(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.beat(), this.opts.heartbeatMs ?? 10_000);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  async beat(): Promise<void> {
    if (this.lostError) return;
    try {
      const { signal } = await this.opts.heartbeat();
      this.onSignal(signal);
    } catch (err) {
      if (err instanceof JobLostError) this.onLost(err);
      else this.opts.warn?.(`heartbeat failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** A signal from a heartbeat or a log append; signals only escalate. */
  onSignal(signal: Signal): void {
    if (signal === null || signal === this.signalSeen || this.signalSeen === "force-cancel") return;
    this.signalSeen = signal;
    this.deliver();
  }

  onLost(err: JobLostError): void {
    if (this.lostError) return;
    this.lostError = err;
    this.stop();
    this.kill("SIGKILL");
  }

  /** Runs one command under this job's supervision. */
  run(options: CommandOptions): Promise<CommandResult> {
    const child = spawn(options.bin, options.args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ["ignore", "pipe", "pipe"],
      // Its own process group, so a signal reaches Terraform and its provider plugins alike, as Ctrl-C would.
      detached: true,
    });
    this.current = child;
    this.interrupted = false;
    const captured: Buffer[] = [];
    child.stdout!.on("data", (chunk: Buffer) => (options.captureStdout ? captured.push(chunk) : options.output(chunk)));
    child.stderr!.on("data", (chunk: Buffer) => options.output(chunk));
    // A signal that arrived before the spawn applies at once.
    this.deliver();
    return new Promise((resolve, reject) => {
      child.on("error", (err) => {
        this.current = null;
        reject(err);
      });
      child.on("close", (code, signal) => {
        this.current = null;
        resolve({ code, signal, stdout: Buffer.concat(captured) });
      });
    });
  }

  private deliver(): void {
    if (this.lostError || this.signalSeen === "force-cancel") this.kill("SIGKILL");
    else if (this.signalSeen === "cancel" && !this.interrupted) {
      // Once: a second SIGINT makes Terraform abandon its graceful stop.
      if (this.kill("SIGINT")) this.interrupted = true;
    }
  }

  private kill(sig: NodeJS.Signals): boolean {
    const child = this.current;
    if (!child || child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return false;
    try {
      process.kill(-child.pid, sig);
    } catch {
      child.kill(sig);
    }
    return true;
  }
}
