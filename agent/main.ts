#!/usr/bin/env node
/**
 * `npm run agent -- --url https://tf.example.com --token <agent token>`: runs remote runs' Terraform for the
 * service. Settings from flags, else the environment (AGENT_URL, AGENT_TOKEN, AGENT_NAME, AGENT_CONCURRENCY,
 * AGENT_PLUGIN_MIRROR, TERRAFORM, TF_PLUGIN_CACHE_DIR). SIGINT/SIGTERM: finish the running jobs, then exit; a second
 * one cancels them.
 */
import { spawnSync } from "node:child_process";
import { hostname } from "node:os";
import { parseArgs } from "node:util";
import { Agent, AgentRefusedError } from "./loop.ts";

const usage = `usage: workspace-agent --url URL --token TOKEN [--name NAME] [--concurrency N] [--plugin-mirror DIR] [--terraform PATH]
  (or AGENT_URL, AGENT_TOKEN, AGENT_NAME, AGENT_CONCURRENCY, AGENT_PLUGIN_MIRROR, TERRAFORM, TF_PLUGIN_CACHE_DIR)`;

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
const terraform = values.terraform ?? env.TERRAFORM ?? "terraform";

// The Terraform this agent runs, checked once so a missing binary fails here rather than in every job.
const probe = spawnSync(terraform, ["version", "-json"], { encoding: "utf8", env: { PATH: env.PATH ?? "", HOME: env.HOME ?? "", CHECKPOINT_DISABLE: "1" } });
let terraformVersion: string | null = null;
try {
  terraformVersion = (JSON.parse(probe.stdout) as { terraform_version?: string }).terraform_version ?? null;
} catch {}
if (probe.error || probe.status !== 0 || !terraformVersion) fail(`cannot run ${terraform} (${probe.error?.message ?? probe.stderr?.trim() ?? "no version"})`);

const agent = new Agent({
  url,
  token,
  name: values.name ?? env.AGENT_NAME ?? hostname(),
  concurrency,
  terraform,
  terraformVersion,
  pluginMirror: values["plugin-mirror"] ?? env.AGENT_PLUGIN_MIRROR ?? null,
  pluginCacheDir: env.TF_PLUGIN_CACHE_DIR ?? null,
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

console.log(`workspace-agent: Terraform ${terraformVersion} (${terraform})`);
try {
  await agent.run();
} catch (err) {
  if (err instanceof AgentRefusedError) fail(err.message);
  throw err;
}
