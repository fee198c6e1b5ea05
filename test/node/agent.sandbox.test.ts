// The job sandbox (agent/sandbox.ts) with a real Terraform: a run whose configuration reads the agent's
// /proc/<pid>/environ, the service's .dev.vars and another job's directory, with Terraform's own file functions in
// the plan and with `local-exec` in the apply, sees none of them, while its own directory works. Then what the
// sandbox must not break (cancel, force-cancel), what a job must not make the agent do for it (read a host file
// through a link it planted), and when the agent refuses to start.
//
// Needs bwrap (Debian's `bubblewrap`) and Terraform >= 1.10 on PATH (or TERRAFORM): CI installs bwrap (.ci/run).
// Without them this file fails with the install hint; SKIP_SANDBOX_TEST=1 skips the part that needs them.
import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Agent, AgentRefusedError } from "../../agent/loop.ts";
import type { Job, JobVariable } from "../../agent/protocol.ts";
import { checkSandbox, INSTALL_HINT, onPath, Sandbox } from "../../agent/sandbox.ts";
import { AGENT_TOKEN, FakeService, job, TfeStub, tarGz } from "./agent.fakes.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const SKIP = process.env.SKIP_SANDBOX_TEST === "1";
const BWRAP = onPath("bwrap");
const TERRAFORM = onPath(process.env.TERRAFORM ?? "terraform");

// What the service's working directory holds (npm start writes it): the secrets a run must never reach.
const DEV_VARS = "ADMIN_TOKEN=admin-token-the-run-must-not-see\nBLOB_SIGNING_KEY=blob-key-the-run-must-not-see\n";
const OTHER_SECRET = "another-tenants-sensitive-value";

let base: string;
let jobsDir: string;
let devVars: string;
let otherJob: string;
let cacheDir: string;

beforeEach(() => {
  // realpath: on some hosts the temp directory is a link, and the paths Terraform prints are the real ones.
  base = realpathSync(mkdtempSync(join(tmpdir(), "agent-sandbox-test-")));
  jobsDir = join(base, "jobs");
  mkdirSync(jobsDir);
  mkdirSync(join(base, "service"));
  devVars = join(base, "service", ".dev.vars");
  writeFileSync(devVars, DEV_VARS);
  // Another job's directory beside this one's, as the agent lays them out, with a variable file of its tenant's.
  otherJob = join(jobsDir, "workspace-agent-other");
  mkdirSync(otherJob);
  writeFileSync(join(otherJob, "workspace.tfvars"), `password = "${OTHER_SECRET}"\n`);
  cacheDir = join(base, "plugin-cache");
  mkdirSync(cacheDir);
});

afterEach(() => {
  rmSync(base, { recursive: true, force: true });
});

const tfVar = (key: string, value: string): JobVariable => ({ key, value, category: "terraform", hcl: false, sensitive: false });

// The tenant's configuration. The plan reads with Terraform's file functions; the apply runs a shell.
const MAIN_TF = `
variable "agent_pid" { type = string }
variable "dev_vars" { type = string }
variable "other_job" { type = string }
variable "jobs_dir" { type = string }
variable "cache_dir" { type = string }

locals {
  environ = "/proc/\${var.agent_pid}/environ"
  other   = "\${var.other_job}/workspace.tfvars"
}

output "agent_environ" { value = try(file(local.environ), "invisible") }
output "dev_vars" { value = try(file(var.dev_vars), "invisible") }
output "other_job" { value = try(file(local.other), "invisible") }
output "seen" {
  value = {
    agent_environ = try(fileexists(local.environ), false)
    dev_vars      = try(fileexists(var.dev_vars), false)
    other_job     = try(fileexists(local.other), false)
  }
}
output "jobs" { value = try(fileset(var.jobs_dir, "**"), []) }
output "own" { value = file("\${path.module}/own.txt") }

# Each marker is computed by the shell ($((6*7))), so the log's echo of the command itself never matches it.
resource "terraform_data" "probe" {
  provisioner "local-exec" {
    command = <<-EOT
      echo "pid 1 is $(cat /proc/1/comm)"
      echo "pids: $(ls /proc | grep -E '^[0-9]+$' | tr '\\n' ' ')"
      cat /proc/\${var.agent_pid}/environ || echo "PROBE-$((6*7)) no agent environ"
      cat \${var.dev_vars} || echo "PROBE-$((6*7)) no dev vars"
      ls \${var.other_job} || echo "PROBE-$((6*7)) no other job"
      echo planted > \${var.other_job}/planted || echo "PROBE-$((6*7)) cannot plant"
      touch \${var.cache_dir}/poisoned || echo "PROBE-$((6*7)) cache is read-only"
      echo "uid: $(id -u)"
      echo "ENV-$((6*7)): $(env | cut -d= -f1 | sort | tr '\\n' ' ')"
      echo own-written > own-written.txt && echo "PROBE-$((6*7)) own $(cat own-written.txt)"
    EOT
  }
}
`;

function probeJob(phase: "plan" | "apply", tfe: TfeStub): Job {
  return job({
    run: "run-SandboxRun000001",
    phase,
    hostname: tfe.host,
    apiBase: `http://${tfe.host}/api/v2/`,
    variables: [
      tfVar("agent_pid", String(process.pid)),
      tfVar("dev_vars", devVars),
      tfVar("other_job", otherJob),
      tfVar("jobs_dir", jobsDir),
      tfVar("cache_dir", cacheDir),
    ],
  });
}

describe.skipIf(SKIP)("a real Terraform run in the sandbox", () => {
  let svc: FakeService;
  let tfe: TfeStub;
  let sandbox: Sandbox;
  let terraformVersion: string;
  let agent: Agent | null;
  let running: Promise<void> | null;

  beforeAll(async () => {
    if (!BWRAP) throw new Error(`this test needs bwrap: ${INSTALL_HINT} (or SKIP_SANDBOX_TEST=1 to skip it)`);
    if (!TERRAFORM) throw new Error("this test needs Terraform >= 1.10 on PATH, or TERRAFORM naming it (or SKIP_SANDBOX_TEST=1 to skip it)");
    const check = await checkSandbox({ terraform: realpathSync(TERRAFORM), readOnly: [] });
    if (!check.ok) throw new Error(`the sandbox does not work here: ${check.reason}`);
    terraformVersion = check.terraformVersion ?? "";
  });

  beforeEach(async () => {
    svc = new FakeService();
    // The default pool: every organisation's jobs.
    svc.pool = { id: null, organizationId: null };
    await svc.start();
    tfe = new TfeStub();
    await tfe.start();
    sandbox = new Sandbox({ bwrap: BWRAP!, terraform: realpathSync(TERRAFORM!), readOnly: [cacheDir] });
    agent = null;
    running = null;
  });

  afterEach(async () => {
    agent?.interrupt();
    await running?.catch(() => {});
    await svc.stop();
    await tfe.stop();
  });

  function startAgent(terraform = realpathSync(TERRAFORM!), s: Sandbox = sandbox): void {
    agent = new Agent({
      url: svc.base,
      token: AGENT_TOKEN,
      name: "sandboxed",
      terraform,
      terraformVersion,
      tmpDir: jobsDir,
      pluginCacheDir: cacheDir,
      sandbox: s,
      heartbeatMs: 50,
      flushMs: 10,
      statusMs: 200,
      idleDelayMs: 5,
      retryDelayMs: 5,
      env: { ...process.env, AGENT_TOKEN, ADMIN_TOKEN: "admin-token-in-the-agents-environment" },
    });
    running = agent.run();
  }

  async function finish(j: Job) {
    const state = svc.jobs.get(`${j.run}/${j.phase}`)!;
    await svc.until(() => state.finish !== null);
    return state;
  }

  it("plans and applies while the agent's environment, the service's files and another job's directory stay out of sight", async () => {
    const config = tarGz([
      { path: "main.tf", body: MAIN_TF },
      { path: "own.txt", body: "the job's own file" },
    ]);
    const plan = svc.offer(probeJob("plan", tfe), config);
    startAgent();
    await finish(plan.job);
    expect(plan.finish, plan.log.toString()).toMatchObject({ status: "finished", hasChanges: true, resourceAdditions: 1 });

    // What the plan's file functions read, as the plan (and a read-level team's redacted plan) would show it.
    const outputs = JSON.parse(plan.artifacts.get("plan-json")!.toString()).output_changes;
    const after = (name: string) => outputs[name].change?.after ?? outputs[name].after;
    expect(after("agent_environ")).toBe("invisible");
    expect(after("dev_vars")).toBe("invisible");
    expect(after("other_job")).toBe("invisible");
    expect(after("seen")).toEqual({ agent_environ: false, dev_vars: false, other_job: false });
    // Of the agent's job directories, only its own is there.
    const jobs: string[] = after("jobs");
    expect(jobs.length).toBeGreaterThan(0);
    expect(new Set(jobs.map((f) => f.split("/")[0])).size).toBe(1);
    expect(jobs.some((f) => f.startsWith("workspace-agent-other"))).toBe(false);
    // Its own directory works.
    expect(after("own")).toBe("the job's own file");
    for (const artifact of plan.artifacts.values()) {
      expect(artifact.toString()).not.toContain("must-not-see");
      expect(artifact.toString()).not.toContain(OTHER_SECRET);
    }

    // The apply runs a shell in the same sandbox.
    const apply = svc.offer(probeJob("apply", tfe), config, Object.fromEntries(plan.artifacts));
    await finish(apply.job);
    agent!.stop();
    await running;
    const log = apply.log.toString();
    expect(apply.finish, log).toMatchObject({ status: "finished", resourceAdditions: 1 });
    expect(log).toContain("PROBE-42 no agent environ");
    expect(log).toContain("PROBE-42 no dev vars");
    expect(log).toContain("PROBE-42 no other job");
    expect(log).toContain("PROBE-42 cannot plant");
    expect(log).toContain("PROBE-42 cache is read-only");
    expect(log).toContain("PROBE-42 own own-written");
    expect(log).not.toContain("must-not-see");
    expect(log).not.toContain(OTHER_SECRET);
    expect(log).not.toContain("admin-token-in-the-agents-environment");
    // Its own PID namespace: bwrap's init is pid 1, and the agent's pid is not there.
    expect(log).toMatch(/pid 1 is bwrap/);
    const pids = /pids: ([\d ]+)/.exec(log)?.[1].trim().split(" ") ?? [];
    expect(pids.length).toBeGreaterThan(0);
    expect(pids).not.toContain(String(process.pid));
    expect(log).toMatch(/uid: 65534/);
    // Only the job's environment: neither the agent's token nor the operator's settings.
    const envKeys = /ENV-42: ([^\n]*)/.exec(log)?.[1].trim().split(" ") ?? [];
    expect(envKeys).toContain("TF_CLI_CONFIG_FILE");
    for (const key of ["AGENT_TOKEN", "ADMIN_TOKEN", "TF_PLUGIN_CACHE_DIR"]) expect(envKeys).not.toContain(key);
    // The state went through the service; nothing was planted beside the job or in the shared cache.
    expect(tfe.uploads.has("/upload/state")).toBe(true);
    expect(readdirSync(otherJob)).toEqual(["workspace.tfvars"]);
    expect(readdirSync(cacheDir)).toEqual([]);
    // The job's directory is gone; the other one is untouched.
    expect(readdirSync(jobsDir)).toEqual(["workspace-agent-other"]);
  });

  it("cannot make the agent read a host file through a link it planted in its directory", async () => {
    // A stand-in for a provider that runs code during the plan: it links the lock file and the plan file to the
    // service's .dev.vars, which the agent (outside the sandbox) would then read and upload as artifacts.
    const fake = join(base, "linking-terraform");
    writeFileSync(
      fake,
      `#!/bin/sh
case "$1" in
  init) echo initialized ;;
  plan) for a in "$@"; do case "$a" in -out=*) out="\${a#-out=}" ;; esac; done
        ln -s "$DEV_VARS" .terraform.lock.hcl; ln -s "$DEV_VARS" "$out"; echo planned ;;
  show) echo '{"format_version":"1.2","resource_changes":[]}' ;;
  providers) echo '{"format_version":"1.0","provider_schemas":{}}' ;;
esac
`,
    );
    chmodSync(fake, 0o755);
    const j = job({ variables: [{ key: "DEV_VARS", value: devVars, category: "env", hcl: false, sensitive: false }] });
    const state = svc.offer(j, tarGz([{ path: "main.tf", body: "" }]));
    startAgent(fake, new Sandbox({ bwrap: BWRAP!, terraform: fake }));
    await finish(j);
    expect(state.finish).toMatchObject({ status: "errored", error: "config/.terraform.lock.hcl leads out of the job's directory" });
    for (const artifact of state.artifacts.values()) expect(artifact.toString()).not.toContain("must-not-see");
    expect(state.artifacts.has("lock-file")).toBe(false);
    expect(state.artifacts.has("plan-binary")).toBe(false);
    expect(state.log.toString()).not.toContain("must-not-see");
  });

  describe("signals reach Terraform through the sandbox", () => {
    // A stand-in whose plan waits: "hang" stops on SIGINT as Terraform does, "stubborn" ignores it.
    function waitingTerraform(): string {
      const fake = join(base, "waiting-terraform");
      writeFileSync(
        fake,
        `#!/bin/sh
case "$1" in
  init) echo initialized ;;
  plan) if [ "$MODE" = stubborn ]; then trap 'echo "SIGINT ignored"' INT; else trap 'echo "Interrupt received."; exit 1' INT; fi
        echo planning; while :; do sleep 0.05; done ;;
esac
`,
      );
      chmodSync(fake, 0o755);
      return fake;
    }

    it("cancel: SIGINT stops the plan gracefully and the job finishes canceled", async () => {
      const fake = waitingTerraform();
      const j = job({ variables: [{ key: "MODE", value: "hang", category: "env", hcl: false, sensitive: false }] });
      const state = svc.offer(j, tarGz([{ path: "main.tf", body: "" }]));
      startAgent(fake, new Sandbox({ bwrap: BWRAP!, terraform: fake }));
      await svc.until(() => state.log.toString().includes("planning"));
      state.signal = "cancel";
      await finish(j);
      expect(state.log.toString()).toContain("Interrupt received.");
      expect(state.finish).toMatchObject({ status: "canceled" });
    });

    it("force-cancel: SIGKILL ends a plan that ignores SIGINT", async () => {
      const fake = waitingTerraform();
      const j = job({ variables: [{ key: "MODE", value: "stubborn", category: "env", hcl: false, sensitive: false }] });
      const state = svc.offer(j, tarGz([{ path: "main.tf", body: "" }]));
      startAgent(fake, new Sandbox({ bwrap: BWRAP!, terraform: fake }));
      await svc.until(() => state.log.toString().includes("planning"));
      state.signal = "cancel";
      await svc.until(() => state.log.toString().includes("SIGINT ignored"));
      state.signal = "force-cancel";
      await finish(j);
      expect(state.finish).toMatchObject({ status: "canceled" });
      agent!.stop();
      await running;
      expect(readdirSync(jobsDir)).toEqual(["workspace-agent-other"]);
    });
  });
});

describe("the agent's registration", () => {
  let svc: FakeService;

  beforeEach(async () => {
    svc = new FakeService();
    await svc.start();
  });

  afterEach(async () => {
    await svc.stop();
  });

  it("refuses to serve a pool shared by several organisations, as the service describes it at registration", async () => {
    // The default pool, then a service that does not say (it may be one).
    for (const pool of [{ id: null, organizationId: null }, null]) {
      svc.pool = pool;
      svc.calls.length = 0;
      const agent = new Agent({ url: svc.base, token: AGENT_TOKEN, name: "unsandboxed", terraform: "terraform", idleDelayMs: 5, retryDelayMs: 1 });
      const refused = await agent.run().catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(AgentRefusedError);
      expect((refused as Error).message).toMatch(/shared by every organisation.*--no-sandbox is only for a single organisation's own agent pool/);
      // It said it exited and never asked for a job.
      expect(svc.calls.map((c) => c.path)).toEqual(["/api/agent/register", expect.stringMatching(/^\/api\/agent\/agents\/agent-fake\d+\/status$/)]);
      expect(JSON.parse(svc.calls[1].body.toString())).toEqual({ status: "exited" });
    }
  });

  it("is renewed when the service no longer knows the agent (it removes one silent for a day)", async () => {
    const agent = new Agent({ url: svc.base, token: AGENT_TOKEN, name: "renewing", terraform: "terraform", idleDelayMs: 5, retryDelayMs: 1, statusMs: 10_000 });
    const running = agent.run();
    await svc.until(() => svc.calls.some((c) => c.path.endsWith("/jobs/next")));
    const first = agent.id;
    svc.forgetAgents();
    await svc.until(() => svc.agents.size === 1);
    await svc.until(() => svc.calls.some((c) => c.path === `/api/agent/agents/${agent.id}/jobs/next`));
    agent.stop();
    await running;
    expect(agent.id).not.toBe(first);
    expect(svc.calls.filter((c) => c.path === "/api/agent/register")).toHaveLength(2);
  });

  it("does not start without bwrap, saying how to install it; --no-sandbox against the default pool exits non-zero", async () => {
    const terraform = TERRAFORM ? realpathSync(TERRAFORM) : process.execPath;
    const bin = join(ROOT, "agent", "bin", "workspace-agent.mjs");
    // No bwrap on this PATH.
    const missing = await runAgent([bin, "--url", svc.base], { PATH: "/nonexistent", TERRAFORM: terraform, AGENT_TOKEN });
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/jobs run in a sandbox, and none works here: bwrap \(bubblewrap\) is not on PATH/);
    expect(missing.stderr).toContain("apt-get install bubblewrap");
    expect(missing.stderr).toContain("--no-sandbox");
    expect(svc.calls).toEqual([]);

    if (!TERRAFORM) return;
    svc.pool = { id: null, organizationId: null };
    const optedOut = await runAgent([bin, "--url", svc.base, "--no-sandbox"], { PATH: process.env.PATH ?? "", TERRAFORM: terraform, AGENT_TOKEN });
    expect(optedOut.code).not.toBe(0);
    expect(optedOut.stderr).toMatch(/serves the default pool, shared by every organisation/);
    expect(svc.calls.some((c) => c.path.endsWith("/jobs/next"))).toBe(false);
  });

  it("npm start's local agent: not started without bwrap, and npm start says why and how to install it", async () => {
    // A path the agent's type-check does not follow (scripts/ is plain JavaScript).
    const { startLocalAgent } = (await import(join(ROOT, "scripts", "lib", "agent.mjs"))) as {
      startLocalAgent: (o: { root: string; port: number; token: string; env: NodeJS.ProcessEnv }) => unknown;
    };
    const why = startLocalAgent({ root: ROOT, port: 1, token: "t", env: { PATH: "/nonexistent", TERRAFORM: process.execPath } });
    expect(why).toMatch(/bwrap/);
    expect(why).toContain("apt-get install bubblewrap");
  });
});

describe("a job's directory", () => {
  it("is removed even when the job took away its own permissions (chmod 000)", async () => {
    // The agent's user is not root in production, and root ignores permissions: run it as nobody when this is root.
    const code = `
      import { chmodSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
      import { join } from "node:path";
      const { removeJobDir } = await import(${JSON.stringify(join(ROOT, "agent", "sandbox.ts"))});
      const dir = mkdtempSync(join(${JSON.stringify(base)}, "workspace-agent-"));
      mkdirSync(join(dir, "locked", "deeper"), { recursive: true });
      writeFileSync(join(dir, "locked", "deeper", "file"), "x");
      chmodSync(join(dir, "locked", "deeper"), 0);
      chmodSync(join(dir, "locked"), 0);
      await removeJobDir(dir);
      console.log(JSON.stringify({ gone: !existsSync(dir) }));
    `;
    chmodSync(base, 0o777);
    const node = [process.execPath, "--import", "tsx", "--input-type=module", "-e", code];
    const argv = process.getuid?.() === 0 ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", ...node] : node;
    const out = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(argv[0], argv.slice(1), { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d) => (stdout += d));
      child.stderr.on("data", (d) => (stderr += d));
      child.on("close", (code) => resolve({ code, stdout, stderr }));
    });
    expect(out.code, out.stderr).toBe(0);
    expect(JSON.parse(out.stdout)).toEqual({ gone: true });
  });
});

function runAgent(args: string[], env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code, stderr }));
  });
}
