#!/usr/bin/env node
// Crash/restart test outside vitest (`npm run test:restart`, run by .ci/run with the pinned Node).
// Starts `npm start` (wrangler dev and its workerd) on a fresh local store in its own process group,
// runs a write load (creates, renames, tag and attribute updates, deletes) recording every
// acknowledged write, kills the whole group with SIGKILL mid-load, restarts on the same store, and
// repeats; one worker's index writes are held back after the DO commit, so a kill lands between the
// two. Then every acknowledged write must be present (show by id, name lookup, list) and the
// consistency checker must report no difference once the outbox alarms ran.
// A write in flight at the kill was not acknowledged: either outcome is accepted for it.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { readJson } from "../../scripts/lib/harness.mjs";
import { freePort, spawnStart, tail } from "../../scripts/lib/service.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const KILLS = 2;
const LOAD_MS = [4000, 7000]; // each load phase runs this long (random within) before the kill
const WORKERS = 4;
/** One more worker holds each index write this long after the DO committed it, so the kill lands in that window. */
const SLOW_MS = 1500;
const TOTAL_MS = 8 * 60_000;
/** The commit-time alarm fires 5 s after a commit: the index must agree with the DOs well within this. */
const AGREE_MS = 30_000;
const CONVERGE_MS = 90_000; // alarms fire within seconds; bounded wait for the checker to report nothing
const ORG = "crash";

const store = mkdtempSync(join(tmpdir(), "restart-store-"));
const token = `${randomBytes(7).toString("hex")}.atlasv1.${randomBytes(24).toString("hex")}`;
const started = Date.now();
/** @type {{ pid: number, exited: boolean } | null} */
let server = null;
let logFile = "";

// ---- the server, in its own process group; always killed on the way out ----

const port = await freePort();
const base = `http://127.0.0.1:${port}/api/v2`;

function start() {
  logFile = join(store, `server-${Date.now()}.log`);
  const child = spawnStart({ root, store, token, logFile, port, env: { BLOB_SIGNING_KEY: "restart-test", FAULT_INJECTION: "1" } });
  const s = { pid: child.pid ?? 0, exited: false };
  child.once("exit", () => (s.exited = true));
  server = s;
}
function killHard() {
  if (!server) return;
  try {
    process.kill(-server.pid, "SIGKILL");
  } catch {}
}
function cleanup() {
  killHard();
  rmSync(store, { recursive: true, force: true });
}
process.on("exit", killHard);
for (const sig of ["SIGINT", "SIGTERM"]) {
  process.on(sig, () => {
    cleanup();
    process.exit(1);
  });
}
const watchdog = setTimeout(() => {
  console.error(`restart: gave up after ${TOTAL_MS / 1000} s`);
  cleanup();
  process.exit(1);
}, TOTAL_MS);
watchdog.unref();

async function waitUp() {
  for (;;) {
    try {
      const res = await fetch(`${base}/ping`, { headers: { Authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(2000) });
      if (res.status === 204) return;
    } catch {}
    if (server.exited) throw new Error(`the server exited while starting:\n${tail(logFile, 20)}`);
    if (Date.now() - started > TOTAL_MS - 30_000) throw new Error(`the server did not start:\n${tail(logFile, 20)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
const req = (method, path, body, extra = {}) =>
  fetch(`${base}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/vnd.api+json", Accept: "application/vnd.api+json", ...extra },
    body: body && JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });

// ---- the load ----

/** id -> { name, description, tag, deleted, maybe }: `maybe` is the outcome of an unacknowledged write. */
const acked = new Map();
/** Names of creates in flight at a kill (their workspace may or may not exist). */
const uncertainNames = new Set();
let stop = false;

async function load(worker, phase, slow = false) {
  const h = slow ? { "X-Fault-Delay-Index-Writes-Ms": String(SLOW_MS) } : {};
  for (let i = 0; !stop; i++) {
    const name = `w${phase}-${worker}${slow ? "s" : ""}-${i}`;
    let step = null;
    try {
      step = { create: name };
      const res = await req("POST", `/organizations/${ORG}/workspaces`, { data: { type: "workspaces", attributes: { name } } }, h);
      if (res.status !== 201) throw new Error(`create ${res.status}`);
      const data = (await readJson(res)).data;
      const id = data.id;
      const w = { name, description: data.attributes.description ?? null, tag: null, deleted: false, maybe: null };
      acked.set(id, w);
      step = null;
      // Each change is recorded as `maybe` while in flight and applied once acknowledged.
      const change = async (next, send, ok) => {
        w.maybe = { ...w, ...next, maybe: null };
        const r = await send();
        if (r.status !== ok) throw new Error(`${r.status} ${await r.text()}`);
        Object.assign(w, next);
        w.maybe = null;
      };
      if (i % 3 === 1)
        await change(
          { name: `${name}-r` },
          () => req("PATCH", `/workspaces/${id}`, { data: { type: "workspaces", attributes: { name: `${name}-r` } } }, h),
          200,
        );
      if (i % 3 === 2)
        await change(
          { tag: `v${i}` },
          () => req("PATCH", `/workspaces/${id}/tag-bindings`, { data: [{ type: "tag-bindings", attributes: { key: "k", value: `v${i}` } }] }, h),
          200,
        );
      if (i % 2 === 0)
        await change(
          { description: `d${i}` },
          () => req("PATCH", `/workspaces/${id}`, { data: { type: "workspaces", attributes: { description: `d${i}` } } }, h),
          200,
        );
      if (i % 5 === 4) await change({ deleted: true }, () => req("DELETE", `/workspaces/${id}`, undefined, h), 204);
    } catch (err) {
      if (step?.create) uncertainNames.add(step.create);
      if (stop || server.exited) return; // the server went away mid-request
      throw err;
    }
  }
}

async function phase(n) {
  stop = false;
  const workers = [...Array.from({ length: WORKERS }, (_, w) => load(w, n)), load(WORKERS, n, true)];
  const failed = Promise.race(workers.map((p) => p.then(() => new Promise(() => {})))); // a worker error rejects this
  failed.catch(() => {}); // (handled by the race below, or moot once the phase ended)
  await Promise.race([new Promise((r) => setTimeout(r, LOAD_MS[0] + Math.random() * (LOAD_MS[1] - LOAD_MS[0]))), failed]);
  killHard(); // mid-load: requests are in flight
  stop = true;
  await Promise.allSettled(workers);
}

// ---- verification ----

const same = (a, b) => a.deleted === b.deleted && (a.deleted || (a.name === b.name && a.description === b.description && a.tag === b.tag));

async function observed(id) {
  const res = await req("GET", `/workspaces/${id}`);
  if (res.status === 404) return { deleted: true, name: null, description: null, tag: null };
  if (res.status !== 200) throw new Error(`GET /workspaces/${id}: ${res.status}`);
  const a = (await readJson(res)).data.attributes;
  const tb = await readJson(await req("GET", `/workspaces/${id}/tag-bindings`));
  const k = tb.data.find((b) => b.attributes.key === "k");
  return { deleted: false, name: a.name, description: a.description ?? null, tag: k ? k.attributes.value : null };
}

async function listAll() {
  const out = new Map();
  for (let page = 1; page < 1000; page++) {
    const body = await readJson(await req("GET", `/organizations/${ORG}/workspaces?page%5Bsize%5D=100&page%5Bnumber%5D=${page}`));
    for (const w of body.data) out.set(w.id, { name: w.attributes.name, description: w.attributes.description ?? null });
    if (!body.meta.pagination["next-page"]) break;
  }
  return out;
}

/** Where the index (list, name lookup) and the DOs (show by id) disagree. */
async function disagreements(states) {
  const out = [];
  const listed = await listAll();
  for (const [id, got] of states) {
    const row = listed.get(id);
    if (got.deleted && row) out.push(`list: ${id} is deleted but listed`);
    if (!got.deleted && (row?.name !== got.name || row?.description !== got.description)) {
      out.push(
        `list: ${id} listed as ${row ? JSON.stringify(row) : "(missing)"}, shows as ${JSON.stringify({ name: got.name, description: got.description })}`,
      );
    }
    if (!got.deleted) {
      const byName = await req("GET", `/organizations/${ORG}/workspaces/${got.name}`);
      if (byName.status !== 200 || (await readJson(byName)).data.id !== id) out.push(`name lookup: ${got.name} does not find ${id}`);
    }
  }
  for (const [id, row] of listed) if (!states.has(id) && !uncertainNames.has(row.name)) out.push(`list: ${id} (${row.name}) was never written`);
  return out;
}

async function differences() {
  const out = [];
  let cursor = "";
  for (let n = 0; n < 1000; n++) {
    const page = await readJson(await req("GET", `/admin/consistency?page%5Bsize%5D=100&cursor=${encodeURIComponent(cursor)}`));
    out.push(...page.data.map((d) => d.attributes));
    if (!page.meta["next-cursor"]) break;
    cursor = page.meta["next-cursor"];
  }
  return out;
}

let failed = false;
try {
  start();
  await waitUp();
  const org = await req("POST", "/organizations", { data: { type: "organizations", attributes: { name: ORG, email: "crash@example.com" } } });
  if (org.status !== 201) throw new Error(`create organization: ${org.status}`);
  for (let n = 1; n <= KILLS; n++) {
    await phase(n);
    start(); // on the same store
    await waitUp();
  }

  // Every acknowledged write is there (an unacknowledged one may or may not be).
  let present = 0;
  const problems = [];
  const states = new Map();
  for (const [id, want] of acked) {
    const got = await observed(id);
    states.set(id, got);
    if (same(got, want) || (want.maybe && same(got, want.maybe))) present++;
    else
      problems.push(
        `${id}: want ${JSON.stringify({ ...want, maybe: undefined })}${want.maybe ? ` or ${JSON.stringify(want.maybe)}` : ""}, got ${JSON.stringify(got)}`,
      );
  }

  // Before the checker runs (it repairs what it finds), the outbox alarms alone must bring the index
  // (list, name lookup) to agree with every DO (show by id): a write committed in a DO but killed
  // before its index write has no one else to drain it.
  let disagree = [];
  const agreeFrom = Date.now();
  for (;;) {
    disagree = await disagreements(states);
    if (disagree.length === 0 || Date.now() > agreeFrom + AGREE_MS) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  console.log(
    `restart: index agrees with the DOs after ${((Date.now() - agreeFrom) / 1000).toFixed(1)} s: ${disagree.length === 0 ? "yes" : `no (${disagree.length})`}`,
  );
  problems.push(...disagree);

  // Then the checker reports nothing (a claim left by a create that died is released by it and
  // reported once, so every kind converges).
  let diffs = [];
  const checkFrom = Date.now();
  let first = null;
  for (;;) {
    diffs = await differences();
    first ??= diffs.map((d) => d.kind);
    if (diffs.length === 0 || Date.now() > checkFrom + CONVERGE_MS) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  console.log(
    `restart: checker: ${first.length} difference(s) at first (${[...new Set(first)].join(", ") || "none"}), ${diffs.length} after ${((Date.now() - checkFrom) / 1000).toFixed(1)} s`,
  );
  for (const d of diffs) problems.push(`checker: ${d["workspace-id"]} ${d.kind}: ${d.detail}`);

  const inFlight = [...acked.values()].filter((w) => w.maybe).length + uncertainNames.size;
  console.log(`restart: ${KILLS} kills, ${acked.size} acknowledged, ${present} present, ${inFlight} in flight at a kill, ${diffs.length} index differences`);
  for (const p of problems.slice(0, 30)) console.log(`  ${p}`);
  if (problems.length > 0 || acked.size === 0 || present !== acked.size) failed = true;
} catch (err) {
  console.error(`restart: ${err?.stack ?? err}`);
  failed = true;
} finally {
  cleanup();
}
process.exit(failed ? 1 : 0);
