#!/usr/bin/env node
// `npm run bench:notify`: how long a run trigger and a notification take to follow the run that causes them, on the
// lean runtime (`node scripts/start.mjs` on a fresh store, no local agent: the bench is the agent of a pool, so its
// runs apply at once and nothing else runs). Over `--runs` runs (default 20) of a source workspace:
//   1. trigger: the source's run reaching `applied` (its `applied-at`) until the run it triggers in another workspace
//      is queued (that run's `created-at`): the source object's commit, its alarm, the target object's RPC;
//   2. notification: each run event until a local receiver holds its delivery (`run:created` from the run's
//      `created-at`, `run:completed` from its `applied-at`): the commit's delivery row, the alarm, the POST.
// Both clocks are this machine's. Results: bench/results/notify.md and .json, overwritten by each run; nothing is
// asserted. Linux/macOS.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { agentCall as agentCall_, cpuCount, startBenchServer } from "../scripts/lib/bench-server.mjs";
import { listen, waitFor as pollUntil } from "../scripts/lib/harness.mjs";
import { freePort, groups, killAllGroups, tail } from "../scripts/lib/service.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values: opt } = parseArgs({ options: { runs: { type: "string", default: "20" } } });
const RUNS = Number(opt.runs);
const log = (m) => console.log(`bench:notify: ${m}`);

const work = mkdtempSync(join(tmpdir(), "bench-notify-"));
const logFile = join(work, "server.log");
const port = await freePort();
const { server, adminToken, base } = startBenchServer({ root, port, store: join(work, "store"), logFile, env: { OUTBOUND_ALLOW_PRIVATE: "1" } });
groups.add(server.pid);
let serverExit = null;
server.on("exit", (code, sig) => (serverExit = `the server exited (${sig ?? code})`));
process.on("exit", () => {
  killAllGroups();
  rmSync(work, { recursive: true, force: true });
});
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => process.exit(130));

async function api(method, path, body) {
  const res = await fetch(`${base}/api/v2${path}`, {
    method,
    headers: { Authorization: `Bearer ${adminToken}`, "Content-Type": "application/vnd.api+json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}
/** @param {string} path @param {string} token @param {unknown} [json] */
const agentCall = (path, token, json = {}) => agentCall_(base, path, token, { json });
/** @template T @param {string} what @param {() => Promise<T> | T} fn */
const waitFor = (what, fn, timeoutMs = 60_000, everyMs = 20) =>
  pollUntil(what, fn, { timeoutMs, everyMs, ignoreErrors: true, abort: () => serverExit && `${serverExit} (${tail(logFile)})` });
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};
const stats = (xs) => ({ n: xs.length, p50: quantile(xs, 0.5), p99: quantile(xs, 0.99), min: Math.min(...xs), max: Math.max(...xs) });

// ---------------------------------------------------------------- the receiver
const arrivals = new Map(); // `${run}/${trigger}` -> ms
const receiver = createServer((req, res) => {
  let body = "";
  req.on("data", (d) => (body += d));
  req.on("end", () => {
    const now = Date.now();
    try {
      const p = JSON.parse(body);
      for (const n of p.notifications ?? []) if (p.run_id) arrivals.set(`${p.run_id}/${n.trigger}`, now);
    } catch {}
    res.writeHead(200).end("ok");
  });
});
const receiverUrl = `http://127.0.0.1:${await listen(receiver)}/hook`;

// ---------------------------------------------------------------- setup
await waitFor("the server", async () => (await fetch(`${base}/api/v2/ping`)).status < 500, 120_000, 200);
const org = "bench-notify";
await api("POST", "/organizations", { data: { type: "organizations", attributes: { name: org, email: "bench@example.com" } } });
const pool = (await api("POST", `/organizations/${org}/agent-pools`, { data: { type: "agent-pools", attributes: { name: "bench" } } })).data;
const poolToken = (
  await api("POST", `/agent-pools/${pool.id}/authentication-tokens`, { data: { type: "authentication-tokens", attributes: { description: "bench" } } })
).data.attributes.token;
const ws = async (name, attributes) =>
  (await api("POST", `/organizations/${org}/workspaces`, { data: { type: "workspaces", attributes: { name, ...attributes } } })).data;
const source = await ws("source", { "execution-mode": "agent", "agent-pool-id": pool.id, "auto-apply": true });
// The target's runs wait in its queue: no agent serves the default pool here.
const target = await ws("target", { "execution-mode": "remote" });
writeFileSync(join(work, "main.tf"), 'resource "null_resource" "n" {}\n');
const tgz = spawnSync("tar", ["-czf", "-", "-C", work, "main.tf"]).stdout;
for (const w of [source, target]) {
  const cv = (
    await api("POST", `/workspaces/${w.id}/configuration-versions`, { data: { type: "configuration-versions", attributes: { "auto-queue-runs": false } } })
  ).data;
  const put = await fetch(cv.attributes["upload-url"], { method: "PUT", body: tgz });
  if (!put.ok) throw new Error(`upload: ${put.status}`);
}
await api("POST", `/workspaces/${target.id}/run-triggers`, {
  data: { type: "run-triggers", relationships: { sourceable: { data: { type: "workspaces", id: source.id } } } },
});
await api("POST", `/workspaces/${source.id}/notification-configurations`, {
  data: {
    type: "notification-configurations",
    attributes: { name: "bench", "destination-type": "generic", enabled: true, url: receiverUrl, token: "bench", triggers: ["run:created", "run:completed"] },
  },
});
const agent = await agentCall("/register", poolToken, { name: "bench", version: "bench" });
const nextJob = () => waitFor("a job", () => agentCall(`/agents/${agent.id}/jobs/next?wait=5`, poolToken), 30_000, 0);

// ---------------------------------------------------------------- the runs
const trigger = [];
const created = [];
const completed = [];
const seenTargetRuns = new Set();
for (let i = 0; i < RUNS; i++) {
  const run = (
    await api("POST", "/runs", {
      data: { type: "runs", attributes: { message: `bench ${i}` }, relationships: { workspace: { data: { type: "workspaces", id: source.id } } } },
    })
  ).data;
  for (const phase of ["plan", "apply"]) {
    const job = await nextJob();
    if (job.run !== run.id || job.phase !== phase) throw new Error(`unexpected job ${job.run} ${job.phase}`);
    await agentCall(`/jobs/${job.run}/${job.phase}/finish`, job.token, {
      status: "finished",
      hasChanges: true,
      resourceAdditions: 1,
      resourceChanges: 0,
      resourceDestructions: 0,
      resourceImports: 0,
    });
  }
  const applied = await waitFor("the source run to apply", async () => {
    const r = (await api("GET", `/runs/${run.id}`)).data.attributes;
    return r.status === "applied" ? r : null;
  });
  const queued = await waitFor("the triggered run", async () => {
    const r = (await api("GET", `/workspaces/${target.id}/runs?page%5Bsize%5D=100`)).data.find((x) => !seenTargetRuns.has(x.id));
    return r ?? null;
  });
  seenTargetRuns.add(queued.id);
  await waitFor("the notifications", async () => arrivals.has(`${run.id}/run:created`) && arrivals.has(`${run.id}/run:completed`));
  const appliedAt = Date.parse(applied["status-timestamps"]["applied-at"]);
  trigger.push(Date.parse(queued.attributes["created-at"]) - appliedAt);
  created.push(arrivals.get(`${run.id}/run:created`) - Date.parse(applied["created-at"]));
  completed.push(arrivals.get(`${run.id}/run:completed`) - appliedAt);
  log(`run ${i + 1}/${RUNS}: trigger ${trigger.at(-1)} ms, run:created ${created.at(-1)} ms, run:completed ${completed.at(-1)} ms`);
}
receiver.close();

const result = {
  when: new Date().toISOString(),
  cpus: cpuCount(),
  runs: RUNS,
  triggerMs: stats(trigger),
  notificationCreatedMs: stats(created),
  notificationCompletedMs: stats(completed),
};
const row = (name, s) => `| ${name} | ${s.n} | ${s.p50} | ${s.p99} | ${s.min} | ${s.max} |`;
const md = `# Run triggers and notifications: latency

\`npm run bench:notify\` (bench/notify.mjs), ${result.when}, ${result.cpus} CPUs, ${RUNS} runs of a source workspace applied by the bench
acting as an agent of a pool, on the lean runtime.

| from → to | n | p50 ms | p99 ms | min | max |
|---|---|---|---|---|---|
${row("source run applied (`applied-at`) → triggered run queued (`created-at`)", result.triggerMs)}
${row("run created → its `run:created` notification received", result.notificationCreatedMs)}
${row("run applied → its `run:completed` notification received", result.notificationCompletedMs)}
`;
writeFileSync(join(root, "bench", "results", "notify.json"), `${JSON.stringify(result, null, 2)}\n`);
writeFileSync(join(root, "bench", "results", "notify.md"), md);
console.log(md);
process.exit(0);
