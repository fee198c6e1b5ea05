#!/usr/bin/env node
// Crash test outside vitest: start `npm start` on a fresh store, run a write load, kill -9 the whole
// process group (wrangler and its workerd) mid-load, restart on the same store, and check that every
// acknowledged write is there and the consistency checker reports nothing.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, openSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const store = mkdtempSync(join(tmpdir(), "restart-store-"));
const token = `${randomBytes(7).toString("hex")}.atlasv1.${randomBytes(24).toString("hex")}`;
const deadline = Date.now() + 8 * 60_000;
const port = await new Promise((resolve) => {
  const s = createServer();
  s.listen(0, "127.0.0.1", () => {
    const p = s.address().port;
    s.close(() => resolve(p));
  });
});
const base = `http://127.0.0.1:${port}/api/v2`;
let server;

function start() {
  const log = openSync(join(store, `server-${Date.now()}.log`), "w");
  server = spawn(process.execPath, [join(root, "scripts", "start.mjs")], {
    cwd: root,
    detached: true,
    stdio: ["ignore", log, log],
    env: { ...process.env, PORT: String(port), ADMIN_TOKEN: token, PERSIST_DIR: store, RATE_LIMIT: "0", BLOB_SIGNING_KEY: "restart-test" },
  });
}
function killHard() {
  try {
    process.kill(-server.pid, "SIGKILL");
  } catch {}
}
async function waitUp() {
  for (;;) {
    try {
      if ((await fetch(`${base}/ping`, { headers: { Authorization: `Bearer ${token}` } })).status === 204) return;
    } catch {}
    if (Date.now() > deadline) throw new Error("server did not start");
    await new Promise((r) => setTimeout(r, 300));
  }
}
const req = (method, path, body) =>
  fetch(`${base}${path}`, { method, headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/vnd.api+json" }, body: body && JSON.stringify(body) });

let failed = false;
try {
  start();
  await waitUp();
  await req("POST", "/organizations", { data: { type: "organizations", attributes: { name: "crash", email: "c@x.test" } } });
  // The load: creates, renames, tag writes and deletes; acknowledged outcomes are recorded.
  const acked = new Map(); // id -> expected { name, deleted, tag }
  let stop = false;
  const worker = async (w) => {
    for (let i = 0; !stop; i++) {
      try {
        const name = `w${w}-${i}`;
        const res = await req("POST", "/organizations/crash/workspaces", { data: { type: "workspaces", attributes: { name } } });
        if (res.status !== 201) continue;
        const id = (await res.json()).data.id;
        acked.set(id, { name, deleted: false, tag: null });
        if (i % 3 === 1) {
          const r = await req("PATCH", `/workspaces/${id}`, { data: { type: "workspaces", attributes: { name: `${name}-r` } } });
          if (r.status === 200) acked.get(id).name = `${name}-r`;
        }
        if (i % 3 === 2) {
          const r = await req("PATCH", `/workspaces/${id}/tag-bindings`, { data: [{ type: "tag-bindings", attributes: { key: "k", value: String(i) } }] });
          if (r.status === 200) acked.get(id).tag = String(i);
        }
        if (i % 5 === 4) {
          const r = await req("DELETE", `/workspaces/${id}`);
          if (r.status === 204) acked.get(id).deleted = true;
        }
      } catch {
        return; // the server went away
      }
    }
  };
  const workers = [0, 1, 2, 3].map(worker);
  await new Promise((r) => setTimeout(r, 6000));
  killHard(); // mid-load
  stop = true;
  await Promise.allSettled(workers);
  start();
  await waitUp();
  await new Promise((r) => setTimeout(r, 3000)); // outbox alarms retry within seconds
  let present = 0;
  let missing = [];
  // Alarms retry pending index writes with backoff: re-check for up to 30 s before calling a write lost.
  for (let attempt = 0; attempt < 10; attempt++) {
  present = 0;
  missing = [];
  for (const [id, want] of acked) {
    const res = await req("GET", `/workspaces/${id}`);
    const ok = want.deleted ? res.status === 404 : res.status === 200 && (await res.json()).data.attributes.name === want.name;
    if (!ok) {
      missing.push(id);
      continue;
    }
    if (!want.deleted && want.tag !== null) {
      const tb = await (await req("GET", `/workspaces/${id}/tag-bindings`)).json();
      if (!tb.data.some((b) => b.attributes.key === "k" && b.attributes.value === want.tag)) {
        missing.push(id);
        continue;
      }
    }
    present++;
  }
  if (missing.length === 0) break;
  await new Promise((r) => setTimeout(r, 3000));
  }
  let differences = 0;
  for (let cursor = "", n = 0; n < 100; n++) {
    const page = await (await req("GET", `/admin/consistency?page%5Bsize%5D=100&cursor=${encodeURIComponent(cursor)}`)).json();
    differences += page.data.filter((d) => d.attributes.kind !== "write-pending").length;
    for (const d of page.data) console.log(`difference: ${d.attributes["workspace-id"]} ${d.attributes.kind} ${d.attributes.detail}`);
    if (!page.meta["next-cursor"]) break;
    cursor = page.meta["next-cursor"];
  }
  console.log(`restart: ${acked.size} acknowledged, ${present} present, ${differences} index differences`);
  if (missing.length || differences || acked.size === 0) failed = true;
} catch (err) {
  console.error(`restart: ${err}`);
  failed = true;
} finally {
  killHard();
  rmSync(store, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
