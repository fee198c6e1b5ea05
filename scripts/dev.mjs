#!/usr/bin/env node
// `npm run dev`: for working on the code. Applies the D1 migrations to the local store with
// `wrangler d1 migrations apply --local`, then runs `wrangler dev` on http://127.0.0.1:$PORT (default 8787), which
// rebuilds and reloads on every source change and offers the inspector. Same store (PERSIST_DIR, default
// `.wrangler/state`), vars and .dev.vars as `npm start`, which serves the built Worker without any of that.
import { spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import { localVars, persistDir, root } from "./lib/local-env.mjs";

const wrangler = join(root, "node_modules", ".bin", "wrangler");
const { run, generated } = localVars();
const port = process.env.PORT || "8787";
const persist = ["--persist-to", persistDir()];

const migrate = spawnSync(wrangler, ["d1", "migrations", "apply", "DB", "--local", ...persist], {
  cwd: root,
  stdio: ["ignore", "inherit", "inherit"],
  env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" },
});
if (migrate.status !== 0) process.exit(migrate.status ?? 1);

console.log(`\nWorkspace service (wrangler dev): http://127.0.0.1:${port}/api/v2  (edition: ${run.EDITION})`);
console.log(`Site-admin token${generated ? " (generated, kept in .dev.vars)" : ""}: ${run.ADMIN_TOKEN}\n`);

const child = spawn(
  wrangler,
  [
    "dev",
    "--ip",
    "127.0.0.1",
    "--port",
    port,
    "--local",
    "--show-interactive-dev-session=false",
    ...persist,
    ...Object.entries(run).flatMap(([k, v]) => ["--var", `${k}:${v}`]),
  ],
  { cwd: root, stdio: "inherit", env: { ...process.env, WRANGLER_SEND_METRICS: "false" } },
);
for (const sig of /** @type {const} */ (["SIGINT", "SIGTERM"])) process.on(sig, () => child.kill(sig));
child.on("exit", (code) => process.exit(code ?? 0));
