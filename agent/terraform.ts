/**
 * The Terraform process wrapper: spawns one command at a time in its own process group (inside the job's sandbox
 * when there is one), streams its stdout and stderr to the job's log, and obeys the job's signal: "cancel" sends
 * SIGINT (Terraform stops gracefully, as on Ctrl-C), "force-cancel" and a lost claim send SIGKILL. A heartbeat every
 * `heartbeatMs` renews the lease and reads the signal between log appends.
 */
import { type ChildProcess, spawn } from "node:child_process";
import type { Readable } from "node:stream";
import { JobLostError } from "./client.ts";
import type { Signal } from "./protocol.ts";
import type { SandboxCommand } from "./sandbox.ts";

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
  /** Where output goes (the job's log, through its redactors: one per stream). */
  output: (chunk: Buffer, from: "stdout" | "stderr") => void;
  /** Keep stdout out of the log and return it instead; stderr is still logged. */
  captureStdout?: boolean;
  /** Run it in this sandbox (agent/sandbox.ts); `cwd` and the paths in `args` are the same inside. */
  sandbox?: SandboxCommand | null;
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
  /**
   * The process group of the running command's sandbox (bwrap's `child-pid`, a session leader by `--new-session`):
   * Terraform and its plugins are in it, bwrap itself is not. null until bwrap has said it; undefined unsandboxed.
   */
  private sandboxGroup: number | null | undefined = undefined;
  private interrupted = false;
  /** A signal delivery to try again (see `deliver`). */
  private retry: ReturnType<typeof setTimeout> | null = null;
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
    if (signal !== null && signal !== this.signalSeen && this.signalSeen !== "force-cancel") this.signalSeen = signal;
    // Every report delivers again what has not landed yet (see `deliver`).
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
    const sandbox = options.sandbox ?? null;
    // bwrap writes its `child-pid` to fd 3 (`--info-fd`); the environment reaches Terraform through bwrap, never
    // through its command line, which other users of the host can read.
    const [bin, args] = sandbox
      ? [sandbox.bwrap, [...sandbox.args, "--chdir", options.cwd, "--info-fd", "3", "--", options.bin, ...options.args]]
      : [options.bin, options.args];
    const child = spawn(bin, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: sandbox ? ["ignore", "pipe", "pipe", "pipe"] : ["ignore", "pipe", "pipe"],
      // Its own process group, so a signal reaches Terraform and its provider plugins alike, as Ctrl-C would.
      detached: true,
    });
    this.current = child;
    this.interrupted = false;
    this.sandboxGroup = sandbox ? null : undefined;
    if (sandbox) this.readSandboxInfo(child, child.stdio[3] as Readable);
    const captured: Buffer[] = [];
    child.stdout!.on("data", (chunk: Buffer) => (options.captureStdout ? captured.push(chunk) : options.output(chunk, "stdout")));
    child.stderr!.on("data", (chunk: Buffer) => options.output(chunk, "stderr"));
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

  private readSandboxInfo(child: ChildProcess, info: Readable): void {
    let text = "";
    info.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    info.on("error", () => {});
    info.on("end", () => {
      let pid: unknown;
      try {
        pid = (JSON.parse(text) as { "child-pid"?: unknown })["child-pid"];
      } catch {}
      if (this.current !== child || typeof pid !== "number" || pid <= 1) return;
      this.sandboxGroup = pid;
      // A signal that arrived while bwrap was starting applies now.
      this.deliver();
    });
  }

  private deliver(): void {
    if (this.lostError || this.signalSeen === "force-cancel") this.kill("SIGKILL");
    else if (this.signalSeen === "cancel" && !this.interrupted) {
      // Once: a second SIGINT makes Terraform abandon its graceful stop.
      if (this.kill("SIGINT")) this.interrupted = true;
      // A sandbox that bwrap has reported but whose session is not made yet has no process group to signal (ESRCH):
      // tried again shortly, and at every later report, until it lands or the command ends.
      else if (this.current && !this.retry) {
        this.retry = setTimeout(() => {
          this.retry = null;
          this.deliver();
        }, 200);
      }
    }
  }

  private kill(sig: NodeJS.Signals): boolean {
    const child = this.current;
    if (!child || child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return false;
    if (this.sandboxGroup !== undefined) return this.killSandboxed(child, sig);
    try {
      process.kill(-child.pid, sig);
    } catch {
      child.kill(sig);
    }
    return true;
  }

  /**
   * bwrap forwards no signal, and dies of a SIGINT (taking the sandbox with it, --die-with-parent): SIGINT goes to
   * the sandbox's own process group only, where its pid 1 ignores it and Terraform stops gracefully. SIGKILL goes
   * to both groups; the sandbox dies with its pid 1.
   */
  private killSandboxed(child: ChildProcess, sig: NodeJS.Signals): boolean {
    const group = this.sandboxGroup;
    if (sig === "SIGKILL") {
      if (group) signalGroup(group, sig);
      if (!signalGroup(child.pid!, sig)) child.kill(sig);
      return true;
    }
    // Not yet known: delivered once bwrap says it (readSandboxInfo).
    if (!group) return false;
    return signalGroup(group, sig);
  }
}

function signalGroup(pgid: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, sig);
    return true;
  } catch {
    return false;
  }
}
