#!/usr/bin/env node
// `npm start`: the lean local runtime. Builds the Worker as `wrangler deploy` would (`--dry-run --outdir`), applies
// pending D1 migrations to the local store as `wrangler d1 migrations apply --local` does, then serves the built
// Worker on workerd through Miniflare's API on http://127.0.0.1:$PORT (default 8787): no dev proxy, file watcher,
// inspector or bundler left running. The store is wrangler's: PERSIST_DIR (default `.wrangler/state`) holds v3/d1 and
// v3/do exactly as `wrangler dev --persist-to` writes them, so `npm run dev` and `npm start` share one store.
// ADMIN_TOKEN, EDITION, BLOB_SIGNING_KEY, RATE_LIMIT come from the environment, else from the git-ignored .dev.vars
// (generated there on first start); FAULT_INJECTION and EXPOSE_HOPS from the environment only.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { extname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { localVars, persistDir, root } from "./lib/local-env.mjs";

const started = Date.now();
const port = Number(process.env.PORT || 8787);
const store = persistDir();
const { run, generated } = localVars();

// 1-2. Build and migrate in a child (scripts/lib/worker-prepare.mjs), which then prints wrangler's view of the Worker.
const outdir = mkdtempSync(join(tmpdir(), "workspace-service-build-"));
let config, modules;
try {
  const out = await new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, "scripts", "lib", "worker-prepare.mjs"), join(root, "wrangler.toml"), store, outdir], {
      cwd: root,
      stdio: ["ignore", "pipe", "inherit"],
    });
    let text = "";
    child.stdout.on("data", (d) => (text += d));
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve(text) : reject(new Error(`preparing the Worker failed (${code})`))));
  });
  config = JSON.parse(
    out
      .split("\n")
      .find((l) => l.startsWith("WORKER_CONFIG "))
      .slice("WORKER_CONFIG ".length),
  );
  const mainName = `${config.main
    .split("/")
    .pop()
    .replace(/\.[cm]?[jt]sx?$/, "")}.js`;
  const types = {
    ".js": "ESModule",
    ".mjs": "ESModule",
    ".cjs": "CommonJS",
    ".wasm": "CompiledWasm",
    ".txt": "Text",
    ".html": "Text",
    ".sql": "Text",
    ".bin": "Data",
  };
  const files = readdirSync(outdir).filter((f) => types[extname(f)]);
  // The entry module first; the contents are read now, so the build directory can go at once.
  modules = [mainName, ...files.filter((f) => f !== mainName)].map((f) => ({
    type: types[extname(f)],
    path: join(outdir, f),
    contents: readFileSync(join(outdir, f)),
  }));
} catch (err) {
  console.error(`npm start: ${err.message}`);
  process.exit(1);
} finally {
  rmSync(outdir, { recursive: true, force: true });
}

// The Miniflare this wrangler drives (a transitive dependency: resolved through wrangler, never a second copy).
const require = createRequire(import.meta.url);
const miniflarePath = createRequire(require.resolve("wrangler")).resolve("miniflare");
const { Miniflare, Log, LogLevel, convertV4MiniflareOptions } = await import(pathToFileURL(miniflarePath).href);

// 3. The server: the built Worker with the bindings `wrangler dev` would give it, and this run's vars on top.
const { workerOptions } = config;
const mf = new Miniflare(
  convertV4MiniflareOptions({
    resourcePersistencePath: join(store, "v3"), // as wrangler: <persist-to>/v3
    cf: false, // no fetch of the `Request.cf` object (offline-safe); the placeholder is used
    log: new Log(LogLevel.INFO),
    host: "127.0.0.1",
    port,
    logRequests: false, // the Worker logs one JSON line per request itself
    ...workerOptions,
    name: config.name, // keys the Durable Objects' directory: v3/do/<name>-<class>
    rootPath: root,
    modulesRoot: outdir,
    modules,
    bindings: { ...workerOptions.bindings, ...run },
  }),
);
try {
  await mf.ready;
} catch (err) {
  console.error(`npm start: workerd did not start: ${err.message}`);
  process.exit(1);
}
// Starting leaves ~70 MB of garbage (the assembled workerd configuration); collect it once now.
setFlagsFromString("--expose-gc");
runInNewContext("gc")();
console.log(
  `\nWorkspace service: http://127.0.0.1:${port}/api/v2  (edition: ${run.EDITION}; store: ${store}; ready in ${((Date.now() - started) / 1000).toFixed(1)} s)`,
);
console.log(`Site-admin token${generated ? " (generated, kept in .dev.vars)" : ""}: ${run.ADMIN_TOKEN}\n`);

// SIGINT/SIGTERM: stop workerd and leave. Every acknowledged write is already on disk (a Durable Object answers only
// after its SQLite commit; D1 commits before it answers), so a SIGKILL loses nothing acknowledged either.
let stopping = false;
for (const sig of ["SIGINT", "SIGTERM"]) {
  process.on(sig, async () => {
    if (stopping) return;
    stopping = true;
    await mf.dispose().catch(() => undefined);
    process.exit(0);
  });
}
