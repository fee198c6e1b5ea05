#!/usr/bin/env node
// `npm start`: the lean local runtime. A short-lived child (scripts/lib/worker-prepare.mjs) builds the Worker as
// `wrangler deploy` would, applies pending D1 migrations to the local store as `wrangler d1 migrations apply --local`
// does, and has Miniflare assemble the workerd configuration `wrangler dev` would run. This process then runs workerd
// on that configuration at http://127.0.0.1:$PORT (default 8787) and stays only to pass on signals and logs: no
// Miniflare, dev proxy, file watcher, inspector or bundler stays in memory. The store is wrangler's: PERSIST_DIR
// (default `.wrangler/state`) holds v3/d1 and v3/do exactly as `wrangler dev --persist-to` writes them, so
// `npm run dev` and `npm start` share one store.
// ADMIN_TOKEN, EDITION, BLOB_SIGNING_KEY, RATE_LIMIT, AGENT_TOKEN come from the environment, else from the git-ignored
// .dev.vars (generated there on first start); FAULT_INJECTION, EXPOSE_HOPS and ACCESS_LOG from the environment only. With
// Terraform on PATH (or TERRAFORM) and no NO_AGENT, a local agent runs the remote runs once the service is ready.
// WORKER_CONFIG (default wrangler.toml) runs another Worker the same way: the bench's floor (bench/floor/).
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { findTerraform, startLocalAgent, terraformVersionOf } from "./lib/agent.mjs";
import { listen } from "./lib/harness.mjs";
import { localVars, persistDir, root } from "./lib/local-env.mjs";

const started = Date.now();
const port = Number(process.env.PORT || 8787);
const store = persistDir();
const { run, generated } = localVars();
// The local agent runs the Terraform found here (pinned): new workspaces default to its version while nothing is listed.
if (!run.LATEST_ENGINE_VERSION && !process.env.NO_AGENT) {
  const local = findTerraform();
  const version = local ? terraformVersionOf(local) : null;
  if (version) run.LATEST_ENGINE_VERSION = version;
}
const workerConfig = resolve(root, process.env.WORKER_CONFIG || "wrangler.toml");

// 1-3. Build, migrate and assemble the configuration in a child; the configuration holds the run's secrets, so it is
// read into memory here and its file removed at once.
const outdir = mkdtempSync(join(tmpdir(), "workspace-service-build-"));
let workerdPath, configBinary, scratch;
try {
  const out = await new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, "scripts", "lib", "worker-prepare.mjs"), workerConfig, store, outdir], {
      cwd: root,
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, WORKER_RUN_VARS: JSON.stringify(run) },
    });
    let text = "";
    child.stdout.on("data", (d) => (text += d));
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve(text) : reject(new Error(`preparing the Worker failed (${code})`))));
  });
  workerdPath = out
    .split("\n")
    .find((l) => l.startsWith("WORKERD "))
    .slice("WORKERD ".length);
  scratch = JSON.parse(
    out
      .split("\n")
      .find((l) => l.startsWith("SCRATCH "))
      .slice("SCRATCH ".length),
  );
  configBinary = readFileSync(join(outdir, "workerd.bin"));
} catch (err) {
  console.error(`npm start: ${err.message}`);
  process.exit(1);
} finally {
  rmSync(outdir, { recursive: true, force: true });
}

// Miniflare's scratch directories (its disk services outside the store), for this run only.
for (const dir of scratch) mkdirSync(dir, { recursive: true });
process.on("exit", () => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

// Miniflare's configuration calls back to its own process (the "loopback" service) in two cases we can meet: a log
// line from its entry Worker, and an exception the Worker did not catch. A few lines of node:http answer both.
const loopback = createServer((req, res) => {
  let body = "";
  req.on("data", (d) => (body += d));
  req.on("end", () => {
    if (req.url === "/core/log") {
      process.stdout.write(`${body}\n`);
      res.writeHead(204).end();
    } else if (req.url === "/core/error") {
      console.error(`uncaught exception in the Worker: ${body.slice(0, 4000)}`);
      res.writeHead(500, { "content-type": "application/vnd.api+json" });
      res.end(JSON.stringify({ errors: [{ status: "500", title: "internal server error" }] }));
    } else res.writeHead(404).end();
  });
});
const loopbackPort = await listen(loopback);
loopback.unref();

// 4. workerd, as Miniflare starts it (binary configuration on stdin, the entry socket and loopback given here), with
// fd 3 for its "listening" message. Should workerd die after it was ready (a crash of the runtime, the OOM killer),
// it is started again on the same store, as a process supervisor would: every acknowledged write is on disk, and
// clients retry a refused connection. Each restart is reported on stderr; more than RESTART_LIMIT in a minute gives up.
const RESTART_LIMIT = 5;
let stopping = false;
const restarts = [];
let ready = false;
let workerd;
/** The local agent (null: none), stopped with the service. */
let agent = null;

// workerd writes structured logs (one JSON object per line); print their messages, as Miniflare would.
function relayLogs(child) {
  let pending = "";
  child.stdout.on("data", (chunk) => {
    const lines = (pending + chunk).split("\n");
    pending = lines.pop();
    for (const line of lines) {
      if (!line) continue;
      let entry;
      try {
        entry = JSON.parse(line);
      } catch {}
      const stream = entry?.level === "error" || entry?.level === "warn" ? process.stderr : process.stdout;
      stream.write(`${typeof entry?.message === "string" ? entry.message : line}\n`);
    }
  });
}

function startWorkerd() {
  const child = spawn(
    workerdPath,
    [
      "serve",
      "--binary",
      "--experimental",
      `--socket-addr=entry=127.0.0.1:${port}`,
      `--external-addr=loopback=127.0.0.1:${loopbackPort}`,
      "--control-fd=3",
      // Opt-in only (the lean runtime has no inspector): PROFILE_INSPECTOR=127.0.0.1:9229 for CPU profiles over CDP.
      ...(process.env.PROFILE_INSPECTOR ? [`--inspector-addr=${process.env.PROFILE_INSPECTOR}`] : []),
      "-",
    ],
    { stdio: ["pipe", "pipe", "inherit", "pipe"], env: { ...process.env, TZ: "UTC" } },
  );
  child.stdin.end(configBinary);
  relayLogs(child);
  let listening = false;
  child.stdio[3].on("data", (chunk) => {
    if (listening || !String(chunk).includes('"socket":"entry"')) return;
    listening = true;
    if (ready) {
      console.error(`npm start: workerd is serving again (restart ${restarts.length})`);
      return;
    }
    ready = true;
    console.log(
      `\nWorkspace service: http://127.0.0.1:${port}/api/v2  (edition: ${run.EDITION}; store: ${store}; ready in ${((Date.now() - started) / 1000).toFixed(1)} s)`,
    );
    console.log(`Site-admin token${generated ? " (generated, kept in .dev.vars)" : ""}: ${run.ADMIN_TOKEN}\n`);
    const local = startLocalAgent({ root, port, token: run.AGENT_TOKEN });
    if (typeof local === "string") console.log(`No local agent (${local}): remote runs wait for one.\n`);
    else agent = local;
    // Starting leaves the configuration and the child's output as garbage; collect it once, now.
    setFlagsFromString("--expose-gc");
    runInNewContext("gc")();
  });
  child.on("exit", (code, signal) => {
    if (stopping) return agentGone.then(() => process.exit(0));
    if (!ready) {
      console.error(`npm start: workerd did not start (${signal ?? code})`);
      process.exit(code ?? 1);
    }
    const now = Date.now();
    restarts.push(now);
    while (restarts.length && restarts[0] < now - 60_000) restarts.shift();
    console.error(`npm start: workerd exited unexpectedly (${signal ? `signal ${signal}` : `code ${code}`}) at ${new Date(now).toISOString()}`);
    if (restarts.length > RESTART_LIMIT) {
      console.error(`npm start: workerd exited ${restarts.length} times within a minute; giving up`);
      process.exit(code ?? 1);
    }
    workerd = startWorkerd();
  });
  return child;
}
workerd = startWorkerd();

// SIGINT/SIGTERM: stop the agent and workerd, and leave. workerd's SIGTERM drains: it takes no new connection and
// waits for the requests in flight, and the local agent always has one, its job poll, which the server holds up to
// 10 s (`jobs/next?wait=10`, docs/runs.md); the agent, told twice to stop (no new job, running ones canceled), ends
// only once that poll answers and its last status call gives up. So whatever still runs after STOP_GRACE_MS is cut
// with SIGKILL. That loses nothing acknowledged: every acknowledged write is already on disk (a Durable Object answers
// only after its SQLite commit; D1 commits before it answers), which `npm run test:restart` checks with SIGKILLs under
// load; a request cut there was never answered, as at any crash. A second signal stops at once.
const STOP_GRACE_MS = 800;
let agentGone = Promise.resolve();
function stop(now) {
  if (!stopping) {
    stopping = true;
    if (agent) agentGone = agent.stop();
    workerd.kill("SIGTERM");
  }
  const kill = () => {
    workerd.kill("SIGKILL");
    agent?.kill();
  };
  if (now) kill();
  else setTimeout(kill, STOP_GRACE_MS).unref();
}
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(sig, () => stop(stopping));
