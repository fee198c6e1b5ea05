#!/usr/bin/env node
/**
 * `npm run agent -- --url https://tf.example.com --token <agent token>` (or the single file `npm run build:agent`
 * makes): runs remote runs' Terraform for the service. Settings from flags, else the environment (AGENT_URL,
 * AGENT_TOKEN, AGENT_NAME, AGENT_CONCURRENCY, AGENT_PLUGIN_MIRROR, TERRAFORM, AGENT_TERRAFORM_CACHE,
 * AGENT_RELEASES_KEY, TF_PLUGIN_CACHE_DIR). Each job runs the Terraform version its run asks for, installed on first
 * use (agent/install.ts); `--terraform` pins the agent to one local binary instead (offline hosts), and a job asking
 * for another version then fails. SIGINT/SIGTERM: finish the running jobs, then exit; a second one cancels them.
 * Every job runs in a bubblewrap sandbox (agent/sandbox.ts); without one the agent does not start, unless
 * `--no-sandbox` says so, which an agent of the default pool (every organisation's jobs) refuses.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, realpathSync } from "node:fs";
import { availableParallelism, homedir, hostname } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { HASHICORP_RELEASES_KEY } from "./hashicorp-key.ts";
import { TerraformInstaller } from "./install.ts";
import { Agent, AgentRefusedError } from "./loop.ts";
import { checkSandbox, INSTALL_HINT, onPath, probeVersion, type Sandbox } from "./sandbox.ts";

/** Jobs at once unless told: the host's cores, at least 2 (a long apply must not hold every other workspace's plan). */
export const DEFAULT_CONCURRENCY = Math.max(2, availableParallelism());

const usage = `usage: workspace-agent --url URL --token TOKEN [--name NAME] [--concurrency N] [--plugin-mirror DIR]
                       [--terraform PATH | --terraform-cache DIR] [--releases-key FILE] [--no-sandbox]
  (or AGENT_URL, AGENT_TOKEN, AGENT_NAME, AGENT_CONCURRENCY, AGENT_PLUGIN_MIRROR, TERRAFORM, AGENT_TERRAFORM_CACHE,
   AGENT_RELEASES_KEY, TF_PLUGIN_CACHE_DIR)
  --concurrency: jobs at once (default: the host's cores, at least 2; now ${DEFAULT_CONCURRENCY})
  --terraform: run every job with this binary (offline hosts); a job asking for another version fails
  --terraform-cache: where the versions jobs ask for are installed (default ~/.cache/workspace-agent/terraform)
  --releases-key: armored OpenPGP keys trusted to sign releases' SHA256SUMS (default HashiCorp's)
  --no-sandbox: run jobs unsandboxed, for a single organisation's own agent pool only (docs/running.md, "Agents")`;

function fail(message: string): never {
  console.error(`workspace-agent: ${message}`);
  process.exit(2);
}

const { values } = (() => {
  try {
    return parseArgs({
      options: {
        url: { type: "string" },
        token: { type: "string" },
        name: { type: "string" },
        concurrency: { type: "string" },
        "plugin-mirror": { type: "string" },
        terraform: { type: "string" },
        "terraform-cache": { type: "string" },
        "releases-key": { type: "string" },
        "no-sandbox": { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
    });
  } catch (err) {
    return fail(`${(err as Error).message}\n${usage}`);
  }
})();
if (values.help) {
  console.log(usage);
  process.exit(0);
}

const env = process.env;
const url = values.url ?? env.AGENT_URL;
const token = values.token ?? env.AGENT_TOKEN;
if (!url || !token) fail(`--url and --token are required\n${usage}`);
const concurrency = Number(values.concurrency ?? env.AGENT_CONCURRENCY ?? DEFAULT_CONCURRENCY);
if (!Number.isInteger(concurrency) || concurrency < 1) fail("--concurrency must be a positive integer");
const wanted = values.terraform ?? env.TERRAFORM ?? null;
// The binary itself, not a link to it: the sandbox binds this one file.
let terraform: string | null = null;
if (wanted) {
  const found = onPath(wanted, env);
  if (!found) fail(`cannot run ${wanted} (not found${wanted.includes("/") ? "" : " on PATH"})`);
  terraform = realpathSync(found);
}
const pluginMirror = values["plugin-mirror"] ?? env.AGENT_PLUGIN_MIRROR ?? null;
const pluginCacheDir = env.TF_PLUGIN_CACHE_DIR ?? null;
const cacheDir =
  values["terraform-cache"] ?? env.AGENT_TERRAFORM_CACHE ?? join(env.XDG_CACHE_HOME || join(homedir(), ".cache"), "workspace-agent", "terraform");
const keyFile = values["releases-key"] ?? env.AGENT_RELEASES_KEY ?? null;
let releasesKeys = HASHICORP_RELEASES_KEY;
if (keyFile) {
  try {
    releasesKeys = readFileSync(keyFile, "utf8");
  } catch (err) {
    fail(`cannot read --releases-key ${keyFile}: ${(err as Error).message}`);
  }
}

// The pinned Terraform, when there is one, checked once (in the sandbox jobs get) so a missing binary or a sandbox
// that cannot work here fails now rather than in every job.
let terraformVersion: string | null = null;
let sandbox: Sandbox | null = null;
if (values["no-sandbox"] && !terraform) {
  // Versions are installed per job; nothing to check now.
} else if (values["no-sandbox"] && terraform) {
  const probe = spawnSync(terraform, ["version", "-json"], { encoding: "utf8", env: { PATH: env.PATH ?? "", HOME: env.HOME ?? "", CHECKPOINT_DISABLE: "1" } });
  try {
    terraformVersion = (JSON.parse(probe.stdout) as { terraform_version?: string }).terraform_version ?? null;
  } catch {}
  if (probe.error || probe.status !== 0 || !terraformVersion) fail(`cannot run ${terraform} (${probe.error?.message ?? probe.stderr?.trim() ?? "no version"})`);
} else {
  const check = await checkSandbox({ terraform, readOnly: [pluginMirror, pluginCacheDir, env.SSL_CERT_FILE, env.SSL_CERT_DIR], env });
  if (!check.ok) {
    fail(
      `jobs run in a sandbox, and none works here: ${check.reason}.\n  ${INSTALL_HINT.replace(/^i/, "I")}; an agent of a single organisation's own pool may run without one: --no-sandbox`,
    );
  }
  sandbox = check.sandbox;
  terraformVersion = check.terraformVersion;
}
const jobSandbox = sandbox;
const installer = terraform
  ? null
  : new TerraformInstaller({
      cacheDir,
      releasesKeys,
      probe: (bin, dir) => probeVersion(bin, dir, jobSandbox, env),
      log: (m) => console.log(m),
    });

const agent = new Agent({
  url,
  token,
  name: values.name ?? env.AGENT_NAME ?? hostname(),
  concurrency,
  terraform,
  terraformVersion,
  installer,
  pluginMirror,
  pluginCacheDir,
  sandbox,
  log: (m) => console.log(m),
});

let signals = 0;
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.on(sig, () => {
    signals++;
    if (signals === 1) {
      console.log(`${sig}: finishing the running jobs, then exiting (again to cancel them)`);
      agent.stop();
    } else agent.interrupt();
  });
}

// Started by `npm start` (scripts/lib/agent.mjs): stdin ends when that process dies, even by SIGKILL.
if (env.AGENT_LIFELINE === "stdin") {
  process.stdin.on("end", () => agent.interrupt());
  process.stdin.resume();
}

console.log(
  `workspace-agent: ${terraform ? `Terraform ${terraformVersion} (${terraform}, pinned)` : `the Terraform each run asks for, installed in ${cacheDir}`}; ${concurrency} job(s) at once; ${sandbox ? `each job in a sandbox (${sandbox.bwrap})` : "jobs NOT sandboxed (--no-sandbox)"}`,
);
try {
  await agent.run();
} catch (err) {
  if (err instanceof AgentRefusedError) fail(err.message);
  throw err;
}
