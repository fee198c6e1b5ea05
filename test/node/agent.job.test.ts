// The agent end to end against a fake of the protocol's server side and a fake `terraform`: what the service
// receives (calls in order, log bytes and offsets, artifacts, the finish) and what Terraform is given (arguments,
// files, environment), for a plan, an apply, a cancel, a force-cancel, a lost claim and a refused archive.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Agent } from "../../agent/loop.ts";
import type { Job, JobVariable } from "../../agent/protocol.ts";
import { AGENT_TOKEN, FakeService, fakeTerraform, job, tarGz } from "./agent.fakes.ts";

let svc: FakeService;
let dir: string;
let jobsDir: string;
let recordFile: string;
let terraform: string;
let agent: Agent | null;
let running: Promise<void> | null;

const CONFIG = tarGz([
  { path: "main.tf", body: 'resource "null_resource" "a" {}\n' },
  { path: "modules/", type: "Directory" },
  { path: "modules/net/main.tf", body: "# a module\n" },
]);

beforeEach(async () => {
  svc = new FakeService();
  await svc.start();
  dir = mkdtempSync(join(tmpdir(), "agent-test-"));
  jobsDir = join(dir, "jobs");
  mkdirSync(jobsDir);
  recordFile = join(dir, "record.jsonl");
  terraform = fakeTerraform(dir);
  agent = null;
  running = null;
});

afterEach(async () => {
  agent?.interrupt();
  await running?.catch(() => {});
  await svc.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The job's env variables that steer the fake terraform. */
function fakeEnv(mode = "", extra: JobVariable[] = []): JobVariable[] {
  return [
    { key: "FAKE_RECORD", value: recordFile, category: "env", hcl: false, sensitive: false },
    { key: "FAKE_MODE", value: mode, category: "env", hcl: false, sensitive: false },
    ...extra,
  ];
}

function startAgent(env: NodeJS.ProcessEnv = process.env): Agent {
  agent = new Agent({
    url: svc.base,
    token: AGENT_TOKEN,
    name: "test-agent",
    terraform,
    terraformVersion: "1.11.4",
    tmpDir: jobsDir,
    heartbeatMs: 20,
    flushMs: 10,
    statusMs: 50,
    idleDelayMs: 5,
    retryDelayMs: 5,
    env,
  });
  running = agent.run();
  return agent;
}

function records(): { cmd: string; args: string[]; cwd: string; pid: number; [k: string]: any }[] {
  if (!existsSync(recordFile)) return [];
  return readFileSync(recordFile, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
}

async function finished(j: Job) {
  const state = svc.jobs.get(`${j.run}/${j.phase}`)!;
  await svc.until(() => state.finish !== null);
  agent!.stop();
  await running;
  return state;
}

describe("a plan job", () => {
  it("runs init, plan and show, streams the log at consecutive offsets, uploads the artifacts and finishes with the counts", async () => {
    const j = job({ variables: fakeEnv("big") });
    const state = svc.offer(j, CONFIG);
    startAgent();
    await finished(j);

    const seq = svc.sequence();
    const next = "POST /api/agent/agents/agent-fake0000000000/jobs/next";
    const finish = `POST /api/agent/jobs/${j.run}/plan/finish`;
    expect(seq.filter((c) => !c.endsWith("/logs")).slice(0, 8)).toEqual([
      "POST /api/agent/register",
      next,
      `GET /api/agent/jobs/${j.run}/plan/configuration`,
      `PUT /api/agent/jobs/${j.run}/plan/artifacts/plan-json`,
      `PUT /api/agent/jobs/${j.run}/plan/artifacts/plan-json-redacted`,
      `PUT /api/agent/jobs/${j.run}/plan/artifacts/plan-binary`,
      `PUT /api/agent/jobs/${j.run}/plan/artifacts/lock-file`,
      finish,
    ]);
    // Then only polls for the next job; every log append came after the download and before the finish.
    expect(seq.slice(seq.indexOf(finish) + 1).every((c) => c === next)).toBe(true);
    const logIdx = seq.flatMap((c, i) => (c.endsWith("/logs") ? [i] : []));
    expect(logIdx.length).toBeGreaterThan(0);
    expect(Math.min(...logIdx)).toBeGreaterThan(seq.indexOf(`GET /api/agent/jobs/${j.run}/plan/configuration`));
    expect(Math.max(...logIdx)).toBeLessThan(seq.indexOf(finish));
    // The agent reported itself busy while it ran the job and exited at the end.
    const statuses = svc.calls.filter((c) => c.path.endsWith("/status")).map((c) => JSON.parse(c.body.toString()).status);
    expect(statuses).toContain("busy");
    expect(statuses.at(-1)).toBe("exited");

    // Job calls carry the run token; agent calls the agent token.
    for (const c of svc.calls) {
      expect(c.auth).toBe(c.path.startsWith("/api/agent/jobs/") ? `Bearer ${j.token}` : `Bearer ${AGENT_TOKEN}`);
    }

    // The log: every byte Terraform printed, stdout and stderr, in order; each chunk at the end of the previous.
    const log = state.log.toString("utf8");
    expect(log).toContain("Initializing the backend...\n");
    expect(log).toContain("init: a line on stderr\n");
    expect(log).toContain(`${"x".repeat(100000)}\n`);
    expect(log.indexOf("Terraform has been successfully initialized!")).toBeLessThan(log.indexOf("Plan:"));
    expect(log).toContain("\u001b[1mPlan:\u001b[0m 1 to add, 1 to change, 2 to destroy.\n");
    let expected = 0;
    for (const a of state.appends) {
      expect(a.offset).toBe(expected);
      expected += a.length;
    }
    expect(expected).toBe(state.log.length);
    // 100 kB of output went in several chunks.
    expect(state.appends.length).toBeGreaterThan(1);
    // The JSON plan is an artifact, not log output.
    expect(log).not.toContain("resource_changes");

    expect(state.artifacts.get("plan-binary")?.toString()).toBe("PLANBIN");
    expect(JSON.parse(state.artifacts.get("plan-json")!.toString()).format_version).toBe("1.2");
    expect(state.artifacts.get("lock-file")?.toString()).toBe("# provider locks\n");
    // create, update, replace (add + destroy), delete, import; a no-op counts for nothing.
    expect(state.finish).toEqual({
      status: "finished",
      hasChanges: true,
      resourceAdditions: 2,
      resourceChanges: 1,
      resourceDestructions: 2,
      resourceImports: 1,
      // The version of the (pinned) Terraform that ran: the run's terraform-version from then on.
      terraformVersion: "1.11.4",
    });

    // Terraform ran in the unpacked configuration with the protocol's arguments.
    const [init, plan, show] = records();
    expect(init.cmd).toBe("init");
    expect(init.args).toEqual(["-input=false"]);
    expect(plan.args.slice(0, 3)).toEqual(["-input=false", "-lock=false", expect.stringMatching(/^-out=.*plan\.bin$/)]);
    expect(plan.files).toEqual([".terraform.lock.hcl", "main.tf", "modules", "zzz_agent_override.tf"]);
    expect(show.args).toEqual(["-json", expect.stringMatching(/plan\.bin$/)]);
    // The job's directory is gone.
    expect(readdirSync(jobsDir)).toEqual([]);
  });

  it("writes the cloud override and a CLI configuration with the run token, the host's services and the mirror", async () => {
    const j = job({ variables: fakeEnv() });
    svc.offer(j, CONFIG);
    agent = new Agent({
      url: svc.base,
      token: AGENT_TOKEN,
      name: "t",
      terraform,
      tmpDir: jobsDir,
      pluginMirror: "/srv/mirror",
      heartbeatMs: 20,
      flushMs: 10,
      idleDelayMs: 5,
    });
    running = agent.run();
    await finished(j);
    const plan = records().find((r) => r.cmd === "plan")!;
    expect(plan.override).toContain('hostname     = "localhost:8787"');
    expect(plan.override).toContain('organization = "acme"');
    expect(plan.override).toMatch(/workspaces \{\s+name = "net"\s+\}/);
    expect(plan.cliConfig).toContain(`credentials "localhost:8787" {\n  token = "${j.token}"\n}`);
    expect(plan.cliConfig).toContain('"tfe.v2.2" = "http://localhost:8787/api/v2/"');
    expect(plan.cliConfig).toContain('filesystem_mirror {\n    path = "/srv/mirror"');
    // The service's own registry stays a source beside the mirror, for its private providers.
    expect(plan.cliConfig).toContain('"providers.v1" = "http://localhost:8787/api/registry/v1/providers/"');
    expect(plan.cliConfig).toContain('direct {\n    include = ["localhost:8787/*/*"]');
  });

  it("runs in the workspace's working directory", async () => {
    const j = job({ variables: fakeEnv(), workspace: { ...job().workspace, workingDirectory: "modules/net" } });
    const state = svc.offer(j, CONFIG);
    startAgent();
    await finished(j);
    expect(state.finish?.status).toBe("finished");
    expect(records()[0].cwd).toMatch(/config\/modules\/net$/);
  });

  it("errors when Terraform fails, with its output in the log", async () => {
    const j = job({ variables: fakeEnv("fail") });
    const state = svc.offer(j, CONFIG);
    startAgent();
    await finished(j);
    expect(state.finish).toMatchObject({ status: "errored", error: "terraform plan exited with 1", hasChanges: false, resourceAdditions: 0 });
    expect(state.log.toString()).toContain("Error: something is wrong\n");
    expect(state.artifacts.size).toBe(0);
  });

  it("reads the provider schemas once per lock file: a second plan with the same providers reuses them", async () => {
    const other = tarGz([
      { path: "main.tf", body: 'resource "null_resource" "a" {}\n' },
      { path: ".terraform.lock.hcl", body: "# other provider locks\n" },
    ]);
    const jobs = [
      [job({ run: "run-TestRun00000001", variables: fakeEnv() }), CONFIG],
      [job({ run: "run-TestRun00000002", variables: fakeEnv() }), CONFIG],
      [job({ run: "run-TestRun00000003", variables: fakeEnv() }), other],
    ] as const;
    const states = jobs.map(([j, config]) => svc.offer(j, config));
    startAgent();
    await svc.until(() => states.every((s) => s.finish !== null));
    agent!.stop();
    await running;
    for (const s of states) {
      expect(s.finish).toMatchObject({ status: "finished" });
      expect(JSON.parse(s.artifacts.get("plan-json-redacted")!.toString())).toHaveProperty("resource_changes");
    }
    // The first and the third lock file ran `providers schema`; the second plan took the first's.
    const runs = records()
      .filter((r) => r.cmd === "show" || r.cmd === "providers")
      .map((r) => r.cmd);
    expect(runs).toEqual(["show", "providers", "show", "show", "providers"]);
  });
});

describe("variables", () => {
  it("go to var files and the environment, and never into the log, even when Terraform prints them", async () => {
    const secret = "s3cr3t-p@ss";
    const j = job({
      variables: [
        ...fakeEnv("leak"),
        { key: "FAKE_LEAK", value: secret, category: "env", hcl: false, sensitive: true },
        { key: "REGION", value: "eu-west-1", category: "env", hcl: false, sensitive: false },
        { key: "region", value: '"eu"', category: "terraform", hcl: true, sensitive: false },
        { key: "tags", value: '{ team = "net" }', category: "terraform", hcl: true, sensitive: false },
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal `${` that must stay literal in the var file
        { key: "motd", value: 'say "hi"\n${not a template}', category: "terraform", hcl: false, sensitive: false },
        { key: "password", value: "hunter2-hunter2", category: "terraform", hcl: false, sensitive: true },
      ],
      runVariables: [{ key: "n", value: "3" }],
    });
    const state = svc.offer(j, CONFIG);
    // The agent's own token must not reach Terraform, nor the operator's TF_* settings.
    startAgent({ ...process.env, AGENT_TOKEN, TF_VAR_x: "1", TF_CLI_ARGS: "-no-color", TF_PLUGIN_CACHE_DIR: "/cache" });
    await finished(j);

    const plan = records().find((r) => r.cmd === "plan")!;
    expect(plan.varFiles).toEqual([
      'region = "eu"\ntags = { team = "net" }\nmotd = "say \\"hi\\"\\n$${not a template}"\npassword = "hunter2-hunter2"\n',
      "n = 3\n",
    ]);
    // Workspace variables first, the run's later so they win; both outside the configuration.
    const varArgs = plan.args.filter((a: string) => a.startsWith("-var-file="));
    expect(varArgs).toEqual([expect.stringMatching(/workspace\.tfvars$/), expect.stringMatching(/run\.tfvars$/)]);
    expect(varArgs.every((a: string) => !a.includes("/config/"))).toBe(true);
    expect(plan.env).toEqual({
      TF_CLI_CONFIG_FILE: expect.stringMatching(/agent\.tfrc$/),
      TF_FORCE_LOCAL_BACKEND: "1",
      TF_IN_AUTOMATION: "1",
      TFE_RUN_ID: j.run,
      TFC_RUN_ID: j.run,
      TFC_WORKSPACE_NAME: "net",
      TFC_PROJECT_NAME: "Default Project",
      CHECKPOINT_DISABLE: "1",
      REGION: "eu-west-1",
    });
    expect(plan.keys).toContain("TF_PLUGIN_CACHE_DIR");
    expect(plan.keys).not.toContain("AGENT_TOKEN");
    expect(plan.keys).not.toContain("TF_VAR_x");
    expect(plan.keys).not.toContain("TF_CLI_ARGS");

    const log = state.log.toString();
    expect(log).toContain("the secret is *** and again ***\n");
    expect(log).not.toContain(secret);
    expect(log).not.toContain("hunter2");
    expect(log).not.toContain(j.token);
    expect(state.finish?.status).toBe("finished");
  });
});

describe("an apply job", () => {
  it("fetches the plan and lock file, runs init and apply, and finishes with the counts Terraform printed", async () => {
    const j = job({ phase: "apply", variables: fakeEnv(), runVariables: [{ key: "n", value: "3" }] });
    const state = svc.offer(j, CONFIG, { "plan-binary": Buffer.from("THE-PLAN"), "lock-file": Buffer.from("# locked\n") });
    startAgent();
    await finished(j);
    expect(svc.sequence().slice(1, 6)).toEqual([
      "POST /api/agent/agents/agent-fake0000000000/jobs/next",
      `GET /api/agent/jobs/${j.run}/apply/configuration`,
      `GET /api/agent/jobs/${j.run}/apply/artifacts/plan-binary`,
      `GET /api/agent/jobs/${j.run}/apply/artifacts/lock-file`,
      `POST /api/agent/jobs/${j.run}/apply/logs`,
    ]);
    const [init, apply] = records();
    // The plan's lock file is in place before init, so init installs the planned providers.
    expect(init.lockBefore).toBe("# locked\n");
    expect(apply.args).toEqual(["-input=false", "-lock=false", expect.stringMatching(/plan\.bin$/)]);
    expect(apply.plan).toBe("THE-PLAN");
    expect(state.log.toString()).toContain("Apply complete! Resources: 1 imported, 2 added, 1 changed, 3 destroyed.");
    expect(state.finish).toEqual({
      status: "finished",
      hasChanges: true,
      resourceAdditions: 2,
      resourceChanges: 1,
      resourceDestructions: 3,
      resourceImports: 1,
      terraformVersion: "1.11.4",
    });
  });

  it("keeps the state Terraform could not save with the run, and errors saying how to recover it", async () => {
    const j = job({ phase: "apply", variables: fakeEnv("state-refused") });
    const state = svc.offer(j, CONFIG, { "plan-binary": Buffer.from("THE-PLAN"), "lock-file": Buffer.from("# locked\n") });
    startAgent();
    await finished(j);
    expect(svc.sequence()).toContain(`PUT /api/agent/jobs/${j.run}/apply/artifacts/errored-state`);
    expect(state.artifacts.get("errored-state")?.toString()).toBe('{"version":4,"serial":7,"lineage":"l-1","resources":[]}\n');
    expect(state.finish).toMatchObject({ status: "errored", error: expect.stringContaining(`runs/${j.run}/errored-state`) });
    const log = state.log.toString();
    expect(log).toContain("Error saving state: 409 Conflict");
    expect(log).toContain("it is kept with this run as its errored state");
  });

  it("errors without a stored plan", async () => {
    const j = job({ phase: "apply", variables: fakeEnv() });
    const state = svc.offer(j, CONFIG);
    startAgent();
    await finished(j);
    expect(state.finish).toMatchObject({ status: "errored", error: "the plan phase stored no plan to apply" });
    expect(records()).toEqual([]);
  });
});

describe("signals", () => {
  it("cancel sends Terraform SIGINT and the job finishes canceled", async () => {
    const j = job({ variables: fakeEnv("hang") });
    const state = svc.offer(j, CONFIG);
    startAgent();
    await svc.until(() => state.log.toString().includes("planning..."));
    state.signal = "cancel";
    await finished(j);
    expect(records().filter((r) => r.got)).toMatchObject([{ cmd: "plan", got: "SIGINT" }]);
    expect(state.log.toString()).toContain("Interrupt received.\n");
    expect(state.finish).toMatchObject({ status: "canceled", hasChanges: false });
    // show never ran.
    expect(records().map((r) => r.cmd)).toEqual(["init", "plan", "plan"]);
  });

  it("force-cancel kills Terraform with SIGKILL", async () => {
    const j = job({ variables: fakeEnv("stubborn") });
    const state = svc.offer(j, CONFIG);
    startAgent();
    await svc.until(() => state.log.toString().includes("planning..."));
    state.signal = "force-cancel";
    await finished(j);
    const plan = records().find((r) => r.cmd === "plan")!;
    expect(alive(plan.pid)).toBe(false);
    expect(records().some((r) => r.got)).toBe(false);
    expect(state.finish?.status).toBe("canceled");
  });

  it("a lost claim (409) kills Terraform, reports nothing more and cleans up", async () => {
    const j = job({ variables: fakeEnv("stubborn") });
    const state = svc.offer(j, CONFIG);
    startAgent();
    await svc.until(() => state.log.toString().includes("planning..."));
    state.lost = true;
    const before = svc.calls.length;
    await svc.until(() => svc.calls.slice(before).some((c) => c.path.endsWith("/heartbeat") || c.path.endsWith("/logs")));
    agent!.stop();
    await running;
    const plan = records().find((r) => r.cmd === "plan")!;
    expect(alive(plan.pid)).toBe(false);
    expect(svc.calls.some((c) => c.path.endsWith("/finish"))).toBe(false);
    expect(state.finish).toBeNull();
    expect(readdirSync(jobsDir)).toEqual([]);
  });
});

describe("the configuration archive", () => {
  it("is refused when an entry escapes the directory: the job errors and nothing is written outside", async () => {
    const j = job({ variables: fakeEnv() });
    const state = svc.offer(
      j,
      tarGz([
        { path: "main.tf", body: "# ok\n" },
        { path: "../escaped.tf", body: "# evil\n" },
      ]),
    );
    startAgent();
    await finished(j);
    expect(state.finish).toMatchObject({ status: "errored", error: expect.stringContaining('"../escaped.tf" is outside the configuration directory') });
    expect(state.log.toString()).toContain("refusing to unpack the configuration");
    expect(records()).toEqual([]);
    expect(readdirSync(jobsDir)).toEqual([]);
    expect(existsSync(join(jobsDir, "escaped.tf"))).toBe(false);
  });

  it("is refused when a symlink points outside", async () => {
    const j = job({ variables: fakeEnv() });
    const state = svc.offer(j, tarGz([{ path: "passwd.tf", type: "SymbolicLink", linkpath: "../../../../etc/passwd" }]));
    startAgent();
    await finished(j);
    expect(state.finish).toMatchObject({ status: "errored", error: expect.stringContaining("outside the configuration directory") });
  });
});

describe("the agent token", () => {
  it("refused: the agent stops instead of polling on", async () => {
    agent = new Agent({ url: svc.base, token: "wrong", name: "t", terraform, idleDelayMs: 5, retryDelayMs: 1 });
    await expect(agent.run()).rejects.toThrow(/refused the agent token/);
    expect(svc.calls.map((c) => c.path)).toEqual(["/api/agent/register"]);
  });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
