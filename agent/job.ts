/**
 * One claimed job, start to finish: a fresh directory, the configuration unpacked, the override, CLI configuration
 * and variable files written, Terraform run under the job's supervision with its output streamed to the log, the
 * plan's artifacts uploaded, and the finish reported. The directory is removed whatever happens.
 */
import { createHash } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { type JobClient, JobLostError } from "./client.ts";
import { InstallError, type TerraformInstaller } from "./install.ts";
import { LogStream } from "./log-stream.ts";
import type { Finish, Job } from "./protocol.ts";
import { jobPatterns, type Pattern, Redactor, redactedPlan } from "./redact.ts";
import { applyCounts, type Counts, NO_CHANGES, planCounts } from "./summary.ts";
import { readJobFile, removeJobDir, type Sandbox, UnsafeJobFileError } from "./sandbox.ts";
import { JobControl } from "./terraform.ts";
import { UnsafeArchiveError, unpackConfiguration } from "./unpack.ts";
import { cliConfig, OVERRIDE_FILE, overrideFile, planArgs, runVariablesFile, terraformEnv, variablesFile, workingDirectory } from "./workdir.ts";

export interface JobOptions {
  /**
   * A binary every job runs (the agent is pinned to it, `--terraform`): a job asking for another version fails. Unset:
   * `installer` installs the version each job asks for.
   */
  terraform?: string | null;
  /** The version the pinned `terraform` reports. */
  terraformVersion?: string | null;
  /** Installs the Terraform a job asks for (agent/install.ts), when the agent is not pinned. */
  installer?: TerraformInstaller | null;
  pluginMirror?: string | null;
  pluginCacheDir?: string | null;
  /** Where job directories are made (default the OS's). */
  tmpDir?: string;
  heartbeatMs?: number;
  flushMs?: number;
  /** The agent's own console: job ids and outcomes, never values. */
  log?: (message: string) => void;
  /** The agent's environment Terraform may inherit from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /**
   * Provider schemas already read (`terraform providers schema -json`), by Terraform version and lock file: the lock
   * file's hashes name the exact provider packages, so the same key always yields the same schemas. Saves a
   * Terraform process on the plan's critical path for every plan after the first of a provider set.
   */
  schemaCache?: Map<string, Buffer>;
  /** Where every Terraform process of a job runs (agent/sandbox.ts); none: unsandboxed (`--no-sandbox`). */
  sandbox?: Sandbox | null;
}

const SCHEMA_CACHE_ENTRIES = 32;

export interface JobOutcome {
  /** What was reported, or null when the claim was lost (nothing more may be said about the job). */
  finish: Finish | null;
  lost: boolean;
}

/** The job was told to stop (cancel, force-cancel) or lost its claim: no further command starts. */
class Stopped extends Error {}

/** A failure whose message belongs in the job's log and its finish. */
class JobFailed extends Error {}

/** A running job, so the agent can interrupt it on shutdown. */
export interface RunningJob {
  control: JobControl;
  done: Promise<JobOutcome>;
}

export function startJob(job: Job, client: JobClient, options: JobOptions): RunningJob {
  const control = new JobControl({
    heartbeat: () => client.heartbeat(),
    heartbeatMs: options.heartbeatMs,
    warn: (m) => options.log?.(`${job.run} ${job.phase}: ${m}`),
  });
  return { control, done: runJob(job, client, control, options) };
}

async function runJob(job: Job, client: JobClient, control: JobControl, options: JobOptions): Promise<JobOutcome> {
  const log = options.log ?? (() => {});
  const stream = new LogStream({
    append: (offset, bytes) => client.appendLog(offset, bytes),
    flushMs: options.flushMs,
    onSignal: (s) => control.onSignal(s),
    onError: (err) => {
      if (err instanceof JobLostError) control.onLost(err);
      else log(`${job.run} ${job.phase}: the log could not be sent: ${message(err)}`);
    },
  });
  const secrets = jobPatterns(job);
  // One redactor per stream: a secret split between two reads of stdout may have stderr's bytes between them.
  const redactors = { stdout: new Redactor(secrets, (chunk) => stream.write(chunk)), stderr: new Redactor(secrets, (chunk) => stream.write(chunk)) };
  const endOutput = () => {
    redactors.stdout.end();
    redactors.stderr.end();
  };
  // The apply's last lines, for its counts; kept in memory only.
  let tail = "";
  const output = (chunk: Buffer, from: "stdout" | "stderr" = "stdout") => {
    redactors[from].write(chunk);
    tail = (tail + chunk.toString("utf8")).slice(-65536);
  };
  const say = (line: string) => output(Buffer.from(`${line}\n`));
  const started = Date.now();
  const steps: Steps = [];
  // The Terraform the job runs, once chosen (reported with the finish: the run's terraform-version from then on).
  const tf: Ctx["tf"] = { bin: "", version: null };

  control.startHeartbeat();
  let root: string | null = null;
  let counts: Counts = NO_CHANGES;
  let error: string | undefined;
  try {
    root = await mkdtemp(join(options.tmpDir ?? tmpdir(), "workspace-agent-"));
    const ctx: Ctx = { job, client, control, options, root, output, endOutput, say, tail: () => tail, steps, tf, secrets };
    counts = job.phase === "plan" ? await plan(ctx) : await apply(ctx);
  } catch (err) {
    if (err instanceof JobLostError) control.onLost(err);
    else if (!(err instanceof Stopped)) {
      error =
        err instanceof JobFailed || err instanceof UnsafeArchiveError || err instanceof UnsafeJobFileError ? err.message : `the agent failed: ${message(err)}`;
      say(`\nError: ${error}`);
    }
  } finally {
    control.stop();
  }

  try {
    if (!control.lost) {
      endOutput();
      await stream.close();
    }
    if (control.lost) {
      log(`${job.run} ${job.phase}: ${control.lost.message}; stopped`);
      return { finish: null, lost: true };
    }
    const status = control.signal ? "canceled" : error ? "errored" : "finished";
    const finish: Finish = {
      status,
      ...(error ? { error } : {}),
      ...(status === "finished" ? counts : NO_CHANGES),
      ...(tf.version ? { terraformVersion: tf.version } : {}),
    };
    try {
      await client.finish(finish);
    } catch (err) {
      if (err instanceof JobLostError) {
        log(`${job.run} ${job.phase}: ${err.message}`);
        return { finish: null, lost: true };
      }
      log(`${job.run} ${job.phase}: reporting the finish failed: ${message(err)}`);
    }
    // Where the job's time went, for the operator: the time a run spends on the agent is most of its overhead.
    const took = steps.map(([name, ms]) => `${name} ${ms}`).join(", ");
    log(`${job.run} ${job.phase}: ${status}${error ? ` (${error})` : ""} in ${Date.now() - started} ms${took ? ` (${took})` : ""}`);
    return { finish, lost: false };
  } finally {
    if (root) await removeJobDir(root);
  }
}

interface Ctx {
  job: Job;
  client: JobClient;
  control: JobControl;
  options: JobOptions;
  root: string;
  output: (chunk: Buffer, from?: "stdout" | "stderr") => void;
  /** Lets out what the redactors held back: a command ended, so no secret continues past it. */
  endOutput: () => void;
  say: (line: string) => void;
  tail: () => string;
  steps: Steps;
  /** The binary the job runs and the version it reports (set by `chooseTerraform`, before any command). */
  tf: { bin: string; version: string | null };
  /** What the log and the redacted plan must not show (agent/redact.ts). */
  secrets: Pattern[];
}

/** Each step of a job and its milliseconds. */
type Steps = [string, number][];

async function timed<T>(ctx: Ctx, name: string, fn: () => Promise<T>): Promise<T> {
  const t0 = Date.now();
  try {
    return await fn();
  } finally {
    ctx.steps.push([name, Date.now() - t0]);
  }
}

interface Prepared {
  cwd: string;
  env: Record<string, string>;
  planFile: string;
  varFiles: string[];
}

/** The configuration unpacked and the files around it written; answers where and how Terraform runs. */
async function prepare(ctx: Ctx): Promise<Prepared> {
  const { job, root, options } = ctx;
  const wd = workingDirectory(job.workspace.workingDirectory ?? "");
  if (wd === null) throw new JobFailed(`the working directory ${JSON.stringify(job.workspace.workingDirectory)} leaves the configuration`);
  const configDir = join(root, "config");
  await mkdir(configDir);
  await unpackConfiguration(await ctx.client.configuration(), configDir, join(root, "configuration.tar.gz"));
  const cwd = wd ? join(configDir, wd) : configDir;
  if (!existsSync(cwd) || !statSync(cwd).isDirectory()) {
    throw new JobFailed(`the working directory ${JSON.stringify(wd)} is not in the configuration`);
  }
  await writeFile(join(cwd, OVERRIDE_FILE), overrideFile(job));

  const cliConfigFile = join(root, "agent.tfrc");
  const sandboxed = Boolean(options.sandbox);
  await writeFile(cliConfigFile, cliConfig(job, { pluginMirror: options.pluginMirror, readOnlyCache: sandboxed ? options.pluginCacheDir : null }), {
    mode: 0o600,
  });

  // Outside the configuration, so a `terraform.tfvars` or `*.auto.tfvars` of its own still loads and ours win.
  const varFiles: string[] = [];
  if (job.phase === "plan") {
    const vars = variablesFile(job.variables ?? []);
    const runVars = runVariablesFile(job.runVariables ?? []);
    for (const key of [...vars.skipped, ...runVars.skipped]) ctx.say(`Warning: variable ${JSON.stringify(key)} is not a valid name and was not passed.`);
    for (const [name, file] of [
      ["workspace.tfvars", vars],
      ["run.tfvars", runVars],
    ] as const) {
      if (!file.text) continue;
      const path = join(root, name);
      await writeFile(path, file.text, { mode: 0o600 });
      varFiles.push(path);
    }
  }
  const env = terraformEnv(job, { cliConfigFile, base: options.env, pluginCacheDir: options.pluginCacheDir, sandboxHome: sandboxed ? root : null });
  return { cwd, env, planFile: join(root, "plan.bin"), varFiles };
}

/**
 * The Terraform this job runs, chosen before any command: the version the service resolved for the run, installed
 * on first use, or this agent's pinned binary when it is that version. Anything else fails the job saying why.
 */
async function chooseTerraform(ctx: Ctx): Promise<void> {
  const { job, options } = ctx;
  const t = job.terraform;
  if (t?.error) throw new JobFailed(`Terraform ${t.version} cannot run: ${t.error}`);
  if (options.terraform) {
    const pinned = options.terraformVersion ?? null;
    if (t && t.version !== pinned) {
      throw new JobFailed(
        `this agent runs only Terraform ${pinned} (${options.terraform}, pinned with --terraform), and the run asks for Terraform ${t.version}: run it on an agent that installs versions, or pin one to Terraform ${t.version}`,
      );
    }
    // An older service names no resolved version: the workspace's setting is all there is.
    const wanted = job.workspace.terraformVersion;
    if (!t && pinned && wanted && wanted !== "latest" && wanted !== pinned) {
      ctx.say(`Warning: the workspace asks for Terraform ${wanted}; this agent runs ${pinned}.\n`);
    }
    ctx.tf.bin = options.terraform;
    ctx.tf.version = pinned;
    return;
  }
  if (!t)
    throw new JobFailed("the service named no Terraform version for this run, so there is nothing to install: pin this agent to a binary with --terraform");
  if (!options.installer) throw new JobFailed(`this agent has neither a pinned Terraform nor an installer for Terraform ${t.version}`);
  try {
    const installed = await options.installer.ensure(t);
    ctx.tf.bin = installed.bin;
    ctx.tf.version = installed.version;
  } catch (err) {
    throw new JobFailed(`Terraform ${t.version} could not be installed: ${err instanceof InstallError ? err.message : message(err)}`);
  }
}

/** Runs one Terraform command; a non-zero exit fails the job, or cancels it when a signal came. */
async function terraform(ctx: Ctx, p: Prepared, args: string[], captureStdout = false): Promise<Buffer> {
  if (ctx.control.stopping) throw new Stopped();
  let result: Awaited<ReturnType<JobControl["run"]>>;
  try {
    const name = args[0] === "providers" ? "schema" : args[0];
    // An installed binary's directory is bound read-only into the sandbox (a pinned one is in its base).
    const sandbox = ctx.options.sandbox?.forJob(ctx.root, ctx.tf.bin === ctx.options.terraform ? [] : [dirname(ctx.tf.bin)]);
    result = await timed(ctx, name, () => ctx.control.run({ bin: ctx.tf.bin, args, cwd: p.cwd, env: p.env, output: ctx.output, captureStdout, sandbox }));
  } catch (err) {
    throw new JobFailed(`terraform could not be started (${ctx.tf.bin}): ${message(err)}`);
  } finally {
    ctx.endOutput();
  }
  if (result.code === 0) return result.stdout;
  if (ctx.control.stopping) throw new Stopped();
  throw new JobFailed(`terraform ${args[0]} exited with ${result.code ?? result.signal}`);
}

async function plan(ctx: Ctx): Promise<Counts> {
  await timed(ctx, "terraform", () => chooseTerraform(ctx));
  const p = await timed(ctx, "prepare", () => prepare(ctx));
  await terraform(ctx, p, ["init", "-input=false"]);
  const structured = ctx.job.workspace.structuredRunOutput === true;
  const args = planArgs(ctx.job, { planFile: p.planFile, varFiles: p.varFiles, generatedConfig: join(ctx.root, "generated.tf") });
  await terraform(ctx, p, structured ? [...args, "-json"] : args);
  const json = await terraform(ctx, p, ["show", "-json", p.planFile], true);
  let parsed: Parameters<typeof planCounts>[0];
  try {
    parsed = JSON.parse(json.toString("utf8"));
  } catch {
    throw new JobFailed("terraform show -json did not print a JSON plan");
  }
  await timed(ctx, "put plan-json", () => ctx.client.putArtifact("plan-json", json));
  const lockFile = join(p.cwd, ".terraform.lock.hcl");
  const lock = await readJobFile(ctx.root, lockFile);
  const parsedSchemas = await providerSchemas(ctx, p, lock);
  await timed(ctx, "put redacted", async () =>
    ctx.client.putArtifact(
      "plan-json-redacted",
      Buffer.from(JSON.stringify(redactedPlan(parsed as Parameters<typeof redactedPlan>[0], parsedSchemas, { secrets: ctx.secrets }))),
    ),
  );
  await timed(ctx, "put plan-binary", async () => {
    const planBinary = await readJobFile(ctx.root, p.planFile);
    if (!planBinary) throw new JobFailed("terraform plan wrote no plan file");
    await ctx.client.putArtifact("plan-binary", planBinary);
  });
  if (lock) await timed(ctx, "put lock-file", () => ctx.client.putArtifact("lock-file", lock));
  return planCounts(parsed, { refreshOnly: ctx.job.operation?.refreshOnly });
}

/** The provider schemas for the redacted plan: from the cache when this Terraform has read them for this lock file. */
async function providerSchemas(ctx: Ctx, p: Prepared, lock: Buffer | null): Promise<Parameters<typeof redactedPlan>[1]> {
  const cache = ctx.options.schemaCache;
  // Without a lock file (no providers, or dev overrides) nothing names the provider binaries: no caching.
  const key =
    cache && lock
      ? createHash("sha256")
          .update(`${ctx.tf.bin}\0${ctx.tf.version ?? ""}\0`)
          .update(lock)
          .digest("hex")
      : null;
  const hit = key ? cache?.get(key) : undefined;
  const schemas = hit ?? (await terraform(ctx, p, ["providers", "schema", "-json"], true));
  let parsed: Parameters<typeof redactedPlan>[1];
  try {
    parsed = JSON.parse(schemas.toString("utf8"));
  } catch {
    throw new JobFailed("terraform providers schema -json did not print provider schemas");
  }
  if (cache && key && !hit) {
    if (cache.size >= SCHEMA_CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
    cache.set(key, schemas);
  }
  return parsed;
}

async function apply(ctx: Ctx): Promise<Counts> {
  await timed(ctx, "terraform", () => chooseTerraform(ctx));
  const p = await timed(ctx, "prepare", () => prepare(ctx));
  const planBinary = await timed(ctx, "get plan-binary", () => ctx.client.getArtifact("plan-binary"));
  if (!planBinary) throw new JobFailed("the plan phase stored no plan to apply");
  await writeFile(p.planFile, planBinary);
  // The plan's lock file, so init installs exactly the providers the plan was made with.
  const lock = await timed(ctx, "get lock-file", () => ctx.client.getArtifact("lock-file"));
  if (lock) await writeFile(join(p.cwd, ".terraform.lock.hcl"), lock);
  await terraform(ctx, p, ["init", "-input=false"]);
  const structured = ctx.job.workspace.structuredRunOutput === true;
  try {
    await terraform(ctx, p, ["apply", "-input=false", "-lock=false", ...(structured ? ["-json"] : []), p.planFile]);
  } catch (err) {
    if (err instanceof JobFailed) await keepErroredState(ctx, p);
    throw err;
  }
  const counts = applyCounts(ctx.tail()) ?? NO_CHANGES;
  const total = counts.resourceAdditions + counts.resourceChanges + counts.resourceDestructions + counts.resourceImports;
  return { ...counts, hasChanges: total > 0 };
}

/**
 * When the service refused the apply's new state (the run lost the lock, or another state version came first),
 * Terraform wrote it to errored.tfstate in its working directory (internal/backend/local, backupStateForError). It
 * is kept with the run for a workspace admin to recover, and the job fails saying how.
 */
async function keepErroredState(ctx: Ctx, p: Prepared): Promise<void> {
  const state = await readJobFile(ctx.root, join(p.cwd, ERRORED_STATE));
  if (!state) return;
  try {
    await timed(ctx, "put errored-state", () => ctx.client.putArtifact("errored-state", state));
  } catch (err) {
    if (err instanceof JobLostError) throw err;
    throw new JobFailed(`Terraform could not save the new state, and keeping it with the run failed too (${message(err)}): the state is lost`);
  }
  throw new JobFailed(
    `Terraform could not save the new state; it is kept with this run as its errored state. To recover it, a workspace admin downloads it from ${ctx.job.apiBase}runs/${ctx.job.run}/errored-state, locks the workspace and pushes it with \`terraform state push\`; another apply before that would fork the state`,
  );
}

/** The file Terraform writes the state to when the backend refuses it. */
const ERRORED_STATE = "errored.tfstate";

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
