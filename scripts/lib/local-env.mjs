// Shared by `npm start` (scripts/start.mjs) and `npm run dev` (scripts/dev.mjs): the local run's secrets and vars,
// and where its store lives. Node built-ins only.
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const varsFile = join(root, ".dev.vars");

function readVars() {
  const vars = {};
  if (!existsSync(varsFile)) return vars;
  for (const line of readFileSync(varsFile, "utf8").split("\n")) {
    const m = /^\s*([A-Z0-9_]+)\s*=\s*"?(.*?)"?\s*$/.exec(line);
    if (m) vars[m[1]] = m[2];
  }
  return vars;
}

/**
 * The vars of this run. .dev.vars keeps only generated values (a stable local token and signing key); values given
 * in the environment apply to this run alone, so concurrent runs cannot overwrite each other's.
 * Returns { run: {NAME: value}, generated: whether the admin token came from .dev.vars' first generation }.
 */
export function localVars(env = process.env) {
  const vars = readVars();
  const generated = !env.ADMIN_TOKEN && !vars.ADMIN_TOKEN;
  if (!vars.ADMIN_TOKEN) vars.ADMIN_TOKEN = `${randomBytes(10).toString("hex")}.atlasv1.${randomBytes(32).toString("hex")}`;
  if (!vars.BLOB_SIGNING_KEY) vars.BLOB_SIGNING_KEY = randomBytes(32).toString("hex");
  // The secret the variables' AES-GCM key is derived from; production: `wrangler secret put`.
  if (!vars.VARIABLES_ENCRYPTION_KEY) vars.VARIABLES_ENCRYPTION_KEY = randomBytes(32).toString("hex");
  // The secret the workspace objects' keys (state, run logs and plans at rest) are derived from.
  if (!vars.STATE_ENCRYPTION_KEY) vars.STATE_ENCRYPTION_KEY = randomBytes(32).toString("hex");
  if (!vars.EDITION) vars.EDITION = "self-hosted";
  // The default agent pool's token: `npm start` hands it to its local agent (scripts/lib/agent.mjs).
  if (!vars.AGENT_TOKEN) vars.AGENT_TOKEN = `agent.${randomBytes(32).toString("hex")}`;
  writeFileSync(
    varsFile,
    `${Object.entries(vars)
      .map(([k, v]) => `${k}="${v}"`)
      .join("\n")}\n`,
    { mode: 0o600 },
  );
  const pick = (name) => env[name] || vars[name];
  const run = {
    ADMIN_TOKEN: pick("ADMIN_TOKEN"),
    EDITION: pick("EDITION"),
    BLOB_SIGNING_KEY: pick("BLOB_SIGNING_KEY"),
    VARIABLES_ENCRYPTION_KEY: pick("VARIABLES_ENCRYPTION_KEY"),
    STATE_ENCRYPTION_KEY: pick("STATE_ENCRYPTION_KEY"),
    // Only while a rotation is under way (docs/operations.md).
    ...(pick("STATE_ENCRYPTION_KEY_PREVIOUS") ? { STATE_ENCRYPTION_KEY_PREVIOUS: pick("STATE_ENCRYPTION_KEY_PREVIOUS") } : {}),
    AGENT_TOKEN: pick("AGENT_TOKEN"),
    ...(pick("RATE_LIMIT") ? { RATE_LIMIT: pick("RATE_LIMIT") } : {}),
    // Test harnesses only (the crash test delays index writes to kill the process inside the window).
    ...(env.FAULT_INJECTION ? { FAULT_INJECTION: env.FAULT_INJECTION } : {}),
    // The bench: the Worker reports its D1 and DO round trips in `X-Hops`.
    ...(env.EXPOSE_HOPS ? { EXPOSE_HOPS: env.EXPOSE_HOPS } : {}),
    // A log line for every request (by default only for the failed ones).
    ...(env.ACCESS_LOG ? { ACCESS_LOG: env.ACCESS_LOG } : {}),
    // Terraform versions (docs/terraform-versions.md): where the list is seeded from ("" by default here, so a local
    // run lists nothing and takes LATEST_ENGINE_VERSION, which npm start sets to its local agent's Terraform), and
    // whether the Worker may reach a local releases server.
    TERRAFORM_RELEASES_URL: env.TERRAFORM_RELEASES_URL ?? "",
    // Locally the VCS host, webhook receivers and releases server are on this machine: private and loopback
    // addresses are allowed unless OUTBOUND_ALLOW_PRIVATE=0 says otherwise.
    OUTBOUND_ALLOW_PRIVATE: env.OUTBOUND_ALLOW_PRIVATE ?? "1",
    // Where VCS hosts deliver webhooks (docs/vcs.md); "" uses the origin the connecting request reached.
    ...(env.PUBLIC_URL ? { PUBLIC_URL: env.PUBLIC_URL } : {}),
    // The relay e-mail notifications go through (`smtp://user:pass@host:port`); unset, e-mail configurations are refused.
    ...(env.SMTP_URL ? { SMTP_URL: env.SMTP_URL } : {}),
    ...(env.LATEST_ENGINE_VERSION ? { LATEST_ENGINE_VERSION: env.LATEST_ENGINE_VERSION } : {}),
    // Single sign-on (docs/running.md): the operator's OpenID Connect provider, for this run.
    ...Object.fromEntries(
      ["OIDC_ISSUER", "OIDC_CLIENT_ID", "OIDC_CLIENT_SECRET", "OIDC_GROUPS_CLAIM", "OIDC_OWNERS_GROUP"]
        .filter((k) => env[k] !== undefined)
        .map((k) => [k, env[k]]),
    ),
  };
  return { run, generated };
}

/** The store: PERSIST_DIR, else wrangler's default `.wrangler/state` next to wrangler.toml. Holds v3/d1, v3/do, … */
export function persistDir(env = process.env) {
  return env.PERSIST_DIR ? resolve(root, env.PERSIST_DIR) : join(root, ".wrangler", "state"); // as wrangler, run from the root
}
