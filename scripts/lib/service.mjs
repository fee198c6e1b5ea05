// Shared by the client harnesses: start the service (`npm start`) on a fresh local store with a random port and
// a site-admin token, wait for GET /api/v2/ping, and stop whole process groups afterwards. scripts/go-tfe.mjs uses
// its process-group helpers. Node built-ins only.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { listen, sleep } from "./harness.mjs";

export { sleep };

// ---------------------------------------------------------------- process groups
// Every child that may spawn children runs detached (its own process group), so the whole tree can be stopped.
export const groups = new Set(); // pids of process-group leaders still to stop

export function groupAlive(pgid) {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}
export function killGroup(pgid, sig) {
  try {
    process.kill(-pgid, sig);
  } catch {}
}
// Graceful: SIGTERM, up to `graceMs` for the group to go, then SIGKILL.
export async function stopGroup(pgid, graceMs = 5000) {
  if (!groupAlive(pgid)) return groups.delete(pgid);
  killGroup(pgid, "SIGTERM");
  const until = Date.now() + graceMs;
  while (groupAlive(pgid) && Date.now() < until) await sleep(100);
  if (groupAlive(pgid)) killGroup(pgid, "SIGKILL");
  while (groupAlive(pgid) && Date.now() < until + 2000) await sleep(100);
  groups.delete(pgid);
}
// Synchronous last resort (exit handlers): SIGKILL every group still registered.
export function killAllGroups() {
  for (const pgid of groups) killGroup(pgid, "SIGKILL");
  groups.clear();
}

export function freePort(avoid = [8787]) {
  const one = async () => {
    const srv = createServer();
    const port = await listen(srv);
    await new Promise((resolve) => srv.close(resolve));
    return port;
  };
  return (async () => {
    let port;
    do port = await one();
    while (avoid.includes(port));
    return port;
  })();
}

export function tail(file, n = 30) {
  try {
    return readFileSync(file, "utf8").split("\n").slice(-n).join("\n");
  } catch {
    return "(no log)";
  }
}

export const newAdminToken = () => `${randomBytes(7).toString("hex")}.atlasv1.${randomBytes(32).toString("hex")}`;

/**
 * `scripts/start.mjs` in a process group of its own (wrangler and its workerd stop together), on `store` with `token`
 * as the site admin's, its output appended to `logFile`: for the runs that keep their own stores and tokens (the
 * benches, the restart test). Answers the child, whose group `killAllGroups` stops.
 */
export function spawnStart({ root, store, token, logFile, port, env = {} }) {
  const fd = openSync(logFile, "a");
  const child = spawn(process.execPath, [join(root, "scripts", "start.mjs")], {
    cwd: root,
    detached: true,
    stdio: ["ignore", fd, fd],
    env: { ...process.env, PORT: String(port), ADMIN_TOKEN: token, PERSIST_DIR: store, RATE_LIMIT: "0", ...env },
  });
  if (child.pid) groups.add(child.pid);
  return child;
}

// Start `npm start` on a fresh store. Resolves { base, port, token, storeDir, pid, stop() } once /api/v2/ping answers
// and the site-admin token is accepted; rejects with a message (and the log's tail) otherwise.
export async function startService({ root, logFile, timeoutMs = 120_000, env = {}, storePrefix = "clients-store-" }) {
  const port = await freePort();
  const token = newAdminToken();
  const storeDir = mkdtempSync(join(tmpdir(), storePrefix));
  const base = `http://127.0.0.1:${port}`;
  const logFd = openSync(logFile, "w");
  const child = spawn("npm", ["start"], {
    cwd: root,
    detached: true,
    stdio: ["ignore", logFd, logFd],
    env: { ...process.env, PORT: String(port), ADMIN_TOKEN: token, PERSIST_DIR: storeDir, EDITION: "self-hosted", RATE_LIMIT: "0", ...env },
  });
  let exited = null;
  child.on("error", (e) => (exited = `could not run npm start: ${e.message}`));
  child.on("exit", (code, sig) => (exited = `npm start exited (${sig ?? `code ${code}`})`));
  if (child.pid) groups.add(child.pid);
  const stop = async () => {
    if (child.pid) await stopGroup(child.pid);
    rmSync(storeDir, { recursive: true, force: true });
  };
  const started = Date.now();
  for (;;) {
    if (exited) {
      await stop();
      throw new Error(`the service did not start: ${exited}; last lines of ${logFile}:\n${tail(logFile)}`);
    }
    try {
      const r = await fetch(`${base}/api/v2/ping`, { signal: AbortSignal.timeout(5000) });
      if (r.status < 500) break;
    } catch {}
    if (Date.now() - started > timeoutMs) {
      await stop();
      throw new Error(`the service did not answer GET /api/v2/ping within ${timeoutMs / 1000} s; last lines of ${logFile}:\n${tail(logFile)}`);
    }
    await sleep(500);
  }
  let status = 0;
  try {
    status = (await fetch(`${base}/api/v2/organizations`, { headers: { Authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(10_000) })).status;
  } catch (e) {
    status = e.message;
  }
  if (status === 401 || status === 403) {
    await stop();
    throw new Error(
      `the service answers ${status} to the site-admin token given in ADMIN_TOKEN (another npm start from this checkout may have rewritten .dev.vars); run again`,
    );
  }
  return { base, port, token, storeDir, pid: child.pid, startSeconds: (Date.now() - started) / 1000, stop, exited: () => exited };
}

/**
 * The store checks' runtime (scripts/store-compat.mjs, scripts/store-upgrade.mjs): runs `node <dir>/scripts/<script>`
 * on `store` with `env`, its output in `logFile`, until GET /api/v2/ping accepts `token`; then calls
 * `fn(api, readLog)`, where `api(method, path, body?, as = token)` resolves { status, body } and `readLog()` is the
 * output so far, and stops the process group whatever `fn` does.
 */
export async function withRuntime({ dir, script = "start.mjs", label, store, logFile, token, env = {}, timeoutMs = 180_000 }, fn) {
  const port = await freePort();
  const fd = openSync(logFile, "w");
  const child = spawn(process.execPath, [join(dir, "scripts", script)], {
    cwd: dir,
    detached: true,
    stdio: ["ignore", fd, fd],
    env: { ...process.env, RATE_LIMIT: "0", ...env, PORT: String(port), PERSIST_DIR: store },
  });
  groups.add(child.pid);
  const base = `http://127.0.0.1:${port}/api/v2`;
  const api = async (method, path, body, as = token) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { Authorization: `Bearer ${as}`, "Content-Type": "application/vnd.api+json" },
      body: body && JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      if ((await fetch(`${base}/ping`, { headers: { Authorization: `Bearer ${token}` } })).status === 204) break;
    } catch {}
    if (Date.now() > until) throw new Error(`${label} did not start:\n${tail(logFile)}`);
    await sleep(300);
  }
  try {
    await fn(api, () => readFileSync(logFile, "utf8"));
  } finally {
    await stopGroup(child.pid);
  }
}
