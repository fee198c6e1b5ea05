#!/usr/bin/env node
// `npm run bench:runs` (also the last part of `npm run bench`): remote-run latencies on the lean runtime
// (`node scripts/start.mjs` on a fresh store, with its local agent), on a trivial configuration: one `null_resource`
// of the hashicorp/null stand-in (test/clients/null-provider, built once by scripts/lib/binaries.mjs).
//
//   1. claim: POST /runs through the API until an idle agent starts it (the run's `planning-at`, written by the
//      agent's claim), over `--runs` runs (default 20); target p50 and p99 ≤ 1 s.
//   2. logs: a log chunk appended by an agent (the bench acts as one of an agent pool, so it knows when it writes)
//      until (a) a reader polling every few milliseconds sees it (the server's part: append → readable) and (b) a
//      reader that polls as go-tfe's LogReader does (an immediate read after data, then 500 ms·2^(n/5) capped at
//      2 s) sees it (what a client observes), over `--chunks` chunks (default 40) at random gaps of 0-4 s.
//   3. apply: `terraform apply -auto-approve` with Terraform's `cloud` block against a `remote`-mode workspace
//      (run by the local agent) against the same apply with a local backend, `--applies` times each (default 5,
//      interleaved, after one warm-up each); target p50 difference ≤ 2 s. Each remote apply's time is split from the
//      run's status timestamps and the CLI's requests (through a recording proxy) to show where it goes.
//
// Targets are printed as PASS/FAIL, never asserted in a test. Results: bench/results/runs.md and .json, overwritten
// by each run. Needs Terraform >= 1.10 on PATH (or TERRAFORM) and Go for the stand-in's first build. Linux/macOS.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { ensureNullProvider, ensureTerraform } from "../scripts/lib/binaries.mjs";
import { agentCall as agentCall_, cpuCount, generationConfig, startBenchServer } from "../scripts/lib/bench-server.mjs";
import { waitFor as pollUntil } from "../scripts/lib/harness.mjs";
import { cliEnvironment } from "../scripts/lib/cli-config.mjs";
import { startRecordingProxy } from "../scripts/lib/proxy.mjs";
import { freePort, groups, killAllGroups, sleep, stopGroup, tail } from "../scripts/lib/service.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values: opt } = parseArgs({
  options: {
    runs: { type: "string", default: "20" },
    chunks: { type: "string", default: "40" },
    applies: { type: "string", default: "5" },
    only: { type: "string" }, // claim,logs,apply
  },
});
const ONLY = new Set((opt.only ?? "claim,logs,apply").split(","));
const TARGETS = { claimMs: 1000, applyOverheadMs: 2000 };
// What Terraform's `cloud` block (internal/cloud) sleeps in every remote apply whatever the server does: 500 ms before
// its first read of the uploaded configuration version (planConfigurationVersionsPollInterval), and 1 s before the
// first read of `waitForRun` (backoff(1000, 3000, 0)), which runs once before the plan's log and once before the
// apply's.
const CLIENT_SLEEPS_MS = 500 + 1000 + 1000;
const log = (m) => console.log(`bench:runs: ${m}`);

// ---------------------------------------------------------------- binaries, server, proxy
const terraform = ensureTerraform(log);
const nullProvider = ensureNullProvider(log);
const work = mkdtempSync(join(tmpdir(), "bench-runs-"));
const storeDir = join(work, "store");
const logFile = join(work, "server.log");
const port = await freePort();
const { server, adminToken, base } = startBenchServer({ root, port, store: storeDir, logFile, terraform: terraform.path, mirror: nullProvider.mirror });
groups.add(server.pid);
let serverExit = null;
server.on("exit", (code, signal) => (serverExit = `the server exited (${signal ?? code})`));
/** @type {Awaited<ReturnType<typeof startRecordingProxy>> | null} */
let proxy = null;
const cleanup = () => {
  killAllGroups();
  rmSync(work, { recursive: true, force: true });
};
process.on("exit", cleanup);
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => process.exit(130));

// ---------------------------------------------------------------- HTTP
let token = adminToken;
async function api(method, path, body, okStatuses = [200, 201, 202, 204]) {
  const res = await fetch(`${base}/api/v2${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/vnd.api+json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  if (!okStatuses.includes(res.status)) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}
/** @param {string} path @param {string} agentToken @param {{ json?: unknown, bytes?: Uint8Array }} [body] */
const agentCall = (path, agentToken, body) => agentCall_(base, path, agentToken, body);
/** @template T @param {string} what @param {() => Promise<T> | T} fn */
const waitFor = (what, fn, timeoutMs = 120_000, everyMs = 100) => pollUntil(what, fn, { timeoutMs, everyMs, abort: () => serverExit });
const runOf = async (id) => (await api("GET", `/runs/${id}`)).data;
const FINAL = ["applied", "planned_and_finished", "discarded", "errored", "canceled"];

// ---------------------------------------------------------------- statistics
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : null;
};
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  if (!s.length) return null;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const stats = (xs) => ({ n: xs.length, p50: quantile(xs, 0.5), p99: quantile(xs, 0.99), min: Math.min(...xs), max: Math.max(...xs) });

// ---------------------------------------------------------------- the configuration
const MAIN_TF = generationConfig("bench");
function tarGz(dir) {
  const r = spawnSync("tar", ["-czf", "-", "-C", dir, "."], { maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`tar failed: ${r.stderr}`);
  return r.stdout;
}
/** An uploaded configuration version of `dir` in `wsId`. */
async function uploadedCv(wsId, dir) {
  const cv = (
    await api("POST", `/workspaces/${wsId}/configuration-versions`, { data: { type: "configuration-versions", attributes: { "auto-queue-runs": false } } })
  ).data;
  const put = await fetch(cv.attributes["upload-url"], { method: "PUT", headers: { "Content-Type": "application/octet-stream" }, body: tarGz(dir) });
  if (!put.ok) throw new Error(`upload: ${put.status} ${await put.text()}`);
  await waitFor(
    "the configuration version to be uploaded",
    async () => (await api("GET", `/configuration-versions/${cv.id}`)).data.attributes.status === "uploaded",
  );
  return cv.id;
}
const createRun = (wsId, cvId, message) =>
  api("POST", "/runs", {
    data: {
      type: "runs",
      attributes: { message },
      relationships: { workspace: { data: { type: "workspaces", id: wsId } }, "configuration-version": { data: { type: "configuration-versions", id: cvId } } },
    },
  });
const workspace = async (org, name, attributes) =>
  (await api("POST", `/organizations/${org}/workspaces`, { data: { type: "workspaces", attributes: { name, ...attributes } } })).data;

// ---------------------------------------------------------------- 1. run creation → claimed by an idle agent
async function benchClaim(org, n) {
  const ws = await workspace(org, "bench-claim", { "execution-mode": "remote", "auto-apply": false });
  const dir = join(work, "claim");
  mkdirSync(dir);
  writeFileSync(join(dir, "main.tf"), MAIN_TF);
  const cv = await uploadedCv(ws.id, dir);
  const samples = [];
  for (let i = -1; i < n; i++) {
    // The agent is idle (its previous job finished); a random pause puts the creation anywhere in its long poll.
    await sleep(Math.random() * 1000);
    const t0 = Date.now();
    const created = (await createRun(ws.id, cv, `bench claim ${i}`)).data;
    const tCreated = Date.now();
    const run = await waitFor(
      `run ${created.id} to finish its plan`,
      async () => {
        const r = await runOf(created.id);
        return ["planned", ...FINAL].includes(r.attributes.status) ? r : null;
      },
      120_000,
      200,
    );
    if (run.attributes.status === "planned") await api("POST", `/runs/${created.id}/actions/discard`, {});
    else if (run.attributes.status === "errored") throw new Error(`run ${created.id} errored; server log:\n${tail(logFile)}`);
    await waitFor(`run ${created.id} to be final`, async () => FINAL.includes((await runOf(created.id)).attributes.status), 60_000, 100);
    const ts = run.attributes["status-timestamps"];
    const claimed = Date.parse(ts["planning-at"]);
    if (i < 0) continue; // warm-up: the first run also starts the workspace's object and the agent's first poll
    samples.push({ run: created.id, postMs: tCreated - t0, claimMs: claimed - t0, queuedToClaimMs: claimed - Date.parse(ts["plan-queued-at"]) });
    log(`claim ${i + 1}/${n}: ${claimed - t0} ms (POST ${tCreated - t0} ms)`);
  }
  return {
    n,
    claim: stats(samples.map((s) => s.claimMs)),
    post: stats(samples.map((s) => s.postMs)),
    queuedToClaim: stats(samples.map((s) => s.queuedToClaimMs)),
    samples,
  };
}

// ---------------------------------------------------------------- 2. log chunk → visible to readers
/** go-tfe's backoff (logreader.go): min·2^(iter/5) ms, capped at max. */
const backoff = (min, max, iter) => Math.min(min * 2 ** (iter / 5), max);

/**
 * Reads a log URL as go-tfe's LogReader does, calling `onText(text, at)` for every piece; resolves at the end of the
 * log (ETX read and `done()` true). Each `Read` first reads at once; while nothing comes it waits backoff(500, 2000,
 * reads) between reads, `reads` counting from 1 and kept across Reads, as the struct field is.
 */
async function goTfeReader(url, done, onText) {
  const NO_PROGRESS = Symbol("no progress");
  const EOF = Symbol("eof");
  const limit = 64 * 1024; // Terraform reads the log through a 64 KiB bufio.Reader
  let offset = 0;
  let reads = 0;
  let startOfText = false;
  let endOfText = false;
  const read = async () => {
    const u = new URL(url);
    u.search = `limit=${limit}&offset=${offset}`;
    const res = await fetch(u);
    if (!res.ok) throw new Error(`log read ${res.status}`);
    let b = Buffer.from(await res.arrayBuffer());
    if (b.length > 0) {
      if (!startOfText && b[0] === 2) {
        startOfText = true;
        b = b.subarray(1);
        offset++;
        if (b.length === 0) return NO_PROGRESS;
      }
      if (startOfText && b[b.length - 1] === 3) {
        endOfText = true;
        b = b.subarray(0, -1);
        offset++;
      }
    }
    if (b.length > 0) {
      offset += b.length;
      onText(b.toString("utf8"), Date.now());
      return b.length;
    }
    if ((startOfText && endOfText) || (startOfText && reads % 10 === 0) || (!startOfText && reads > 1)) {
      if (await done()) return EOF;
    }
    return NO_PROGRESS;
  };
  for (;;) {
    let r = await read();
    if (r === EOF) return;
    if (r !== NO_PROGRESS) continue;
    for (reads = 1; ; reads++) {
      await sleep(backoff(500, 2000, reads));
      r = await read();
      if (r === EOF) return;
      if (r !== NO_PROGRESS) break;
    }
  }
}

/** Polls the log every `everyMs` from the offset it reached; stops when `stop()` says so. */
async function tightReader(url, everyMs, stop, onText) {
  let offset = 0;
  while (!stop()) {
    const u = new URL(url);
    u.search = `offset=${offset}`;
    const b = Buffer.from(await (await fetch(u)).arrayBuffer());
    if (b.length) {
      offset += b.length;
      onText(b.toString("utf8"), Date.now());
    } else await sleep(everyMs);
  }
}

async function benchLogs(org, n, maxGapMs) {
  // An agent pool's workspace: the local agent serves only the default pool, so the bench is this pool's agent.
  const pool = (await api("POST", `/organizations/${org}/agent-pools`, { data: { type: "agent-pools", attributes: { name: "bench-pool" } } })).data;
  const poolToken = (
    await api("POST", `/agent-pools/${pool.id}/authentication-tokens`, { data: { type: "authentication-tokens", attributes: { description: "bench" } } })
  ).data.attributes.token;
  const ws = await workspace(org, "bench-logs", { "execution-mode": "agent", "agent-pool-id": pool.id });
  const dir = join(work, "logs");
  mkdirSync(dir);
  writeFileSync(join(dir, "main.tf"), MAIN_TF);
  const cv = await uploadedCv(ws.id, dir);
  const run = (await createRun(ws.id, cv, "bench logs")).data;
  const agent = await agentCall("/register", poolToken, { json: { name: "bench", version: "bench" } });
  const job = await waitFor("the bench's job", () => agentCall(`/agents/${agent.id}/jobs/next?wait=5`, poolToken).catch(() => null), 30_000, 0);
  const plan = (await api("GET", `/plans/${job.run.replace(/^run-/, "plan-")}`)).data;
  const url = plan.attributes["log-read-url"];

  // Chunk k carries the marker «k»; each reader notes when it first sees each marker.
  const written = [];
  const acked = [];
  const seen = { tight: [], gotfe: [] };
  const watcher = (name) => {
    let text = "";
    return (piece, at) => {
      text += piece;
      for (const m of text.matchAll(/«(\d+)»/g)) if (seen[name][Number(m[1])] === undefined) seen[name][Number(m[1])] = at;
      text = text.slice(Math.max(0, text.lastIndexOf("«")));
    };
  };
  let writing = true;
  const planDone = async () => ["finished", "errored", "canceled", "unreachable"].includes((await api("GET", `/plans/${plan.id}`)).data.attributes.status);
  const readers = Promise.all([tightReader(url, 5, () => !writing, watcher("tight")), goTfeReader(url, planDone, watcher("gotfe"))]);
  let sent = 0;
  for (let k = 0; k < n; k++) {
    await sleep(Math.random() * maxGapMs);
    const bytes = Buffer.from(`bench log line «${k}» ${"·".repeat(60)}\n`);
    written[k] = Date.now();
    const res = await agentCall(`/jobs/${job.run}/${job.phase}/logs?offset=${sent}`, job.token, { bytes });
    acked[k] = Date.now();
    sent = res.size;
  }
  // Let both readers see the last chunk before the log ends.
  await waitFor("the readers to see the last chunk", () => seen.tight[n - 1] !== undefined && seen.gotfe[n - 1] !== undefined, 10_000, 20);
  writing = false;
  await agentCall(`/jobs/${job.run}/${job.phase}/finish`, job.token, {
    json: { status: "finished", hasChanges: false, resourceAdditions: 0, resourceChanges: 0, resourceDestructions: 0, resourceImports: 0 },
  });
  await readers;
  await agentCall(`/agents/${agent.id}/status`, poolToken, { json: { status: "exited" } });
  const lat = (name) => written.map((t, k) => seen[name][k] - t);
  return {
    n,
    maxGapMs,
    run: run.id,
    appendMs: stats(acked.map((t, k) => t - written[k])),
    tight: stats(lat("tight")),
    gotfe: stats(lat("gotfe")),
  };
}

// ---------------------------------------------------------------- 3. remote apply vs local apply
function terraformRun(dir, args, env) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const child = spawn(terraform.path, args, { cwd: dir, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    groups.add(child.pid);
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.on("close", (code) => {
      groups.delete(child.pid);
      resolve({ code, out, ms: performance.now() - t0, startedAt: Date.now() - (performance.now() - t0), endedAt: Date.now() });
    });
  });
}
async function tfOk(dir, args, env) {
  const r = await terraformRun(dir, args, env);
  if (r.code !== 0) throw new Error(`terraform ${args.join(" ")} in ${dir} exited ${r.code}:\n${r.out.slice(-3000)}`);
  return r;
}

async function benchApply(org, n) {
  proxy = await startRecordingProxy({ target: base });
  const ws = await workspace(org, "bench-apply", { "execution-mode": "remote" });
  const { host, env } = cliEnvironment({ proxy, token, mirror: nullProvider.mirror, dir: work });
  const remoteDir = join(work, "apply-remote");
  const localDir = join(work, "apply-local");
  mkdirSync(remoteDir);
  mkdirSync(localDir);
  writeFileSync(join(localDir, "main.tf"), MAIN_TF);
  writeFileSync(
    join(remoteDir, "main.tf"),
    `terraform {\n  cloud {\n    hostname     = ${JSON.stringify(host)}\n    organization = ${JSON.stringify(org)}\n    workspaces {\n      name = ${JSON.stringify(ws.attributes.name)}\n    }\n  }\n}\n\n${MAIN_TF}`,
  );
  for (const dir of [remoteDir, localDir]) await tfOk(dir, ["init", "-input=false", "-no-color"], env);
  const applyArgs = (g) => ["apply", "-auto-approve", "-input=false", "-no-color", "-var", `generation=${g}`];
  const rows = [];
  for (let i = -1; i < n; i++) {
    const g = String(i + 2);
    const mark = proxy.mark();
    const remote = await tfOk(remoteDir, applyArgs(g), env);
    const local = await tfOk(localDir, applyArgs(g), env);
    for (const [what, r] of [
      ["remote", remote],
      ["local", local],
    ]) {
      if (!/Apply complete! Resources: 1 added, 0 changed, (0|1) destroyed\./.test(r.out))
        throw new Error(`the ${what} apply did not apply:\n${r.out.slice(-2000)}`);
    }
    const runId = /\/runs\/(run-[A-Za-z0-9]+)/.exec(remote.out)?.[1];
    if (!runId) throw new Error(`no run URL in the remote apply's output:\n${remote.out.slice(-2000)}`);
    const breakdown = await remoteBreakdown(runId, remote, mark);
    if (i < 0) continue; // warm-up
    rows.push({ run: runId, remoteMs: remote.ms, localMs: local.ms, differenceMs: remote.ms - local.ms, breakdown });
    log(`apply ${i + 1}/${n}: remote ${remote.ms.toFixed(0)} ms, local ${local.ms.toFixed(0)} ms (+${(remote.ms - local.ms).toFixed(0)} ms)`);
  }
  // The agent's own account of each job (its log line `<run> <phase>: finished in N ms (step ms, …)`).
  const agentLog = readFileSync(logFile, "utf8");
  const agentSteps = {};
  for (const phase of ["plan", "apply"]) {
    const per = {};
    const add = (name, ms) => {
      per[name] = [...(per[name] ?? []), ms];
    };
    for (const { run } of rows) {
      const m = new RegExp(`agent: ${run} ${phase}: finished in (\\d+) ms \\(([^)]*)\\)`).exec(agentLog);
      if (!m) continue;
      add("total", Number(m[1]));
      for (const part of m[2].split(", ")) {
        const [, name, ms] = /^(.*) (\d+)$/.exec(part) ?? [];
        if (name) add(name, Number(ms));
      }
    }
    agentSteps[phase] = Object.fromEntries(Object.entries(per).map(([k, v]) => [k, median(v)]));
  }
  return {
    n,
    agentSteps,
    remoteMs: median(rows.map((r) => r.remoteMs)),
    localMs: median(rows.map((r) => r.localMs)),
    differenceMs: median(rows.map((r) => r.differenceMs)),
    breakdown: Object.fromEntries(Object.keys(rows[0].breakdown).map((k) => [k, median(rows.map((r) => r.breakdown[k]))])),
    rows,
  };
}

/**
 * Where one remote apply's time went, in ms, from the CLI's start: its requests (through the proxy), the run's and
 * phases' status timestamps.
 */
async function remoteBreakdown(runId, cli, mark) {
  const run = (await runOf(runId)).attributes["status-timestamps"];
  const plan = (await api("GET", `/plans/${runId.replace(/^run-/, "plan-")}`)).data.attributes["status-timestamps"];
  const apply = (await api("GET", `/applies/${runId.replace(/^run-/, "apply-")}`)).data.attributes["status-timestamps"];
  const recs = proxy.records.filter((r) => r.seq > mark);
  const at = (pred) => recs.find(pred)?.at ?? Number.NaN;
  const lastAt = (pred) => recs.filter(pred).at(-1)?.at ?? Number.NaN;
  const path = (r) => r.path.split("?")[0];
  const t = {
    cli: cli.startedAt,
    cvCreate: at((r) => r.method === "POST" && /\/configuration-versions$/.test(path(r))),
    runCreate: at((r) => r.method === "POST" && path(r) === "/api/v2/runs"),
    claimed: Date.parse(run["planning-at"]),
    planLogFirstRead: at((r) => r.method === "GET" && path(r).startsWith("/_logs/") && path(r).includes("/plan/")),
    planEnded: Date.parse(plan["finished-at"]),
    planLogLastRead: lastAt((r) => r.method === "GET" && path(r).startsWith("/_logs/") && path(r).includes("/plan/")),
    applyClaimed: Date.parse(run["applying-at"]),
    applyEnded: Date.parse(apply["finished-at"]),
    applyLogLastRead: lastAt((r) => r.method === "GET" && path(r).startsWith("/_logs/") && path(r).includes("/apply/")),
    end: cli.endedAt,
  };
  return {
    "CLI start → POST configuration-versions": t.cvCreate - t.cli,
    "→ POST runs (upload, the CLI's 500 ms CV poll)": t.runCreate - t.cvCreate,
    "→ plan claimed by the agent": t.claimed - t.runCreate,
    "→ plan finished on the agent": t.planEnded - t.claimed,
    "→ the CLI reads the plan log's end": t.planLogLastRead - t.planEnded,
    "plan finished → apply claimed": t.applyClaimed - t.planEnded,
    "→ apply finished on the agent": t.applyEnded - t.applyClaimed,
    "→ the CLI reads the apply log's end": t.applyLogLastRead - t.applyEnded,
    "→ CLI exit": t.end - t.applyLogLastRead,
  };
}

// ---------------------------------------------------------------- run
const result = { date: new Date().toISOString(), terraform: terraform.version };
try {
  await waitFor(
    "the server",
    async () => {
      try {
        return (await fetch(`${base}/api/v2/ping`, { headers: { Authorization: `Bearer ${token}` } })).status === 204;
      } catch {
        return false;
      }
    },
    180_000,
    300,
  );
  const ORG = `bench-runs-${Date.now().toString(36)}`;
  // An ordinary user who owns the organisation, as a person running Terraform would be.
  const me = (await api("POST", "/admin/users", { data: { type: "users", attributes: { username: ORG, email: `${ORG}@example.com` } } })).data.id;
  token = (await api("POST", `/users/${me}/authentication-tokens`, { data: { type: "authentication-tokens", attributes: { description: "bench" } } })).data
    .attributes.token;
  await api("POST", "/organizations", { data: { type: "organizations", attributes: { name: ORG, email: "bench@example.com" } } });
  await waitFor("the local agent to register", () => /agent: registered as/.test(readFileSync(logFile, "utf8")), 60_000, 200);
  if (ONLY.has("claim")) result.claim = await benchClaim(ORG, Number(opt.runs));
  if (ONLY.has("logs")) result.logs = await benchLogs(ORG, Number(opt.chunks), 4000);
  if (ONLY.has("apply")) result.apply = await benchApply(ORG, Number(opt.applies));
} catch (err) {
  console.error(`bench:runs: ${err.stack ?? err}\nserver log:\n${tail(logFile, 60)}`);
  process.exitCode = 1;
} finally {
  await proxy?.close();
  await stopGroup(server.pid);
}
if (process.exitCode) process.exit(1);

// ---------------------------------------------------------------- report
const f = (x, d = 0) => (x === null || x === undefined || Number.isNaN(x) ? "n/a" : x.toFixed(d));
const verdict = (ok) => (ok ? "PASS" : "FAIL");
const md = [`# Remote runs bench ${result.date.slice(0, 10)}: npm start (lean runtime) and its local agent, Terraform ${result.terraform}`, ""];
md.push(
  `Local run on a ${cpuCount()}-core machine; the bench, the server, the agent and Terraform share it. Times in ms. The configuration: one \`null_resource\` (the hashicorp/null stand-in).`,
  "",
);
if (result.claim) {
  const c = result.claim;
  md.push(
    `## 1. Run creation → an idle agent starts it (${c.n} runs)`,
    "",
    "From the client sending `POST /runs` to the run's `planning-at` (the agent's claim), the run created in a `remote` workspace with the local agent idle in its long poll.",
    "",
    "| | p50 | p99 | min | max |",
    "|---|---:|---:|---:|---:|",
    `| POST /runs → claimed | ${f(c.claim.p50)} | ${f(c.claim.p99)} | ${f(c.claim.min)} | ${f(c.claim.max)} |`,
    `| of which POST /runs (answered) | ${f(c.post.p50)} | ${f(c.post.p99)} | ${f(c.post.min)} | ${f(c.post.max)} |`,
    `| plan-queued-at → planning-at | ${f(c.queuedToClaim.p50)} | ${f(c.queuedToClaim.p99)} | ${f(c.queuedToClaim.min)} | ${f(c.queuedToClaim.max)} |`,
    "",
  );
}
if (result.logs) {
  const l = result.logs;
  md.push(
    `## 2. Log chunk appended → visible (${l.n} chunks, random gaps of 0-${l.maxGapMs / 1000} s)`,
    "",
    "From the agent sending `POST /api/agent/jobs/:run/plan/logs` to each reader first holding the chunk.",
    "",
    "| | p50 | p99 | min | max |",
    "|---|---:|---:|---:|---:|",
    `| append answered (the chunk is committed, so readable) | ${f(l.appendMs.p50)} | ${f(l.appendMs.p99)} | ${f(l.appendMs.min)} | ${f(l.appendMs.max)} |`,
    `| server side: a reader polling every 5 ms sees it | ${f(l.tight.p50)} | ${f(l.tight.p99)} | ${f(l.tight.min)} | ${f(l.tight.max)} |`,
    `| client: a reader polling as go-tfe's LogReader sees it | ${f(l.gotfe.p50)} | ${f(l.gotfe.p99)} | ${f(l.gotfe.min)} | ${f(l.gotfe.max)} |`,
    "",
    "The client's latency is go-tfe's polling: after a read that brought data it reads again at once, then waits 574, 660, 758, … ms, up to 2 s, between empty reads; a chunk waits for the next of those reads. The server's part is the append's own round trip (the Durable Object commits the chunk before it answers, and reads come from it).",
    "",
  );
}
if (result.apply) {
  const a = result.apply;
  const step = (k) => a.breakdown[Object.keys(a.breakdown).find((x) => x.includes(k))];
  const planDone = step("plan claimed") + step("plan finished");
  const applyDone = step("apply claimed") + step("apply finished");
  md.push(
    `## 3. \`terraform apply -auto-approve\`: remote (\`cloud\` block, \`remote\` workspace) vs local backend (${a.n} each, interleaved)`,
    "",
    "| | p50 |",
    "|---|---:|",
    `| remote apply | ${f(a.remoteMs)} |`,
    `| local apply | ${f(a.localMs)} |`,
    `| difference | ${f(a.differenceMs)} |`,
    `| Terraform's own sleeps in a remote apply (500 ms before reading the configuration version, 1 s before each \`waitForRun\` read, twice) | ${CLIENT_SLEEPS_MS} |`,
    `| remote apply beyond those sleeps | ${f(a.remoteMs - CLIENT_SLEEPS_MS)} |`,
    "",
    `The agent's work runs while the CLI sleeps. Here the plan was claimed and finished ${f(planDone)} ms (p50) after \`POST /runs\`, against the CLI's first \`waitForRun\` read 1 s after it; the apply was claimed and finished ${f(applyDone)} ms after the plan, against the second read 1 s after the CLI read the plan's end. When the agent beats both, the CLI reads each log whole at its first read, and what remains beyond its sleeps is its own requests and work, about what the local apply takes: the overhead target is below the floor the CLI sets. An agent slower than the 1 s window adds its excess plus up to one step of go-tfe's log backoff (574 ms and up).`,
    "",
    "Where a remote apply's time goes (p50 of each step, from the CLI's requests through a recording proxy and the run's status timestamps):",
    "",
    "| step | p50 |",
    "|---|---:|",
    ...Object.entries(a.breakdown).map(([k, v]) => `| ${k} | ${f(v)} |`),
    "",
    "The agent's steps (p50, from its log line for each job; `total` is claim to finish as the agent sees it):",
    "",
    "| phase | steps |",
    "|---|---|",
    ...Object.entries(a.agentSteps ?? {}).map(
      ([phase, st]) =>
        `| ${phase} | ${Object.entries(st)
          .map(([k, v]) => `${k} ${f(v)}`)
          .join(", ")} |`,
    ),
    "",
    "Each run:",
    "",
    "| run | remote | local | difference |",
    "|---|---:|---:|---:|",
    ...a.rows.map((r) => `| ${r.run} | ${f(r.remoteMs)} | ${f(r.localMs)} | ${f(r.differenceMs)} |`),
    "",
  );
}
md.push("Targets:", "");
if (result.claim)
  md.push(
    `- ${verdict(result.claim.claim.p99 <= TARGETS.claimMs)} run creation → claimed: p50 ${f(result.claim.claim.p50)} ms, p99 ${f(result.claim.claim.p99)} ms ≤ ${TARGETS.claimMs} ms`,
  );
if (result.apply)
  md.push(
    `- ${verdict(result.apply.differenceMs <= TARGETS.applyOverheadMs)} remote apply overhead (p50) ${f(result.apply.differenceMs)} ms ≤ ${TARGETS.applyOverheadMs} ms`,
  );
md.push("");
const dir = join(root, "bench", "results");
mkdirSync(dir, { recursive: true });
// A partial run (`--only`) writes beside the current results (git-ignored), never over them.
const stem = join(dir, ONLY.size === 3 ? "runs" : `runs-${[...ONLY].join("-")}`);
writeFileSync(`${stem}.json`, `${JSON.stringify(result, null, 2)}\n`);
writeFileSync(`${stem}.md`, md.join("\n"));
console.log(`\n${md.join("\n")}\nbench:runs: wrote ${stem}.md and .json`);
