#!/usr/bin/env node
// `npm start`: applies the D1 migrations to the embedded local store, then serves the API with
// `wrangler dev` on http://127.0.0.1:$PORT (default 8787). ADMIN_TOKEN and EDITION come from the
// environment, else from the git-ignored .dev.vars (a token is generated there on first start).
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const varsFile = join(root, ".dev.vars");
const wrangler = join(root, "node_modules", ".bin", "wrangler");

function readVars() {
  const vars = {};
  if (!existsSync(varsFile)) return vars;
  for (const line of readFileSync(varsFile, "utf8").split("\n")) {
    const m = /^\s*([A-Z0-9_]+)\s*=\s*"?(.*?)"?\s*$/.exec(line);
    if (m) vars[m[1]] = m[2];
  }
  return vars;
}

// .dev.vars keeps only generated values (a stable local token and signing key). Values given in the
// environment are passed to this run alone (--var), so concurrent runs cannot overwrite each other's.
const vars = readVars();
const generated = !process.env.ADMIN_TOKEN && !vars.ADMIN_TOKEN;
if (!vars.ADMIN_TOKEN) vars.ADMIN_TOKEN = `${randomBytes(10).toString("hex")}.atlasv1.${randomBytes(32).toString("hex")}`;
if (!vars.BLOB_SIGNING_KEY) vars.BLOB_SIGNING_KEY = randomBytes(32).toString("hex");
if (!vars.VARIABLES_ENCRYPTION_KEY) vars.VARIABLES_ENCRYPTION_KEY = randomBytes(32).toString("hex");
if (!vars.EDITION) vars.EDITION = "self-hosted";
writeFileSync(varsFile, Object.entries(vars).map(([k, v]) => `${k}="${v}"`).join("\n") + "\n", { mode: 0o600 });
const run = {
  ADMIN_TOKEN: process.env.ADMIN_TOKEN || vars.ADMIN_TOKEN,
  EDITION: process.env.EDITION || vars.EDITION,
  BLOB_SIGNING_KEY: process.env.BLOB_SIGNING_KEY || vars.BLOB_SIGNING_KEY,
  VARIABLES_ENCRYPTION_KEY: process.env.VARIABLES_ENCRYPTION_KEY || vars.VARIABLES_ENCRYPTION_KEY,
  ...(process.env.RATE_LIMIT || vars.RATE_LIMIT ? { RATE_LIMIT: process.env.RATE_LIMIT || vars.RATE_LIMIT } : {}),
  // Test harnesses only (the crash test delays index writes to kill the process inside the window).
  ...(process.env.FAULT_INJECTION ? { FAULT_INJECTION: process.env.FAULT_INJECTION } : {}),
};

const port = process.env.PORT || "8787";
const persist = process.env.PERSIST_DIR ? ["--persist-to", process.env.PERSIST_DIR] : [];

const migrate = spawnSync(wrangler, ["d1", "migrations", "apply", "DB", "--local", ...persist], {
  cwd: root,
  stdio: ["ignore", "inherit", "inherit"],
  env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" },
});
if (migrate.status !== 0) process.exit(migrate.status ?? 1);

console.log(`\nWorkspace service: http://127.0.0.1:${port}/api/v2  (edition: ${run.EDITION})`);
console.log(`Site-admin token${generated ? " (generated, kept in .dev.vars)" : ""}: ${run.ADMIN_TOKEN}\n`);

const child = spawn(
  wrangler,
  ["dev", "--ip", "127.0.0.1", "--port", port, "--local", "--show-interactive-dev-session=false", ...persist,
   ...Object.entries(run).flatMap(([k, v]) => ["--var", `${k}:${v}`])],
  { cwd: root, stdio: "inherit", env: { ...process.env, WRANGLER_SEND_METRICS: "false" } },
);
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => child.kill(sig));
child.on("exit", (code) => process.exit(code ?? 0));
