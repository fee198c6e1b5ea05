#!/usr/bin/env node
// `npm run test:go-tfe`: runs hashicorp/go-tfe's own integration tests (v1.109.0, the last release whose
// module carries them) against this service, twice: once against the self-hosted edition with ENABLE_TFE=1
// (Terraform Enterprise behaviour) and once against the hosted edition without it (HCP Terraform behaviour,
// where go-tfe's subscription helpers assign plans through the admin API). Each run has its own fresh store,
// port and token. Every test and subtest of both runs is summarised in test/go-tfe/results.{md,json}. The
// selection, with its per-edition entries, lives in test/go-tfe/selection.json.
//
//   --edition <name> run one edition only (self-hosted or hosted); results go to .work/results-only.{md,json}.
//   --only <regex>   run only the selected tests whose name matches (JS regex on the top-level name;
//                    "TestX/sub" also narrows subtests, Go -run syntax after the first slash).
//                    Results then go to test/go-tfe/.work/results-only.{md,json}, not the committed files.
//   --with-pending   also run the tests marked "pending" in the selection (to see what they need now).
//   --keep           leave each edition's service running afterwards (prints its address and token).
//   --dry-run        check the module and the selection, print each edition's go test command, start nothing.
//
// Node built-ins only. Needs `go` on PATH (the Go module proxy is the only network access it uses).
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, cpSync, createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
// The hashicorp/null stand-in that the run tests' fixture (`resource "null_resource" "foo" {}`) needs, in a mirror.
import { findTerraform, terraformVersionOf } from "./lib/agent.mjs";
import { GO_TFE_TERRAFORM_VERSIONS, startReleasesServer, waitForVersions } from "./lib/releases.mjs";
import { download, ensureNullProvider } from "./lib/binaries.mjs";
import { startSmtpSink, startWebhookReceiver } from "./lib/receivers.mjs";
// Process groups (the service and go test each run detached, so whole trees stop), shared with the client harness.
import { onExit } from "./lib/harness.mjs";
import { groups, killGroup, startService, stopGroup, tail } from "./lib/service.mjs";

const MODULE = "github.com/hashicorp/go-tfe";
const VERSION = "v1.109.0";
const PARALLEL = 4; // the machine has 2 cores; most go-tfe tests call t.Parallel() and wait on the network
const GO_TIMEOUT = "30m"; // go test's own -timeout (it panics and names the hung tests)
/** go-tfe tests that change TFE_ADDRESS and TFE_TOKEN for the whole process while they run (see runEdition). */
const ALONE = new Set(["TestClient_newClient", "TestClient_defaultConfig"]);
const START_TIMEOUT_MS = Number(process.env.GO_TFE_START_TIMEOUT_S || 120) * 1000; // npm start until /api/v2/ping answers
const OVERALL_TIMEOUT_MS = 60 * 60_000; // everything, both editions, download and compile included

/**
 * The two runs. `service`: what `npm start` gets; `gates`: go-tfe's switches for the edition (ENABLE_TFE=1
 * turns on its Terraform Enterprise tests and turns off its HCP Terraform ones, subscription upgrades included).
 * The hosted run also gets TFE_ADMIN_PROVISION_LICENSES_TOKEN, the admin role go-tfe's subscription updater
 * uses for `GET admin/feature-sets` and `POST admin/organizations/:name/subscription`: the service's site admin.
 */
const EDITIONS = [
  {
    name: "self-hosted",
    title: "self-hosted edition (Terraform Enterprise)",
    service: { EDITION: "self-hosted" },
    gates: { ENABLE_TFE: "1" },
    adminToken: false,
  },
  { name: "hosted", title: "hosted edition (HCP Terraform)", service: { EDITION: "hosted" }, gates: {}, adminToken: true },
];

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const here = join(root, "test", "go-tfe");
const work = join(here, ".work");
const modDir = join(work, `go-tfe@${VERSION}`);

// ---------------------------------------------------------------- options
// (state used by cleanup(), which fail() calls)
const keptServices = new Set(); // pgids of services left running by --keep
const storeDirs = new Set();
const argv = process.argv.slice(2);
const opts = { only: null, keep: false, withPending: false, dryRun: false, edition: null };
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === "--only") opts.only = argv[++i];
  else if (a.startsWith("--only=")) opts.only = a.slice(7);
  else if (a === "--edition") opts.edition = argv[++i];
  else if (a.startsWith("--edition=")) opts.edition = a.slice(10);
  else if (a === "--keep") opts.keep = true;
  else if (a === "--with-pending") opts.withPending = true;
  else if (a === "--dry-run") opts.dryRun = true;
  else if (a === "-h" || a === "--help") {
    console.log("usage: npm run test:go-tfe -- [--edition self-hosted|hosted] [--only <regex>] [--with-pending] [--keep] [--dry-run]");
    process.exit(0);
  } else fail(`unknown option ${a}`);
}
if (opts.only === undefined || opts.only === "") fail("--only needs a regex");
if (opts.edition !== null && !EDITIONS.some((e) => e.name === opts.edition)) {
  fail(`--edition must be one of ${EDITIONS.map((e) => e.name).join(", ")}`);
}
const editions = EDITIONS.filter((e) => opts.edition === null || e.name === opts.edition);

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
  for (const pgid of groups) if (!keptServices.has(pgid)) killGroup(pgid, "SIGKILL");
  groups.clear();
  for (const dir of storeDirs) rmSync(dir, { recursive: true, force: true });
  storeDirs.clear();
}

// A signal stops everything, --keep's services too (exit status 128 + its number).
onExit(cleanup, {
  signals: ["SIGINT", "SIGTERM", "SIGHUP"],
  onSignal: (sig) => {
    console.error(`go-tfe: ${sig}: stopping`);
    keptServices.clear();
  },
});
const overall = setTimeout(() => {
  console.error(`go-tfe: ERROR: overall time limit (${OVERALL_TIMEOUT_MS / 60000} min) reached; stopping everything`);
  keptServices.clear();
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
  let info;
  try {
    info = download(MODULE, VERSION);
  } catch (e) {
    fail(e.message);
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
//   { "exclude": "reason" }                 left out for good (needs runs, VCS, GitHub, HYOK, …)
//   { "self-hosted": entry, "hosted": entry }   a different entry per edition (both keys required)
// Every Test function of every listed file must have an entry, so a file is reviewed as a whole.
// "not-selected": { "<file>_test.go": "reason" } names every other *_test.go file of the module, so every file is
// accounted for: a file in neither list, in both, or a listed file the module lacks stops the harness.
const selection = JSON.parse(readFileSync(join(here, "selection.json"), "utf8"));
if (selection.version !== VERSION) fail(`selection.json is for ${selection.version}, the harness runs ${VERSION}`);
const problems = [];
const warnings = [];
const EDITION_NAMES = EDITIONS.map((e) => e.name);
const isPerEdition = (entry) => entry && typeof entry === "object" && EDITION_NAMES.some((n) => n in entry);
/** Per edition: the selected tests ({ file, test, skip: [[subtest, reason]], pending? }) and what is left out ({ file, name, kind, reason }). */
const plan = Object.fromEntries(EDITION_NAMES.map((n) => [n, { selected: [], leftOut: [] }]));
const fileSources = {};
for (const [file, tests] of Object.entries(selection.files)) {
  const path = join(modDir, file);
  if (!existsSync(path)) {
    problems.push(`${file}: no such file in ${MODULE}@${VERSION}`);
    continue;
  }
  const src = readFileSync(path, "utf8");
  fileSources[file] = src;
  const defined = [...src.matchAll(/^func (Test\w+)\(\w+ \*testing\.T\)/gm)].map((m) => m[1]);
  for (const name of defined) if (!(name in tests)) problems.push(`${file}: ${name} has no entry (add "run", skip, pending or exclude)`);
  for (const [name, entry] of Object.entries(tests)) {
    if (!defined.includes(name)) {
      problems.push(`${file}: ${name} is not a test in this file`);
      continue;
    }
    if (isPerEdition(entry)) {
      const keys = Object.keys(entry);
      if (keys.length !== EDITION_NAMES.length || !EDITION_NAMES.every((n) => n in entry)) {
        problems.push(`${file}: ${name}: a per-edition entry needs exactly the keys ${EDITION_NAMES.join(", ")}`);
        continue;
      }
      for (const ed of EDITION_NAMES) addEntry(ed, file, name, entry[ed], ` (${ed})`);
    } else for (const ed of EDITION_NAMES) addEntry(ed, file, name, entry, "");
  }
}
// Every *_test.go file of the module (relative paths), selected or not.
function testFilesOf(dir, prefix = "") {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.isDirectory()) return testFilesOf(join(dir, e.name), `${prefix}${e.name}/`);
    return e.name.endsWith("_test.go") ? [`${prefix}${e.name}`] : [];
  });
}
const notSelected = selection["not-selected"];
if (!notSelected || typeof notSelected !== "object" || Array.isArray(notSelected)) {
  problems.push('"not-selected" must map every *_test.go file not under "files" to the reason it is not selected');
} else {
  const moduleFiles = new Set(testFilesOf(modDir));
  for (const file of [...moduleFiles].sort()) {
    if (!(file in selection.files) && !(file in notSelected)) {
      problems.push(`${file}: in neither "files" nor "not-selected" (select it with an entry per test, or give the reason it is not selected)`);
    }
  }
  for (const [file, reason] of Object.entries(notSelected)) {
    if (!moduleFiles.has(file)) problems.push(`not-selected: ${file}: no such *_test.go file in ${MODULE}@${VERSION}`);
    if (file in selection.files) problems.push(`${file}: in both "files" and "not-selected"`);
    if (typeof reason !== "string" || !reason.trim()) problems.push(`not-selected: ${file}: a reason is required`);
  }
}
/** The module's test files the selection leaves out whole, with why ({ file, reason }). */
const filesNotSelected = Object.entries(notSelected ?? {}).map(([file, reason]) => ({ file, reason }));

function addEntry(ed, file, name, entry, label) {
  const { selected, leftOut } = plan[ed];
  const check = (reason) => {
    if (typeof reason !== "string" || !reason.trim()) problems.push(`${file}: ${name}${label}: a reason is required`);
  };
  if (entry === "run") selected.push({ file, test: name, skip: [] });
  else if (entry && typeof entry === "object" && "exclude" in entry) {
    check(entry.exclude);
    leftOut.push({ file, name, kind: "excluded", reason: entry.exclude });
  } else if (entry && typeof entry === "object" && "pending" in entry) {
    check(entry.pending);
    if (opts.withPending) selected.push({ file, test: name, skip: Object.entries(entry.skip ?? {}), pending: entry.pending });
    else leftOut.push({ file, name, kind: "pending", reason: entry.pending });
  } else if (entry && typeof entry === "object" && "skip" in entry) {
    selected.push({ file, test: name, skip: Object.entries(entry.skip) });
  } else problems.push(`${file}: ${name}${label}: entry must be "run", {skip}, {pending}, {exclude} or one entry per edition`);
}
for (const ed of EDITION_NAMES) {
  for (const t of plan[ed].selected) {
    for (const [sub, reason] of t.skip) {
      if (typeof reason !== "string" || !reason.trim()) problems.push(`${t.test}/${sub} (${ed}): a reason is required`);
      const leaf = sub.split("/").pop();
      if (fileSources[t.file] && !fileSources[t.file].includes(`"${leaf}"`)) warnings.push(`${t.test}/${sub}: no subtest named "${leaf}" in ${t.file}`);
    }
    for (const [sub, reason] of t.skip) plan[ed].leftOut.push({ file: t.file, name: `${t.test}/${sub}`, kind: "subtest left out", reason });
  }
}
if (problems.length) fail(`test/go-tfe/selection.json:\n  ${problems.join("\n  ")}`);
for (const w of new Set(warnings)) console.error(`go-tfe: warning: ${w}`);
warnings.length = 0;

// Go splits -run/-skip at top-level "/" (one pattern per name level) and "|" (alternatives), and turns
// spaces into underscores in both names and patterns; everything else in a name must be regex-escaped.
const reEscape = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
let subRun = "";
if (opts.only) {
  const slash = opts.only.indexOf("/");
  const top = new RegExp(slash < 0 ? opts.only : opts.only.slice(0, slash));
  subRun = slash < 0 ? "" : opts.only.slice(slash);
  for (const ed of editions) plan[ed.name].selected = plan[ed.name].selected.filter((t) => top.test(t.test));
  if (editions.every((ed) => !plan[ed.name].selected.length)) fail(`--only ${opts.only}: no selected test matches`);
}
function goTestArgs(runTests, names) {
  const skipPattern = runTests.flatMap((t) => t.skip.map(([sub]) => [t.test, ...sub.split("/")].map((p) => `^${reEscape(p)}$`).join("/"))).join("|");
  return [
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
}
const shellQuote = (s) => (/^[\w.=/:,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
const commandOf = (runTests) =>
  `go ${goTestArgs(
    runTests,
    runTests.map((t) => t.test),
  )
    .map(shellQuote)
    .join(" ")}`;
for (const ed of editions) {
  const p = plan[ed.name];
  log(`${ed.name}: ${p.selected.length} tests selected (${p.leftOut.length} tests/subtests left out)`);
}
log(`${Object.keys(selection.files).length} test files selected, ${filesNotSelected.length} not selected (each with its reason)`);

// ---------------------------------------------------------------- compile first (no service needed)
log(`compiling the ${VERSION} test package`);
{
  const c = go(["test", "-c", "-o", join(work, "go-tfe.test"), "."], modDir);
  if (c.status !== 0) fail(`compiling go-tfe's tests failed:\n${c.stderr || c.stdout}`);
  // `go vet` runs as part of `go test`; make sure it is clean too, so the run itself cannot fail on it.
  const v = go(["vet", "."], modDir);
  if (v.status !== 0) warnings.push(`go vet reported problems (go test runs a subset of vet):\n${v.stderr}`);
}
// The run tests need the service's local agent, which `npm start` starts only when it finds Terraform: without
// it every run waits in plan_queued until go-tfe's two-minute deadline.
if (!opts.dryRun && !findTerraform()) fail("the run tests need Terraform: put `terraform` (1.10 or newer) on PATH, or set TERRAFORM to its path");

if (opts.dryRun) {
  for (const ed of editions) {
    const env = {
      EDITION: ed.service.EDITION,
      ...ed.gates,
      ENABLE_BETA: "1",
      ...(ed.adminToken ? { TFE_ADMIN_PROVISION_LICENSES_TOKEN: "<site-admin token>" } : {}),
    };
    console.log(
      `# ${ed.name}: ${Object.entries(env)
        .map(([k, v]) => `${k}=${v}`)
        .join(" ")}`,
    );
    console.log(commandOf(plan[ed.name].selected));
  }
  process.exit(0);
}

// Placeholder VCS values: go-tfe tests that only need an OAuth client and a repository
// identifier to exist (this service stores VCS settings and never calls GitHub) run with these.
// Tests that need GitHub itself stay excluded in the selection.
const PLACEHOLDERS = {
  OAUTH_CLIENT_GITHUB_TOKEN: "placeholder-github-token",
  GITHUB_POLICY_SET_IDENTIFIER: "placeholder-org/placeholder-repo",
};

// ---------------------------------------------------------------- one edition's run

let nullMirrorDir = null;
function nullMirror() {
  try {
    nullMirrorDir ??= ensureNullProvider(log).mirror;
  } catch (e) {
    fail(`cannot build the hashicorp/null stand-in for the run tests: ${e.message}`);
  }
  return nullMirrorDir;
}

// The list of Terraform versions the services seed from (docs/terraform-versions.md): the versions go-tfe's tests use,
// and the local Terraform, newest, so new workspaces default to what the local agent runs. Listed only: no download.
let releases = null;
async function releasesIndex() {
  const local = terraformVersionOf(findTerraform());
  releases ??= await startReleasesServer({ releases: [...GO_TFE_TERRAFORM_VERSIONS, local].map((version) => ({ version })), workDir: join(work, "releases") });
  return { url: releases.indexUrl, versions: [...GO_TFE_TERRAFORM_VERSIONS, local] };
}

// A notification destination that answers every verification with 200 (go-tfe's TFC_RUN_TASK_URL), and an SMTP sink
// as the services' relay (SMTP_URL), so e-mail configurations are accepted as with an operator's relay.
let receivers = null;
async function harnessReceivers() {
  receivers ??= { webhook: await startWebhookReceiver(), smtp: await startSmtpSink() };
  return receivers;
}

/** Starts the edition's service on a fresh store (scripts/lib/service.mjs); resolves with its address, token and process group. */
async function startEdition(ed) {
  const serviceLog = join(work, `service-${ed.name}.log`);
  log(`${ed.name}: starting the service (npm start, EDITION=${ed.service.EDITION}); log: ${rel(serviceLog)}`);
  const index = await releasesIndex();
  const { smtp } = await harnessReceivers();
  let svc;
  try {
    svc = await startService({
      root,
      logFile: serviceLog,
      timeoutMs: START_TIMEOUT_MS,
      storePrefix: `go-tfe-store-${ed.name}-`,
      // The service's local agent runs the tests' runs; it installs hashicorp/null from the stand-in's mirror.
      env: { AGENT_PLUGIN_MIRROR: nullMirror(), TERRAFORM_RELEASES_URL: index.url, OUTBOUND_ALLOW_PRIVATE: "1", SMTP_URL: smtp.url, ...ed.service },
    });
  } catch (e) {
    fail(`${ed.name}: ${e.message}`);
  }
  storeDirs.add(svc.storeDir);
  const { base, token, storeDir, pid, exited } = svc;
  log(`${ed.name}: service up on ${base} after ${svc.startSeconds.toFixed(1)} s (store ${storeDir})`);
  // The edition the service runs is the one asked for: HCP Terraform's ping names no "Terraform Enterprise".
  const app = (await fetch(`${base}/api/v2/ping`, { headers: { Authorization: `Bearer ${token}` } })).headers.get("TFP-AppName") ?? "";
  if ((ed.service.EDITION === "hosted") === /Enterprise/.test(app)) fail(`${ed.name}: the service answers as "${app}", not the ${ed.name} edition`);
  try {
    await waitForVersions(base, token, index.versions);
  } catch (e) {
    fail(`${ed.name}: ${e.message}; last lines of ${rel(serviceLog)}:\n${tail(serviceLog)}`);
  }
  return { base, token, storeDir, serviceLog, pid, exited };
}

// One `go test -json` run; resolves with its events and exit status.
function runGoTest(args, testEnv, raw) {
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

const clean = (l) => l.replace(/\s+/g, " ").trim();

/** Starts the edition's service, runs its selection, stops the service; returns the edition's summary. */
async function runEdition(ed) {
  const { selected: runTests, leftOut } = plan[ed.name];
  const commandLine = commandOf(runTests);
  const svc = await startEdition(ed);
  // Only our settings reach the tests: variables that would switch go-tfe tests on (GitHub, admin, HYOK…) are dropped.
  const testEnv = Object.fromEntries(Object.entries(goEnv).filter(([k]) => !/^(TFE_|TFC_|GITHUB_|OAUTH_|HYOK_|ENABLE_|SKIP_|TF_)/.test(k)));
  const { webhook } = await harnessReceivers();
  const shownEnv = {
    TFC_RUN_TASK_URL: webhook.url,
    TFE_ADDRESS: svc.base,
    TFE_TOKEN: "<site-admin token>",
    ...(ed.adminToken ? { TFE_ADMIN_PROVISION_LICENSES_TOKEN: "<site-admin token>" } : {}),
    ...ed.gates,
    ENABLE_BETA: "1",
    ...PLACEHOLDERS,
  };
  Object.assign(
    testEnv,
    { TFE_ADDRESS: svc.base, TFE_TOKEN: svc.token, ENABLE_BETA: "1", TFC_RUN_TASK_URL: webhook.url },
    ed.adminToken ? { TFE_ADMIN_PROVISION_LICENSES_TOKEN: svc.token } : {},
    ed.gates,
    PLACEHOLDERS,
  );
  const jsonLog = join(work, `go-test-${ed.name}.jsonl`);
  const raw = createWriteStream(jsonLog);

  // A panic in one test kills the whole test binary, and with it every test running or not yet started.
  // So: run; if the binary crashed, keep what finished, and run the tests that did not finish again
  // without the crashing one (at most MAX_RERUNS times, and not after go test's own timeout).
  const MAX_RERUNS = 5;
  const tests = new Map(); // name -> record, over all attempts
  const pkgOutput = [];
  const crashes = []; // { test, line }
  let buildFailed = false;
  let goExit = null;
  let badExit = null;
  const topOf = (name) => name.split("/")[0];
  const runStarted = Date.now();
  log(`${ed.name}: running: ${commandLine}`);
  // Tests that set TFE_ADDRESS and TFE_TOKEN process-wide (setupEnvVars) run on their own after the rest: any test
  // running beside them may build its client from their values and dial another server.
  const names = runTests.map((t) => t.test);
  const phases = [names.filter((n) => !ALONE.has(n)), names.filter((n) => ALONE.has(n))].filter((p) => p.length);
  for (const phase of phases) {
    if (phase !== phases[0]) log(`${ed.name}: running on their own: ${phase.join(", ")}`);
    let remaining = phase;
    for (let attempt = 0; remaining.length; attempt++) {
      if (attempt) log(`${ed.name}: re-running ${remaining.length} tests that the crash stopped (attempt ${attempt + 1})`);
      goExit = await runGoTest(goTestArgs(runTests, remaining), testEnv, raw);
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
    // The exit the report judges: the first phase that did not exit cleanly, else the last.
    if (goExit.error || goExit.signal || goExit.code !== 0) badExit ??= goExit;
  }
  if (badExit) goExit = badExit;
  raw.end();
  const runSeconds = (Date.now() - runStarted) / 1000;

  // The service's own account of a runtime crash (npm start restarts workerd and says so), with the lines before it.
  const serviceLines = readFileSync(svc.serviceLog, "utf8").split("\n");
  const restarts = [];
  serviceLines.forEach((l, i) => {
    if (/^npm start: workerd exited/.test(l)) restarts.push(serviceLines.slice(Math.max(0, i - 12), i + 1).join("\n"));
  });
  if (svc.exited()) warnings.push(`${ed.name}: the service stopped during the run (${svc.exited()}); last lines of its log:\n${tail(svc.serviceLog)}`);
  if (restarts.length) warnings.push(`${ed.name}: the service's runtime exited ${restarts.length} time(s) and was restarted:\n${restarts.join("\n---\n")}`);

  if (opts.keep) {
    keptServices.add(svc.pid);
    storeDirs.delete(svc.storeDir);
    log(`${ed.name}: --keep: service left running on ${svc.base} (process group ${svc.pid}; stop it with: kill -- -${svc.pid})`);
    log(`        TFE_ADDRESS=${svc.base} TFE_TOKEN=${svc.token}  store: ${svc.storeDir}`);
  } else {
    await stopGroup(svc.pid);
    rmSync(svc.storeDir, { recursive: true, force: true });
    storeDirs.delete(svc.storeDir);
  }

  // ------------------------------------------------------------ summarise this edition
  const rows = [...tests.values()].sort((a, b) => a.name.localeCompare(b.name));
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
  // Per file: the selected tests, their results (tests and subtests), and what the selection left out.
  const fileOf = new Map(runTests.map((t) => [t.test, t.file]));
  const files = Object.keys(selection.files).map((file) => {
    const mine = rows.filter((t) => fileOf.get(t.name.split("/")[0]) === file);
    return {
      file,
      selected: runTests.filter((t) => t.file === file).length,
      run: mine.length,
      ...tally(mine),
      excluded: leftOut.filter((l) => l.file === file && l.kind === "excluded").length,
      pending: leftOut.filter((l) => l.file === file && l.kind === "pending").length,
      subtestsLeftOut: leftOut.filter((l) => l.file === file && l.kind === "subtest left out").length,
    };
  });
  return {
    edition: ed.name,
    title: ed.title,
    serviceErrors: serviceLines.filter((l) => /^npm start:|uncaught|error|panic|fatal|Segmentation/i.test(l) && !/^\{"level":"info"/.test(l)).slice(-20),
    service: { ...ed.service, RATE_LIMIT: "0" },
    env: shownEnv,
    command: commandLine,
    runSeconds: Math.round(runSeconds),
    ok: errors.length === 0 && all.failed === 0,
    errors,
    totals: { selectedTests: runTests.length, run: rows.length, ...all, topLevel: top },
    files,
    leftOut,
    tests: rows.map((t) => ({ name: t.name, result: t.result, seconds: t.seconds, ...(t.detail ? { detail: t.detail } : {}) })),
  };
}
function tally(list) {
  return {
    passed: list.filter((t) => t.result === "pass").length,
    failed: list.filter((t) => t.result === "fail").length,
    skipped: list.filter((t) => t.result === "skip").length,
  };
}

// ---------------------------------------------------------------- run each edition in turn (2 cores: never both at once)
const results = [];
for (const ed of editions) results.push(await runEdition(ed));

// ---------------------------------------------------------------- write the results
const ok = results.every((r) => r.ok);
const onlyRun = Boolean(opts.only) || opts.withPending || opts.edition !== null;
const outDir = onlyRun ? work : here;
const outName = onlyRun ? "results-only" : "results";
const summary = {
  module: `${MODULE}@${VERSION}`,
  date: new Date().toISOString(),
  ok,
  totals: Object.fromEntries(results.map((r) => [r.edition, r.totals])),
  editions: results,
  notSelected: filesNotSelected,
};
writeFileSync(join(outDir, `${outName}.json`), `${JSON.stringify(summary, null, 2)}\n`);
const cell = (s) =>
  String(s ?? "")
    .replace(/\|/g, "\\|")
    .replace(/\n/g, " ");
const flags = `${opts.edition ? ` --edition ${opts.edition}` : ""}${opts.only ? ` --only ${cell(opts.only)}` : ""}${opts.withPending ? " --with-pending" : ""}`;
const md = [
  `# go-tfe ${VERSION} integration tests against this service`,
  "",
  `Selection: \`test/go-tfe/selection.json\`. Generated by \`npm run test:go-tfe\`${flags}. Each edition runs on its own fresh store.`,
  "A skipped test is one go-tfe skipped itself (reason shown); it is never counted as passed.",
  "",
  "| edition | go-tfe gates | selected tests | tests + subtests run | passed | failed | skipped | left out by the selection | run time |",
  "|---|---|---:|---:|---:|---:|---:|---:|---:|",
  ...results.map(
    (r) =>
      `| ${r.title} | ${cell(Object.keys(r.env).includes("ENABLE_TFE") ? "ENABLE_TFE=1" : "no ENABLE_TFE; admin token for plans")} | ${r.totals.selectedTests} | ${r.totals.run} | ${r.totals.passed} | ${r.totals.failed} | ${r.totals.skipped} | ${r.leftOut.length} | ${r.runSeconds} s |`,
  ),
  "",
];
for (const r of results) {
  md.push(
    `## ${r.title}`,
    "",
    `Top-level tests: ${r.totals.topLevel.passed} passed, ${r.totals.topLevel.failed} failed, ${r.totals.topLevel.skipped} skipped.`,
    ...(r.errors.length ? ["", "**Run errors:**", "", ...r.errors.map((e) => `- ${cell(e)}`)] : []),
    "",
    "Command:",
    "",
    "```",
    `${Object.entries(r.env)
      .map(([k, v]) => `${k}=${k === "TFE_ADDRESS" ? "http://127.0.0.1:<port>" : v}`)
      .join(" ")} \\`,
    `  ${r.command}`,
    "```",
    "",
    "### Per file",
    "",
    "| file | selected tests | tests + subtests run | passed | failed | skipped | excluded | pending | subtests left out |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...r.files.map(
      (f) => `| \`${f.file}\` | ${f.selected} | ${f.run} | ${f.passed} | ${f.failed} | ${f.skipped} | ${f.excluded} | ${f.pending} | ${f.subtestsLeftOut} |`,
    ),
    "",
    `### Left out by the selection (${r.leftOut.length})`,
    "",
    "| file | test | kind | reason |",
    "|---|---|---|---|",
    ...r.leftOut.map((t) => `| \`${t.file}\` | \`${cell(t.name)}\` | ${t.kind} | ${cell(t.reason)} |`),
    "",
    "### Results",
    "",
    "| test | result | seconds | first failure line / skip reason |",
    "|---|---|---:|---|",
    ...r.tests.map((t) => `| \`${cell(t.name)}\` | ${t.result === "fail" ? "**fail**" : t.result} | ${t.seconds ?? ""} | ${cell(t.detail)} |`),
    "",
  );
}
md.push(
  `## Test files not selected (${filesNotSelected.length})`,
  "",
  `Every other \`*_test.go\` file of ${MODULE}@${VERSION}, with why it is not selected (\`not-selected\` in the selection).`,
  "",
  "| file | reason |",
  "|---|---|",
  ...filesNotSelected.map((f) => `| \`${f.file}\` | ${cell(f.reason)} |`),
  "",
);
writeFileSync(join(outDir, `${outName}.md`), md.join("\n"));

for (const w of warnings) console.error(`go-tfe: warning: ${w}`);
for (const r of results) {
  for (const t of r.tests.filter((t) => t.result === "fail")) console.log(`FAIL [${r.edition}] ${t.name}: ${t.detail}`);
  if (r.totals.failed) console.log(`go-tfe [${r.edition}]: errors in the service log:\n${r.serviceErrors.join("\n") || "(none)"}`);
  for (const e of r.errors) console.error(`go-tfe: ERROR [${r.edition}]: ${e}`);
}
log(
  `results: ${rel(join(outDir, `${outName}.md`))} (raw events: ${results.map((r) => rel(join(work, `go-test-${r.edition}.jsonl`))).join(", ")}; service logs: ${rel(work)}/service-<edition>.log)`,
);
for (const r of results) console.log(`go-tfe [${r.edition}]: ${r.totals.passed} passed, ${r.totals.failed} failed, ${r.totals.skipped} skipped`);
process.exit(ok ? 0 : 1);

function rel(p) {
  return p.startsWith(`${root}/`) ? p.slice(root.length + 1) : p;
}
