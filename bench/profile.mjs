#!/usr/bin/env node
// Where a bench shape's time goes: the service and the floor (bench/floor/) start as `npm start` runs them, each on a
// store of its own with workerd's V8 inspector on (scripts/start.mjs: PROFILE_INSPECTOR); a few workspaces are
// populated through the API with an ordinary user's token (as `npm run bench` does) and the floor seeded the same way;
// after a warm-up, a CPU profile is recorded over the DevTools protocol (Profiler.*, sampling every --interval µs)
// in each Worker's isolate and in the D1 simulator's while N operations of the shape run one at a time on each,
// alternating the service and the floor as `npm run bench` does (so both see the same machine). The report
// gives the sampled self time per operation by kind (our code under src/, each library, the runtime), by source file
// and by function (top 25), the floor's beside, and the workerd CPU per operation from /proc (profiler on).
//
// The local run loads the Worker as `wrangler deploy --dry-run` bundles it (not minified, so function names survive;
// esbuild renames a clashing one `name2`): the same build is made here for its source map, used when it matches the
// loaded script byte for byte; otherwise files come from the bundle's `// path` module markers.
//
// `npm run bench:profile [-- --shape "show by name"|"lock + unlock"|create[,…]] [--count N] [--size W] [--interval µs]`
// Results: bench/results/profile-<shape>.md. Needs Node 22+ (its WebSocket) and Linux for the CPU column (/proc).
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { SourceMap } from "node:module";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { freePort, killAllGroups, sleep, spawnStart, tail } from "../scripts/lib/service.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values: opt } = parseArgs({
  options: {
    shape: { type: "string", default: "show by name,lock + unlock,create" },
    count: { type: "string", default: "300" },
    size: { type: "string", default: "200" },
    interval: { type: "string", default: "100" },
    top: { type: "string", default: "25" },
    // Also sample workerd's native code with `perf record` (the runtime's C++, SQLite, the kernel).
    perf: { type: "boolean", default: false },
    // Without EXPOSE_HOPS=1 (the bench sets it: each object call then also reports its index writes).
    "no-hops": { type: "boolean", default: false },
    out: { type: "string", default: join("bench", "results") }, // where profile-<shape>.md goes
  },
});
const SHAPES = opt.shape.split(",").map((s) => s.trim());
const N = Number(opt.count);
const SIZE = Number(opt.size);
const TOP = Number(opt.top);
const CLK_TCK = 100;
if (typeof WebSocket !== "function") throw new Error("bench/profile.mjs needs Node 22+ (a global WebSocket): run it with npm run bench:profile");

const work = mkdtempSync(join(tmpdir(), "profile-"));
const logFile = join(work, "server.log");
const token = `${randomBytes(7).toString("hex")}.atlasv1.${randomBytes(32).toString("hex")}`;
process.on("exit", () => {
  killAllGroups();
  rmSync(work, { recursive: true, force: true });
});
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => process.exit(130));

// ---------------------------------------------------------------- the servers
/** scripts/start.mjs on a store of its own, its inspector on `inspector`; answers its process group. */
function start(name, port, inspector, env = {}) {
  const store = join(work, name);
  mkdirSync(store);
  return spawnStart({
    root,
    store,
    token,
    logFile,
    port,
    env: {
      EDITION: "self-hosted",
      NO_AGENT: "1",
      EXPOSE_HOPS: name === "service" && !opt["no-hops"] ? "1" : undefined, // as \`npm run bench\` runs the service
      PROFILE_INSPECTOR: `127.0.0.1:${inspector}`,
      ...env,
    },
  }).pid;
}
/** The group's workerd processes: their pids and CPU ticks, user and system. */
function workerds(pgid) {
  const out = { pids: [], user: 0, sys: 0 };
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const close = stat.lastIndexOf(")");
      const f = stat.slice(close + 2).split(" ");
      if (Number(f[2]) !== pgid || !stat.slice(stat.indexOf("(") + 1, close).startsWith("workerd")) continue;
      out.pids.push(Number(d));
      out.user += Number(f[11]);
      out.sys += Number(f[12]);
    } catch {}
  }
  return out;
}
async function waitUp(base, path, ok) {
  for (const until = Date.now() + 180_000; Date.now() < until; await sleep(300)) {
    try {
      if (ok((await fetch(`${base}${path}`, { headers: { Authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(3000) })).status)) return;
    } catch {}
  }
  throw new Error(`${base} did not answer:\n${tail(logFile)}`);
}

// The bundle as the local run loads it, with its source map (worker-prepare.mjs makes the same build).
const bundleDir = join(work, "bundle");
const bundled = new Promise((ok, fail) => {
  const child = spawn(join(root, "node_modules", ".bin", "wrangler"), ["deploy", "--dry-run", "--outdir", bundleDir], {
    cwd: root,
    env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" },
    stdio: "ignore",
  });
  child.on("error", fail);
  child.on("exit", (code) => (code === 0 ? ok() : fail(new Error(`wrangler deploy --dry-run failed (${code})`))));
});
bundled.catch(() => undefined);

const [port, floorPort, inspector, floorInspector] = [await freePort(), await freePort(), await freePort(), await freePort()];
const service = { name: "service", base: `http://127.0.0.1:${port}`, inspector, pgid: start("service", port, inspector) };
const floor = {
  name: "floor",
  base: `http://127.0.0.1:${floorPort}`,
  inspector: floorInspector,
  pgid: start("floor", floorPort, floorInspector, { WORKER_CONFIG: join("bench", "floor", "wrangler.toml") }),
};
const SERVERS = [service, floor];

// ---------------------------------------------------------------- HTTP
const headers = { Authorization: `Bearer ${token}`, "Content-Type": "application/vnd.api+json" };
async function call(method, path, body) {
  const res = await fetch(`${service.base}/api/v2${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}
async function floorCall(method, path) {
  const res = await fetch(`${floor.base}${path}`, { method });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`floor ${method} ${path}: ${res.status} ${text.slice(0, 200)}`);
  return text;
}

// ---------------------------------------------------------------- the DevTools protocol
/** One inspector session on `target` (an isolate: its id in /json/list). */
async function session(port, target) {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/${target}`);
  const pending = new Map();
  const scripts = [];
  let seq = 0;
  ws.onmessage = (e) => {
    const m = JSON.parse(e.data);
    if (m.method === "Debugger.scriptParsed") scripts.push(m.params);
    // workerd answers some Profiler commands by echoing them (their method, no result).
    else if (m.id && pending.has(m.id)) {
      const { ok, fail } = pending.get(m.id);
      pending.delete(m.id);
      if (m.error) fail(new Error(`${target}: ${JSON.stringify(m.error)}`));
      else ok(m.result);
    }
  };
  await new Promise((ok, fail) => {
    ws.onopen = ok;
    ws.onerror = () => fail(new Error(`no inspector session on ${target}`));
  });
  const send = (method, params = {}) =>
    new Promise((ok, fail) => {
      const id = ++seq;
      pending.set(id, { ok, fail });
      ws.send(JSON.stringify({ id, method, params }));
      setTimeout(() => {
        if (!pending.delete(id)) return;
        fail(new Error(`${target}: ${method} had no answer`));
      }, 30_000).unref();
    });
  return { send, scripts, close: () => ws.close() };
}
/** @returns {Promise<string[]>} the inspector's targets (one per isolate) */
const isolates = async (port) => {
  const targets = /** @type {{ id: string }[]} */ (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json());
  return targets.map((t) => t.id);
};

// ---------------------------------------------------------------- attribution
/** Where a bundled position comes from: the source map when it matches the loaded script, else the module markers. */
async function bundleLocator(script) {
  const markers = [];
  script.split("\n").forEach((line, i) => {
    const m = /^\/\/ ((?:node_modules|src|\.wrangler|\.\.)\/\S+)$/.exec(line);
    if (m) markers.push([i, m[1]]);
  });
  const byMarker = (line) => {
    let lo = 0;
    let hi = markers.length - 1;
    let found = null;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (markers[mid][0] <= line) {
        found = markers[mid][1];
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return { file: found ?? "(bundle)", line: null };
  };
  try {
    await bundled;
    const built = readFileSync(join(bundleDir, "index.js"), "utf8");
    if (!script.startsWith(built)) throw new Error("the loaded script is not this build");
    const map = new SourceMap(JSON.parse(readFileSync(join(bundleDir, "index.js.map"), "utf8")));
    return {
      how: "source map",
      at(line, column) {
        const e = /** @type {Partial<import("node:module").SourceMapping>} */ (map.findEntry(line, column));
        if (!e?.originalSource || e.originalLine === undefined) return byMarker(line);
        const abs = e.originalSource.startsWith("file://") ? fileURLToPath(e.originalSource) : resolve(bundleDir, e.originalSource);
        return { file: relative(root, abs), line: e.originalLine + 1 };
      },
    };
  } catch (err) {
    return { how: `module markers (${err.message})`, at: byMarker };
  }
}
const RUNTIME_NODES = new Set(["(program)", "(garbage collector)", "(root)", "(idle)"]);
/** A file's kind: ours (src/), a library (its npm name), or the runtime. */
function kindOf(file) {
  if (file.startsWith("src/")) return "ours";
  if (file.startsWith("bench/floor/")) return "the floor's code";
  const nm = file.lastIndexOf("node_modules/");
  if (nm >= 0) {
    const [a, b] = file.slice(nm + "node_modules/".length).split("/");
    return `lib: ${a.startsWith("@") ? `${a}/${b}` : a}`;
  }
  if (file.startsWith(".wrangler/") || file.includes("wrangler")) return "lib: wrangler (build shims)";
  return "runtime";
}

/** Self time (ms) per kind, file and function of one isolate's profile. */
async function attribute(profile, scriptsById, locators) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  const { samples, timeDeltas } = profile;
  // V8 samples an isolate only while a thread has entered it, so the time from one sample to the next also holds any
  // stretch the isolate was not running (waiting on I/O, another isolate running). A sample stands for one period of
  // the sampler as it ran (the 10th percentile of the intervals: consecutive samples inside the isolate), so the total
  // is the time spent inside the isolate, not the wall time it was profiled for.
  const sortedDeltas = timeDeltas.slice(1).sort((a, b) => a - b);
  const period = Math.min(sortedDeltas[Math.floor(sortedDeltas.length / 10)] ?? Number(opt.interval), 4 * Number(opt.interval));
  for (const id of samples) self.set(id, (self.get(id) ?? 0) + period / 1000);
  const byKind = new Map();
  const byFile = new Map();
  const byFn = new Map();
  const add = (m, k, v, extra) => {
    const e = m.get(k) ?? { ms: 0, ...extra };
    e.ms += v;
    m.set(k, e);
  };
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  /** The bundle's frame nearest `id` (itself or an ancestor): who, in the Worker's code, is paying for it. */
  const nearestBundled = (id) => {
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const cf = nodes.get(at).callFrame;
      const locator = locators.get(cf.scriptId);
      if (locator) return { cf, ...locator.at(cf.lineNumber, cf.columnNumber) };
    }
    return null;
  };
  const byPayer = new Map(); // kinds, each runtime sample counted to the Worker's frame that called into the runtime
  const byCaller = new Map(); // runtime functions by that frame
  let idle = 0;
  for (const [id, ms] of self) {
    const { callFrame: cf } = nodes.get(id);
    if (cf.functionName === "(idle)") {
      idle += ms;
      continue;
    }
    let file;
    let line = null;
    const locator = locators.get(cf.scriptId);
    if (RUNTIME_NODES.has(cf.functionName)) file = cf.functionName;
    else if (locator) ({ file, line } = locator.at(cf.lineNumber, cf.columnNumber));
    else file = cf.url || scriptsById.get(cf.scriptId)?.url || "(native)";
    const kind = RUNTIME_NODES.has(cf.functionName) || !locator ? "runtime" : kindOf(file);
    add(byKind, kind, ms);
    add(byFile, file, ms, { kind });
    const fn = `${cf.functionName || "(anonymous)"} ${file}${line ? `:${line}` : ""}`;
    add(byFn, fn, ms, { kind });
    const payer = kind === "runtime" ? nearestBundled(id) : null;
    add(byPayer, payer ? kindOf(payer.file) : kind, ms);
    if (payer) {
      const name = `${cf.functionName || "(anonymous)"}${cf.url ? ` ${cf.url}` : ""} ← ${payer.cf.functionName || "(anonymous)"} ${payer.file}${payer.line ? `:${payer.line}` : ""}`;
      add(byCaller, name, ms, { kind: kindOf(payer.file) });
    }
  }
  return { byKind, byFile, byFn, byPayer, byCaller, idle, samples: samples.length, period };
}

/**
 * `perf record` on workerd's processes until stop(n): answers ms per operation by where the native samples fell (the
 * JavaScript V8 ran, V8 itself, SQLite, workerd and its libraries, the kernel) and the top symbols.
 */
function perfRecord(pids) {
  const data = join(work, `perf-${pids[0]}.data`);
  const hz = 2000;
  const child = spawn("perf", ["record", "-q", "-e", "cpu-clock", "-F", String(hz), "-o", data, "-p", pids.join(",")], { stdio: "ignore" });
  return {
    async stop(n) {
      child.kill("SIGINT");
      await new Promise((r) => child.on("exit", r));
      const report = await new Promise((ok) => {
        const p = spawn("perf", ["report", "-i", data, "--stdio", "--no-children", "-F", "overhead,sample,dso,sym", "--percent-limit", "0"], {
          stdio: ["ignore", "pipe", "ignore"],
        });
        let text = "";
        p.stdout.on("data", (d) => (text += d));
        p.on("exit", () => ok(text));
      });
      const groups = new Map();
      const symbols = [];
      for (const line of report.split("\n")) {
        const m = /^\s*[\d.]+%\s+(\d+)\s+(\S+)\s+\[(.)\]\s+(.*)$/.exec(line);
        if (!m) continue;
        const [, samples, dso, where, sym] = m;
        const ms = (Number(samples) * 1000) / hz / n;
        const group =
          where === "k"
            ? "kernel"
            : dso.startsWith("perf-") || dso === "[JIT]" || dso === "[unknown]" || /^Builtins_|^0x[0-9a-f]+$/.test(sym.trim())
              ? "JavaScript (V8's interpreter, builtins, compiled code)"
              : /sqlite3/i.test(sym)
                ? "SQLite"
                : /^v8::internal::(Heap|Scavenger|MarkCompact|Sweeper|Marking|Evacuat|Concurrent|MemoryAllocator|PagedSpace)|^cppgc::/.test(sym)
                  ? "V8's garbage collector"
                  : /^v8::|^v8_/.test(sym)
                    ? "V8's runtime (C++: API calls, property lookup, parser, compiler)"
                    : /tcmalloc|^(operator new|operator delete|malloc|free)\b/.test(sym)
                      ? "malloc (tcmalloc)"
                      : /^(kj|capnp)::/.test(sym)
                        ? "kj / capnp (I/O, RPC, strings)"
                        : /^workerd::/.test(sym)
                          ? "workerd (its APIs, actors, I/O)"
                          : dso === "workerd"
                            ? "other native code in workerd (C libraries: SQLite's VFS, BoringSSL, zlib, …)"
                            : `${dso}`;
        groups.set(group, (groups.get(group) ?? 0) + ms);
        symbols.push({ sym: sym.trim().slice(0, 120), dso, group, ms });
      }
      symbols.sort((a, b) => b.ms - a.ms);
      return { groups, symbols: symbols.slice(0, TOP) };
    },
  };
}

// ---------------------------------------------------------------- the shapes
const ORG = `prof-${Date.now().toString(36)}`;
const CREATE_ORG = `${ORG}-c`;
const wsName = (i) => `ws-${String(i).padStart(6, "0")}`;
const pick = (i) => Math.abs(Math.imul(i + 7, 2654435761)) % SIZE;
let createSeq = 0;
let floorCreateSeq = 0;
let lockId;
let docBytes = 1500;
const OPS = {
  "show by name": {
    service: (i) => call("GET", `/organizations/${ORG}/workspaces/${wsName(pick(i))}`),
    floor: (i) => floorCall("GET", `/name/${wsName(pick(i))}`),
  },
  "lock + unlock": {
    service: async () => {
      await call("POST", `/workspaces/${lockId}/actions/lock`, { reason: "profile" });
      await call("POST", `/workspaces/${lockId}/actions/unlock`);
    },
    floor: async () => {
      await floorCall("POST", `/lock/lock-0?bytes=${docBytes}`);
      await floorCall("POST", `/unlock/lock-0?bytes=${docBytes}`);
    },
  },
  create: {
    service: () => call("POST", `/organizations/${CREATE_ORG}/workspaces`, { data: { type: "workspaces", attributes: { name: `c-${createSeq++}` } } }),
    floor: () => floorCall("POST", `/create/c-${floorCreateSeq++}?bytes=${docBytes}`),
  },
};
for (const s of SHAPES) if (!OPS[s]) throw new Error(`unknown shape "${s}" (one of: ${Object.keys(OPS).join(", ")})`);

/**
 * Runs `ops[server]` n times for each server, one operation at a time, alternating the service and the floor as
 * `npm run bench` does (which goes first alternates too), so both see the same machine; answers, per server, the
 * operations' wall time and workerd CPU (/proc) per operation.
 */
async function interleaved(shape, n, from) {
  const before = Object.fromEntries(SERVERS.map((x) => [x.name, workerds(x.pgid)]));
  const wall = { service: 0, floor: 0 };
  for (let i = from; i < from + n; i++) {
    for (const x of i % 2 ? [floor, service] : [service, floor]) {
      const t = performance.now();
      await OPS[shape][x.name](i);
      wall[x.name] += performance.now() - t;
    }
  }
  const out = {};
  for (const x of SERVERS) {
    const after = workerds(x.pgid);
    const ms = (k) => ((after[k] - before[x.name][k]) * (1000 / CLK_TCK)) / n;
    out[x.name] = { cpuMs: ms("user") + ms("sys"), sysMs: ms("sys"), wallMs: wall[x.name] / n };
  }
  return out;
}

/** Profiles `shape` on both servers at once (interleaved); answers per server its isolates' attributions and CPU. */
async function profiled(shape, n) {
  for (let i = 0; i < 30; i++) for (const x of SERVERS) await OPS[shape][x.name](-1 - i); // warm-up: JIT, caches
  const sessions = [];
  for (const x of SERVERS) {
    for (const t of (await isolates(x.inspector)).filter((id) => id.startsWith("core:user:") || id === "d1:db")) {
      const s = await session(x.inspector, t);
      sessions.push({ server: x, t, s });
      await s.send("Profiler.enable");
      await s.send("Profiler.setSamplingInterval", { interval: Number(opt.interval) });
    }
  }
  await Promise.all(sessions.map(({ s }) => s.send("Profiler.start")));
  const measured = await interleaved(shape, n, 0);
  const result = Object.fromEntries(SERVERS.map((x) => [x.name, { isolates: [], ...measured[x.name], native: null }]));
  for (const { server, t, s } of sessions) {
    const { profile } = await s.send("Profiler.stop");
    await s.send("Profiler.disable");
    // Scripts, for the bundle's source and the runtime's module names.
    await s.send("Debugger.enable");
    await sleep(300);
    const scriptsById = new Map(s.scripts.map((x) => [x.scriptId, x]));
    const locators = new Map();
    const main = t.startsWith("core:user:") && s.scripts.filter((x) => x.url.startsWith("file://")).sort((a, b) => b.length - a.length)[0];
    if (main && server === service)
      locators.set(main.scriptId, await bundleLocator((await s.send("Debugger.getScriptSource", { scriptId: main.scriptId })).scriptSource));
    else if (main) locators.set(main.scriptId, { how: "floor", at: (line) => ({ file: "bench/floor/index.mjs", line: line + 1 }) });
    await s.send("Debugger.disable");
    s.close();
    result[server.name].isolates.push({ target: t, how: [...locators.values()][0]?.how ?? null, ...(await attribute(profile, scriptsById, locators)) });
  }
  // The native pass runs after the V8 profile, not during it: the V8 sampler's signals would be in it.
  if (opt.perf) {
    const perfs = SERVERS.map((x) => perfRecord(workerds(x.pgid).pids));
    await sleep(500);
    const pass = await interleaved(shape, n, n);
    for (const [i, x] of SERVERS.entries()) {
      result[x.name].native = await perfs[i].stop(n);
      result[x.name].native.cpuMs = pass[x.name].cpuMs;
    }
  }
  return result;
}

// ---------------------------------------------------------------- run
try {
  await waitUp(service.base, "/api/v2/ping", (s) => s === 204);
  await waitUp(floor.base, "/none", (s) => s === 404); // the floor answers 404 to what it does not serve
  const me = (await call("POST", "/admin/users", { data: { type: "users", attributes: { username: ORG, email: `${ORG}@example.com` } } })).data.id;
  const userToken = (
    await call("POST", `/users/${me}/authentication-tokens`, { data: { type: "authentication-tokens", attributes: { description: "profile" } } })
  ).data.attributes.token;
  headers.Authorization = `Bearer ${userToken}`;
  for (const name of [ORG, CREATE_ORG]) await call("POST", "/organizations", { data: { type: "organizations", attributes: { name, email: "p@example.com" } } });
  lockId = (await call("POST", `/organizations/${CREATE_ORG}/workspaces`, { data: { type: "workspaces", attributes: { name: "lock-0" } } })).data.id;
  let next = 0;
  const populate = (one) =>
    Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let i = next++; i < SIZE; i = next++) await one(i);
      }),
    );
  await populate((i) => call("POST", `/organizations/${ORG}/workspaces`, { data: { type: "workspaces", attributes: { name: wsName(i) } } }));
  docBytes = (await call("GET", `/organizations/${ORG}/workspaces/${wsName(0)}`).then(JSON.stringify)).length;
  await floorCall("POST", "/seed");
  next = 0;
  await populate((i) => floorCall("POST", `/create/${wsName(i)}?id=f-${i}&bytes=${docBytes}`));
  await floorCall("POST", `/create/lock-0?id=lock-0&bytes=${docBytes}`);
  console.log(`profile: ${SIZE} workspaces in the service and the floor`);
  await sleep(3000); // outbox alarms settle

  for (const shape of SHAPES) {
    const result = { shape, n: N, date: new Date().toISOString() };
    Object.assign(result, await profiled(shape, N));
    console.log(`profile: ${shape}: profiled (${N} operations each, interleaved with the floor)`);
    const md = report(result);
    const file = resolve(root, opt.out, `profile-${shape.replace(/[^a-z0-9]+/gi, "-").toLowerCase()}.md`);
    writeFileSync(file, md);
    console.log(`\n${md}\nprofile: wrote ${relative(root, file)}\n`);
  }
} catch (err) {
  console.error(`profile: ${err.stack ?? err}\nserver log:\n${tail(logFile)}`);
  process.exitCode = 1;
}
process.exit();

// ---------------------------------------------------------------- report
function report(r) {
  const f = (x, d = 2) => (x === null || x === undefined ? "n/a" : x.toFixed(d));
  const per = (ms) => ms / r.n;
  const sum = (m) => [...m.values()].reduce((s, e) => s + (typeof e === "number" ? e : e.ms), 0);
  const user = (x) => x.isolates.find((i) => i.target.startsWith("core:user:"));
  const d1 = (x) => x.isolates.find((i) => i.target === "d1:db");
  const [s, fl] = [user(r.service), user(r.floor)];
  const sorted = (m) => [...m.entries()].sort((a, b) => b[1].ms - a[1].ms);
  const kinds = sorted(s.byKind);
  /** A table's header and its top rows: `name`'s ms per operation and share of the service's isolate. */
  const topShares = (name, m, label) => [
    `| ${name} | kind | ms/op | share |`,
    "|---|---|---:|---:|",
    ...sorted(m)
      .slice(0, TOP)
      .map(([k, e]) => `| ${label(k)} | ${e.kind} | ${f(per(e.ms), 3)} | ${f((100 * e.ms) / sum(s.byKind), 1)}% |`),
  ];
  const lines = [
    `# Profile: ${r.shape} (${r.n} operations at concurrency 1, ${r.date.slice(0, 10)})`,
    "",
    `\`npm run bench:profile -- --shape "${r.shape}" --count ${r.n}${opt.perf ? " --perf" : ""}${opt["no-hops"] ? " --no-hops" : ""}\` (the service ${opt["no-hops"] ? "without" : "with"} EXPOSE_HOPS=1): service and floor operations interleaved (as \`npm run bench\` runs them), V8's sampling profiler (every ${opt.interval} µs) in each Worker's isolate (the Worker and its Durable Objects) and in the local D1's isolate, ${SIZE} workspaces, ${cpus().length} cores, load average ${loadavg()[0].toFixed(1)} at the end. Self time in ms per operation${r.shape === "lock + unlock" ? " (a lock and an unlock)" : ""}, attributed through the bundle's ${s.how}. The profiler itself slows the isolate; the shares are what to read.`,
    "",
    "| | service | floor | service − floor |",
    "|---|---:|---:|---:|",
    `| workerd CPU (/proc, profiler on) | ${f(r.service.cpuMs)} | ${f(r.floor.cpuMs)} | ${f(r.service.cpuMs - r.floor.cpuMs)} |`,
    `| of which system (the kernel: writes, fsyncs, sockets) | ${f(r.service.sysMs)} | ${f(r.floor.sysMs)} | ${f(r.service.sysMs - r.floor.sysMs)} |`,
    `| wall time per operation | ${f(r.service.wallMs)} | ${f(r.floor.wallMs)} | ${f(r.service.wallMs - r.floor.wallMs)} |`,
    `| the Worker's isolate, sampled | ${f(per(sum(s.byKind)))} | ${f(per(sum(fl.byKind)))} | ${f(per(sum(s.byKind) - sum(fl.byKind)))} |`,
    `| the local D1's isolate, sampled | ${f(per(sum(d1(r.service).byKind)))} | ${f(per(sum(d1(r.floor).byKind)))} | ${f(per(sum(d1(r.service).byKind) - sum(d1(r.floor).byKind)))} |`,
    `| samples (sampler period, µs): the Worker's isolate, D1's | ${s.samples} (${s.period}), ${d1(r.service).samples} (${d1(r.service).period}) | ${fl.samples} (${fl.period}), ${d1(r.floor).samples} (${d1(r.floor).period}) | |`,
    "",
    "Sampled time is time inside an isolate (a sample counts for one sampler period). The rest of workerd's CPU is outside the isolates: its HTTP server and client, the RPC between the isolates, the structured log, the event loop. A frame that calls into the runtime synchronously holds that work as its own self time: the frame that calls a Durable Object stub (the RPC proxy of `src/platform/hops.ts`, the floor's `fetch`) holds the call's start, for a create the new object's start (its SQLite files opened).",
    "",
    ...nativeSection(r, f),
    "The service's isolate by kind (self time, ms per operation; the floor's isolate for comparison):",
    "",
    "| kind | ms/op | share |",
    "|---|---:|---:|",
    ...kinds.map(([k, e]) => `| ${k} | ${f(per(e.ms))} | ${f((100 * e.ms) / sum(s.byKind), 0)}% |`),
    `| **the floor's isolate, all of it** | ${f(per(sum(fl.byKind)))} | |`,
    ...sorted(fl.byKind).map(([k, e]) => `| floor: ${k} | ${f(per(e.ms))} | |`),
    "",
    "The same with each runtime sample counted to the Worker's frame that called into the runtime (a Response built by hono counts to hono; the runtime row keeps what no Worker frame called: GC, the event loop's callbacks):",
    "",
    "| kind | ms/op | share | floor ms/op |",
    "|---|---:|---:|---:|",
    ...sorted(s.byPayer).map(([k, e]) => `| ${k} | ${f(per(e.ms))} | ${f((100 * e.ms) / sum(s.byKind), 0)}% | |`),
    ...sorted(fl.byPayer).map(([k, e]) => `| floor: ${k} | | | ${f(per(e.ms))} |`),
    "",
    `Runtime calls by the Worker's frame that made them (top ${TOP}):`,
    "",
    "| runtime function ← caller | caller's kind | ms/op |",
    "|---|---|---:|",
    ...sorted(s.byCaller)
      .slice(0, TOP)
      .map(([k, e]) => `| \`${k}\` | ${e.kind} | ${f(per(e.ms), 3)} |`),
    "",
    `The service's isolate by file (top ${TOP}):`,
    "",
    ...topShares("file", s.byFile, (k) => k),
    "",
    `The service's isolate by function (top ${TOP}):`,
    "",
    ...topShares("function", s.byFn, (k) => `\`${k}\``),
    "",
    "Our code (src/) by function (top 15):",
    "",
    "| function | ms/op |",
    "|---|---:|",
    ...sorted(s.byFn)
      .filter(([, e]) => e.kind === "ours")
      .slice(0, 15)
      .map(([k, e]) => `| \`${k}\` | ${f(per(e.ms), 3)} |`),
    "",
    "The floor's isolate by function (top 10):",
    "",
    "| function | ms/op |",
    "|---|---:|",
    ...sorted(fl.byFn)
      .slice(0, 10)
      .map(([k, e]) => `| \`${k}\` | ${f(per(e.ms), 3)} |`),
    "",
    "The local D1's isolate by function (top 10), service | floor:",
    "",
    "| function | service ms/op | floor ms/op |",
    "|---|---:|---:|",
    ...sorted(d1(r.service).byFn)
      .slice(0, 10)
      .map(([k, e]) => `| \`${k}\` | ${f(per(e.ms), 3)} | ${f(per(d1(r.floor).byFn.get(k)?.ms ?? 0), 3)} |`),
    "",
  ];
  return lines.join("\n");
}

/** workerd's native samples (--perf): where all of its CPU went, service beside floor. */
function nativeSection(r, f) {
  if (!r.service.native) return [];
  const [s, fl] = [r.service.native, r.floor.native];
  const groups = [...new Set([...s.groups.keys(), ...fl.groups.keys()])].sort((a, b) => (s.groups.get(b) ?? 0) - (s.groups.get(a) ?? 0));
  const total = (g) => [...g.values()].reduce((a, b) => a + b, 0);
  return [
    `All of workerd's CPU by where \`perf record\` (cpu-clock at 2,000 Hz, every workerd thread; a second interleaved pass of ${r.n} operations without the V8 profiler, workerd CPU from /proc in it: service ${f(s.cpuMs)}, floor ${f(fl.cpuMs)} ms/op) found it, ms per operation:`,
    "",
    "| where | service | floor | service − floor |",
    "|---|---:|---:|---:|",
    ...groups.map((g) => `| ${g} | ${f(s.groups.get(g) ?? 0)} | ${f(fl.groups.get(g) ?? 0)} | ${f((s.groups.get(g) ?? 0) - (fl.groups.get(g) ?? 0))} |`),
    `| all | ${f(total(s.groups))} | ${f(total(fl.groups))} | ${f(total(s.groups) - total(fl.groups))} |`,
    "",
    `The service's workerd by native symbol (top ${TOP}):`,
    "",
    "| symbol | where | ms/op |",
    "|---|---|---:|",
    ...s.symbols.map((x) => `| \`${x.sym.replace(/\|/g, "\\|")}\` | ${x.group} | ${f(x.ms, 3)} |`),
    "",
  ];
}
