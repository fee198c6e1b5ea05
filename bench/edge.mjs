#!/usr/bin/env node
// `npm run bench:edge`: MODELLED API time of real request traces for a client near the D1 primary, about 80 ms from
// it and about 150 ms from it. Nothing here is measured across a real network: the service runs locally (`node
// scripts/start.mjs` on a fresh store, EXPOSE_HOPS=1) and reports, per request, where each of its round trips went
// (`X-Hop-Trace`, src/platform/hops.ts); this script prices those round trips with the per-hop latencies stated in
// bench/README.md ("Edge model"). The service's own time per request, measured locally, is reported beside it.
//
// Traces:
//   - Terraform's `cloud` block driven by the real CLI through a recording proxy (scripts/lib/proxy.mjs): `terraform
//     plan` and `terraform apply` in a `local`-mode workspace (the state path), and `terraform plan` in a `remote`-mode
//     workspace run by the local agent (its status and log polling included);
//   - the bench shapes: ping, show by name, list page 1, name search, lock + unlock, create;
//   - a go-tfe-style create → read → update → read.
// Each trace is priced three ways: today's hops as recorded; "reads nearby" (every read the primary answered
// re-priced as a read from the nearest replica, as D1 sessions that may use replicas would serve it; writes stay on
// the primary); and "reads nearby, index after the answer" (also without the index writes the object awaits before
// answering today). The last two are what-ifs on today's traces, labelled as such.
//
//   --no-cli        skip the Terraform traces (quick runs while developing)
//   --no-remote     skip the remote-mode plan (it needs the local agent)
// Results: bench/results/edge.md and .json, overwritten by each run. Needs Terraform >= 1.10 on PATH (or TERRAFORM).
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { ensureNullProvider, ensureTerraform } from "../scripts/lib/binaries.mjs";
import { generationConfig, startBenchServer } from "../scripts/lib/bench-server.mjs";
import { cliEnvironment } from "../scripts/lib/cli-config.mjs";
import { startRecordingProxy } from "../scripts/lib/proxy.mjs";
import { freePort, groups, killAllGroups, sleep, stopGroup, tail } from "../scripts/lib/service.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values: opt } = parseArgs({ options: { "no-cli": { type: "boolean" }, "no-remote": { type: "boolean" } } });
const log = (m) => console.log(`bench:edge: ${m}`);

// ---------------------------------------------------------------- the model (bench/README.md, "Edge model")
// Round-trip times in ms, from the Cloudflare location that runs the Worker for the client.
const MODEL = {
  clientEdgeMs: 20, // client ↔ its nearest Cloudflare location
  replicaMs: 10, // Worker → the D1 read replica of its region
  doNearMs: 5, // Worker → a Durable Object placed near the client (created by its first request from there)
  primaryLocalMs: 2, // anything → the D1 primary from the same region (also a DO placed beside it)
};
const DISTANCES = [
  { key: "near", label: "near the primary", primaryMs: MODEL.primaryLocalMs },
  { key: "80", label: "~80 ms away", primaryMs: 80 },
  { key: "150", label: "~150 ms away", primaryMs: 150 },
];
const PATTERNS = [
  { key: "today", label: "today (as traced)", readsNearby: false, indexAfterAnswer: false },
  { key: "reads", label: "reads nearby (what-if)", readsNearby: true, indexAfterAnswer: false },
  { key: "edge", label: "reads nearby, index after the answer (what-if)", readsNearby: true, indexAfterAnswer: true },
];
const TARGETS = { farApplyMs: 600, showListMs: 35, lockUnlockMs: 80 };

/** One round trip of a trace (`do+d1w`: a DO call that awaited one index write) priced from the client's location. */
function hopMs(hop, d, pattern, doAtPrimary) {
  const [kind, ...nested] = hop.replace(/\?$/, "").split("+");
  const primary = d.primaryMs;
  const replica = Math.min(MODEL.replicaMs, primary); // a session reads the nearest copy, the primary included
  if (kind === "d1w") return primary;
  if (kind === "d1p") return pattern.readsNearby ? replica : primary;
  if (kind === "d1r") return replica;
  if (kind === "do" || kind === "do-create") {
    const toObject = doAtPrimary ? primary : MODEL.doNearMs;
    const objectToPrimary = doAtPrimary ? MODEL.primaryLocalMs : primary;
    const indexWrites = pattern.indexAfterAnswer ? 0 : nested.filter((n) => n === "d1w").length;
    return toObject + indexWrites * objectToPrimary;
  }
  throw new Error(`unknown hop kind ${hop}`);
}

/**
 * A request's network time: the client's round trip to the edge, then its steps one after another, each as slow as
 * its slowest hop. The service's own time is left out (reported beside it): on this shared machine it is mostly load.
 */
function requestMs(req, d, pattern, doAtPrimary = false) {
  const steps = req.trace ? req.trace.split(", ") : [];
  const network = steps.reduce((sum, step) => sum + Math.max(...step.split(" | ").map((h) => hopMs(h, d, pattern, doAtPrimary))), 0);
  return MODEL.clientEdgeMs + network;
}

const traceMs = (trace, d, pattern, doAtPrimary) => trace.requests.reduce((sum, r) => sum + requestMs(r, d, pattern, doAtPrimary), 0);

// ---------------------------------------------------------------- server
const terraform = opt["no-cli"] ? null : ensureTerraform(log);
const nullProvider = opt["no-cli"] ? null : ensureNullProvider(log);
const work = mkdtempSync(join(tmpdir(), "bench-edge-"));
const logFile = join(work, "server.log");
const port = await freePort();
const { server, adminToken, base } = startBenchServer({
  root,
  port,
  store: join(work, "store"),
  logFile,
  terraform: terraform?.path,
  mirror: nullProvider?.mirror,
  env: { EXPOSE_HOPS: "1" },
});
groups.add(server.pid);
/** @type {Awaited<ReturnType<typeof startRecordingProxy>> | null} */
let proxy = null;
process.on("exit", () => {
  killAllGroups();
  rmSync(work, { recursive: true, force: true });
});
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => process.exit(130));

let token = adminToken;
/** One API call: its status, body, hop trace and local time. */
async function call(method, path, body, expect = [200, 201, 204]) {
  const t0 = performance.now();
  const res = await fetch(`${base}/api/v2${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/vnd.api+json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const localMs = performance.now() - t0;
  if (!expect.includes(res.status)) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return { method, path, status: res.status, trace: res.headers.get("x-hop-trace") ?? "", localMs, json: text ? JSON.parse(text) : null };
}
const step = ({ method, path, status, trace, localMs }) => ({ method, path, status, trace, localMs });
const wsBody = (name, attributes = {}) => ({ data: { type: "workspaces", attributes: { name, ...attributes } } });

// ---------------------------------------------------------------- traces
const REPEATS = 7; // each shape's local time is the median of this many warm runs; its hops are the last run's
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** Runs `run(i)` (its calls, in order) REPEATS times after a warm-up; per call, the last run's hops and the median time. */
async function repeated(name, run) {
  const runs = [];
  for (let i = -1; i < REPEATS; i++) {
    const calls = await run(i);
    if (i >= 0) runs.push(calls.map(step));
  }
  const last = runs[runs.length - 1];
  return { name, requests: last.map((r, k) => ({ ...r, localMs: median(runs.map((steps) => steps[k].localMs)) })) };
}

async function shapeTraces(org) {
  for (let i = 0; i < 5; i++) await call("POST", `/organizations/${org}/workspaces`, wsBody(`shape-${i}`));
  const ws = (await call("GET", `/organizations/${org}/workspaces/shape-0`)).json.data;
  const get = (path) => async () => [await call("GET", path)];
  return [
    await repeated("ping", get("/ping")),
    await repeated("show by name", get(`/organizations/${org}/workspaces/shape-0`)),
    await repeated("list page 1", get(`/organizations/${org}/workspaces?page%5Bsize%5D=20`)),
    await repeated("name search", get(`/organizations/${org}/workspaces?search%5Bname%5D=shape`)),
    await repeated("lock + unlock", async () => [
      await call("POST", `/workspaces/${ws.id}/actions/lock`, { reason: "edge" }),
      await call("POST", `/workspaces/${ws.id}/actions/unlock`),
    ]),
    await repeated("create", async (i) => [await call("POST", `/organizations/${org}/workspaces`, wsBody(`shape-created-${i + 1}`))]),
    // go-tfe: Workspaces.Create, Read (by name), Update (by name), ReadByID: the provider's create and its read-back.
    await repeated("go-tfe create → read → update → read", async (i) => {
      const name = `gotfe-${i + 1}`;
      const created = await call("POST", `/organizations/${org}/workspaces`, wsBody(name));
      return [
        created,
        await call("GET", `/organizations/${org}/workspaces/${name}`),
        await call("PATCH", `/organizations/${org}/workspaces/${name}`, { data: { type: "workspaces", attributes: { description: `updated ${i}` } } }),
        await call("GET", `/workspaces/${created.json.data.id}`),
      ];
    }),
  ];
}

const SIGNED = /^\/_(blobs|slugs|logs|artifacts)\//;

const MAIN_TF = generationConfig("edge");

function terraformRun(dir, args, env) {
  return new Promise((resolve) => {
    const child = spawn(terraform.path, args, { cwd: dir, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    groups.add(child.pid);
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.on("exit", (code) => {
      groups.delete(child.pid);
      resolve({ code, out });
    });
  });
}

async function cliTraces(org) {
  proxy = await startRecordingProxy({ target: base });
  const { host, env } = cliEnvironment({ proxy, token, mirror: nullProvider.mirror, dir: work });
  const modes = [["local", "local"]];
  if (!opt["no-remote"]) modes.push(["remote", "remote"]);
  const traces = [];
  for (const [name, mode] of modes) {
    await call("POST", `/organizations/${org}/workspaces`, wsBody(`cli-${name}`, { "execution-mode": mode }));
    const dir = join(work, `cli-${name}`);
    mkdirSync(dir);
    writeFileSync(
      join(dir, "main.tf"),
      `terraform {\n  cloud {\n    hostname     = ${JSON.stringify(host)}\n    organization = ${JSON.stringify(org)}\n    workspaces {\n      name = ${JSON.stringify(`cli-${name}`)}\n    }\n  }\n}\n\n${MAIN_TF}`,
    );
    const run = async (args) => {
      const mark = proxy.mark();
      const r = await terraformRun(dir, [...args, "-input=false", "-no-color"], env);
      if (r.code !== 0) throw new Error(`terraform ${args.join(" ")} (${name}) exited ${r.code}:\n${r.out.slice(-3000)}`);
      // Let the last response's end land in its record.
      await sleep(50);
      return proxy.records.filter((rec) => rec.seq > mark);
    };
    // The signed URLs (state, slugs, logs, artifacts) are served outside /api/v2, where nothing counts hops: each reads
    // or writes the workspace's object and no D1, so it is priced as one object call (marked `do?`).
    const asSteps = (records) =>
      records.map((r) => ({ method: r.method, path: r.path, status: r.status, trace: r.hopTrace ?? (SIGNED.test(r.path) ? "do?" : ""), localMs: r.ms }));
    await run(["init"]);
    if (mode === "local") {
      // A first apply creates the state, so the traced plan and apply read one, as a workspace in use does.
      await run(["apply", "-auto-approve", "-var", "generation=1"]);
      traces.push({ name: "terraform plan (cloud block, local execution)", requests: asSteps(await run(["plan", "-var", "generation=2"])) });
      traces.push({ name: "terraform apply (cloud block, local execution)", requests: asSteps(await run(["apply", "-auto-approve", "-var", "generation=2"])) });
    } else {
      traces.push({ name: "terraform plan (cloud block, remote execution; polling included)", requests: asSteps(await run(["plan", "-var", "generation=2"])) });
    }
  }
  return traces;
}

// ---------------------------------------------------------------- run
const result = { date: new Date().toISOString(), model: MODEL, distances: DISTANCES, targets: TARGETS, traces: [] };
try {
  const until = Date.now() + 180_000;
  for (;;) {
    try {
      if ((await fetch(`${base}/api/v2/ping`, { headers: { Authorization: `Bearer ${token}` } })).status === 204) break;
    } catch {}
    if (Date.now() > until) throw new Error(`the server did not start:\n${tail(logFile, 40)}`);
    await sleep(300);
  }
  const ORG = `edge-${Date.now().toString(36)}`;
  // An ordinary user's token, as a person running Terraform holds: its principal is cached after its first request.
  const me = (await call("POST", "/admin/users", { data: { type: "users", attributes: { username: ORG, email: `${ORG}@example.com` } } })).json.data.id;
  token = (await call("POST", `/users/${me}/authentication-tokens`, { data: { type: "authentication-tokens", attributes: { description: "edge" } } })).json.data
    .attributes.token;
  await call("POST", "/organizations", { data: { type: "organizations", attributes: { name: ORG, email: "edge@example.com" } } });
  if (terraform && !opt["no-remote"]) {
    const agentUp = Date.now() + 60_000;
    while (!/agent: registered as/.test(readFileSync(logFile, "utf8"))) {
      if (Date.now() > agentUp) throw new Error("the local agent did not register");
      await sleep(200);
    }
  }
  result.traces.push(...(await shapeTraces(ORG)));
  if (terraform) result.traces.push(...(await cliTraces(ORG)));
} catch (err) {
  console.error(`bench:edge: ${err.stack ?? err}\nserver log:\n${tail(logFile, 60)}`);
  process.exitCode = 1;
} finally {
  await proxy?.close();
  await stopGroup(server.pid);
}
if (process.exitCode) process.exit(1);

// ---------------------------------------------------------------- report
for (const t of result.traces) {
  t.modelledMs = {};
  t.doAtPrimaryMs = {};
  for (const d of DISTANCES) {
    t.modelledMs[d.key] = Object.fromEntries(PATTERNS.map((p) => [p.key, traceMs(t, d, p, false)]));
    t.doAtPrimaryMs[d.key] = traceMs(t, d, PATTERNS[0], true);
  }
}
const f = (x) => (x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(0)} ms`);
const byName = (prefix) => result.traces.find((t) => t.name.startsWith(prefix));
const md = [`# Edge model ${result.date.slice(0, 10)}: MODELLED API time by distance from the D1 primary`, ""];
md.push(
  "**Modelled, not measured.** Each request's round trips come from the service's `X-Hop-Trace` on a local run; each is priced with the latencies below (sources and reasoning: `bench/README.md`, \"Edge model\"), network time only. Requests of a trace are summed, one after another, as the clients send them. The last column is the service's own time for the same requests as measured in this local run (median of warm runs for the bench shapes, one run for the CLI's), which a deployment adds on top; it includes local storage I/O and, on a shared 2-core machine, mostly load (`npm run bench` measures it properly).",
  "",
  `Per-hop round trips: client ↔ edge ${MODEL.clientEdgeMs} ms; D1 primary: the distance (${MODEL.primaryLocalMs} ms near it); D1 replica: ${MODEL.replicaMs} ms (never more than the primary); Durable Object near its user: ${MODEL.doNearMs} ms; its awaited index write: the object's distance to the primary. Steps of overlapping hops cost their slowest.`,
  "",
  "Patterns: **today** prices the traces as recorded. **reads nearby** re-prices every read the primary answered (`d1p`) as a read from the nearest replica (what D1 sessions that may use replicas would give); writes stay on the primary. **+ index after the answer** also drops the index writes the object awaits before answering today (`+d1w`), as an object that answers once its own write is durable would. Both are what-ifs on today's traces, not traces of that design.",
  "",
);
const header = [
  "| trace | requests |",
  ...DISTANCES.map((d) =>
    PATTERNS.map((p) => `${d.label}: ${p.key === "today" ? "today" : p.key === "reads" ? "reads nearby" : "+ index after answer"} |`).join(" "),
  ),
  "local service time (measured) |",
];
md.push(header.join(" "), `|---|---:|${DISTANCES.map(() => PATTERNS.map(() => "---:|").join("")).join("")}---:|`);
for (const t of result.traces) {
  t.localMs = t.requests.reduce((sum, r) => sum + r.localMs, 0);
  md.push(
    `| ${t.name} | ${t.requests.length} | ${DISTANCES.map((d) => PATTERNS.map((p) => `${f(t.modelledMs[d.key][p.key])} |`).join(" ")).join(" ")} ${f(t.localMs)} |`,
  );
}
md.push(
  "",
  `Today's hops with every workspace's object at the primary's region instead (a workspace created far from its users): ${result.traces
    .map((t) => `${t.name} ${DISTANCES.map((d) => f(t.doAtPrimaryMs[d.key])).join(" / ")}`)
    .join("; ")} (near / 80 ms / 150 ms).`,
  "",
);
const apply = byName("terraform apply");
const show = byName("show by name");
const list = byName("list page 1");
const lockUnlock = byName("lock + unlock");
const verdict = (ok) => (ok ? "PASS" : "FAIL");
md.push("## Targets (modelled)", "", "| target | today | reads nearby | + index after answer |", "|---|---|---|---|");
const row = (label, test) => md.push(`| ${label} | ${PATTERNS.map((p) => verdict(test(p.key))).join(" | ")} |`);
if (apply) row(`far (150 ms) \`terraform apply\` ≤ ${TARGETS.farApplyMs} ms`, (p) => apply.modelledMs["150"][p] <= TARGETS.farApplyMs);
row(`show by name and list page 1 ≤ ${TARGETS.showListMs} ms from anywhere`, (p) =>
  DISTANCES.every((d) => show.modelledMs[d.key][p] <= TARGETS.showListMs && list.modelledMs[d.key][p] <= TARGETS.showListMs),
);
row(`lock + unlock ≤ ${TARGETS.lockUnlockMs} ms from anywhere, object near its user`, (p) =>
  DISTANCES.every((d) => lockUnlock.modelledMs[d.key][p] <= TARGETS.lockUnlockMs),
);
md.push(
  "",
  "## The traces",
  "",
  "`d1p` a read only the primary answers, `d1w` a write, `d1r` a read a replica may answer, `do` a Durable Object call, `do-create` its creation, `+d1w` an index write the object awaited; `, ` one step after another, ` | ` overlapping. `do?`: a signed URL, served outside the hop counter, priced as one object call (an upload that finalises a state version answers before its index write, as lock and unlock do).",
  "",
);
for (const t of result.traces) {
  md.push(`### ${t.name}`, "", "| request | status | hops | local ms |", "|---|---:|---|---:|");
  for (const r of t.requests) md.push(`| ${r.method} ${r.path.replace(/\|/g, "%7C")} | ${r.status} | ${r.trace || "(none)"} | ${r.localMs.toFixed(1)} |`);
  md.push("");
}
const out = join(root, "bench", "results");
mkdirSync(out, { recursive: true });
writeFileSync(join(out, "edge.md"), `${md.join("\n")}\n`);
writeFileSync(join(out, "edge.json"), `${JSON.stringify(result, null, 2)}\n`);
console.log(md.slice(0, md.indexOf("## The traces")).join("\n"));
log(`written: bench/results/edge.md, edge.json`);
