#!/usr/bin/env node
/**
 * `npm run agent -- --url https://tf.example.com --token <agent token>`: runs remote runs' Terraform for the
 * service. Settings from flags, else the environment (AGENT_URL, AGENT_TOKEN, AGENT_NAME, AGENT_CONCURRENCY,
 * AGENT_PLUGIN_MIRROR, TERRAFORM, TF_PLUGIN_CACHE_DIR). SIGINT/SIGTERM: finish the running jobs, then exit; a second
 * one cancels them. Every job runs in a bubblewrap sandbox (agent/sandbox.ts); without one the agent does not start,
 * unless `--no-sandbox` says so, which an agent of the default pool (every organisation's jobs) refuses.
 */
import { spawnSync } from "node:child_process";
import { realpathSync } from "node:fs";
import { hostname } from "node:os";
import { parseArgs } from "node:util";
import { Agent, AgentRefusedError } from "./loop.ts";
import { checkSandbox, INSTALL_HINT, onPath, type Sandbox } from "./sandbox.ts";

const usage = `usage: workspace-agent --url URL --token TOKEN [--name NAME] [--concurrency N] [--plugin-mirror DIR] [--terraform PATH] [--no-sandbox]
  (or AGENT_URL, AGENT_TOKEN, AGENT_NAME, AGENT_CONCURRENCY, AGENT_PLUGIN_MIRROR, TERRAFORM, TF_PLUGIN_CACHE_DIR)
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
const concurrency = Number(values.concurrency ?? env.AGENT_CONCURRENCY ?? 1);
if (!Number.isInteger(concurrency) || concurrency < 1) fail("--concurrency must be a positive integer");
const wanted = values.terraform ?? env.TERRAFORM ?? "terraform";
// The binary itself, not a link to it: the sandbox binds this one file.
const found = onPath(wanted, env);
if (!found) fail(`cannot run ${wanted} (not found${wanted.includes("/") ? "" : " on PATH"})`);
const terraform = realpathSync(found);
const pluginMirror = values["plugin-mirror"] ?? env.AGENT_PLUGIN_MIRROR ?? null;
const pluginCacheDir = env.TF_PLUGIN_CACHE_DIR ?? null;

// The Terraform this agent runs, checked once (in the sandbox jobs get) so a missing binary or a sandbox that cannot
// work here fails now rather than in every job.
let terraformVersion: string | null = null;
let sandbox: Sandbox | null = null;
if (values["no-sandbox"]) {
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

const agent = new Agent({
  url,
  token,
  name: values.name ?? env.AGENT_NAME ?? hostname(),
  concurrency,
  terraform,
  terraformVersion,
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
  `workspace-agent: Terraform ${terraformVersion} (${terraform}); ${sandbox ? `each job in a sandbox (${sandbox.bwrap})` : "jobs NOT sandboxed (--no-sandbox)"}`,
);
try {
  await agent.run();
} catch (err) {
  if (err instanceof AgentRefusedError) fail(err.message);
  throw err;
}
