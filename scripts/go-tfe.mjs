#!/usr/bin/env node
// `npm run test:go-tfe`: runs hashicorp/go-tfe's own integration tests (v1.109.0, the last release whose
// module carries them) against this service on a fresh local store, and summarises every test and
// subtest in test/go-tfe/results.{md,json}. The selection lives in test/go-tfe/selection.json.
//
// Options: --only <regex> (run a subset of the selection), --keep (leave the service running).
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const VERSION = "v1.109.0";
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const here = join(root, "test", "go-tfe");
const work = join(here, ".work");
const args = process.argv.slice(2);
const only = args.includes("--only") ? args[args.indexOf("--only") + 1] : null;
const keep = args.includes("--keep");
const OVERALL_TIMEOUT_MS = 40 * 60_000;

function die(msg) {
  console.error(`go-tfe: ${msg}`);
  process.exit(1);
}

// ---- the selection ----
const selection = JSON.parse(readFileSync(join(here, "selection.json"), "utf8"));
// Entries marked "pending" wait for a feature that has not landed: left out, and listed as such.
const selected = selection.run.filter((t) => !t.pending);
const runPattern = `^(${selected.map((t) => t.test).join("|")})$`;
const skipSubtests = selected.flatMap((t) => (t.skipSubtests ?? []).map((s) => `${t.test}/${s.name}`));
const leftOut = [
  ...selection.excluded.map((t) => ({ name: t.test, reason: t.reason })),
  ...selection.run.filter((t) => t.pending).map((t) => ({ name: t.test, reason: `pending: ${t.pending}` })),
  ...selected.flatMap((t) => (t.skipSubtests ?? []).map((s) => ({ name: `${t.test}/${s.name}`, reason: s.reason ?? `pending: ${s.pending}` }))),
];
// go test -skip takes slash-separated per-level patterns; subtest names have spaces turned into underscores.
const skipPattern = skipSubtests.length ? skipSubtests.map((s) => `^${s.split("/").map((p) => p.replace(/ /g, "_")).join("$/^")}$`).join("|") : "";

// ---- go and the module ----
if (spawnSync("go", ["version"], { stdio: "ignore" }).status !== 0) die("the `go` toolchain is required (https://go.dev/dl)");
const modDir = join(work, `go-tfe@${VERSION}`);
if (!existsSync(join(modDir, "go.mod"))) {
  mkdirSync(work, { recursive: true });
  const dl = mkdtempSync(join(tmpdir(), "go-tfe-dl-"));
  spawnSync("go", ["mod", "init", "download"], { cwd: dl, stdio: "ignore" });
  const res = spawnSync("go", ["mod", "download", "-json", `github.com/hashicorp/go-tfe@${VERSION}`], { cwd: dl, encoding: "utf8" });
  rmSync(dl, { recursive: true, force: true });
  if (res.status !== 0) die(`go mod download failed: ${res.stderr || res.stdout}`);
  const info = JSON.parse(res.stdout);
  cpSync(info.Dir, modDir, { recursive: true });
  spawnSync("chmod", ["-R", "u+w", modDir]);
}
console.log(`go-tfe: compiling the ${VERSION} test binary`);
const bin = join(work, "go-tfe.test");
const compiled = spawnSync("go", ["test", "-c", "-o", bin, "."], { cwd: modDir, stdio: ["ignore", "inherit", "inherit"] });
if (compiled.status !== 0) die("compiling go-tfe's tests failed");

// ---- the service ----
async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on("error", reject);
  });
}
const port = await freePort();
const token = `${randomBytes(7).toString("hex")}.atlasv1.${randomBytes(32).toString("hex")}`;
const store = mkdtempSync(join(tmpdir(), "go-tfe-store-"));
const logFile = join(work, "service.log");
const { openSync } = await import("node:fs");
const log = openSync(logFile, "w");
const service = spawn(process.execPath, [join(root, "scripts", "start.mjs")], {
  cwd: root,
  detached: true,
  stdio: ["ignore", log, log],
  env: { ...process.env, PORT: String(port), ADMIN_TOKEN: token, PERSIST_DIR: store, EDITION: "self-hosted", RATE_LIMIT: "0" },
});
let stopped = false;
function stop() {
  if (stopped || keep) return;
  stopped = true;
  try {
    process.kill(-service.pid, "SIGKILL");
  } catch {}
  rmSync(store, { recursive: true, force: true });
}
process.on("exit", stop);
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => { stop(); process.exit(130); });
const overall = setTimeout(() => { console.error("go-tfe: overall time limit reached"); stop(); process.exit(1); }, OVERALL_TIMEOUT_MS);
overall.unref();

const base = `http://127.0.0.1:${port}`;
const started = Date.now();
for (;;) {
  try {
    const r = await fetch(`${base}/api/v2/ping`, { headers: { Authorization: `Bearer ${token}` } });
    if (r.status === 204) break;
  } catch {}
  if (Date.now() - started > 120_000) die(`the service did not start; see ${logFile}`);
  if (service.exitCode !== null) die(`the service exited; see ${logFile}`);
  await new Promise((r) => setTimeout(r, 500));
}
console.log(`go-tfe: service up on ${base} after ${((Date.now() - started) / 1000).toFixed(1)} s`);

// ---- run ----
const goArgs = ["-test.v=test2json", "-test.count=1", "-test.timeout=30m", "-test.parallel=4", "-test.run", only ?? runPattern];
if (skipPattern) goArgs.push("-test.skip", skipPattern);
const events = [];
await new Promise((resolve) => {
  const child = spawn("go", ["tool", "test2json", "-t", "-p", "tfe", bin, ...goArgs], {
    cwd: modDir,
    env: { ...process.env, TFE_ADDRESS: base, TFE_TOKEN: token, ENABLE_TFE: "1", ENABLE_BETA: "1" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let buf = "";
  child.stdout.on("data", (chunk) => {
    buf += chunk;
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      try {
        events.push(JSON.parse(line));
      } catch {}
    }
  });
  child.on("exit", resolve);
});
stop();

// ---- summarise ----
writeFileSync(join(work, "go-test.log"), events.filter((e) => e.Action === "output").map((e) => e.Output).join(""));
const tests = new Map();
for (const e of events) {
  if (!e.Test) continue;
  const t = tests.get(e.Test) ?? { name: e.Test, result: "unknown", seconds: 0, output: [] };
  if (e.Action === "output") t.output.push(e.Output);
  if (["pass", "fail", "skip"].includes(e.Action)) {
    t.result = e.Action;
    t.seconds = e.Elapsed ?? 0;
  }
  tests.set(e.Test, t);
}
const firstFailure = (t) => {
  const failedSub = [...tests.values()].find((s) => s.name.startsWith(`${t.name}/`) && s.result === "fail");
  if (failedSub) return `subtest failed: ${failedSub.name.slice(t.name.length + 1)}`;
  const lines = t.output.map((l) => l.trim()).filter(Boolean);
  const i = lines.findIndex((l) => /^Error:|Error Trace:|panic:|_test\.go:\d+:/.test(l));
  if (i < 0) return lines.find((l) => !/^(=== |--- )/.test(l)) ?? "";
  const j = lines.findIndex((l, k) => k >= i && l.startsWith("Error:"));
  if (j < 0) return lines[i].slice(0, 300);
  // testify prints the message over several lines: keep the next ones up to the next field.
  const rest = lines.slice(j + 1, j + 4).filter((l) => !/^(Test:|Messages:|Error Trace:)/.test(l));
  return [lines[j], ...rest].join(" ").replace(/\s+/g, " ").slice(0, 300);
};
const skipReason = (t) => (t.output.map((l) => l.trim()).find((l) => /_test\.go:\d+:/.test(l)) ?? "").slice(0, 200);
const rows = [...tests.values()].sort((a, b) => a.name.localeCompare(b.name));
const count = (r) => rows.filter((t) => t.result === r).length;
const totals = { passed: count("pass"), failed: count("fail") + count("unknown"), skipped: count("skip") };
writeFileSync(
  join(here, "results.json"),
  JSON.stringify({ version: VERSION, run: runPattern, skip: skipPattern, totals, leftOut, tests: rows.map((t) => ({ name: t.name, result: t.result, seconds: t.seconds, detail: t.result === "fail" ? firstFailure(t) : t.result === "skip" ? skipReason(t) : undefined })) }, null, 2) + "\n",
);
const md = [
  `# go-tfe ${VERSION} integration tests against this service`,
  "",
  `Selection: \`test/go-tfe/selection.json\`. Totals (tests and subtests): **${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped**.`,
  "",
  "| test | result | detail |",
  "|---|---|---|",
  ...rows.map((t) => `| \`${t.name}\` | ${t.result} | ${(t.result === "fail" ? firstFailure(t) : t.result === "skip" ? skipReason(t) : "").replace(/\|/g, "\\|")} |`),
  "",
  `## Left out (${leftOut.length})`,
  "",
  "| test | reason |",
  "|---|---|",
  ...leftOut.map((t) => `| \`${t.name}\` | ${t.reason} |`),
  "",
];
writeFileSync(join(here, "results.md"), md.join("\n"));
for (const t of rows.filter((t) => t.result !== "pass" && t.result !== "skip")) console.log(`FAIL ${t.name}: ${firstFailure(t)}`);
console.log(`go-tfe: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
if (rows.length === 0) die("no test ran");
process.exit(totals.failed > 0 ? 1 : 0);
