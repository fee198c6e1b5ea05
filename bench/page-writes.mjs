// What creating a workspace writes to disk, against the floor's create (bench/floor/): the service and the floor
// start as `npm start` runs them, each on a store of its own; after a warm-up, `strace` follows each workerd while
// N creates run one at a time, and the report counts per create the pages written (pwrite64 bytes / 4096) and the
// fsyncs, split by file: the workspace's Durable Object, D1 (itself an object in the local runtime), anything else.
// `npm run bench:page-writes [-- --count N]`. Needs strace and ptrace rights over one's own processes.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { processesOf } from "../scripts/lib/harness.mjs";
import { freePort, killAllGroups, sleep, spawnStart } from "../scripts/lib/service.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values: opt } = parseArgs({ options: { count: { type: "string", default: "40" } } });
const N = Number(opt.count);
if (spawnSync("strace", ["-V"]).status !== 0) throw new Error("strace is not installed (apt-get install strace)");

const work = mkdtempSync(join(tmpdir(), "page-writes-"));
const token = `${randomBytes(7).toString("hex")}.atlasv1.${randomBytes(32).toString("hex")}`;
process.on("exit", () => {
  killAllGroups();
  rmSync(work, { recursive: true, force: true });
});
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => process.exit(130));

function start(name, port, env = {}) {
  const store = join(work, name);
  mkdirSync(store);
  return spawnStart({ root, store, token, logFile: join(work, `${name}.log`), port, env: { EDITION: "self-hosted", NO_AGENT: "1", ...env } }).pid;
}

async function waitUp(base, path) {
  for (const until = Date.now() + 180_000; Date.now() < until; await sleep(300)) {
    try {
      if ((await fetch(`${base}${path}`, { headers: { Authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(3000) })).status < 500) return;
    } catch {}
  }
  throw new Error(
    `${base} did not answer:\n${readdirSync(work)
      .filter((f) => f.endsWith(".log"))
      .map((f) => readFileSync(join(work, f), "utf8").slice(-1500))
      .join("\n")}`,
  );
}

async function call(base, method, path, body) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/vnd.api+json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 200)}`);
}

/** workerd processes of a process group. */
const workerds = (/** @type {number} */ pgid) =>
  processesOf([pgid])
    .filter((p) => p.comm.startsWith("workerd"))
    .map((p) => p.pid);

/** Runs `creates` under strace of the group's workerd; answers per-file-kind totals. */
async function traced(pgid, creates) {
  const out = join(work, `strace-${pgid}.txt`);
  const args = ["-f", "-y", "-qq", "-e", "trace=pwrite64,write,fsync,fdatasync", "-o", out];
  for (const pid of workerds(pgid)) args.push("-p", String(pid));
  const tracer = spawn("strace", args, { stdio: "ignore" });
  await sleep(1500);
  await creates();
  await sleep(1500); // the index flush and alarms that follow a create
  tracer.kill("SIGINT");
  await new Promise((r) => tracer.on("exit", r));
  const totals = {};
  for (const line of readFileSync(out, "utf8").split("\n")) {
    const m = /(pwrite64|write|fsync|fdatasync)\(\d+<([^>]*)>.*\)\s*=\s*(\d+)/.exec(line);
    if (!m?.[2].startsWith("/")) continue; // sockets and pipes are not the store
    const [, call, path, result] = m;
    const kind = path.includes("D1DatabaseObject") ? "d1" : path.includes(`${work}/`) ? "object" : "other";
    if (process.env.PAGE_WRITES_DEBUG) console.log(kind, call, path.replace(work, ""), result);
    totals[kind] ??= { pages: 0, fsyncs: 0 };
    const t = totals[kind];
    if (call === "fsync" || call === "fdatasync") t.fsyncs++;
    else t.pages += Number(result) / 4096;
  }
  return totals;
}

const [servicePort, floorPort] = [await freePort(), await freePort([8787])];
const service = { base: `http://127.0.0.1:${servicePort}`, pgid: start("service", servicePort) };
const floor = {
  base: `http://127.0.0.1:${floorPort}`,
  pgid: start("floor", floorPort, { WORKER_CONFIG: join("bench", "floor", "wrangler.toml") }),
};
await waitUp(service.base, "/api/v2/ping");
await waitUp(floor.base, "/none"); // the floor answers 404 to what it does not serve
await call(service.base, "POST", "/api/v2/organizations", { data: { type: "organizations", attributes: { name: "pw", email: "pw@example.com" } } });
await call(floor.base, "POST", "/seed");

const createService = (i) =>
  call(service.base, "POST", "/api/v2/organizations/pw/workspaces", { data: { type: "workspaces", attributes: { name: `ws-${i}` } } });
const createFloor = (i) => call(floor.base, "POST", `/create/ws-${i}`);
// The floor with the service's crash-retry alarm: armed in the object's write, cleared once D1 has it.
const createFloorAlarm = (i) => call(floor.base, "POST", `/create/wa-${i}?alarm=1`);
for (let i = 0; i < 5; i++) await Promise.all([createService(`warm-${i}`), createFloor(`warm-${i}`)]);

const result = {};
for (const { name, target, create } of [
  { name: "service", target: service, create: createService },
  { name: "floor", target: floor, create: createFloor },
  { name: "floor + alarm", target: floor, create: createFloorAlarm },
]) {
  const totals = await traced(target.pgid, async () => {
    for (let i = 0; i < N; i++) await create(i);
  });
  result[name] = Object.fromEntries(Object.entries(totals).map(([k, v]) => [k, { pages: +(v.pages / N).toFixed(1), fsyncs: +(v.fsyncs / N).toFixed(1) }]));
}

const row = (name) => {
  const r = result[name];
  const cell = (k) => (r[k] ? `${r[k].pages} / ${r[k].fsyncs}` : "0 / 0");
  return `| ${name} | ${cell("object")} | ${cell("d1")} | ${cell("other")} |`;
};
const ratio = (k, floorName = "floor") => (result[floorName][k]?.pages ? (result.service[k]?.pages ?? 0) / result[floorName][k].pages : null);
const md = [
  `# Page writes per create (${N} creates, strace, ${new Date().toISOString().slice(0, 10)})`,
  "",
  "| server | its object: pages / fsyncs | D1: pages / fsyncs | other files |",
  "|---|---|---|---|",
  row("service"),
  row("floor"),
  row("floor + alarm"),
  "",
  `Service ÷ floor, pages: the object ${ratio("object")?.toFixed(2) ?? "n/a"}×, D1 ${ratio("d1")?.toFixed(2) ?? "n/a"}× (target: the object ≤ 1.5×).`,
  `Service ÷ floor + alarm (the floor arming and clearing the crash-retry alarm, as the outbox must), pages: the object ${ratio("object", "floor + alarm")?.toFixed(2) ?? "n/a"}×.`,
  "",
].join("\n");
mkdirSync(join(root, "bench", "results"), { recursive: true });
writeFileSync(join(root, "bench", "results", "page-writes.md"), md);
writeFileSync(join(root, "bench", "results", "page-writes.json"), `${JSON.stringify({ count: N, ...result }, null, 2)}\n`);
console.log(md);
process.exit(0);
