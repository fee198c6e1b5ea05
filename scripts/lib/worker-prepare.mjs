#!/usr/bin/env node
// `npm start`'s first stage, a short-lived child of scripts/start.mjs (so neither wrangler's CLI bundle, Miniflare nor
// the migration run stays in the server's memory). Usage: worker-prepare.mjs <wrangler config> <store> <outdir>, with
// the run's vars as JSON in WORKER_RUN_VARS.
//  1. builds the Worker exactly as `wrangler deploy` uploads it (`wrangler deploy --dry-run --outdir <outdir>`);
//  2. applies the pending D1 migrations to the local store as `wrangler d1 migrations apply --local` does: wrangler's
//     file order, its splitter, one batch per file (its statements, then its `d1_migrations` row), the database
//     keyed by preview_database_id / database_id under <store>/v3/d1 — so either tool sees the other's as applied;
//  3. has Miniflare assemble the workerd configuration `wrangler dev` would run for this Worker (its bindings, the
//     run's vars on top, persistence under <store>/v3) and writes it, binary, to <outdir>/workerd.bin; workerd itself
//     is stood in for by workerd-capture.sh, so nothing is served here;
//  4. prints, after the marker, the path of the workerd binary Miniflare would have run.
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, extname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { unstable_getMiniflareWorkerOptions, unstable_readConfig, unstable_splitSqlQuery } from "wrangler";

const [configPath, store, outdir] = process.argv.slice(2).map((p) => resolve(p));
const projectRoot = dirname(configPath);
// The tools (wrangler, the capture stand-in) are this checkout's, wherever the configuration is.
const toolsRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const env = { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" };

// 1. The build, in the background while the migrations run.
const build = new Promise((ok, fail) => {
  const child = spawn(join(toolsRoot, "node_modules", ".bin", "wrangler"), ["deploy", "--dry-run", "--outdir", outdir], {
    cwd: projectRoot,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  child.on("error", fail);
  child.on("exit", (code) => (code === 0 ? ok() : fail(new Error(`wrangler deploy --dry-run failed (${code}):\n${out.slice(-4000)}`))));
});
build.catch(() => undefined);

const config = unstable_readConfig({ config: configPath });
const { workerOptions } = unstable_getMiniflareWorkerOptions(configPath);

// 2. Migrations. wrangler's order (d1/migrations): by the leading number, then by name; default pattern <dir>/*.sql.
const leading = (name) => parseInt(name.split("_")[0], 10);
const byMigrationOrder = (a, b) => {
  const [x, y] = [leading(a), leading(b)];
  if (x !== y && Number.isFinite(x) && Number.isFinite(y)) return x - y;
  if (x !== y) return Number.isFinite(x) ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
};
const miniflarePath = createRequire(import.meta.resolve("wrangler")).resolve("miniflare");
const { Miniflare, Log, LogLevel, convertV4MiniflareOptions } = await import(pathToFileURL(miniflarePath).href);
for (const d of config.d1_databases) {
  const dir = join(projectRoot, d.migrations_dir ?? "migrations");
  const files = readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(".sql"))
    .map((e) => e.name)
    .sort(byMigrationOrder);
  const table = `"${(d.migrations_table ?? "d1_migrations").replace(/"/g, '""')}"`;
  const id = d.preview_database_id ?? d.database_id ?? d.binding; // wrangler's key of the local database
  // As wrangler d1 execute --local: an empty Worker with the database bound, on <store>/v3.
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      modules: true,
      script: "",
      resourcePersistencePath: join(store, "v3"),
      d1Databases: { DATABASE: id },
      cf: false,
      log: new Log(LogLevel.WARN),
    }),
  );
  try {
    const db = await mf.getD1Database("DATABASE");
    // wrangler's statement, to the character (getCreateMigrationsTableQuery).
    await db
      .prepare(
        `CREATE TABLE IF NOT EXISTS ${table}(\n\t\tid         INTEGER PRIMARY KEY AUTOINCREMENT,\n\t\tname       TEXT UNIQUE,\n\t\tapplied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL\n);`,
      )
      .run();
    const applied = new Set((await db.prepare(`SELECT *\n\t\tFROM ${table}\n\t\tORDER BY id`).all()).results.map((r) => r.name));
    for (const name of files.filter((f) => !applied.has(f))) {
      // buildMigrationQuery: the file, then its row, split and sent as one batch (one transaction).
      const sql = `${readFileSync(join(dir, name), "utf8")}\nINSERT INTO ${table} (name)\nvalues ('${name.replace(/'/g, "''")}');`;
      await db.batch(unstable_splitSqlQuery(sql).map((q) => db.prepare(q)));
      console.error(`migrations: applied ${name} to ${d.binding}`);
    }
  } finally {
    await mf.dispose();
  }
}

await build;

// 3. The workerd configuration: the built Worker with the bindings `wrangler dev` would give it, this run's vars on top.
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
const modules = [mainName, ...files.filter((f) => f !== mainName)].map((f) => ({
  type: types[extname(f)],
  path: join(outdir, f),
  contents: readFileSync(join(outdir, f)),
}));
const capture = join(outdir, "workerd.bin");
process.env.MINIFLARE_WORKERD_PATH = join(toolsRoot, "scripts", "lib", "workerd-capture.sh");
process.env.WORKERD_CONFIG_CAPTURE = capture;
process.env.MINIFLARE_WORKERD_CONFIG_DEBUG = join(outdir, "workerd.json"); // the same configuration, as JSON
// V8's young generation grows to 16 MB semi-spaces by default, and under sustained load the runtime's RSS grew
// with it (ping at concurrency 8: +300 MB in 20 s, and climbing); 1 MB semi-spaces held it near +230 MB at the same
// request rate. Overridable, as Miniflare reads it, through MINIFLARE_WORKERD_V8_FLAGS.
process.env.MINIFLARE_WORKERD_V8_FLAGS ??= "--max-semi-space-size=1";
const mf = new Miniflare(
  convertV4MiniflareOptions({
    resourcePersistencePath: join(store, "v3"), // as wrangler: <persist-to>/v3
    cf: false, // no fetch of the `Request.cf` object (offline-safe); the placeholder is used
    log: new Log(LogLevel.NONE),
    logRequests: false, // the Worker logs one JSON line per request itself
    ...workerOptions,
    name: config.name, // keys the Durable Objects' directory: v3/do/<name>-<class>
    rootPath: projectRoot,
    modulesRoot: outdir,
    modules,
    bindings: { .../** @type {Record<string, unknown>} */ (workerOptions.bindings), ...JSON.parse(process.env.WORKER_RUN_VARS ?? "{}") },
  }),
);
// The stand-in exits once it has the configuration, so Miniflare reports a runtime that did not start: expected.
await mf.ready.catch(() => undefined);
await mf.dispose().catch(() => undefined);
if (!existsSync(capture) || statSync(capture).size === 0) {
  console.error("npm start: Miniflare assembled no workerd configuration");
  process.exit(1);
}

// Disk services outside the store are Miniflare's scratch directories (under its temporary directory, removed by
// dispose): the server must create them again.
const scratch = JSON.parse(readFileSync(join(outdir, "workerd.json"), "utf8"))
  .services.map((service) => service.disk?.path)
  .filter((path) => path && !resolve(path).startsWith(`${store}/`));
process.stdout.write(`\nSCRATCH ${JSON.stringify(scratch)}\n`);

// 4. The workerd binary Miniflare runs (its `workerd` dependency).
const workerdPath = createRequire(miniflarePath)("workerd").default; // CommonJS: module.exports.default is the path
process.stdout.write(`\nWORKERD ${workerdPath}\n`);
