// A real Gitea for the client suite: built once from the Go module proxy, started on loopback with a fresh data
// directory per call, driven through its REST API (/api/v1) and `git push` over HTTP.
//
// Gitea signs its deliveries the GitHub way as well (X-GitHub-Event, X-GitHub-Delivery, X-Hub-Signature-256), so the
// service's GitHub verifier can be tested against it end to end; the payload shapes differ (see README.md).
// Run by Node (vitest's node project or tsx); see test/vcs/README.md for the cache and the timings.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream, existsSync } from "node:fs";
import { cp, mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";

export const GITEA_VERSION = "1.26.0";
const GITEA_MODULE = `code.gitea.io/gitea@v${GITEA_VERSION}`;
// The sqlite driver is behind build tags; without them Gitea refuses DB_TYPE=sqlite3 (Gitea's Makefile: TAGS).
const BUILD_TAGS = "sqlite sqlite_unlock_notify";

export interface GiteaBuild {
  /** The gitea executable. */
  binary: string;
  /** STATIC_ROOT_PATH: the module's options/, templates/ and public/ (locales, mail templates); no frontend build. */
  staticRoot: string;
  /** False when the cached binary was reused. */
  built: boolean;
  /** Time spent downloading and building (0 when cached). */
  buildMs: number;
}

type Log = (line: string) => void;
const quiet: Log = () => {};

/** The cache root: `$GITEA_CACHE_DIR` or `~/.cache/gitea`; the build lives under `<root>/<version>/`. */
export function giteaCacheDir(): string {
  return join(process.env.GITEA_CACHE_DIR || join(homedir(), ".cache", "gitea"), GITEA_VERSION);
}

/** Builds Gitea into the cache unless it is already there. Needs `go` (1.26.2+, from go.mod) and the module proxy. */
export async function ensureGitea(options: { log?: Log } = {}): Promise<GiteaBuild> {
  const log = options.log ?? quiet;
  const dir = giteaCacheDir();
  const binary = join(dir, "gitea");
  const staticRoot = join(dir, "static");
  if (existsSync(binary) && existsSync(join(staticRoot, "options", "locale"))) return { binary, staticRoot, built: false, buildMs: 0 };

  const started = Date.now();
  await mkdir(dir, { recursive: true });
  // GOTOOLCHAIN=local: never fetch another toolchain; GOFLAGS cleared so a caller's -mod=vendor cannot interfere.
  const goEnv = { ...process.env, GOTOOLCHAIN: "local", GOFLAGS: "-buildvcs=false", CGO_ENABLED: "1" };
  log(`gitea: downloading ${GITEA_MODULE}`);
  const download = JSON.parse(await run("go", ["mod", "download", "-json", GITEA_MODULE], { env: goEnv, cwd: dir }));
  const moduleDir: string = download.Dir;
  if (!moduleDir || !existsSync(join(moduleDir, "go.mod"))) throw new Error(`gitea: go mod download gave no module directory: ${JSON.stringify(download)}`);

  // The module directory is the main module here, so its go.mod `replace` lines apply (which `go install` would refuse).
  log(`gitea: building ${GITEA_MODULE} with tags "${BUILD_TAGS}" (a few minutes on 2 cores)`);
  const partial = `${binary}.partial-${process.pid}`;
  const ldflags = `-X "main.Version=${GITEA_VERSION}" -X "main.Tags=${BUILD_TAGS}"`;
  await run("go", ["build", "-tags", BUILD_TAGS, "-ldflags", ldflags, "-o", partial, "."], { env: goEnv, cwd: moduleDir });

  // Copy what Gitea reads from STATIC_ROOT_PATH so the cache does not depend on the module cache staying put.
  const staticPartial = `${staticRoot}.partial-${process.pid}`;
  await rm(staticPartial, { recursive: true, force: true });
  for (const sub of ["options", "templates", "public"]) await cp(join(moduleDir, sub), join(staticPartial, sub), { recursive: true });
  await rm(staticRoot, { recursive: true, force: true });
  await rename(staticPartial, staticRoot);
  await rename(partial, binary);
  const buildMs = Date.now() - started;
  log(`gitea: built in ${(buildMs / 1000).toFixed(0)} s → ${binary}`);
  return { binary, staticRoot, built: true, buildMs };
}

export interface StartOptions {
  /** `[webhook] ALLOWED_HOST_LIST`; the receivers of the tests listen on loopback. */
  allowedHostList?: string;
  log?: Log;
  /** Keep the data directory after stop() (for debugging). */
  keepData?: boolean;
}

export interface GiteaRepo {
  id: number;
  owner: string;
  name: string;
  fullName: string;
  defaultBranch: string;
  htmlUrl: string;
  cloneUrl: string;
}

export interface GiteaCommit {
  sha: string;
  branch: string;
}

export interface GiteaPullRequest {
  number: number;
  state: string;
  headSha: string;
  headRef: string;
  baseRef: string;
  htmlUrl: string;
}

export interface GiteaHook {
  id: number;
  type: string;
  active: boolean;
  events: string[];
  config: Record<string, string>;
}

export interface GiteaStatus {
  state: string;
  context: string;
  description: string;
  targetUrl: string;
}

export interface GiteaCombinedStatus {
  state: string;
  sha: string;
  totalCount: number;
  statuses: GiteaStatus[];
}

/** Files to write (string content) or delete (null), by repository path. */
export type FileChanges = Record<string, string | null>;

export class GiteaError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
    what: string,
  ) {
    super(`gitea: ${what} answered ${status}: ${body.slice(0, 500)}`);
  }
}

/** A running Gitea with an admin user and an API token (scopes: all). */
export class Gitea {
  readonly apiUrl: string;

  private constructor(
    /** Base URL with a trailing slash, e.g. `http://127.0.0.1:41234/`. */
    readonly url: string,
    readonly adminUser: string,
    readonly adminPassword: string,
    /** A token with every scope; send as `Authorization: token <token>`. */
    readonly token: string,
    readonly dataDir: string,
    private readonly child: ChildProcess,
    private readonly keepData: boolean,
    /** Milliseconds from spawn to a usable API with a user and a token. */
    readonly startMs: number,
  ) {
    this.apiUrl = `${url}api/v1`;
  }

  /** Builds (or reuses) the binary, then starts a fresh instance on 127.0.0.1 at a free port. */
  static async start(options: StartOptions = {}): Promise<Gitea> {
    const log = options.log ?? quiet;
    const build = await ensureGitea({ log });
    const started = Date.now();
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/`;
    const dataDir = await mkdtemp(join(tmpdir(), "gitea-test-"));
    const config = join(dataDir, "app.ini");
    await writeFile(config, appIni({ port, url, dataDir, staticRoot: build.staticRoot, allowedHostList: options.allowedHostList ?? "loopback" }));

    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: join(dataDir, "home"), GITEA_WORK_DIR: dataDir, USER: process.env.USER ?? "root" };
    await mkdir(env.HOME, { recursive: true });
    const logFile = createWriteStream(join(dataDir, "gitea.log"));
    const child = spawn(build.binary, ["web", "--config", config, "--work-path", dataDir], { env, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout?.pipe(logFile);
    child.stderr?.pipe(logFile);
    let exited: string | undefined;
    child.once("exit", (code, signal) => {
      exited = `exited with ${code ?? signal}`;
    });

    try {
      const deadline = Date.now() + 120_000;
      for (;;) {
        if (exited) throw new Error(`gitea ${exited}; log: ${await tail(join(dataDir, "gitea.log"))}`);
        if (Date.now() > deadline) throw new Error(`gitea did not answer within 120 s; log: ${await tail(join(dataDir, "gitea.log"))}`);
        const ok = await fetch(`${url}api/v1/version`).then(
          (r) => r.ok,
          () => false,
        );
        if (ok) break;
        await sleep(200);
      }
      // The web process has created and migrated the database; the admin CLI writes into the same sqlite file.
      const adminUser = "vcs-admin";
      const adminPassword = randomBytes(12).toString("hex");
      const cli = (args: string[]) => run(build.binary, [...args, "--config", config, "--work-path", dataDir], { env });
      await cli([
        "admin",
        "user",
        "create",
        "--admin",
        "--username",
        adminUser,
        "--password",
        adminPassword,
        "--email",
        "vcs-admin@example.com",
        "--must-change-password=false",
      ]);
      // As root, Gitea logs a warning line to stdout before the token.
      const output = await cli(["admin", "user", "generate-access-token", "--username", adminUser, "--token-name", "tests", "--scopes", "all", "--raw"]);
      const token = output
        .split("\n")
        .find((line) => /^[0-9a-f]{40}$/.test(line.trim()))
        ?.trim();
      if (!token) throw new Error("gitea: generate-access-token printed no token");
      const gitea = new Gitea(url, adminUser, adminPassword, token, dataDir, child, options.keepData ?? false, Date.now() - started);
      log(`gitea: ${url} up in ${(gitea.startMs / 1000).toFixed(1)} s (data ${dataDir})`);
      return gitea;
    } catch (error) {
      child.kill("SIGKILL");
      if (!options.keepData) await rm(dataDir, { recursive: true, force: true });
      throw error;
    }
  }

  /** Stops the process (SIGTERM, then SIGKILL after 10 s) and removes the data directory. */
  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise((resolve) => this.child.once("exit", resolve));
      this.child.kill("SIGTERM");
      const timer = setTimeout(() => this.child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }
    if (!this.keepData) await rm(this.dataDir, { recursive: true, force: true });
  }

  /** One API call; throws GiteaError on a non-2xx answer. `path` is relative to /api/v1. */
  async api<T = any>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await this.apiResponse(method, path, body);
    const text = await response.text();
    if (!response.ok) throw new GiteaError(response.status, text, `${method} ${path}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** One API call answering the raw Response (for archives and expected failures). */
  apiResponse(method: string, path: string, body?: unknown): Promise<Response> {
    return fetch(`${this.apiUrl}${path}`, {
      method,
      headers: { authorization: `token ${this.token}`, accept: "application/json", ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      redirect: "manual",
    });
  }

  /** Creates a repository owned by the admin, with an initial commit (README) on `defaultBranch`. */
  async createRepo(name: string, options: { defaultBranch?: string; private?: boolean } = {}): Promise<GiteaRepo> {
    const repo = await this.api("POST", "/user/repos", {
      name,
      auto_init: true,
      default_branch: options.defaultBranch ?? "main",
      private: options.private ?? false,
      readme: "Default",
    });
    return toRepo(repo);
  }

  /** Commits file changes to `branch` through the contents API (one commit); `newBranch` forks it from `branch` first. */
  async commitFiles(repo: string, branch: string, files: FileChanges, options: { message?: string; newBranch?: string } = {}): Promise<GiteaCommit> {
    const operations = Object.entries(files).map(([path, content]) =>
      content === null ? { operation: "delete", path } : { operation: "upload", path, content: Buffer.from(content).toString("base64") },
    );
    const answer = await this.api("POST", `/repos/${repo}/contents`, {
      branch,
      new_branch: options.newBranch,
      message: options.message ?? `Change ${Object.keys(files).join(", ")}`,
      files: operations,
    });
    return { sha: answer.commit.sha, branch: options.newBranch ?? branch };
  }

  /**
   * Commits and pushes with the git client over HTTP (token as the basic-auth password, sent as a header so it never
   * lands in a remote URL). `force` rewrites the branch with a single new commit on top of its parent.
   */
  async gitPush(repo: string, branch: string, files: FileChanges, options: { message?: string; from?: string; force?: boolean } = {}): Promise<GiteaCommit> {
    const work = await mkdtemp(join(tmpdir(), "gitea-push-"));
    try {
      const auth = `http.extraHeader=Authorization: Basic ${Buffer.from(`${this.adminUser}:${this.token}`).toString("base64")}`;
      const env = { ...process.env, GIT_TERMINAL_PROMPT: "0", GIT_CONFIG_NOSYSTEM: "1", HOME: work };
      const git = (...args: string[]) =>
        run("git", ["-c", auth, "-c", "user.name=VCS Tester", "-c", "user.email=vcs-tester@example.com", "-c", "init.defaultBranch=main", ...args], {
          env,
          cwd: join(work, "repo"),
        });
      await run("git", ["-c", auth, "clone", "--quiet", `${this.url}${repo}.git`, join(work, "repo")], { env, cwd: work });
      const exists = (await git("ls-remote", "--heads", "origin", branch)).trim() !== "";
      if (exists) await git("checkout", "--quiet", branch);
      else await git("checkout", "--quiet", "-b", branch, `origin/${options.from ?? "HEAD"}`);
      if (options.force) await git("reset", "--quiet", "--soft", "HEAD~1");
      for (const [path, content] of Object.entries(files)) {
        const full = join(work, "repo", path);
        if (content === null) await git("rm", "--quiet", "--", path);
        else {
          await mkdir(join(full, ".."), { recursive: true });
          await writeFile(full, content);
          await git("add", "--", path);
        }
      }
      await git("commit", "--quiet", "-m", options.message ?? `Change ${Object.keys(files).join(", ")}`);
      await git("push", "--quiet", ...(options.force ? ["--force"] : []), "origin", `HEAD:refs/heads/${branch}`);
      return { sha: (await git("rev-parse", "HEAD")).trim(), branch };
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }

  /** Creates `name` from `from` (a branch, tag or sha). */
  async createBranch(repo: string, name: string, from: string): Promise<GiteaCommit> {
    const branch = await this.api("POST", `/repos/${repo}/branches`, { new_branch_name: name, old_ref_name: from });
    return { sha: branch.commit.id, branch: name };
  }

  /** The commit at the tip of a branch. */
  async branchHead(repo: string, branch: string): Promise<string> {
    const answer = await this.api("GET", `/repos/${repo}/branches/${encodeURIComponent(branch)}`);
    return answer.commit.id;
  }

  async openPullRequest(repo: string, options: { head: string; base: string; title?: string; body?: string }): Promise<GiteaPullRequest> {
    return toPull(
      await this.api("POST", `/repos/${repo}/pulls`, {
        head: options.head,
        base: options.base,
        title: options.title ?? `Merge ${options.head}`,
        body: options.body ?? "",
      }),
    );
  }

  /** Edits title, body or state (`closed`/`open`). A new commit on the head branch is the other kind of update. */
  async updatePullRequest(repo: string, number: number, changes: { title?: string; body?: string; state?: "open" | "closed" }): Promise<GiteaPullRequest> {
    return toPull(await this.api("PATCH", `/repos/${repo}/pulls/${number}`, changes));
  }

  async getPullRequest(repo: string, number: number): Promise<GiteaPullRequest> {
    return toPull(await this.api("GET", `/repos/${repo}/pulls/${number}`));
  }

  /** Merges the pull request with a merge commit. */
  async mergePullRequest(repo: string, number: number): Promise<void> {
    await this.api("POST", `/repos/${repo}/pulls/${number}/merge`, { Do: "merge" });
  }

  /** Posts a commit status (what the service does); Gitea answers with `status`, not `state`. */
  async createStatus(repo: string, sha: string, status: { state: string; context: string; description?: string; targetUrl?: string }): Promise<void> {
    await this.api("POST", `/repos/${repo}/statuses/${sha}`, {
      state: status.state,
      context: status.context,
      description: status.description ?? "",
      target_url: status.targetUrl ?? "",
    });
  }

  /** The combined status of a ref: the latest status per context and an overall state. */
  async combinedStatus(repo: string, ref: string): Promise<GiteaCombinedStatus> {
    const answer = await this.api("GET", `/repos/${repo}/commits/${ref}/status`);
    return {
      state: answer.state,
      sha: answer.sha,
      totalCount: answer.total_count,
      statuses: (answer.statuses ?? []).map((s: any) => ({
        state: s.status ?? s.state,
        context: s.context,
        description: s.description,
        targetUrl: s.target_url,
      })),
    };
  }

  /** Registers a webhook of type `gitea` (JSON, HMAC-SHA256 signed with `secret`). */
  async createHook(repo: string, options: { url: string; secret: string; events?: string[] }): Promise<GiteaHook> {
    return toHook(
      await this.api("POST", `/repos/${repo}/hooks`, {
        type: "gitea",
        config: { url: options.url, content_type: "json", secret: options.secret },
        events: options.events ?? ["push", "pull_request"],
        active: true,
      }),
    );
  }

  async listHooks(repo: string): Promise<GiteaHook[]> {
    return (await this.api<any[]>("GET", `/repos/${repo}/hooks`)).map(toHook);
  }

  async deleteHook(repo: string, id: number): Promise<void> {
    await this.api("DELETE", `/repos/${repo}/hooks/${id}`);
  }

  /** The repository at `ref` as tar.gz; its single top-level directory is the repository's name. */
  async archive(repo: string, ref: string): Promise<Uint8Array> {
    const response = await this.apiResponse("GET", `/repos/${repo}/archive/${ref}.tar.gz`);
    if (!response.ok) throw new GiteaError(response.status, await response.text(), `archive ${ref}`);
    return new Uint8Array(await response.arrayBuffer());
  }
}

/** Shorthand for `Gitea.start`. */
export function startGitea(options: StartOptions = {}): Promise<Gitea> {
  return Gitea.start(options);
}

function appIni(o: { port: number; url: string; dataDir: string; staticRoot: string; allowedHostList: string }): string {
  const secret = () => randomBytes(32).toString("hex");
  // The four settings a loopback test needs: STATIC_ROOT_PATH (locales; no frontend build, so only the API is usable),
  // I_AM_BEING_UNSAFE_RUNNING_AS_ROOT (CI runs as root), ALLOWED_HOST_LIST (deliveries to loopback are refused by
  // default: hostmatcher "external"), OFFLINE_MODE + DISABLE_SSH (nothing reaches outside, no SSH listener).
  return `APP_NAME = vcs-test
RUN_MODE = prod
I_AM_BEING_UNSAFE_RUNNING_AS_ROOT = true
WORK_PATH = ${o.dataDir}

[server]
PROTOCOL = http
HTTP_ADDR = 127.0.0.1
HTTP_PORT = ${o.port}
ROOT_URL = ${o.url}
DOMAIN = 127.0.0.1
STATIC_ROOT_PATH = ${o.staticRoot}
APP_DATA_PATH = ${join(o.dataDir, "data")}
OFFLINE_MODE = true
DISABLE_SSH = true
START_SSH_SERVER = false
LFS_START_SERVER = false

[database]
DB_TYPE = sqlite3
PATH = ${join(o.dataDir, "data", "gitea.db")}
SQLITE_JOURNAL_MODE = WAL

[repository]
ROOT = ${join(o.dataDir, "repositories")}
DEFAULT_BRANCH = main

[security]
INSTALL_LOCK = true
SECRET_KEY = ${secret()}
INTERNAL_TOKEN = ${secret()}

[oauth2]
ENABLED = false

[service]
DISABLE_REGISTRATION = true
REQUIRE_SIGNIN_VIEW = false
DEFAULT_KEEP_EMAIL_PRIVATE = false

[webhook]
ALLOWED_HOST_LIST = ${o.allowedHostList}
DELIVER_TIMEOUT = 10

[mailer]
ENABLED = false

[indexer]
REPO_INDEXER_ENABLED = false

[actions]
ENABLED = false

[packages]
ENABLED = false

[cron.update_checker]
ENABLED = false

[log]
MODE = console
LEVEL = Warn
ROOT_PATH = ${join(o.dataDir, "log")}
`;
}

function toRepo(r: any): GiteaRepo {
  return { id: r.id, owner: r.owner.login, name: r.name, fullName: r.full_name, defaultBranch: r.default_branch, htmlUrl: r.html_url, cloneUrl: r.clone_url };
}

function toPull(p: any): GiteaPullRequest {
  return { number: p.number, state: p.state, headSha: p.head.sha, headRef: p.head.ref, baseRef: p.base.ref, htmlUrl: p.html_url };
}

function toHook(h: any): GiteaHook {
  return { id: h.id, type: h.type, active: h.active, events: h.events, config: h.config };
}

/** Runs a command, resolving with stdout; rejects with stderr on a non-zero exit. */
function run(command: string, args: string[], options: { env: NodeJS.ProcessEnv; cwd?: string }): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: options.env, cwd: options.cwd, stdio: ["ignore", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (b) => out.push(b));
    child.stderr.on("data", (b) => err.push(b));
    child.once("error", reject);
    child.once("close", (code) => {
      if (code === 0) resolve(Buffer.concat(out).toString());
      else
        reject(
          new Error(
            `${command} ${args.filter((a) => !a.startsWith("http.extraHeader")).join(" ")} exited ${code}: ${Buffer.concat(err).toString().slice(-2000)}`,
          ),
        );
    });
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function tail(file: string): Promise<string> {
  const text = await readFile(file, "utf8").catch(() => "");
  return text.slice(-3000);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
