// What the benches share: the service started as `npm start` runs it (no npm process in between) on a store of their
// own, with a local agent when Terraform is given, and the machine's core count for their reports.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { openSync, readFileSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";

/**
 * scripts/start.mjs on `store`, logging to `logFile`, detached in its own process group. With `terraform` (and the
 * `hashicorp/null` stand-in's `mirror`) its local agent runs remote runs; without, no agent runs.
 */
export function startBenchServer({ root, port, store, logFile, terraform = null, mirror = null, env = {} }) {
  const adminToken = `${randomBytes(7).toString("hex")}.atlasv1.${randomBytes(32).toString("hex")}`;
  const server = spawn(process.execPath, [join(root, "scripts", "start.mjs")], {
    cwd: root,
    detached: true,
    stdio: ["ignore", openSync(logFile, "a"), openSync(logFile, "a")],
    env: {
      ...process.env,
      PORT: String(port),
      ADMIN_TOKEN: adminToken,
      AGENT_TOKEN: randomBytes(24).toString("hex"),
      PERSIST_DIR: store,
      RATE_LIMIT: "0",
      EDITION: "self-hosted",
      ...(terraform
        ? { TERRAFORM: terraform, AGENT_PLUGIN_MIRROR: mirror, PATH: `${dirname(terraform)}${delimiter}${process.env.PATH}`, NO_AGENT: undefined }
        : { NO_AGENT: "1" }),
      ...env,
    },
  });
  return { server, adminToken, base: `http://127.0.0.1:${port}` };
}

/**
 * An agent protocol POST to `base`/api/agent`path` with `bearer`: `json` as JSON, or `bytes` as an octet stream. Its
 * JSON answer (null when empty); throws on a status other than 2xx.
 * @param {string} base @param {string} path @param {string} bearer @param {{ json?: unknown, bytes?: Uint8Array }} [body]
 */
export async function agentCall(base, path, bearer, { json, bytes } = {}) {
  const res = await fetch(`${base}/api/agent${path}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${bearer}`, "Content-Type": bytes ? "application/octet-stream" : "application/json" },
    body: bytes ?? JSON.stringify(json ?? {}),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST /api/agent${path}: ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

/** A configuration of one `null_resource` `name` that a new `generation` variable replaces: each run has a change. */
export const generationConfig = (/** @type {string} */ name) => `variable "generation" {
  type    = string
  default = "0"
}

resource "null_resource" "${name}" {
  triggers = {
    generation = var.generation
  }
}
`;

export function cpuCount() {
  try {
    return readFileSync("/proc/cpuinfo", "utf8")
      .split("\n")
      .filter((l) => l.startsWith("processor")).length;
  } catch {
    return "?";
  }
}
