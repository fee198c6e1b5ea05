#!/usr/bin/env node
// `npm run test:go-tfe`: runs hashicorp/go-tfe's own integration tests (v1.109.0, the last release whose
// module carries them) against this service on a fresh local store, and summarises every test and
// subtest in test/go-tfe/results.{md,json}. The selection lives in test/go-tfe/selection.json.
//
//   --only <regex>   run only the selected tests whose name matches (JS regex on the top-level name;
//                    "TestX/sub" also narrows subtests, Go -run syntax after the first slash).
//                    Results then go to test/go-tfe/.work/results-only.{md,json}, not the committed files.
//   --with-pending   also run the tests marked "pending" in the selection (to see what they need now).
//   --keep           leave the service running afterwards (prints its address and token).
//   --dry-run        check the module and the selection, print the go test command, start nothing.
//
// Node built-ins only. Needs `go` on PATH (the Go module proxy is the only network access it uses).
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  chmodSync,
  cpSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
// Process groups (the service and go test each run detached, so whole trees stop), shared with the client harness.
import { groups, killGroup, sleep, stopGroup } from "./lib/service.mjs";

const MODULE = "github.com/hashicorp/go-tfe";
const VERSION = "v1.109.0";
const PARALLEL = 4; // the machine has 2 cores; most go-tfe tests call t.Parallel() and wait on the network
const GO_TIMEOUT = "30m"; // go test's own -timeout (it panics and names the hung tests)
const START_TIMEOUT_MS = Number(process.env.GO_TFE_START_TIMEOUT_S || 120) * 1000; // npm start until /api/v2/ping answers
const OVERALL_TIMEOUT_MS = 45 * 60_000; // everything, download and compile included

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const here = join(root, "test", "go-tfe");
const work = join(here, ".work");
const modDir = join(work, `go-tfe@${VERSION}`);

// ---------------------------------------------------------------- options
// (state used by cleanup(), which fail() calls)
let keepService = null; // the service's pgid when --keep
let storeDir = null;
const argv = process.argv.slice(2);
const opts = { only: null, keep: false, withPending: false, dryRun: false };
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === "--only") opts.only = argv[++i];
  else if (a.startsWith("--only=")) opts.only = a.slice(7);
  else if (a === "--keep") opts.keep = true;
  else if (a === "--with-pending") opts.withPending = true;
  else if (a === "--dry-run") opts.dryRun = true;
  else if (a === "-h" || a === "--help") {
    console.log("usage: npm run test:go-tfe -- [--only <regex>] [--with-pending] [--keep] [--dry-run]");
    process.exit(0);
  } else fail(`unknown option ${a}`);
}
if (opts.only === undefined || opts.only === "") fail("--only needs a regex");

function log(msg) {
  console.log(`go-tfe: ${msg}`);
}
function fail(msg) {
  console.error(`go-tfe: ERROR: ${msg}`);
  cleanup();
  process.exit(1);
}

// ---------------------------------------------------------------- process handling
// The service and go test each run in their own process group (detached), so the whole tree is stopped.

// Synchronous last resort (exit handlers, fail()).
function cleanup() {
  for (const pgid of groups) if (pgid !== keepService) killGroup(pgid, "SIGKILL");
  groups.clear();
  if (storeDir && !keepService) rmSync(storeDir, { recursive: true, force: true });
}

process.on("exit", cleanup);
for (const [sig, code] of [
  ["SIGINT", 130],
  ["SIGTERM", 143],
  ["SIGHUP", 129],
]) {
  process.on(sig, () => {
    console.error(`go-tfe: ${sig}: stopping`);
    keepService = null;
    cleanup();
    process.exit(code);
  });
}
const overall = setTimeout(() => {
  console.error(`go-tfe: ERROR: overall time limit (${OVERALL_TIMEOUT_MS / 60000} min) reached; stopping everything`);
  keepService = null;
  cleanup();
  process.exit(1);
}, OVERALL_TIMEOUT_MS);
overall.unref();

// ---------------------------------------------------------------- go and the module
const goEnv = { ...process.env, GOFLAGS: `${process.env.GOFLAGS ?? ""} -mod=mod`.trim() };
function go(args, cwd, extra = {}) {
  return spawnSync("go", args, { cwd, encoding: "utf8", env: goEnv, maxBuffer: 64 << 20, ...extra });
}
{
  const v = go(["version"], root);
  if (v.error || v.status !== 0) {
    fail("the Go toolchain (`go`) is required but was not found on PATH; install Go (1.25 or newer) and retry");
  }
  log(`${v.stdout.trim()}`);
}

const marker = join(modDir, ".harness-ready");
if (!existsSync(marker)) {
  log(`downloading ${MODULE}@${VERSION} through the Go module proxy`);
  mkdirSync(work, { recursive: true });
  const tmp = mkdtempSync(join(tmpdir(), "go-tfe-dl-"));
  // Outside any module, `go mod download mod@version` fetches into the module cache and reports its dir.
  const dl = go(["mod", "download", "-json", `${MODULE}@${VERSION}`], tmp);
  rmSync(tmp, { recursive: true, force: true });
  let info = null;
  try {
    info = JSON.parse(dl.stdout);
  } catch {}
  if (dl.status !== 0 || !info?.Dir || info.Error) {
    fail(`go mod download ${MODULE}@${VERSION} failed: ${info?.Error ?? (dl.stderr || dl.stdout || dl.error?.message)}`);
  }
  // The module cache is read-only: work on a writable copy.
  rmSync(modDir, { recursive: true, force: true });
  cpSync(info.Dir, modDir, { recursive: true });
  makeWritable(modDir);
  const deps = go(["mod", "download"], modDir);
  if (deps.status !== 0) fail(`go mod download (dependencies) failed:\n${deps.stderr}`);
  writeFileSync(marker, `${MODULE}@${VERSION} ${info.Sum}\n`);
}
function makeWritable(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    chmodSync(p, e.isDirectory() ? 0o755 : statSync(p).mode | 0o200);
    if (e.isDirectory()) makeWritable(p);
  }
}

// ---------------------------------------------------------------- the selection
// selection.json: { files: { "<file>_test.go": { "<TestName>": entry } } } where entry is
//   "run"                                   run the test and all its subtests
//   { "skip": { "<subtest>": "reason" } }   run it, leaving those subtests out (-skip)
//   { "pending": "reason" }                 left out until the service can pass it (--with-pending runs it)
//   { "exclude": "reason" }                 left out for good (needs runs, VCS, GitHub, admin tokens, HYOK, …)
// Every Test function of every listed file must have an entry, so a file is reviewed as a whole.
const selection = JSON.parse(readFileSync(join(here, "selection.json"), "utf8"));
if (selection.version !== VERSION) fail(`selection.json is for ${selection.version}, the harness runs ${VERSION}`);
const problems = [];
const warnings = [];
const selected = []; // { test, skip: [[subtest, reason]], pending? }
const leftOut = []; // { name, kind, reason }
for (const [file, tests] of Object.entries(selection.files)) {
  const path = join(modDir, file);
  if (!existsSync(path)) {
    problems.push(`${file}: no such file in ${MODULE}@${VERSION}`);
    continue;
  }
  const src = readFileSync(path, "utf8");
  const defined = [...src.matchAll(/^func (Test\w+)\(\w+ \*testing\.T\)/gm)].map((m) => m[1]);
  for (const name of defined) if (!(name in tests)) problems.push(`${file}: ${name} has no entry (add "run", skip, pending or exclude)`);
  for (const [name, entry] of Object.entries(tests)) {
    if (!defined.includes(name)) {
      problems.push(`${file}: ${name} is not a test in this file`);
      continue;
    }
    const check = (reason, what) => {
      if (typeof reason !== "string" || !reason.trim()) problems.push(`${file}: ${name}${what}: a reason is required`);
    };
    if (entry === "run") selected.push({ file, test: name, skip: [] });
    else if (entry && typeof entry === "object" && "exclude" in entry) {
      check(entry.exclude, "");
      leftOut.push({ name, kind: "excluded", reason: entry.exclude });
    } else if (entry && typeof entry === "object" && "pending" in entry) {
      check(entry.pending, "");
      if (opts.withPending) selected.push({ file, test: name, skip: Object.entries(entry.skip ?? {}), pending: entry.pending });
      else leftOut.push({ name, kind: "pending", reason: entry.pending });
    } else if (entry && typeof entry === "object" && "skip" in entry) {
      selected.push({ file, test: name, skip: Object.entries(entry.skip) });
    } else problems.push(`${file}: ${name}: entry must be "run", {skip}, {pending} or {exclude}`);
  }
  for (const t of selected.filter((t) => t.file === file)) {
    for (const [sub, reason] of t.skip) {
      if (typeof reason !== "string" || !reason.trim()) problems.push(`${t.test}/${sub}: a reason is required`);
      const leaf = sub.split("/").pop();
      if (!src.includes(`"${leaf}"`)) warnings.push(`${t.test}/${sub}: no subtest named "${leaf}" in ${file}`);
    }
  }
}
for (const t of selected) for (const [sub, reason] of t.skip) leftOut.push({ name: `${t.test}/${sub}`, kind: "subtest left out", reason });
if (problems.length) fail(`test/go-tfe/selection.json:\n  ${problems.join("\n  ")}`);
for (const w of warnings) console.error(`go-tfe: warning: ${w}`);

// Go splits -run/-skip at top-level "/" (one pattern per name level) and "|" (alternatives), and turns
// spaces into underscores in both names and patterns; everything else in a name must be regex-escaped.
const reEscape = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
let runTests = selected;
let subRun = "";
if (opts.only) {
  const slash = opts.only.indexOf("/");
  const top = new RegExp(slash < 0 ? opts.only : opts.only.slice(0, slash));
  subRun = slash < 0 ? "" : opts.only.slice(slash);
  runTests = selected.filter((t) => top.test(t.test));
  if (!runTests.length) fail(`--only ${opts.only}: no selected test matches`);
}
const skipPattern = runTests.flatMap((t) => t.skip.map(([sub]) => [t.test, ...sub.split("/")].map((p) => `^${reEscape(p)}$`).join("/"))).join("|");
const goTestArgs = (names) => [
  "test",
  "-json",
  "-count=1",
  `-timeout=${GO_TIMEOUT}`,
  `-parallel=${PARALLEL}`,
  "-run",
  `^(${names.join("|")})$${subRun}`,
  ...(skipPattern ? ["-skip", skipPattern] : []),
  ".",
];
const shellQuote = (s) => (/^[\w.=/:,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
const commandLine = `go ${goTestArgs(runTests.map((t) => t.test))
  .map(shellQuote)
  .join(" ")}`;
log(`${runTests.length} tests selected (${leftOut.length} tests/subtests left out)`);

// ---------------------------------------------------------------- compile first (no service needed)
log(`compiling the ${VERSION} test package`);
{
  const c = go(["test", "-c", "-o", join(work, "go-tfe.test"), "."], modDir);
  if (c.status !== 0) fail(`compiling go-tfe's tests failed:\n${c.stderr || c.stdout}`);
  // `go vet` runs as part of `go test`; make sure it is clean too, so the run itself cannot fail on it.
  const v = go(["vet", "."], modDir);
  if (v.status !== 0) warnings.push(`go vet reported problems (go test runs a subset of vet):\n${v.stderr}`);
}
if (opts.dryRun) {
  console.log(commandLine);
  process.exit(0);
}

// ---------------------------------------------------------------- the service
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}
let port;
do port = await freePort();
while (port === 8787);
const token = `${randomBytes(7).toString("hex")}.atlasv1.${randomBytes(32).toString("hex")}`;
storeDir = mkdtempSync(join(tmpdir(), "go-tfe-store-"));
const serviceLog = join(work, "service.log");
const base = `http://127.0.0.1:${port}`;
log(`starting the service (npm start) on ${base}, store ${storeDir}; log: ${rel(serviceLog)}`);
const logFd = openSync(serviceLog, "w");
const service = spawn("npm", ["start"], {
  cwd: root,
  detached: true,
  stdio: ["ignore", logFd, logFd],
  env: { ...process.env, PORT: String(port), ADMIN_TOKEN: token, PERSIST_DIR: storeDir, EDITION: "self-hosted", RATE_LIMIT: "0" },
});
let serviceExit = null;
service.on("error", (e) => (serviceExit = `could not run npm start: ${e.message}`));
service.on("exit", (code, sig) => (serviceExit = `npm start exited (${sig ?? `code ${code}`})`));
if (service.pid) groups.add(service.pid);
{
  const started = Date.now();
  for (;;) {
    if (serviceExit) fail(`the service did not start: ${serviceExit}; last lines of ${rel(serviceLog)}:\n${tail(serviceLog)}`);
    try {
      const r = await fetch(`${base}/api/v2/ping`, { signal: AbortSignal.timeout(5000) });
      if (r.status < 500) break;
    } catch {}
    if (Date.now() - started > START_TIMEOUT_MS) {
      fail(`the service did not answer GET /api/v2/ping within ${START_TIMEOUT_MS / 1000} s; last lines of ${rel(serviceLog)}:\n${tail(serviceLog)}`);
    }
    await sleep(500);
  }
  log(`service up after ${((Date.now() - started) / 1000).toFixed(1)} s`);
  // Every test authenticates with the site-admin token: check it is the one the service took.
  let status = 0;
  try {
    status = (await fetch(`${base}/api/v2/organizations`, { headers: { Authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(10_000) })).status;
  } catch (e) {
    status = e.message;
  }
  if (status === 401 || status === 403) {
    fail(
      `the service answers ${status} to the site-admin token given in ADMIN_TOKEN. npm start keeps the token in the ` +
        "checkout's .dev.vars: another npm start from this checkout at the same moment (a restart test, a dev server) may have rewritten it; run again",
    );
  }
}

// ---------------------------------------------------------------- run
// Placeholder VCS values (issue 19): go-tfe tests that only need an OAuth client and a repository
// identifier to exist (this service stores VCS settings and never calls GitHub) run with these.
// Tests that need GitHub itself stay excluded in the selection.
const PLACEHOLDERS = {
  OAUTH_CLIENT_GITHUB_TOKEN: "placeholder-github-token",
  GITHUB_POLICY_SET_IDENTIFIER: "placeholder-org/placeholder-repo",
};
// Only our settings reach the tests: variables that would switch go-tfe tests on (GitHub, admin, HYOK…) are dropped.
const testEnv = Object.fromEntries(Object.entries(goEnv).filter(([k]) => !/^(TFE_|TFC_|GITHUB_|OAUTH_|HYOK_|ENABLE_|SKIP_|TF_)/.test(k)));
Object.assign(testEnv, { TFE_ADDRESS: base, TFE_TOKEN: token, ENABLE_TFE: "1", ENABLE_BETA: "1" }, PLACEHOLDERS);
const jsonLog = join(work, "go-test.jsonl");
const raw = createWriteStream(jsonLog);

// One `go test -json` run; resolves with its events and exit status.
function runGoTest(args) {
  return new Promise((resolve) => {
    const events = [];
    const child = spawn("go", args, { cwd: modDir, env: testEnv, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    if (child.pid) groups.add(child.pid);
    let stderr = "";
    let buf = "";
    child.stderr.on("data", (d) => (stderr += d));
    child.stdout.on("data", (chunk) => {
      raw.write(chunk);
      buf += chunk;
      for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        let e;
        try {
          e = JSON.parse(line);
        } catch {
          events.push({ Action: "output", Output: `${line}\n` });
          continue;
        }
        events.push(e);
        // Progress for CI logs: one line per finished top-level test.
        if (e.Test && !e.Test.includes("/") && ["pass", "fail", "skip"].includes(e.Action)) {
          console.log(`  ${e.Action.toUpperCase().padEnd(4)} ${e.Test} (${(e.Elapsed ?? 0).toFixed(1)} s)`);
        }
      }
    });
    child.on("error", (e) => resolve({ events, code: -1, error: e.message, stderr }));
    child.on("close", (code, sig) => {
      groups.delete(child.pid);
      resolve({ events, code: code ?? -1, signal: sig, stderr });
    });
  });
}

// Fold one run's events into per-test records.
function collect(events) {
  const tests = new Map();
  const pkgOutput = [];
  let buildFailed = false;
  for (const e of events) {
    if (e.Action === "build-output" || e.Action === "build-fail") {
      buildFailed ||= e.Action === "build-fail";
      if (e.Output) pkgOutput.push(e.Output);
      continue;
    }
    if (!e.Test) {
      if (e.Action === "output") pkgOutput.push(e.Output);
      continue;
    }
    let t = tests.get(e.Test);
    if (!t) {
      t = { name: e.Test, result: "unfinished", seconds: null, output: [] };
      tests.set(e.Test, t);
    }
    if (e.Action === "output") t.output.push(e.Output);
    else if (e.Action === "pass" || e.Action === "fail" || e.Action === "skip") {
      t.result = e.Action;
      t.seconds = e.Elapsed ?? null;
    }
  }
  return { tests, pkgOutput, buildFailed };
}

// A panic in one test kills the whole test binary, and with it every test running or not yet started.
// So: run; if the binary crashed, keep what finished, and run the tests that did not finish again
// without the crashing one (at most MAX_RERUNS times, and not after go test's own timeout).
const MAX_RERUNS = 5;
const tests = new Map(); // name -> record, over all attempts
const pkgOutput = [];
const crashes = []; // { test, line }
let buildFailed = false;
let goExit = null;
let remaining = runTests.map((t) => t.test);
const topOf = (name) => name.split("/")[0];
const runStarted = Date.now();
log(`running: ${commandLine}`);
for (let attempt = 0; remaining.length; attempt++) {
  if (attempt) log(`re-running ${remaining.length} tests that the crash stopped (attempt ${attempt + 1})`);
  goExit = await runGoTest(goTestArgs(remaining));
  const got = collect(goExit.events);
  pkgOutput.push(...got.pkgOutput);
  buildFailed ||= got.buildFailed;
  const finished = new Set([...got.tests.values()].filter((t) => !t.name.includes("/") && t.result !== "unfinished").map((t) => t.name));
  for (const t of got.tests.values()) if (finished.has(topOf(t.name))) tests.set(t.name, t);
  const culprits = [...got.tests.values()].filter((t) => !t.name.includes("/") && t.result === "fail" && t.output.some((l) => /^panic: /.test(l)));
  for (const c of culprits) crashes.push({ test: c.name, line: c.output.find((l) => /^panic: /.test(l)).trim() });
  const timedOut = got.pkgOutput.some((l) => /^panic: test timed out/.test(l));
  const next = remaining.filter((n) => !finished.has(n));
  if (!next.length || goExit.error || got.buildFailed || timedOut || !culprits.length || attempt >= MAX_RERUNS) {
    // Whatever is left never finished: keep its partial record (or none) as "did not finish".
    for (const n of next) {
      for (const t of got.tests.values()) if (topOf(t.name) === n) tests.set(t.name, t);
      if (!tests.has(n)) tests.set(n, { name: n, result: "unfinished", seconds: null, output: [] });
    }
    break;
  }
  remaining = next;
}
raw.end();
const runSeconds = (Date.now() - runStarted) / 1000;

if (opts.keep) {
  keepService = service.pid;
  log(`--keep: service left running on ${base} (process group ${service.pid}; stop it with: kill -- -${service.pid})`);
  log(`        TFE_ADDRESS=${base} TFE_TOKEN=${token}  store: ${storeDir}`);
} else {
  await stopGroup(service.pid);
  rmSync(storeDir, { recursive: true, force: true });
  storeDir = null;
}

// ---------------------------------------------------------------- summarise
const rows = [...tests.values()].sort((a, b) => a.name.localeCompare(b.name));
const clean = (l) => l.replace(/\s+/g, " ").trim();
function firstFailure(t) {
  if (t.result === "unfinished") {
    const c = crashes.at(-1);
    return c ? `did not finish: the test binary crashed (${c.test}: ${clean(c.line)})` : "did not finish (go test timed out or was stopped)";
  }
  const lines = t.output.map((l) => l.replace(/\r?\n$/, "")).filter((l) => l.trim() && !/^\s*(=== |--- )/.test(l));
  // testify: "Error Trace: file:line" then "Error: <message>" (message may continue on indented lines).
  const j = lines.findIndex((l) => /^\s*Error:\s/.test(l));
  if (j >= 0) {
    const trace = lines
      .slice(0, j)
      .reverse()
      .find((l) => /^\s*Error Trace:/.test(l));
    const more = [];
    for (const l of lines.slice(j + 1, j + 4)) {
      if (/^\s*(Test|Messages|Error Trace):/.test(l) || /^\s*\S+_test\.go:\d+:/.test(l)) break;
      more.push(l);
    }
    const where = trace
      ? ` (${clean(trace.replace(/^\s*Error Trace:\s*/, ""))
          .split(" ")[0]
          .replace(/^.*\//, "")})`
      : "";
    return `${clean([lines[j], ...more].join(" "))}${where}`.slice(0, 400);
  }
  const pi = lines.findIndex((l) => /^panic: /.test(l));
  if (pi >= 0) {
    const panic = lines[pi];
    // the first frame of go-tfe's test code in the stack trace: "\t/path/x_test.go:123 +0x1b0"
    const at = lines.slice(pi).find((l) => /^\s+\S+_test\.go:\d+ \+0x/.test(l));
    return `${clean(panic)}${at ? ` at ${clean(at).split(" ")[0].replace(/^.*\//, "")}` : ""}`.slice(0, 400);
  }
  const sub = [...tests.values()].find((s) => s.name.startsWith(`${t.name}/`) && !s.name.slice(t.name.length + 1).includes("/") && s.result === "fail");
  if (sub) return `subtest failed: ${sub.name.slice(t.name.length + 1)}`;
  // t.Fatal/t.Error lines look like t.Log lines; go-tfe's cleanup warnings are logs, not the failure.
  const logged = lines.find((l) => /_test\.go:\d+:/.test(l) && !/Warning:/i.test(l)) ?? lines.find((l) => /_test\.go:\d+:/.test(l));
  if (logged) return clean(logged).slice(0, 400);
  // A panic inside a subtest is printed under its parent.
  const parent = t.name.includes("/") ? tests.get(t.name.slice(0, t.name.lastIndexOf("/"))) : null;
  if (parent?.output.some((l) => /^panic: /.test(l))) return `panicked (${firstFailure(parent)})`;
  return clean(lines[0] ?? "failed (no output)").slice(0, 400);
}
const skipReason = (t) => clean(t.output.find((l) => /_test\.go:\d+:/.test(l)) ?? "").slice(0, 300);
for (const t of rows) {
  t.detail = t.result === "pass" ? "" : t.result === "skip" ? skipReason(t) : firstFailure(t);
  if (t.result === "unfinished") t.result = "fail";
}
const tally = (list) => ({
  passed: list.filter((t) => t.result === "pass").length,
  failed: list.filter((t) => t.result === "fail").length,
  skipped: list.filter((t) => t.result === "skip").length,
});
const all = tally(rows);
const top = tally(rows.filter((t) => !t.name.includes("/")));
const errors = [];
for (const c of crashes) errors.push(`${c.test} crashed the test binary (${clean(c.line)}); any tests it stopped were run again without it`);
if (goExit.error) errors.push(`could not run go test: ${goExit.error}`);
if (buildFailed) errors.push("go test: build failed");
if (rows.length === 0) errors.push("no test ran");
if (goExit.code !== 0 && all.failed === 0 && !crashes.length) {
  errors.push(
    `go test exited with ${goExit.signal ?? `code ${goExit.code}`} though no test failed:\n${clean(pkgOutput.join("\n") + goExit.stderr).slice(0, 1500)}`,
  );
}
const ok = errors.length === 0 && all.failed === 0;

const onlyRun = Boolean(opts.only) || opts.withPending;
const outDir = onlyRun ? work : here;
const outName = onlyRun ? "results-only" : "results";
const summary = {
  module: `${MODULE}@${VERSION}`,
  date: new Date().toISOString(),
  command: commandLine,
  env: { TFE_ADDRESS: base, TFE_TOKEN: "<site-admin token>", ENABLE_TFE: "1", ENABLE_BETA: "1", ...PLACEHOLDERS },
  runSeconds: Math.round(runSeconds),
  ok,
  errors,
  totals: { selectedTests: runTests.length, ...all, topLevel: top },
  leftOut,
  tests: rows.map((t) => ({ name: t.name, result: t.result, seconds: t.seconds, ...(t.detail ? { detail: t.detail } : {}) })),
};
writeFileSync(join(outDir, `${outName}.json`), `${JSON.stringify(summary, null, 2)}\n`);
const cell = (s) =>
  String(s ?? "")
    .replace(/\|/g, "\\|")
    .replace(/\n/g, " ");
const md = [
  `# go-tfe ${VERSION} integration tests against this service`,
  "",
  `Selection: \`test/go-tfe/selection.json\`. Generated by \`npm run test:go-tfe\`${opts.only ? ` --only ${cell(opts.only)}` : ""}${opts.withPending ? " --with-pending" : ""}.`,
  "",
  "| selected tests | tests + subtests run | passed | failed | skipped |",
  "|---:|---:|---:|---:|---:|",
  `| ${runTests.length} | ${rows.length} | ${all.passed} | ${all.failed} | ${all.skipped} |`,
  "",
  `Top-level tests: ${top.passed} passed, ${top.failed} failed, ${top.skipped} skipped. Left out by the selection: ${leftOut.length}. ` +
    `Run time ${Math.round(runSeconds)} s. A skipped test is one go-tfe skipped itself (reason shown); it is never counted as passed.`,
  ...(errors.length ? ["", "**Run errors:**", "", ...errors.map((e) => `- ${cell(e)}`)] : []),
  "",
  "Command:",
  "",
  "```",
  `TFE_ADDRESS=http://127.0.0.1:<port> TFE_TOKEN=<site-admin token> ENABLE_TFE=1 ENABLE_BETA=1 ${Object.entries(PLACEHOLDERS)
    .map(([k, v]) => `${k}=${v}`)
    .join(" ")} \\`,
  `  ${commandLine}`,
  "```",
  "",
  "## Results",
  "",
  "| test | result | seconds | first failure line / skip reason |",
  "|---|---|---:|---|",
  ...rows.map((t) => `| \`${cell(t.name)}\` | ${t.result === "fail" ? "**fail**" : t.result} | ${t.seconds ?? ""} | ${cell(t.detail)} |`),
  "",
  `## Left out by the selection (${leftOut.length})`,
  "",
  "| test | kind | reason |",
  "|---|---|---|",
  ...leftOut.map((t) => `| \`${cell(t.name)}\` | ${t.kind} | ${cell(t.reason)} |`),
  "",
];
writeFileSync(join(outDir, `${outName}.md`), md.join("\n"));

for (const w of warnings) console.error(`go-tfe: warning: ${w}`);
for (const t of rows.filter((t) => t.result === "fail")) console.log(`FAIL ${t.name}: ${t.detail}`);
for (const e of errors) console.error(`go-tfe: ERROR: ${e}`);
log(`results: ${rel(join(outDir, `${outName}.md`))} (raw events: ${rel(jsonLog)}, service log: ${rel(serviceLog)})`);
console.log(`go-tfe: ${all.passed} passed, ${all.failed} failed, ${all.skipped} skipped`);
process.exit(ok ? 0 : 1);

function rel(p) {
  return p.startsWith(`${root}/`) ? p.slice(root.length + 1) : p;
}
function tail(file, n = 30) {
  try {
    return readFileSync(file, "utf8").split("\n").slice(-n).join("\n");
  } catch {
    return "(no log)";
  }
}
