/**
 * The job sandbox: every Terraform process of a job runs under bubblewrap (`bwrap`, a well-kept unprivileged
 * sandbox, Debian's package `bubblewrap`) in a user namespace as an unprivileged user, with its own PID, IPC, UTS
 * and mount namespaces. It sees the job's directory (read-write), the system's programs and libraries (`/usr`,
 * read-only: `local-exec` needs a shell), the few files of `/etc` that name resolution and TLS read, the Terraform
 * binary and the operator's provider mirror and cache (read-only), and a `/proc`, `/dev` and `/tmp` of its own:
 * not the agent's environment, not the service's files, not another job's directory. The network is shared, since
 * Terraform talks to the service and to provider registries. docs/running.md ("What a job can see") says the same
 * for operators.
 */
import { spawn } from "node:child_process";
import { accessSync, constants, existsSync, lstatSync, readlinkSync, statSync } from "node:fs";
import { chmod, lstat, mkdtemp, open, readdir, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, isAbsolute, join, resolve, sep } from "node:path";

/** How to install it, for the messages that say it is missing. */
export const INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)";

/** The uid and gid a job runs as inside its user namespace (nobody): it owns nothing the job can reach but its directory. */
const JOB_ID = "65534";

/** Top-level links or directories of the host that lead into /usr (merged /usr) or hold libraries. */
const ROOT_DIRS = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/** The files of /etc that name resolution, TLS and time zones read; nothing else of the host's /etc. */
const ETC = [
  "/etc/resolv.conf",
  "/etc/hosts",
  "/etc/nsswitch.conf",
  "/etc/host.conf",
  "/etc/gai.conf",
  "/etc/services",
  "/etc/protocols",
  "/etc/localtime",
  "/etc/ssl",
  "/etc/ca-certificates",
  "/etc/pki",
];

/** The first executable `name` on PATH (a name with a slash: that file), or null. */
export function onPath(name: string, env: NodeJS.ProcessEnv = process.env): string | null {
  if (name.includes("/")) return executable(resolve(name)) ? resolve(name) : null;
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    if (executable(candidate)) return candidate;
  }
  return null;
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

export interface SandboxOptions {
  /** The bwrap binary (absolute). */
  bwrap: string;
  /** A Terraform binary every job runs (absolute; an agent pinned to it); bound read-only at its own path. */
  terraform?: string | null;
  /** Paths jobs may read, each bound read-only at its own path when it exists (provider mirror and cache, CA files). */
  readOnly?: (string | null | undefined)[];
  /** Whether this bwrap has `--disable-userns` (0.8.0 and later): a job then cannot make namespaces of its own. */
  disableUserns?: boolean;
}

/** What JobControl runs: `bwrap` with these arguments, then `--chdir`, `--info-fd` and the command. */
export interface SandboxCommand {
  bwrap: string;
  args: string[];
}

export class Sandbox {
  readonly bwrap: string;
  private readonly base: string[];

  constructor(options: SandboxOptions) {
    this.bwrap = options.bwrap;
    const args = [
      "--unshare-all",
      "--share-net",
      "--unshare-user",
      ...(options.disableUserns ? ["--disable-userns"] : []),
      "--uid",
      JOB_ID,
      "--gid",
      JOB_ID,
      "--cap-drop",
      "ALL",
      // A session of its own: no terminal to inject into, and one process group the agent signals (JobControl).
      "--new-session",
      // Should bwrap die, its sandbox goes with it.
      "--die-with-parent",
      "--hostname",
      "terraform-job",
      "--ro-bind",
      "/usr",
      "/usr",
    ];
    for (const dir of ROOT_DIRS) {
      let link: string | null = null;
      try {
        if (lstatSync(dir).isSymbolicLink()) link = readlinkSync(dir);
      } catch {
        continue;
      }
      if (link !== null) args.push("--symlink", link, dir);
      else args.push("--ro-bind", dir, dir);
    }
    for (const file of ETC) args.push("--ro-bind-try", file, file);
    args.push("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp");
    if (options.terraform && !options.terraform.startsWith("/usr/")) args.push("--ro-bind", options.terraform, options.terraform);
    for (const path of options.readOnly ?? []) {
      if (path && isAbsolute(path) && existsSync(path)) args.push("--ro-bind", path, path);
    }
    this.base = args;
  }

  /**
   * The sandbox of one job: the base, `readOnly` directories at their own paths (the directory of the Terraform the
   * job installed), and the job's directory read-write at its own path (so every path stays valid).
   */
  forJob(root: string, readOnly: string[] = []): SandboxCommand {
    const extra = readOnly.filter((p) => isAbsolute(p) && !p.startsWith("/usr/")).flatMap((p) => ["--ro-bind", p, p]);
    return { bwrap: this.bwrap, args: [...this.base, ...extra, "--bind", root, root] };
  }
}

export type SandboxCheck = { ok: true; sandbox: Sandbox; terraformVersion: string | null } | { ok: false; reason: string };

/**
 * Finds bwrap and checks that a sandbox works here by running `terraform version -json` in one (user namespaces may
 * be disabled, or Terraform may be a script that needs more than the sandbox shows), or, for an agent that installs
 * Terraform per job (no `terraform`), `sh -c 'exit 0'`. Answers why not otherwise.
 */
export async function checkSandbox(options: {
  terraform?: string | null;
  readOnly?: (string | null | undefined)[];
  env?: NodeJS.ProcessEnv;
  tmpDir?: string;
}): Promise<SandboxCheck> {
  const env = options.env ?? process.env;
  const bwrap = onPath("bwrap", env);
  if (!bwrap) return { ok: false, reason: "bwrap (bubblewrap) is not on PATH" };
  const help = await capture(bwrap, ["--help"], {});
  const sandbox = new Sandbox({ bwrap, terraform: options.terraform, readOnly: options.readOnly, disableUserns: help.stdout.includes("--disable-userns") });
  const dir = await mkdtemp(join(options.tmpDir ?? tmpdir(), "workspace-agent-check-"));
  try {
    const { args } = sandbox.forJob(dir);
    const command = options.terraform ? [options.terraform, "version", "-json"] : ["/bin/sh", "-c", "exit 0"];
    const probe = await capture(bwrap, [...args, "--chdir", dir, "--", ...command], {
      PATH: env.PATH ?? "/usr/bin:/bin",
      HOME: dir,
      CHECKPOINT_DISABLE: "1",
    });
    if (!options.terraform) {
      if (probe.code === 0) return { ok: true, sandbox, terraformVersion: null };
      const why = (probe.stderr.trim() || probe.error || `exit ${probe.code}`).split("\n")[0];
      return { ok: false, reason: `bwrap (${bwrap}) cannot run a sandbox here: ${why}` };
    }
    let version: string | undefined;
    try {
      version = (JSON.parse(probe.stdout) as { terraform_version?: string }).terraform_version;
    } catch {}
    if (probe.code !== 0 || !version) {
      const why = (probe.stderr.trim() || probe.error || `exit ${probe.code}`).split("\n")[0];
      return { ok: false, reason: `bwrap (${bwrap}) cannot run ${options.terraform} in a sandbox here: ${why}` };
    }
    return { ok: true, sandbox, terraformVersion: version };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The version a Terraform binary reports (`version -json`), run in the sandbox jobs get when there is one, with its
 * directory bound read-only (`dir`).
 */
export async function probeVersion(bin: string, dir: string, sandbox: Sandbox | null, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const work = await mkdtemp(join(tmpdir(), "workspace-agent-probe-"));
  try {
    const childEnv = { PATH: env.PATH ?? "/usr/bin:/bin", HOME: work, CHECKPOINT_DISABLE: "1" };
    const probe = sandbox
      ? await capture(sandbox.bwrap, [...sandbox.forJob(work, [dir]).args, "--chdir", work, "--", bin, "version", "-json"], childEnv)
      : await capture(bin, ["version", "-json"], childEnv);
    let version: string | undefined;
    try {
      version = (JSON.parse(probe.stdout) as { terraform_version?: string }).terraform_version;
    } catch {}
    if (probe.code !== 0 || !version) throw new Error((probe.stderr.trim() || probe.error || `exit ${probe.code}`).split("\n")[0]);
    return version;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

function capture(bin: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string; error?: string }> {
  return new Promise((done) => {
    const child = spawn(bin, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", (err) => done({ code: null, stdout, stderr, error: err.message }));
    child.on("close", (code) => done({ code, stdout, stderr }));
  });
}

/** A file the job left in its directory that is not a regular file there (a link out of it, a pipe, a device). */
export class UnsafeJobFileError extends Error {}

/**
 * Reads a file that Terraform (or anything the job ran) may have written, or null when there is none. The agent is
 * outside the sandbox: a link the job planted must not make it read, and upload, a file of the host. No process of
 * the job runs while the agent reads (each command's sandbox dies with it), so resolving then opening is not racy.
 */
export async function readJobFile(root: string, path: string, maxBytes = 1024 ** 3): Promise<Buffer | null> {
  let real: string;
  try {
    real = await realpath(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") {
      // A dangling link is absent for the job, but may name a host file that appears later: refuse it all the same.
      try {
        if (lstatSync(path).isSymbolicLink()) throw new UnsafeJobFileError(`${relative(root, path)} is a link that leaves the job's directory`);
      } catch (e) {
        if (e instanceof UnsafeJobFileError) throw e;
      }
      return null;
    }
    throw err;
  }
  const top = await realpath(root);
  if (!real.startsWith(top + sep)) throw new UnsafeJobFileError(`${relative(root, path)} leads out of the job's directory`);
  // O_NONBLOCK: a named pipe must not hang the agent; the type check below refuses it.
  const handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new UnsafeJobFileError(`${relative(root, path)} is not a regular file`);
    if (st.size > maxBytes) throw new UnsafeJobFileError(`${relative(root, path)} is larger than ${maxBytes} bytes`);
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

function relative(root: string, path: string): string {
  const full = resolve(path);
  return full.startsWith(resolve(root) + sep) ? full.slice(resolve(root).length + 1) : full;
}

/**
 * Removes a job's directory. What the job made there is the agent's user's (the sandbox's user maps to it), but the
 * job may have taken away its own permissions (`chmod 000`): give them back, without following links, and retry.
 */
export async function removeJobDir(root: string): Promise<void> {
  try {
    await rm(root, { recursive: true, force: true });
  } catch {
    await restoreAccess(root);
    await rm(root, { recursive: true, force: true });
  }
}

async function restoreAccess(dir: string): Promise<void> {
  const st = await lstat(dir).catch(() => null);
  if (!st?.isDirectory()) return;
  await chmod(dir, 0o700).catch(() => {});
  for (const name of await readdir(dir).catch(() => [] as string[])) await restoreAccess(join(dir, name));
}
