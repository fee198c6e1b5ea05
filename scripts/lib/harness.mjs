// The harnesses' shared parts (scripts/clients.mjs, scripts/ui.mjs, the store checks, bench/, test/restart/): named
// steps counted PASS/FAIL, checks, waits, a listening server's port, the JSON:API call, exit handlers and /proc
// readings of a process group. Starting and stopping the service is scripts/lib/service.mjs. Node built-ins only.
import { existsSync, readdirSync, readFileSync } from "node:fs";

export const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));

/**
 * A check that failed: its message, and for scripts/clients.mjs the command's result and the client exchanges that
 * explain it (`related`: [{ label, match(record) => bool, pick?: [attribute names], since?, all? }]).
 */
export class StepError extends Error {
  /** @param {string} message @param {any} [result] @param {any[]} [related] */
  constructor(message, result, related) {
    super(message);
    this.result = result;
    this.related = related;
  }
}

/**
 * Fails the step with `message` unless `cond` holds.
 * @param {unknown} cond @param {string} message @param {any} [result] @param {any[]} [related]
 */
export function check(cond, message, result, related) {
  if (!cond) throw new StepError(message, result, related);
}

/** @typedef {{ name: string, ok: boolean, seconds: number, detail: string[] }} StepResult */

/**
 * A step runner: `step(name, fn)` runs `fn`, prints "PASS|FAIL  <seconds> s  <name>" and the failure's lines, and
 * records the result. `only` skips steps whose name does not match; `before()` answers a mark given to
 * `describe(error, mark)`, which answers the failure's lines; `after()` runs whatever the step did.
 * @param {{ only?: RegExp | null, before?: () => any, describe?: (e: any, mark: any) => string[], after?: () => void }} [options]
 */
export function stepRunner({ only = null, before = () => undefined, describe = describeError, after = () => {} } = {}) {
  /** @type {StepResult[]} */
  const results = [];
  /** @param {string} name @param {() => Promise<void>} fn */
  async function step(name, fn) {
    if (only && !only.test(name)) return;
    const mark = before();
    const started = Date.now();
    let ok = true;
    /** @type {string[]} */
    let detail = [];
    try {
      await fn();
    } catch (e) {
      ok = false;
      detail = describe(e, mark);
    } finally {
      after();
    }
    const seconds = (Date.now() - started) / 1000;
    results.push({ name, ok, seconds, detail });
    console.log(`${ok ? "PASS" : "FAIL"}  ${seconds.toFixed(1).padStart(6)} s  ${name}`);
    for (const l of detail) console.log(`        ${l}`);
  }
  const passed = () => results.filter((r) => r.ok).length;
  return { step, results, passed, failed: () => results.length - passed() };
}

/** A failed check's message; anything else thrown is a harness error, shown with its stack. */
export function describeError(/** @type {any} */ e) {
  return (e instanceof StepError ? e.message : `harness error: ${e?.stack ?? e}`).split("\n");
}

/** The results as a Markdown table (step, result, seconds). */
export function printTable(/** @type {StepResult[]} */ results) {
  const width = Math.max(...results.map((r) => r.name.length), 4);
  console.log("");
  console.log(`| ${"step".padEnd(width)} | result | seconds |`);
  console.log(`|${"-".repeat(width + 2)}|--------|--------:|`);
  for (const r of results) console.log(`| ${r.name.padEnd(width)} | ${r.ok ? "PASS  " : "FAIL  "} | ${r.seconds.toFixed(1).padStart(7)} |`);
  console.log("");
}

/**
 * Polls `fn` until it answers something truthy (answered), or fails (a StepError) after `timeoutMs`.
 * `abort()` answering a text fails at once (a server that exited); `ignoreErrors` treats a throwing `fn` as a no.
 * @template T
 * @param {string} what @param {() => Promise<T> | T} fn
 * @param {number | { timeoutMs?: number, everyMs?: number, abort?: () => string | null | undefined, ignoreErrors?: boolean }} [options]
 * @returns {Promise<T>}
 */
export async function waitFor(what, fn, options = {}) {
  const { timeoutMs = 60_000, everyMs = 250, abort = () => null, ignoreErrors = false } = typeof options === "number" ? { timeoutMs: options } : options;
  const until = Date.now() + timeoutMs;
  for (;;) {
    const why = abort();
    if (why) throw new StepError(`${why} while waiting for ${what}`);
    let v;
    try {
      v = await fn();
    } catch (e) {
      if (!ignoreErrors) throw e;
    }
    if (v) return v;
    check(Date.now() < until, `timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await sleep(everyMs);
  }
}

/**
 * The port a listening server is bound to (a TCP server: `address()` is an AddressInfo once listening).
 * @param {{ address(): import("node:net").AddressInfo | string | null }} server
 */
export function portOf(server) {
  const a = server.address();
  if (!a || typeof a === "string") throw new Error(`the server is not listening on a TCP port (${a})`);
  return a.port;
}

/**
 * Starts `server` listening on `host`:`port` (0: a free port) and answers the port it got.
 * @param {import("node:net").Server} server @param {number} [port] @param {string} [host]
 * @returns {Promise<number>}
 */
export function listen(server, port = 0, host = "127.0.0.1") {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve(portOf(server));
    });
  });
}

/**
 * Runs `cleanup` when the process exits, and on each of `signals` too before exiting with 128 + the signal's number
 * (or `code` when given).
 * @param {() => void} cleanup @param {{ signals?: NodeJS.Signals[], code?: number, onSignal?: (sig: NodeJS.Signals) => void }} [options]
 */
export function onExit(cleanup, { signals = ["SIGINT", "SIGTERM"], code, onSignal = () => {} } = {}) {
  const numbers = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 };
  process.on("exit", () => cleanup());
  for (const sig of signals) {
    process.on(sig, () => {
      onSignal(sig);
      cleanup();
      process.exit(code ?? 128 + (numbers[sig] ?? 0));
    });
  }
}

/**
 * A JSON:API caller for `base` (".../api/v2") with `token`: `api(method, path, body?, as?)` resolves
 * { status, json, text } (json null when the body is empty or not JSON); a `path` starting with "http" is a whole URL.
 * @param {string} base @param {string} token @param {{ timeoutMs?: number }} [options]
 */
export function jsonApi(base, token, { timeoutMs = 30_000 } = {}) {
  /** @param {string} method @param {string} path @param {unknown} [body] @param {string} [as] */
  return async (method, path, body, as = token) => {
    const res = await fetch(path.startsWith("http") ? path : `${base}${path}`, {
      method,
      headers: { ...(as ? { Authorization: `Bearer ${as}` } : {}), "Content-Type": "application/vnd.api+json", Accept: "application/vnd.api+json" },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    /** @type {any} */
    let json = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {}
    return { status: res.status, json, text };
  };
}

/** @typedef {Record<string, any>} JsonDoc a parsed JSON body: its shape is what the harness's checks assert */

/** The body of `res` parsed as JSON. @param {Response} res @returns {Promise<JsonDoc>} */
export const readJson = async (res) => /** @type {JsonDoc} */ (await res.json());

/** @typedef {{ pid: number, pgid: number, comm: string, rssKb: number, cpuTicks: number }} ProcessReading */

export const CLK_TCK = 100; // Linux USER_HZ

/**
 * Processes of the process groups `pgids` and all their descendants (PostgreSQL's postmaster puts each child in a
 * session of its own), from /proc (Linux only; elsewhere none).
 * @param {number[]} pgids @returns {ProcessReading[]}
 */
export function processesOf(pgids) {
  if (!existsSync("/proc")) return [];
  const all = [];
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const close = stat.lastIndexOf(")");
      const comm = stat.slice(stat.indexOf("(") + 1, close);
      const f = stat.slice(close + 2).split(" "); // f[0] is field 3 (state)
      // field 4: parent, field 5: process group; utime+stime; rss pages
      all.push({ pid: Number(d), ppid: Number(f[1]), ownPgid: Number(f[2]), comm, cpuTicks: Number(f[11]) + Number(f[12]), rssKb: Number(f[21]) * 4 });
    } catch {}
  }
  const groupOf = new Map(); // pid -> the wanted group it belongs to
  const want = new Set(pgids);
  for (const p of all) if (want.has(p.ownPgid)) groupOf.set(p.pid, p.ownPgid);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all) {
      if (!groupOf.has(p.pid) && groupOf.has(p.ppid)) {
        groupOf.set(p.pid, groupOf.get(p.ppid));
        grew = true;
      }
    }
  }
  return all.filter((p) => groupOf.has(p.pid)).map(({ pid, comm, cpuTicks, rssKb }) => ({ pid, pgid: groupOf.get(pid), comm, cpuTicks, rssKb }));
}
