#!/usr/bin/env node
// `npm run bench`: the service as it runs locally (`npm start`: the built Worker on workerd, EXPOSE_HOPS=1), driven
// over HTTP. One organisation is populated through the API at concurrency 8 (the population rate) to each size
// (default 1,000 then 10,000; `-- --size 100000` for 100,000, `--size 1000,100000` for several), and at each size
// every request shape is measured at concurrency 1 and 8: p50, p99, requests/s, workerd CPU ms per request
// (/proc/<pid>/stat), D1 and DO hops per request (the Worker's X-Hops header; "n/a" without it). RSS (node +
// workerd) is sampled at rest and under load. Speed targets are printed as PASS/FAIL here, never asserted in a
// test. Results: bench/results/bench.md and .json (bench-<sizes>.* for other sizes), overwritten by each run so
// history shows code, not result churn.
//
// Beside the service runs the floor (bench/floor/): a bare Worker with the same bindings that makes each shape's round
// trips and nothing else, started the same way on a store of its own and seeded to the same size. Every shape is
// measured against it interleaved (each client alternates a service operation and a floor operation), and the report
// gives service ÷ floor for p50, p99 and CPU per request (`--no-floor` leaves it out).
//
// `-- --url http://127.0.0.1:8787 --token <site-admin token> [--pgid <process group>]` measures a server already
// running instead (for example `npm run dev`, to compare with wrangler dev; start it with RATE_LIMIT=0). Linux only
// for CPU and RSS (/proc); elsewhere those columns read n/a.
import { spawn } from "node:child_process";
import { cpuCount } from "../scripts/lib/bench-server.mjs";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { CLK_TCK, processesOf } from "../scripts/lib/harness.mjs";
import { freePort, groups, killAllGroups, sleep, stopGroup, tail } from "../scripts/lib/service.mjs";
import { measureUiList } from "./ui-list.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values: opt } = parseArgs({
  options: {
    size: { type: "string", default: "1000,10000" },
    url: { type: "string" },
    token: { type: "string" },
    pgid: { type: "string" },
    seconds: { type: "string", default: "2" }, // measuring time per shape and concurrency (at least MIN_REQUESTS)
    label: { type: "string" },
    "no-floor": { type: "boolean", default: false },
    // Comma-separated shape names to measure (default all): a quick look while cutting one shape's cost.
    shapes: { type: "string" },
  },
});
const SIZES = opt.size
  .split(",")
  .map(Number)
  .sort((a, b) => a - b);
const SECONDS = Number(opt.seconds);
const MIN_REQUESTS = 30;
const CONCURRENCY = [1, 8];
const POPULATE_CONCURRENCY = 8;
const TARGETS = { rssRestMb: 300, rssLoadMb: 400, populationPerSecond: 150, floorRatio: 1.3 };

// ---------------------------------------------------------------- the server and its processes
let base, token, pgid, storeDir, logFile;
/** The floor Worker: its URL and process group (null when not measured). */
let floorBase = null;
let floorPgid = null;
if (opt.url) {
  base = opt.url.replace(/\/$/, "");
  token = opt.token;
  pgid = opt.pgid ? Number(opt.pgid) : null;
} else {
  const port = await freePort();
  storeDir = mkdtempSync(join(tmpdir(), "bench-store-"));
  logFile = join(storeDir, "server.log");
  token = `${randomBytes(7).toString("hex")}.atlasv1.${randomBytes(32).toString("hex")}`;
  base = `http://127.0.0.1:${port}`;
  startServer(port);
  if (!opt["no-floor"]) {
    const floorPort = await freePort([8787, port]);
    floorBase = `http://127.0.0.1:${floorPort}`;
    floorPgid = startWorker(floorPort, mkdtempSync(join(storeDir, "floor-")), { WORKER_CONFIG: join("bench", "floor", "wrangler.toml"), NO_AGENT: "1" });
  }
}
/** node scripts/start.mjs (what `npm start` runs) on the bench's store, without npm's own process in the RSS. */
function startServer(port) {
  pgid = startWorker(port, storeDir, { EXPOSE_HOPS: "1" });
}
/** scripts/start.mjs on `store` with `env` on top; answers its process group. */
function startWorker(port, store, env) {
  const fd = openSync(logFile, "a");
  const child = spawn(process.execPath, [join(root, "scripts", "start.mjs")], {
    cwd: root,
    detached: true,
    stdio: ["ignore", fd, fd],
    // NO_AGENT: with terraform on PATH `npm start` also runs a local agent (about 120 MB), which is not the server.
    env: { ...process.env, PORT: String(port), ADMIN_TOKEN: token, PERSIST_DIR: store, RATE_LIMIT: "0", EDITION: "self-hosted", NO_AGENT: "1", ...env },
  });
  groups.add(child.pid);
  return child.pid;
}
const cleanup = () => {
  killAllGroups();
  if (storeDir) rmSync(storeDir, { recursive: true, force: true });
};
process.on("exit", cleanup);
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => process.exit(130));

/** Processes of the server's process group (or `group`'s), with their descendants: [{ pid, comm, rssKb, cpuTicks }]. */
const processes = (group = pgid) => (group ? processesOf([group]) : []);
const rssMb = (group = pgid) => {
  const p = processes(group);
  return p.length ? p.reduce((s, x) => s + x.rssKb, 0) / 1024 : null;
};
const workerdTicks = (group = pgid) => {
  const p = processes(group).filter((x) => x.comm.startsWith("workerd"));
  return p.length ? p.reduce((s, x) => s + x.cpuTicks, 0) : null;
};
let peakRss = 0;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssMb() ?? 0)), 200);
sampler.unref();

// ---------------------------------------------------------------- HTTP
// The site-admin token of ADMIN_TOKEN is checked without D1; real clients send user and team tokens, which are
// looked up (or rechecked in the request's first batch, once cached). The bench sets up with the first and measures
// with an ordinary user's token.
const headers = { Authorization: `Bearer ${token}`, "Content-Type": "application/vnd.api+json" };
async function call(method, path, body, okStatuses = [200, 201, 204]) {
  const t = performance.now();
  const res = await fetch(`${base}/api/v2${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  const ms = performance.now() - t;
  if (!okStatuses.includes(res.status)) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  const hops = /d1=(\d+)\s*,\s*do=(\d+)/.exec(res.headers.get("x-hops") ?? "");
  return {
    ms,
    hops: hops ? { d1: Number(hops[1]), do: Number(hops[2]) } : null,
    json: text && res.headers.get("content-type")?.includes("json") ? JSON.parse(text) : null,
  };
}

async function waitUp() {
  const until = Date.now() + 180_000;
  for (;;) {
    try {
      if ((await fetch(`${base}/api/v2/ping`, { headers, signal: AbortSignal.timeout(3000) })).status === 204) return;
    } catch {}
    if (Date.now() > until) throw new Error(`the server did not answer${logFile ? `:\n${tail(logFile)}` : ""}`);
    await sleep(300);
  }
}

// ---------------------------------------------------------------- measuring
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

/**
 * Runs `op(worker, i)` (one operation: one or more requests, returning their results) from `concurrency` workers
 * for SECONDS (at least MIN_REQUESTS operations) after a short warm-up. With `floorOp`, each worker alternates it
 * with `op` (which goes first alternates too), so both see the same machine; `floor` then has its p50, p99 and CPU.
 */
async function measure(op, concurrency, floorOp = null) {
  for (let i = 0; i < 3; i++) {
    await op(0, -1 - i);
    if (floorOp) await floorOp(0, -1 - i);
  }
  const samples = [];
  const floorSamples = [];
  const hops = [];
  let n = 0;
  const ticks0 = workerdTicks();
  const floorTicks0 = floorOp ? workerdTicks(floorPgid) : null;
  const t0 = performance.now();
  const until = t0 + SECONDS * 1000;
  const timed = async (fn, w, i, into) => {
    const t = performance.now();
    const results = await fn(w, i);
    into.push(performance.now() - t);
    return results;
  };
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      while (performance.now() < until || n < MIN_REQUESTS) {
        const i = n++;
        if (floorOp && i % 2) await timed(floorOp, w, i, floorSamples);
        const results = await timed(op, w, i, samples);
        if (floorOp && !(i % 2)) await timed(floorOp, w, i, floorSamples);
        const h = results.map((r) => r.hops);
        hops.push(h.every(Boolean) ? h.reduce((a, b) => ({ d1: a.d1 + b.d1, do: a.do + b.do }), { d1: 0, do: 0 }) : null);
      }
    }),
  );
  const wall = (performance.now() - t0) / 1000;
  const ticks1 = workerdTicks();
  const floorTicks1 = floorOp ? workerdTicks(floorPgid) : null;
  const cpuMs = (a, b, count) => (a === null || b === null ? null : ((b - a) * (1000 / CLK_TCK)) / count);
  samples.sort((a, b) => a - b);
  floorSamples.sort((a, b) => a - b);
  const known = hops.filter(Boolean);
  const mean = (k) => known.reduce((s, h) => s + h[k], 0) / known.length;
  return {
    concurrency,
    n: samples.length,
    p50: quantile(samples, 0.5),
    p99: quantile(samples, 0.99),
    perSecond: samples.length / wall,
    cpuMs: cpuMs(ticks0, ticks1, samples.length),
    hops: known.length === hops.length && known.length ? { d1: mean("d1"), do: mean("do") } : null,
    floor: floorOp
      ? { p50: quantile(floorSamples, 0.5), p99: quantile(floorSamples, 0.99), cpuMs: cpuMs(floorTicks0, floorTicks1, floorSamples.length) }
      : null,
  };
}

/** One floor request (bench/floor/index.mjs), refused unless it answers 2xx. */
async function floorCall(method, path) {
  const res = await fetch(`${floorBase}${path}`, { method });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`floor ${method} ${path}: ${res.status} ${text.slice(0, 200)}`);
  return text;
}
/** The size of a workspace's document in the floor: a show's response body, measured once populated. */
let floorDocBytes = 1500;

// ---------------------------------------------------------------- the dataset
const ORG = `bench-${Date.now().toString(36)}`;
const CREATE_ORG = `${ORG}-c`;
const wsName = (i) => `ws-${String(i).padStart(6, "0")}-${i % 7 === 0 ? "prod" : "dev"}`;
/** Every tenth workspace carries a flat tag and a binding (env=prod|dev): the tag searches match 1 in 10. */
function createBody(name, i) {
  const relationships =
    i % 10 === 0
      ? {
          tags: { data: [{ type: "tags", attributes: { name: "critical" } }] },
          "tag-bindings": { data: [{ type: "tag-bindings", attributes: { key: "env", value: i % 20 === 0 ? "prod" : "dev" } }] },
        }
      : undefined;
  return { data: { type: "workspaces", attributes: { name }, ...(relationships ? { relationships } : {}) } };
}
const ids = [];
const names = [];
/** Runs `one(i)` for every i in from..to-1 at POPULATE_CONCURRENCY; answers the rate per second. */
async function populateWith(from, to, one) {
  let next = from;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: POPULATE_CONCURRENCY }, async () => {
      for (let i = next++; i < to; i = next++) await one(i);
    }),
  );
  return (to - from) / ((performance.now() - t0) / 1000);
}
const populate = (from, to) =>
  populateWith(from, to, async (i) => {
    const r = await call("POST", `/organizations/${ORG}/workspaces`, createBody(wsName(i), i));
    ids[i] = r.json.data.id;
    names[i] = wsName(i);
  });
/** The floor's rows from..to-1 through its create (ids f-<i>, the service's names), as the service was populated. */
const populateFloor = (from, to) =>
  populateWith(from, to, (i) => floorCall("POST", `/create/${encodeURIComponent(names[i])}?id=f-${i}&bytes=${floorDocBytes}`));

// ---------------------------------------------------------------- the shapes
const pick = (i) => Math.abs(Math.imul(i + 7, 2654435761)) % ids.length; // spread over the dataset, deterministic
let createSeq = 0;
const lockIds = [];
/** @typedef {(w: number, i: number) => Promise<unknown>} Op one operation of a shape, by worker `w`, the `i`th */
/**
 * [name, op, isList, key, floorOp]: each shape's floor makes the round trips the service's X-Hops and its Durable
 * Object's index write show for it (test/api/hops.test.ts), and nothing else (bench/floor/index.mjs).
 * @param {number} size @returns {[string, Op, boolean, string | undefined, Op][]}
 */
function shapes(size) {
  const deepPage = Math.max(1, Math.floor(size / 20 / 2));
  const list = (q) => () => call("GET", `/organizations/${ORG}/workspaces${q}`).then((r) => [r]);
  const floorList = (offset) => () => floorCall("GET", `/list?offset=${offset}`);
  const bytes = () => `bytes=${floorDocBytes}`;
  return [
    ["authenticated ping", () => call("GET", "/ping").then((r) => [r]), false, undefined, () => floorCall("GET", "/ping")],
    ["show by id", (_w, i) => call("GET", `/workspaces/${ids[pick(i)]}`).then((r) => [r]), false, undefined, (_w, i) => floorCall("GET", `/show/f-${pick(i)}`)],
    [
      "show by name",
      (_w, i) => call("GET", `/organizations/${ORG}/workspaces/${names[pick(i)]}`).then((r) => [r]),
      false,
      undefined,
      (_w, i) => floorCall("GET", `/name/${names[pick(i)]}`),
    ],
    [
      "lock + unlock",
      async (w) => [
        await call("POST", `/workspaces/${lockIds[w]}/actions/lock`, { reason: "bench" }),
        await call("POST", `/workspaces/${lockIds[w]}/actions/unlock`),
      ],
      false,
      undefined,
      async (w) => {
        await floorCall("POST", `/lock/lock-${w}?${bytes()}`);
        await floorCall("POST", `/unlock/lock-${w}?${bytes()}`);
      },
    ],
    [
      "create",
      () => call("POST", `/organizations/${CREATE_ORG}/workspaces`, createBody(`c-${createSeq++}`, 1)).then((r) => [r]),
      false,
      undefined,
      () => floorCall("POST", `/create/c-${floorCreateSeq++}?${bytes()}`),
    ],
    ["list page 1", list(""), true, undefined, floorList(0)],
    [`deep page (${deepPage})`, list(`?page%5Bnumber%5D=${deepPage}`), true, "deep page", floorList((deepPage - 1) * 20)],
    ["name search", list("?search%5Bname%5D=prod"), true, undefined, floorList(0)],
    ["tag search", list("?search%5Btags%5D=critical"), true, undefined, floorList(0)],
  ];
}
let floorCreateSeq = 0;

// ---------------------------------------------------------------- run
const result = {
  date: new Date().toISOString(),
  runtime: opt.label ?? (opt.url ? `attached: ${base}` : "npm start (lean runtime)"),
  sizes: SIZES,
  rows: [],
  population: [],
  rss: {},
  uiList: [],
};
try {
  const t0 = Date.now();
  await waitUp();
  result.startSeconds = opt.url ? null : (Date.now() - t0) / 1000;
  while (floorBase) {
    try {
      if ((await fetch(`${floorBase}/`, { signal: AbortSignal.timeout(3000) })).status === 404) break;
    } catch {}
    if (Date.now() - t0 > 180_000) throw new Error(`the floor Worker did not answer:\n${tail(logFile)}`);
    await sleep(300);
  }
  await sleep(2000);
  result.rss.restEmpty = rssMb();
  // An ordinary user (the site admin's principal is never cached, and its ADMIN_TOKEN costs no D1 read), whose first
  // token the site admin issues; it creates the organisations, and so owns them.
  const me = (await call("POST", "/admin/users", { data: { type: "users", attributes: { username: ORG, email: `${ORG}@example.com` } } }, [201])).json.data.id;
  const userToken = (
    await call("POST", `/users/${me}/authentication-tokens`, { data: { type: "authentication-tokens", attributes: { description: "bench" } } }, [201])
  ).json.data.attributes.token;
  headers.Authorization = `Bearer ${userToken}`;
  await call("POST", "/organizations", { data: { type: "organizations", attributes: { name: ORG, email: "bench@example.com" } } }, [201]);
  await call("POST", "/organizations", { data: { type: "organizations", attributes: { name: CREATE_ORG, email: "bench@example.com" } } }, [201]);
  for (let w = 0; w < Math.max(...CONCURRENCY); w++) {
    lockIds[w] = (await call("POST", `/organizations/${CREATE_ORG}/workspaces`, createBody(`lock-${w}`, 1))).json.data.id;
  }
  let have = 0;
  for (const size of SIZES) {
    const rate = await populate(have, size);
    console.log(`bench: populated ${size} workspaces (${size - have} created at concurrency ${POPULATE_CONCURRENCY}: ${rate.toFixed(0)}/s)`);
    result.population.push({ size, created: size - have, perSecond: rate });
    if (floorBase) {
      const body = await fetch(`${base}/api/v2/workspaces/${ids[0]}`, { headers }).then((r) => r.text());
      floorDocBytes = body.length;
      // The floor is populated as the service was: one new object per row, at the same concurrency, so its rate and
      // the memory its process keeps are the runtime's own for creating that many Durable Objects.
      if (have === 0) await floorCall("POST", "/seed");
      const floorRate = await populateFloor(have, size);
      console.log(`bench: floor populated to ${size} (${floorRate.toFixed(0)}/s)`);
      result.population[result.population.length - 1].floorPerSecond = floorRate;
      await sleep(3000);
      result.rss[`floorRest${size}`] = rssMb(floorPgid);
    }
    have = size;
    peakRss = 0;
    await sleep(3000); // let outbox alarms and GC settle
    result.rss[`rest${size}`] = rssMb();
    for (const [shape, op, isList, key, floorOp] of shapes(size).filter(([name]) => !opt.shapes || opt.shapes.split(",").includes(name))) {
      for (const c of CONCURRENCY) {
        const m = await measure(op, c, floorBase ? floorOp : null);
        result.rows.push({ size, shape, key: key ?? shape, isList, ...m });
        console.log(
          `bench: ${size} ${shape} c=${c}: p50 ${m.p50.toFixed(1)} ms, p99 ${m.p99.toFixed(1)} ms, ${m.perSecond.toFixed(0)}/s, cpu ${m.cpuMs?.toFixed(2) ?? "n/a"} ms, hops ${m.hops ? `d1=${m.hops.d1.toFixed(1)} do=${m.hops.do.toFixed(1)}` : "n/a"}${m.floor ? `; floor p50 ${m.floor.p50.toFixed(2)} ms (${(m.p50 / m.floor.p50).toFixed(2)}×), cpu ${m.floor.cpuMs?.toFixed(2) ?? "n/a"} ms` : ""}`,
        );
      }
    }
    result.rss[`load${size}`] = peakRss || null;
    // The web UI's list page against the JSON list call for the same query (target: p50 ≤ 1.5×).
    for (const [label, query] of [
      ["page 1", ""],
      ["deep page", `page%5Bnumber%5D=${Math.max(1, Math.floor(size / 20 / 2))}`],
    ]) {
      const token = headers.Authorization.slice("Bearer ".length);
      const m = await measureUiList({ base, token, organization: ORG, query, seconds: SECONDS });
      result.uiList.push({ size, label, ...m });
      console.log(
        `bench: ${size} UI list ${label}: p50 ${m.ui.p50.toFixed(1)} ms vs JSON ${m.json.p50.toFixed(1)} ms (${m.ratio.toFixed(2)}×), same rows: ${m.sameRows}`,
      );
    }
  }
  await sleep(15_000); // idle Durable Objects are evicted after 10 s
  result.rss.restEnd = rssMb();
  if (floorPgid) result.rss.floorRestEnd = rssMb(floorPgid);
  result.rssByProcess = processes().map((p) => ({ pid: p.pid, comm: p.comm, mb: Math.round(p.rssKb / 1024) }));
  if (!opt.url) {
    // The allocator keeps what a population burst took; a server started on the populated store shows what serving
    // it costs: at rest, then under the shapes that create nothing (each at concurrency 8).
    await stopGroup(pgid);
    if (floorPgid) await stopGroup(floorPgid);
    startServer(new URL(base).port);
    await waitUp();
    await sleep(5000);
    result.rss.restRestarted = rssMb();
    peakRss = 0;
    const size = SIZES[SIZES.length - 1];
    for (const [shape, op] of shapes(size).filter(([name]) => name !== "create")) {
      const m = await measure(op, 8);
      console.log(`bench: restarted ${size} ${shape} c=8: p50 ${m.p50.toFixed(1)} ms`);
    }
    result.rss.loadRestarted = peakRss || null;
  }
} catch (err) {
  console.error(`bench: ${err.stack ?? err}${logFile ? `\nserver log:\n${tail(logFile)}` : ""}`);
  process.exitCode = 1;
} finally {
  if (pgid && !opt.url) await stopGroup(pgid);
}
if (process.exitCode) process.exit(1);

// ---------------------------------------------------------------- report
const f = (x, d = 1) => (x === null || x === undefined ? "n/a" : x.toFixed(d));
const hopsText = (h) => (h ? `d1=${f(h.d1)}, do=${f(h.do)}` : "n/a");
// At rest and under load: a server started on the populated store (what serving the data costs); the same process
// after populating it is reported beside, since the allocator keeps what a burst of new Durable Objects took.
const maxOf = (prefix) =>
  Math.max(
    ...Object.entries(result.rss)
      .filter(([k, v]) => k.startsWith(prefix) && !k.endsWith("Restarted") && v !== null)
      .map(([, v]) => v),
  );
const restMb = result.rss.restRestarted ?? maxOf("rest");
const loadMb = result.rss.loadRestarted ?? maxOf("load");
const burstMb = Math.max(maxOf("rest"), maxOf("load"));
const popRate = Math.min(...result.population.filter((p) => p.created >= 500).map((p) => p.perSecond));
const verdict = (ok) => (ok ? "PASS" : "FAIL");
result.targets = {
  rssRest: { mb: restMb, target: TARGETS.rssRestMb, pass: restMb <= TARGETS.rssRestMb },
  rssLoad: { mb: loadMb, target: TARGETS.rssLoadMb, pass: loadMb <= TARGETS.rssLoadMb },
  population: { perSecond: popRate, target: TARGETS.populationPerSecond, pass: popRate >= TARGETS.populationPerSecond },
};
const small = SIZES[0];
const ratios = SIZES.slice(1).flatMap((size) =>
  result.rows
    .filter((r) => r.size === size && r.isList && r.concurrency === 1)
    .map((r) => {
      const at1k = result.rows.find((x) => x.size === small && x.key === r.key && x.concurrency === 1);
      return { size, shape: r.key, p50: r.p50, smallP50: at1k.p50, ratio: r.p50 / at1k.p50 };
    }),
);
result.listRatios = ratios;

const md = [
  `# Bench ${result.date.slice(0, 10)}: ${result.runtime}`,
  "",
  `Local run on a ${cpuCount()}-core machine (bench client on the same machine). Latency in ms; CPU = workerd CPU time per request (or per lock + unlock pair), from /proc at 10 ms resolution; hops = D1 and Durable Object round trips per request from \`X-Hops\` (n/a: the Worker does not send it).${result.startSeconds ? ` Server ready in ${f(result.startSeconds)} s.` : ""}`,
  "",
  "| workspaces | shape | conc. | p50 | p99 | req/s | CPU ms/req | hops/req |",
  "|---:|---|---:|---:|---:|---:|---:|---|",
  ...result.rows.map(
    (r) => `| ${r.size} | ${r.shape} | ${r.concurrency} | ${f(r.p50)} | ${f(r.p99)} | ${f(r.perSecond, 0)} | ${f(r.cpuMs, 2)} | ${hopsText(r.hops)} |`,
  ),
  "",
  ...floorSection(),
  `List page latency at the larger size ÷ at ${small} (p50, concurrency 1):`,
  "",
  `| shape | workspaces | p50 | p50 at ${small} | ratio |`,
  "|---|---:|---:|---:|---:|",
  ...ratios.map((r) => `| ${r.shape} | ${r.size} | ${f(r.p50)} | ${f(r.smallP50)} | ${f(r.ratio, 2)} |`),
  "",
  "The web UI's workspace list page against the JSON list call for the same query (concurrency 1, interleaved):",
  "",
  "| workspaces | query | UI p50 | JSON p50 | ratio | same rows | UI hops |",
  "|---:|---|---:|---:|---:|---|---|",
  ...result.uiList.map((u) => `| ${u.size} | ${u.label} | ${f(u.ui.p50)} | ${f(u.json.p50)} | ${f(u.ratio, 2)} | ${u.sameRows} | ${hopsText(u.ui.hops)} |`),
  "",
  "RSS (MB, all processes of the server: node + workerd; rest/load<size>: the process that populated the store; restRestarted/loadRestarted: a server started on the populated store, at rest and under every shape but create at concurrency 8):",
  "",
  ...Object.entries(result.rss).map(([k, v]) => `- ${k}: ${f(v, 0)}`),
  `- by process at the end: ${(result.rssByProcess ?? []).map((p) => `${p.comm} ${p.mb}`).join(", ") || "n/a"}`,
  "",
  "Population through the API (`POST /organizations/:org/workspaces`, concurrency 8):",
  "",
  ...result.population.map(
    (p) =>
      `- to ${p.size}: ${p.created} created, ${f(p.perSecond, 0)} workspaces/s${p.floorPerSecond ? `; the floor (one new object per row, its create's round trips) ${f(p.floorPerSecond, 0)}/s` : ""}`,
  ),
  "",
  "Targets:",
  "",
  `- ${verdict(result.targets.rssRest.pass)} RSS at rest ${f(restMb, 0)} MB ≤ ${TARGETS.rssRestMb} MB`,
  `- ${verdict(result.targets.rssLoad.pass)} RSS under load ${f(loadMb, 0)} MB ≤ ${TARGETS.rssLoadMb} MB`,
  `- ${verdict(burstMb <= TARGETS.rssLoadMb)} RSS of the process that populated the store (its peak, kept by the allocator) ${f(burstMb, 0)} MB ≤ ${TARGETS.rssLoadMb} MB`,
  ...result.uiList.map((u) => `- ${verdict(u.ratio <= 1.5)} UI list page (${u.label}) at ${u.size} workspaces ${f(u.ratio, 2)}× the JSON list ≤ 1.5×`),
  `- ${verdict(result.targets.population.pass)} population ${f(popRate, 0)} workspaces/s ≥ ${TARGETS.populationPerSecond}/s`,
  ...floorTargets(),
  "",
];
/** The population and memory targets measured against the floor populated the same way (nothing without a floor). */
function floorTargets() {
  const floorRates = result.population.filter((p) => p.created >= 500 && p.floorPerSecond).map((p) => p.floorPerSecond);
  const floorRest = Object.entries(result.rss).filter(([k, v]) => k.startsWith("floorRest") && v !== null);
  if (!floorRates.length) return [];
  const floorRate = Math.min(...floorRates);
  const floorMb = Math.max(...floorRest.map(([, v]) => v));
  result.targets.floor = { populationPerSecond: floorRate, rssPopulatedMb: floorMb };
  return [
    `- the floor, populated the same way: ${f(floorRate, 0)} objects/s (${verdict(floorRate >= TARGETS.populationPerSecond)} against ${TARGETS.populationPerSecond}/s; the service at ${f(popRate / floorRate, 2)}× the floor's rate), its process at rest after populating ${f(floorMb, 0)} MB (${verdict(floorMb <= TARGETS.rssRestMb)} against ${TARGETS.rssRestMb} MB; the service's ${f(burstMb, 0)} MB is ${f(burstMb / floorMb, 2)}× it)`,
  ];
}
/** Service ÷ floor per shape (bench/floor/): latency and CPU per request, both measured interleaved. */
function floorSection() {
  const rows = result.rows.filter((r) => r.floor);
  if (!rows.length) return [];
  const worst = Math.max(...rows.map((r) => r.p50 / r.floor.p50));
  return [
    `Service ÷ floor: the floor (\`bench/floor/\`) is a bare Worker with the same bindings making each shape's round trips and nothing else, measured interleaved with the service (each client alternates the two). Target: every shape ≤ ${TARGETS.floorRatio}× its floor at p50 (worst here ${f(worst, 2)}×).`,
    "",
    "| workspaces | shape | conc. | floor p50 | floor p99 | p50 | p99 | ÷ floor p50 | ÷ floor p99 | floor CPU ms/req | CPU ms/req | ÷ floor CPU |",
    "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...rows.map(
      (r) =>
        `| ${r.size} | ${r.shape} | ${r.concurrency} | ${f(r.floor.p50, 2)} | ${f(r.floor.p99, 2)} | ${f(r.p50, 2)} | ${f(r.p99, 2)} | ${f(r.p50 / r.floor.p50, 2)} | ${f(r.p99 / r.floor.p99, 2)} | ${f(r.floor.cpuMs, 2)} | ${f(r.cpuMs, 2)} | ${r.floor.cpuMs ? f(r.cpuMs / r.floor.cpuMs, 2) : "n/a"} |`,
    ),
    "",
  ];
}
const dir = join(root, "bench", "results");
mkdirSync(dir, { recursive: true });
const stem = join(dir, opt.size === "1000,10000" ? "bench" : `bench-${SIZES.map((n) => (n >= 1000 ? `${n / 1000}k` : n)).join("-")}`);
writeFileSync(`${stem}.json`, `${JSON.stringify(result, null, 2)}\n`);
writeFileSync(`${stem}.md`, md.join("\n"));
console.log(`\n${md.join("\n")}\nbench: wrote ${stem}.md and .json`);
