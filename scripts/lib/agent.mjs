// `npm start`'s local agent: when Terraform is available (TERRAFORM, else `terraform` on PATH) and NO_AGENT is
// unset, one agent process (agent/main.ts through its bin shim) runs the remote runs of this service, with the
// AGENT_TOKEN the Worker was given. Its output is prefixed `agent: `; it stops with the service. It serves the
// default pool, every organisation's jobs, so it runs each job in a bubblewrap sandbox: without bwrap it does not
// start, and npm start says why. Node built-ins only.
import { spawn, spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";

/**
 * The version a Terraform binary reports, or null. npm start makes it the default version of new workspaces
 * (LATEST_ENGINE_VERSION) while the list of Terraform versions is empty, so its pinned local agent runs them.
 */
export function terraformVersionOf(path) {
  const r = spawnSync(path, ["version", "-json"], { encoding: "utf8", env: { PATH: process.env.PATH ?? "", CHECKPOINT_DISABLE: "1" }, timeout: 20_000 });
  try {
    return JSON.parse(r.stdout).terraform_version ?? null;
  } catch {
    return null;
  }
}

/** The Terraform binary to run, or null: TERRAFORM if set, else the first `terraform` on PATH. */
export function findTerraform(env = process.env) {
  if (env.TERRAFORM) return env.TERRAFORM;
  return onPath("terraform", env);
}

function onPath(name, env) {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {}
  }
  return null;
}

/**
 * Starts the local agent against http://localhost:<port>, or answers why not (a string). The child gets the token
 * through its environment, never its command line, and is stopped when this process exits. `stop()` tells it twice
 * to stop (no new job; running ones canceled, as the service they report to is going away) and resolves once it has
 * exited; `kill()` ends it at once.
 */
export function startLocalAgent({ root, port, token, env = process.env }) {
  if (env.NO_AGENT) return "NO_AGENT is set";
  const terraform = findTerraform(env);
  if (!terraform) return "no terraform on PATH (set TERRAFORM to use one elsewhere)";
  if (!onPath("bwrap", env)) {
    return "bwrap is not installed: the local agent serves every organisation, so it runs each job in a bubblewrap sandbox; install it (Debian/Ubuntu: apt-get install bubblewrap) and start again";
  }
  const child = spawn(process.execPath, [join(root, "agent", "bin", "workspace-agent.mjs"), "--url", `http://localhost:${port}`, "--name", "local"], {
    cwd: root,
    // stdin is a lifeline: it ends when this process dies, however it dies, and the agent then stops.
    env: { ...env, AGENT_TOKEN: token, TERRAFORM: terraform, AGENT_LIFELINE: "stdin" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  /** @type {[import("node:stream").Readable, NodeJS.WriteStream][]} */
  const streams = [
    [child.stdout, process.stdout],
    [child.stderr, process.stderr],
  ];
  for (const [from, to] of streams) {
    let pending = "";
    from.on("data", (chunk) => {
      const lines = (pending + chunk).split("\n");
      pending = lines.pop();
      for (const line of lines) to.write(`agent: ${line}\n`);
    });
    from.on("end", () => pending && to.write(`agent: ${pending}\n`));
  }
  let stopped = false;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.on("exit", (code, signal) => {
    if (!stopped) console.error(`agent: exited (${signal ?? code}); remote runs wait until an agent runs`);
  });
  const stop = () => {
    stopped = true;
    if (child.exitCode === null && child.signalCode === null) {
      // Two different signals: the same one sent twice in a row may arrive as one.
      child.kill("SIGTERM");
      child.kill("SIGINT");
    }
    return exited;
  };
  process.on("exit", stop);
  return { stop, kill: () => child.kill("SIGKILL") };
}
