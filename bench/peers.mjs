#!/usr/bin/env node
// `npm run bench:peers`: this service side by side with its two open-source peers on one machine, OTF (Go
// and PostgreSQL) and Terrence (TypeScript on Bun and SQLite). Each server starts on loopback with a throwaway store
// (bench/peers/servers.mjs says how each is obtained and started); each gets the same data through its own API (one
// organisation, PEERS_WORKSPACES workspaces, every tenth tagged `critical`), populated at concurrency 8 in chunks
// that alternate between the servers (the population rate). Then every request shape is measured at concurrency 1
// and 8 in short blocks that alternate between the servers (A B C, then B C A, …) so that drift on a shared machine
// falls on all alike. Every response is checked (status, and that the body is the expected JSON:API document) and
// failures are counted. Results: p50, p99, operations/s and server CPU per operation per server, the p50 ratio
// ours/peer, RSS (and PSS) at rest and under load; written to bench/results/side-by-side.md and .json (overwritten by each run).
//
// Environment:
//   PEERS_WORKSPACES    workspaces per server (default 10000)
//   PEERS_ONLY          comma-separated subset of ours,otf,terrence,floor (default all four; floor: the runtime's own
//                       floor, bench/floor, beside them: not a peer)
//   PEERS_ROUNDS        measuring blocks per server, shape and concurrency (default 5)
//   PEERS_BLOCK_SECONDS length of one block (default 1; at least 3 operations per worker)
//   PEERS_CHUNK         workspaces per population chunk (default 500)
//   OTF_BIN             otfd to run (default .peers/bin/otfd; else `go install` of OTF_VERSION into .peers/bin)
//   TERRENCE_DIR        Terrence's backend directory, dependencies installed (default .peers/terrence/backend)
//   PEERS_INSTALL=0     install nothing (Bun, otfd); a peer without its binaries is skipped
//   PEERS_LABEL         a label for the run, printed in its result file
//   PEERS_KEEP=1        keep the servers' temporary directories (stores, logs) after the run
// A peer that cannot be had or started is skipped with its reason in the report. Linux only for RSS and CPU (/proc).
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { killAllGroups, sleep, tail } from "../scripts/lib/service.mjs";
import { CLK_TCK, cpuTicksOf, memoryOf } from "./peers/proc.mjs";
import { floor, otf, ours, removeDirs, terrence } from "./peers/servers.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const env = process.env;
const N = Number(env.PEERS_WORKSPACES || 10_000);
const ROUNDS = Number(env.PEERS_ROUNDS || 5);
const BLOCK_SECONDS = Number(env.PEERS_BLOCK_SECONDS || 1);
const CHUNK = Number(env.PEERS_CHUNK || 500);
const ONLY = (env.PEERS_ONLY || "ours,otf,terrence,floor").split(",").map((s) => s.trim());
const CONCURRENCY = [1, 8];
const POPULATE_CONCURRENCY = 8;
const PAGE_SIZE = 20;
const MIN_OPS_PER_WORKER = 3;
const WARMUP = 3;
const REQUEST_TIMEOUT_MS = 30_000;
if (!(N >= 40) || !(ROUNDS >= 1) || !(BLOCK_SECONDS > 0) || !(CHUNK >= 1)) {
  console.error("peers: PEERS_WORKSPACES must be at least 40; PEERS_ROUNDS, PEERS_BLOCK_SECONDS and PEERS_CHUNK positive");
  process.exit(2);
}

// ---------------------------------------------------------------- the servers
const all = [ours(root), otf(root), terrence(root), floor(root)].filter((s) => ONLY.includes(s.key));
const cleanup = () => {
  killAllGroups();
  for (const s of all) if (!env.PEERS_KEEP) removeDirs(s);
};
process.on("exit", cleanup);
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => process.exit(130));

for (const s of all) {
  s.skip = s.prepare?.() ?? null;
  if (s.skip) console.log(`peers: ${s.label} skipped: ${s.skip}`);
}
const active = () => all.filter((s) => !s.skip);
for (const s of active()) {
  const t0 = Date.now();
  try {
    await s.start();
    s.startSeconds = (Date.now() - t0) / 1000;
    console.log(`peers: ${s.label} up at ${s.base} in ${s.startSeconds.toFixed(1)} s (${s.version})`);
  } catch (e) {
    s.skip = `did not start: ${e.message}`;
    console.log(`peers: ${s.label} ${s.skip}`);
    await s.stop?.().catch(() => undefined);
  }
}
if (!active().length) {
  console.error("peers: no server to measure");
  process.exit(1);
}

// ---------------------------------------------------------------- HTTP and checks
async function call(s, method, path, body) {
  const t = performance.now();
  const res = await fetch(`${s.base}/api/v2${path}`, {
    method,
    headers: { Authorization: `Bearer ${s.token}`, "Content-Type": "application/vnd.api+json", Accept: "application/vnd.api+json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await res.text();
  const ms = performance.now() - t;
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {}
  return { status: res.status, json, text, ms };
}
class CheckError extends Error {}
const expect = (cond, msg) => {
  if (!cond) throw new CheckError(msg);
};
const brief = (r) => `${r.status} ${r.text.slice(0, 160).replace(/\s+/g, " ")}`;
function expectWorkspace(r, status, what) {
  expect(r.status === status, `${what}: expected ${status}, got ${brief(r)}`);
  expect(r.json?.data?.type === "workspaces" && typeof r.json.data.id === "string", `${what}: not a workspaces document: ${brief(r)}`);
  return r.json.data;
}
const totalOf = (doc) => doc?.meta?.pagination?.["total-count"];

// ---------------------------------------------------------------- the data set
const stamp = Date.now().toString(36);
const ORG = `peers-${stamp}`;
const CREATE_ORG = `peers-${stamp}-c`;
const wsName = (i) => `ws-${String(i).padStart(6, "0")}-${i % 7 === 0 ? "prod" : "dev"}`;
const tagged = (i) => i % 10 === 0;
const expected = {
  all: N,
  prod: Array.from({ length: N }, (_, i) => i).filter((i) => i % 7 === 0).length,
  critical: Array.from({ length: N }, (_, i) => i).filter(tagged).length,
};
const DEEP_PAGE = Math.max(2, Math.floor(N / PAGE_SIZE / 2));

async function setup(s) {
  if (s.setup) return s.setup({ concurrency: Math.max(...CONCURRENCY) });
  for (const name of [ORG, CREATE_ORG]) {
    const r = await call(s, "POST", "/organizations", { data: { type: "organizations", attributes: { name, email: "bench@example.com" } } });
    expect(r.status === 201, `create organization ${name}: ${brief(r)}`);
  }
  s.lockIds = [];
  for (let w = 0; w < Math.max(...CONCURRENCY); w++) {
    const r = await call(s, "POST", `/organizations/${CREATE_ORG}/workspaces`, s.createBody(`lock-${w}`, false));
    s.lockIds[w] = expectWorkspace(r, 201, "create lock workspace").id;
  }
  s.createSeq = 0;
}

/** Creates workspaces [from, to) in ORG at concurrency 8; returns seconds spent. Throws on the first failure. */
async function populate(s, from, to) {
  let next = from;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: POPULATE_CONCURRENCY }, async () => {
      for (let i = next++; i < to; i = next++) {
        if (s.populateOne) {
          await s.populateOne(i, wsName(i));
          continue;
        }
        const r = await call(s, "POST", `/organizations/${ORG}/workspaces`, s.createBody(wsName(i), tagged(i)));
        const d = expectWorkspace(r, 201, `create ${wsName(i)}`);
        expect(d.attributes?.name === wsName(i), `create ${wsName(i)}: answered name ${d.attributes?.name}`);
      }
    }),
  );
  return (performance.now() - t0) / 1000;
}

// ---------------------------------------------------------------- the shapes: op(s, worker, i) checks its responses
const pick = (i) => Math.abs(Math.imul(i + 7, 2654435761)) % N; // spread over the data set, deterministic
function listOp(query, check) {
  return async (s) => {
    const r = await call(s, "GET", `/organizations/${ORG}/workspaces?${query}`);
    expect(r.status === 200, `list ${query}: ${brief(r)}`);
    const data = r.json?.data;
    expect(Array.isArray(data) && data.every((d) => d.type === "workspaces"), `list ${query}: not a list of workspaces: ${brief(r)}`);
    check(r.json, data);
  };
}
const listCheck = (total, pageItems, each) => (doc, data) => {
  expect(data.length === pageItems, `expected ${pageItems} workspaces on the page, got ${data.length}`);
  const t = totalOf(doc);
  expect(t === total, `expected meta.pagination.total-count ${total}, got ${t}`);
  if (each) for (const d of data) each(d);
};
const itemsOnPage = (total, page) => Math.max(0, Math.min(PAGE_SIZE, total - (page - 1) * PAGE_SIZE));
const SHAPES = [
  {
    name: "authenticated ping",
    op: async (s) => {
      const r = await call(s, "GET", "/ping");
      expect(s.pingStatuses.includes(r.status), `ping: expected ${s.pingStatuses.join("/")}, got ${brief(r)}`);
    },
  },
  {
    name: "show by name",
    op: async (s, _w, i) => {
      const name = wsName(pick(i));
      const d = expectWorkspace(await call(s, "GET", `/organizations/${ORG}/workspaces/${name}`), 200, `show ${name}`);
      expect(d.attributes?.name === name, `show ${name}: answered name ${d.attributes?.name}`);
    },
  },
  {
    name: "lock + unlock",
    op: async (s, w) => {
      const id = s.lockIds[w];
      const l = expectWorkspace(await call(s, "POST", `/workspaces/${id}/actions/lock`, { reason: "bench" }), 200, "lock");
      expect(l.id === id && l.attributes?.locked === true, `lock ${id}: answered locked=${l.attributes?.locked} for ${l.id}`);
      const u = expectWorkspace(await call(s, "POST", `/workspaces/${id}/actions/unlock`), 200, "unlock");
      expect(u.id === id && u.attributes?.locked === false, `unlock ${id}: answered locked=${u.attributes?.locked} for ${u.id}`);
    },
  },
  {
    name: "create",
    op: async (s) => {
      const name = `c-${s.createSeq++}`;
      const d = expectWorkspace(await call(s, "POST", `/organizations/${CREATE_ORG}/workspaces`, s.createBody(name, false)), 201, `create ${name}`);
      expect(d.attributes?.name === name, `create ${name}: answered name ${d.attributes?.name}`);
    },
  },
  { name: "list page 1", op: listOp(`page%5Bsize%5D=${PAGE_SIZE}`, listCheck(N, itemsOnPage(N, 1))) },
  {
    name: `deep page (${DEEP_PAGE})`,
    key: "deep page",
    op: listOp(`page%5Bsize%5D=${PAGE_SIZE}&page%5Bnumber%5D=${DEEP_PAGE}`, listCheck(N, itemsOnPage(N, DEEP_PAGE))),
  },
  {
    name: "name search",
    op: listOp(
      `page%5Bsize%5D=${PAGE_SIZE}&search%5Bname%5D=prod`,
      listCheck(expected.prod, itemsOnPage(expected.prod, 1), (d) =>
        expect(d.attributes?.name?.includes("prod"), `name search: ${d.attributes?.name} has no "prod"`),
      ),
    ),
  },
  {
    name: "tag search",
    op: listOp(
      `page%5Bsize%5D=${PAGE_SIZE}&search%5Btags%5D=critical`,
      listCheck(expected.critical, itemsOnPage(expected.critical, 1), (d) => {
        const tags = d.attributes?.["tag-names"];
        expect(tags === undefined || tags.includes("critical"), `tag search: ${d.attributes?.name} has tag-names ${JSON.stringify(tags)}`);
        expect(tagged(Number(d.attributes?.name?.slice(3, 9))), `tag search: ${d.attributes?.name} was not tagged`);
      }),
    ),
  },
];

// The floor's own requests for each shape (it speaks no API).
for (const s of all) s.shapeOps = s.opsFor?.({ wsName, pick, deepOffset: (DEEP_PAGE - 1) * PAGE_SIZE }) ?? null;

// ---------------------------------------------------------------- measuring
const quantile = (sorted, q) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : null);
const cells = new Map(); // `${server}|${shape}|${c}` -> { samples, ok, failures, errors, seconds, ticks }
const cell = (s, shape, c) => {
  const k = `${s.key}|${shape.key ?? shape.name}|${c}`;
  if (!cells.has(k)) cells.set(k, { samples: [], ok: 0, failures: 0, errors: new Map(), seconds: 0, ticks: 0, ticksKnown: true });
  return cells.get(k);
};
let opIndex = 0;
async function runOne(s, shape, w, rec) {
  const i = opIndex++;
  const t = performance.now();
  try {
    const own = s.shapeOps?.[shape.key ?? shape.name];
    await (own ? own(w, i) : shape.op(s, w, i));
    const ms = performance.now() - t;
    if (rec) {
      rec.samples.push(ms);
      rec.ok++;
    }
  } catch (e) {
    if (!rec) return;
    rec.failures++;
    const msg = e instanceof CheckError ? e.message : `request failed: ${e.message}`;
    rec.errors.set(msg, (rec.errors.get(msg) ?? 0) + 1);
  }
}
async function block(s, shape, c) {
  const rec = cell(s, shape, c);
  let peak = 0;
  const sample = () => (peak = Math.max(peak, memoryOf(s.parts)?.rssMb ?? 0));
  const sampler = setInterval(sample, 200);
  const ticks0 = cpuTicksOf(s.parts);
  const t0 = performance.now();
  const until = t0 + BLOCK_SECONDS * 1000;
  await Promise.all(
    Array.from({ length: c }, async (_, w) => {
      for (let n = 0; performance.now() < until || n < MIN_OPS_PER_WORKER; n++) await runOne(s, shape, w, rec);
    }),
  );
  rec.seconds += (performance.now() - t0) / 1000;
  clearInterval(sampler);
  sample();
  const ticks1 = cpuTicksOf(s.parts);
  if (ticks0 === null || ticks1 === null) rec.ticksKnown = false;
  else rec.ticks += ticks1 - ticks0;
  s.loadPeakMb = Math.max(s.loadPeakMb ?? 0, peak);
}

// ---------------------------------------------------------------- run
const result = {
  date: new Date().toISOString(),
  workspaces: N,
  rounds: ROUNDS,
  blockSeconds: BLOCK_SECONDS,
  populationChunk: CHUNK,
  machine: machine(),
  servers: {},
  population: {},
  rows: [],
};
const memory = (s) => memoryOf(s.parts, true);
try {
  await sleep(3000);
  for (const s of active()) s.restEmpty = memory(s);
  for (const s of active()) {
    try {
      await setup(s);
    } catch (e) {
      s.skip = `setup failed: ${e.message}`;
      console.log(`peers: ${s.label} ${s.skip}`);
    }
  }
  // Population: chunks alternate between the servers, so each is populated over the same stretch of time.
  const spent = new Map(active().map((s) => [s.key, 0]));
  for (let from = 0, round = 0; from < N; from += CHUNK, round++) {
    const to = Math.min(N, from + CHUNK);
    const order = rotate(active(), round);
    for (const s of order) {
      try {
        spent.set(s.key, spent.get(s.key) + (await populate(s, from, to)));
      } catch (e) {
        s.skip = `population failed at ${from}–${to}: ${e.message}`;
        console.log(`peers: ${s.label} ${s.skip}`);
      }
    }
    const rounds = Math.ceil(N / CHUNK);
    if (round % Math.max(1, Math.floor(rounds / 10)) === 0 || to === N) {
      console.log(
        `peers: populated ${to}/${N}: ${active()
          .map((s) => `${s.label} ${(to / spent.get(s.key)).toFixed(0)}/s`)
          .join(", ")}`,
      );
    }
  }
  for (const s of active()) result.population[s.key] = { workspaces: N, seconds: spent.get(s.key), perSecond: N / spent.get(s.key) };
  await sleep(3000);
  for (const s of active()) s.restPopulated = memory(s);

  for (const shape of SHAPES) {
    for (const c of CONCURRENCY) {
      for (const s of active()) for (let k = 0; k < WARMUP; k++) await runOne(s, shape, 0, null);
      for (let round = 0; round < ROUNDS; round++) for (const s of rotate(active(), round)) await block(s, shape, c);
      const line = [];
      for (const s of active()) {
        const row = summarize(s, shape, c);
        result.rows.push(row);
        line.push(`${s.label} p50 ${f(row.p50)} p99 ${f(row.p99)} ${f(row.perSecond, 0)}/s${row.failures ? ` FAILED ${row.failures}` : ""}`);
      }
      console.log(`peers: ${shape.name} c=${c}: ${line.join("; ")}`);
    }
  }
  await sleep(3000);
  for (const s of active()) s.restEnd = memory(s);
} catch (err) {
  console.error(`peers: ${err.stack ?? err}`);
  for (const s of active()) for (const l of s.logFiles) console.error(`--- ${l}\n${tail(l, 15)}`);
  process.exitCode = 1;
} finally {
  for (const s of all) await s.stop?.().catch(() => undefined);
}

function rotate(list, k) {
  return list.map((_, j) => list[(j + k) % list.length]);
}
function summarize(s, shape, c) {
  const rec = cell(s, shape, c);
  const sorted = [...rec.samples].sort((a, b) => a - b);
  const ops = rec.ok + rec.failures;
  return {
    server: s.key,
    shape: shape.key ?? shape.name,
    label: shape.name,
    concurrency: c,
    n: rec.ok,
    failures: rec.failures,
    errors: [...rec.errors].slice(0, 5).map(([message, count]) => ({ message, count })),
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    perSecond: rec.seconds ? ops / rec.seconds : null,
    cpuMsPerOp: rec.ticksKnown && ops ? (rec.ticks * (1000 / CLK_TCK)) / ops : null,
  };
}
function machine() {
  try {
    const cpu = readFileSync("/proc/cpuinfo", "utf8");
    return { cores: cpu.split("\n").filter((l) => l.startsWith("processor")).length, model: /model name\s*:\s*(.*)/.exec(cpu)?.[1] ?? "?" };
  } catch {
    return { cores: "?", model: "?" };
  }
}
function f(x, d = 1) {
  return x === null || x === undefined || Number.isNaN(x) ? "n/a" : x.toFixed(d);
}

// ---------------------------------------------------------------- report
const memOut = (m) =>
  m && {
    rssMb: Math.round(m.rssMb),
    pssMb: m.pssMb === null ? null : Math.round(m.pssMb),
    parts: m.parts.map((p) => ({ ...p, rssMb: Math.round(p.rssMb), pssMb: p.pssMb === null ? null : Math.round(p.pssMb) })),
  };
for (const s of all) {
  result.servers[s.key] = {
    label: s.label,
    version: s.version,
    skipped: s.skip,
    notes: s.notes,
    startSeconds: s.startSeconds ?? null,
    rss: {
      restEmpty: memOut(s.restEmpty),
      restPopulated: memOut(s.restPopulated),
      loadPeakMb: s.loadPeakMb ? Math.round(s.loadPeakMb) : null,
      restEnd: memOut(s.restEnd),
    },
  };
}
const measured = all.filter((s) => result.rows.some((r) => r.server === s.key));
const peers = all.filter((s) => s.key !== "ours");
const rowOf = (server, shape, c) => result.rows.find((r) => r.server === server && r.shape === shape && r.concurrency === c);
result.ratios = [];
for (const shape of SHAPES) {
  for (const c of CONCURRENCY) {
    const key = shape.key ?? shape.name;
    const mine = rowOf("ours", key, c);
    for (const p of peers) {
      const theirs = rowOf(p.key, key, c);
      result.ratios.push({
        shape: key,
        concurrency: c,
        peer: p.key,
        oursP50: mine?.p50 ?? null,
        peerP50: theirs?.p50 ?? null,
        ratio: mine?.p50 && theirs?.p50 ? mine.p50 / theirs.p50 : null,
        why: theirs ? null : (p.skip ?? "not measured"),
      });
    }
  }
}
const failuresTotal = result.rows.reduce((s, r) => s + r.failures, 0);
result.failures = failuresTotal;

const label = (key) => all.find((s) => s.key === key)?.label ?? key;
const memText = (m) =>
  m
    ? `${m.rssMb}${m.parts.length > 1 ? ` (${m.parts.map((p) => `${p.name} ${p.rssMb}${p.procs > 1 ? ` in ${p.procs} processes` : ""}`).join(", ")})` : ""}`
    : "n/a";
const pssText = (m) => (m?.pssMb === null || m?.pssMb === undefined ? "n/a" : String(m.pssMb));
const md = [
  `# Side by side ${result.date.slice(0, 10)}: ${measured.map((s) => s.label).join(", ")}${env.PEERS_LABEL ? ` (${env.PEERS_LABEL})` : ""}`,
  "",
  `${N} workspaces per server in one organisation (every tenth tagged \`critical\`, every seventh named \`…-prod\`), populated through each server's API. One machine (${result.machine.cores} cores, ${result.machine.model}); client, servers and databases share it. Same client for all (Node ${process.versions.node} fetch, keep-alive). Each shape and concurrency ran ${ROUNDS} blocks of ${BLOCK_SECONDS} s per server, alternating between the servers (the order rotates each round) after ${WARMUP} warm-up operations; every response is checked (status and JSON:API body: names, lengths, total counts) and failures are counted and left out of the latencies. Latency in ms per operation (lock + unlock is one operation of two requests); ops/s over the blocks; CPU = the server's CPU time per operation (all its processes, PostgreSQL included for OTF; /proc, 10 ms resolution).`,
  "",
  "## Servers",
  "",
  ...all.flatMap((s) => [
    `- **${s.label}**: ${s.skip ? `skipped: ${s.skip.split("\n")[0]}` : `${s.version}${s.startSeconds ? `; ready in ${f(s.startSeconds)} s` : ""}`}`,
    ...(s.skip ? [] : s.notes.map((n) => `  - ${n}`)),
  ]),
  "",
  "## Latency",
  "",
  "| shape | conc. | server | p50 | p99 | ops/s | CPU ms/op | n | failed |",
  "|---|---:|---|---:|---:|---:|---:|---:|---:|",
  ...SHAPES.flatMap((shape) =>
    CONCURRENCY.flatMap((c) =>
      measured.map((s) => {
        const r = rowOf(s.key, shape.key ?? shape.name, c);
        return r
          ? `| ${shape.name} | ${c} | ${s.label} | ${f(r.p50)} | ${f(r.p99)} | ${f(r.perSecond, 0)} | ${f(r.cpuMsPerOp, 2)} | ${r.n} | ${r.failures} |`
          : `| ${shape.name} | ${c} | ${s.label} | n/a | n/a | n/a | n/a | 0 | – |`;
      }),
    ),
  ),
  "",
  "## p50 ratio ours ÷ peer (below 1: ours is faster)",
  "",
  ...(all.some((s) => s.key === "floor")
    ? [
        "The runtime floor is no peer: it is what the same hops cost on this service's runtime with no service logic, so a peer faster than the floor is faster than anything this runtime can serve the shape with.",
        "",
      ]
    : []),
  `| shape | conc. | ours p50 | ${peers.map((p) => `${p.label} p50 | ours ÷ ${p.label}`).join(" | ")} |`,
  `|---|---:|---:|${peers.map(() => "---:|---:").join("|")}|`,
  ...SHAPES.flatMap((shape) =>
    CONCURRENCY.map((c) => {
      const key = shape.key ?? shape.name;
      const cols = peers.map((p) => {
        const r = result.ratios.find((x) => x.shape === key && x.concurrency === c && x.peer === p.key);
        return `${f(r?.peerP50)} | ${r?.ratio ? f(r.ratio, 2) : "n/a"}`;
      });
      return `| ${shape.name} | ${c} | ${f(rowOf("ours", key, c)?.p50)} | ${cols.join(" | ")} |`;
    }),
  ),
  "",
  "## Population through the API (`POST /organizations/:org/workspaces`, concurrency 8)",
  "",
  "| server | workspaces | seconds | workspaces/s |",
  "|---|---:|---:|---:|",
  ...Object.entries(result.population).map(([k, p]) => `| ${label(k)} | ${p.workspaces} | ${f(p.seconds)} | ${f(p.perSecond, 0)} |`),
  "",
  `Chunks of ${CHUNK} alternate between the servers; the rate is the count over the time spent on that server.`,
  "",
  "## Memory (MB)",
  "",
  "RSS is the sum over all of the server's processes; PostgreSQL's shared buffers appear in the RSS of each backend that touched them, so for OTF the PSS (shared pages divided among their users) is the fairer total. Under load: the peak RSS sampled every 200 ms while that server was being measured.",
  "",
  "| server | RSS at rest, empty | RSS at rest, populated | RSS peak under load | RSS at rest, end | PSS at rest, populated | PSS at rest, end |",
  "|---|---|---|---:|---|---:|---:|",
  ...measured.map((s) => {
    const m = result.servers[s.key].rss;
    return `| ${s.label} | ${memText(m.restEmpty)} | ${memText(m.restPopulated)} | ${m.loadPeakMb ?? "n/a"} | ${memText(m.restEnd)} | ${pssText(m.restPopulated)} | ${pssText(m.restEnd)} |`;
  }),
  "",
  `## Checks: ${failuresTotal} failed operation${failuresTotal === 1 ? "" : "s"}`,
  "",
  ...(failuresTotal
    ? result.rows
        .filter((r) => r.failures)
        .flatMap((r) => [`- ${label(r.server)}, ${r.label}, c=${r.concurrency}: ${r.failures} failed`, ...r.errors.map((e) => `  - ${e.count}× ${e.message}`)])
    : ["Every response of every measured operation had the expected status and body."]),
  "",
];
const dir = join(root, "bench", "results");
mkdirSync(dir, { recursive: true });
const stem = join(dir, `side-by-side${N === 10_000 ? "" : `-${N}`}${ONLY.length < 4 ? `-${ONLY.join("-")}` : ""}`);
writeFileSync(`${stem}.json`, `${JSON.stringify(result, null, 2)}\n`);
writeFileSync(`${stem}.md`, md.join("\n"));
console.log(`\n${md.join("\n")}\npeers: wrote ${stem}.md and .json`);
if (process.exitCode) process.exit(process.exitCode);
