// The three servers of the side-by-side bench (bench/peers.mjs): how each is found or installed, started on loopback
// with a throwaway store, given an API token, and stopped. Each server is an object:
//   { key, label, version, notes[], skip (a reason, or null), base, token, parts: [{ name, pgid }], prepare() (finds or
//     installs it: returns null, or why it cannot run), start(), stop(), createBody(name, tagged), pingStatuses, logFiles }
// Peers are run as they are shipped; nothing of theirs is copied here. Where a peer cannot be had, `skip` says why.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chownSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jsonApi } from "../../scripts/lib/harness.mjs";
import { freePort, groups, newAdminToken, sleep, stopGroup, tail } from "../../scripts/lib/service.mjs";

export const OTF_MODULE = "github.com/leg100/otf/cmd/otfd";
export const OTF_VERSION = process.env.OTF_VERSION || "v0.6.3";
export const BUN_VERSION = process.env.BUN_VERSION || "1.3.14"; // the Bun Terrence's CI pins (setup-bun bun-version)

const run = (cmd, args, opts = {}) => spawnSync(cmd, args, { encoding: "utf8", maxBuffer: 64 << 20, ...opts });
// Error texts go into the report: registry addresses are replaced by a placeholder.
const firstLines = (text, n = 4) =>
  String(text ?? "")
    .replace(/https?:\/\/[^/\s]+/g, "<registry>")
    .trim()
    .split("\n")
    .slice(0, n)
    .join(" | ");

// ---------------------------------------------------------------- HTTP helpers for setup
/** @param {string} base @param {string | null} token @param {string} method @param {string} path @param {unknown} [body] */
const http = (base, token, method, path, body) => jsonApi(`${base}/api/v2`, token ?? "")(method, path, body);

/**
 * A server of the comparison (the fields the header lists); what a run measures is kept on it too.
 * @typedef {{ key: string, label: string, version: string | null, notes: string[], skip: string | null, pingStatuses: number[],
 *   parts: { name: string, pgid: number }[], logFiles: string[], dirs: string[], base?: string, token?: string, startSeconds?: number,
 *   prepare?: () => string | null, start?: () => Promise<void>, stop?: () => Promise<void>, createBody?: (name: string, tagged: boolean) => object,
 *   setup?: (options: { concurrency: number }) => Promise<void>, populateOne?: (i: number, name: string) => Promise<unknown>,
 *   opsFor?: (options: { wsName: (i: number) => string, pick: (i: number) => number, deepOffset: number }) => Record<string, Function>,
 *   createSeq?: number, lockIds?: string[], shapeOps?: Record<string, Function> | null, pgBin?: string | null,
 *   pgUser?: { uid: number, gid: number }, bun?: string, loadPeakMb?: number, restEmpty?: Memory, restPopulated?: Memory, restEnd?: Memory }} Server
 * @typedef {ReturnType<typeof import("./proc.mjs").memoryOf>} Memory

 */
/** The fields every server starts with; `fields` adds to them or replaces them. @returns {Server} */
const server = (/** @type {Partial<Server> & { key: string, label: string }} */ fields) => ({
  version: null,
  notes: [],
  skip: null,
  pingStatuses: [204],
  parts: [],
  logFiles: [],
  dirs: [],
  ...fields,
});
/** A workspace create with the tag as a `tags` relationship (names), as the TFE API documents. */
const tagsRelationshipBody = (/** @type {string} */ name, /** @type {boolean} */ tagged) => ({
  data: {
    type: "workspaces",
    attributes: { name },
    ...(tagged ? { relationships: { tags: { data: [{ type: "tags", attributes: { name: "critical" } }] } } } : {}),
  },
});

async function waitFor(what, logFile, isUp, exited, timeoutMs = 180_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (exited()) throw new Error(`${what} exited (${exited()}); last lines of ${logFile}:\n${tail(logFile)}`);
    try {
      if (await isUp()) return;
    } catch {}
    if (Date.now() > until) throw new Error(`${what} did not come up within ${timeoutMs / 1000} s; last lines of ${logFile}:\n${tail(logFile)}`);
    await sleep(300);
  }
}

/** Spawns a command in its own process group (registered for cleanup); returns { pgid, exited() }. */
function spawnGroup(cmd, args, { cwd, env, logFile }) {
  const fd = openSync(logFile, "a");
  const child = spawn(cmd, args, { cwd, env, detached: true, stdio: ["ignore", fd, fd] });
  let exited = null;
  child.on("error", (e) => (exited = `could not run ${cmd}: ${e.message}`));
  child.on("exit", (code, sig) => (exited = sig ?? `code ${code}`));
  if (child.pid) groups.add(child.pid);
  return { pgid: child.pid, exited: () => exited };
}

/**
 * node scripts/start.mjs (what `npm start` runs) on a fresh store in a temporary directory, with `env` on top, without
 * npm's own process in the RSS (as bench/run.mjs does), and without the local agent (with terraform on PATH `npm start`
 * also runs one, about 120 MB of RSS, which is not the server). Sets the server's base and parts.
 */
async function startLean(s, root, prefix, env) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  s.dirs.push(dir);
  const logFile = join(dir, "server.log");
  s.logFiles.push(logFile);
  const port = await freePort();
  s.base = `http://127.0.0.1:${port}`;
  const p = spawnGroup(process.execPath, [join(root, "scripts", "start.mjs")], {
    cwd: root,
    logFile,
    env: { ...process.env, PORT: String(port), PERSIST_DIR: join(dir, "store"), NO_AGENT: "1", ...env },
  });
  s.parts = [{ name: "node + workerd", pgid: p.pgid }];
  return { p, logFile };
}

// ---------------------------------------------------------------- ours: `npm start` (node scripts/start.mjs)
export function ours(root) {
  const s = server({
    key: "ours",
    label: "workspace-service",
    notes: [
      "`npm start` (scripts/start.mjs: the built Worker on workerd through Miniflare), fresh PERSIST_DIR, EXPOSE_HOPS=1, RATE_LIMIT=0, NO_AGENT=1 (no local agent process)",
      "API token: an ordinary user's (created with POST /admin/users, its first token issued by the site admin), who creates the organisations and so owns them",
    ],
    createBody: tagsRelationshipBody,
  });
  const sha = run("git", ["-C", root, "rev-parse", "--short", "HEAD"]).stdout?.trim();
  const dirty = run("git", ["-C", root, "status", "--porcelain", "--untracked-files=no"]).stdout?.trim();
  s.version = `${sha || "unknown commit"}${dirty ? " + uncommitted changes" : ""} (node ${process.versions.node})`;
  s.start = async () => {
    s.token = newAdminToken();
    const { p, logFile } = await startLean(s, root, "peers-ours-", {
      ADMIN_TOKEN: s.token,
      RATE_LIMIT: "0",
      EXPOSE_HOPS: "1",
      EDITION: "self-hosted",
    });
    await waitFor("npm start", logFile, async () => (await http(s.base, s.token, "GET", "/ping")).status === 204, p.exited);
    // Measured as a real client: an ordinary user (not the site admin, whose ADMIN_TOKEN costs no D1 read) with its
    // own API token, who creates the organisations (and so owns them).
    const user = await http(s.base, s.token, "POST", "/admin/users", {
      data: { type: "users", attributes: { username: "bench", email: "bench@example.com" } },
    });
    if (user.status !== 201) throw new Error(`ours: POST /admin/users answered ${user.status}`);
    const tok = await http(s.base, s.token, "POST", `/users/${user.json.data.id}/authentication-tokens`, {
      data: { type: "authentication-tokens", attributes: { description: "bench" } },
    });
    if (tok.status !== 201) throw new Error(`ours: POST /users/:id/authentication-tokens answered ${tok.status}`);
    s.token = tok.json.data.attributes.token;
  };
  s.stop = async () => {
    for (const p of s.parts) await stopGroup(p.pgid);
  };
  return s;
}

// ---------------------------------------------------------------- the floor: bench/floor on the same runtime
/**
 * Not a peer: the runtime's own floor (bench/floor/, as `npm run bench` uses it), a bare Worker with the service's
 * bindings making each shape's round trips and nothing else, populated the same way (one new Durable Object per
 * workspace, at the same concurrency). Its rows say what any service on this runtime pays for the same hops and
 * objects. It speaks no API, so `ops` replaces each shape's requests (a 2xx is its only check).
 */
export function floor(root) {
  const s = server({
    key: "floor",
    label: "runtime floor",
    version: "bench/floor (no service logic)",
    notes: [
      "the same runtime as `npm start` (scripts/start.mjs with WORKER_CONFIG=bench/floor/wrangler.toml), fresh store: per shape one D1 read, one Durable Object read or write and one D1 index write, as bench/README.md says; populated through its create (a new object per workspace)",
    ],
  });
  const call = async (method, path) => {
    const res = await fetch(`${s.base}${path}`, { method, signal: AbortSignal.timeout(30_000) });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`floor ${method} ${path}: ${res.status} ${text.slice(0, 160)}`);
  };
  s.setup = async ({ concurrency }) => {
    await call("POST", "/seed");
    for (let w = 0; w < concurrency; w++) await call("POST", `/create/lock-${w}?id=lock-${w}`);
    s.createSeq = 0;
  };
  s.populateOne = (i, name) => call("POST", `/create/${encodeURIComponent(name)}?id=f-${i}`);
  s.opsFor = ({ wsName, pick, deepOffset }) => ({
    "authenticated ping": () => call("GET", "/ping"),
    "show by name": (_w, i) => call("GET", `/name/${wsName(pick(i))}`),
    "lock + unlock": async (w) => {
      await call("POST", `/lock/lock-${w}`);
      await call("POST", `/unlock/lock-${w}`);
    },
    create: () => call("POST", `/create/c-${s.createSeq++}`),
    "list page 1": () => call("GET", "/list?offset=0"),
    "deep page": () => call("GET", `/list?offset=${deepOffset}`),
    "name search": () => call("GET", "/list?offset=0"),
    "tag search": () => call("GET", "/list?offset=0"),
  });
  s.start = async () => {
    const { p, logFile } = await startLean(s, root, "peers-floor-", { WORKER_CONFIG: join("bench", "floor", "wrangler.toml") });
    await waitFor("the floor", logFile, async () => (await fetch(`${s.base}/`)).status === 404, p.exited);
  };
  s.stop = async () => {
    for (const p of s.parts) await stopGroup(p.pgid);
  };
  return s;
}

// ---------------------------------------------------------------- OTF: otfd + a throwaway PostgreSQL cluster
function pgBinDir() {
  const candidates = [process.env.PG_BINDIR, "/usr/lib/postgresql/15/bin", run("pg_config", ["--bindir"]).stdout?.trim()].filter(Boolean);
  return candidates.find((d) => existsSync(join(d, "initdb")) && existsSync(join(d, "postgres"))) ?? null;
}

export function otf(root) {
  const peersDir = join(root, ".peers");
  const bin = process.env.OTF_BIN || join(peersDir, "bin", "otfd");
  const s = server({ key: "otf", label: "OTF", createBody: tagsRelationshipBody });
  s.prepare = () => {
    if (!existsSync(bin)) {
      if (process.env.OTF_BIN) return `OTF_BIN=${bin} does not exist`;
      if (process.env.PEERS_INSTALL === "0") return `no otfd at ${bin} (PEERS_INSTALL=0: not installing)`;
      if (run("go", ["version"]).status !== 0) return "no otfd binary and no Go toolchain to install it";
      mkdirSync(join(peersDir, "bin"), { recursive: true });
      console.log(`peers: go install ${OTF_MODULE}@${OTF_VERSION} (GOBIN=${join(peersDir, "bin")}) …`);
      const r = run("go", ["install", `${OTF_MODULE}@${OTF_VERSION}`], { env: { ...process.env, GOBIN: join(peersDir, "bin") }, cwd: tmpdir() });
      if (r.status !== 0 || !existsSync(bin)) {
        return `\`go install ${OTF_MODULE}@${OTF_VERSION}\` failed: ${firstLines(r.stderr || r.error?.message, 3)}`;
      }
    }
    const v = run(bin, ["--version"]);
    if (v.status !== 0) return `${bin} --version failed: ${firstLines(v.stderr || v.error?.message)}`;
    s.pgBin = pgBinDir();
    if (!s.pgBin) return "no PostgreSQL server binaries (initdb, postgres) found; set PG_BINDIR";
    const pgv = run(join(s.pgBin, "postgres"), ["--version"]).stdout?.trim();
    s.version = `${v.stdout.trim()} (${bin}); ${pgv}`;
    if (process.getuid?.() === 0) {
      // PostgreSQL refuses to run as root: its processes run as the `postgres` user, through setpriv (no extra process).
      const uid = run("id", ["-u", "postgres"]).stdout?.trim();
      const gid = run("id", ["-g", "postgres"]).stdout?.trim();
      if (!uid || !gid) return "running as root and there is no `postgres` user to run PostgreSQL as";
      s.pgUser = { uid: Number(uid), gid: Number(gid) };
    }
    s.notes.push(
      `otfd (version above); a throwaway PostgreSQL cluster (initdb into a temp dir, trust auth on 127.0.0.1, own port${s.pgUser ? ", run as the `postgres` user" : ""}, default settings); site token for every API call`,
      "otfd's in-process runner and schedulers run as shipped; at start it tries to look up the latest Terraform release (fails: no network), which it only logs",
    );
    return null;
  };
  s.start = async () => {
    const dir = mkdtempSync(join(tmpdir(), "peers-otf-"));
    s.dirs.push(dir);
    const pgLog = join(dir, "postgres.log");
    const otfLog = join(dir, "otfd.log");
    s.logFiles.push(otfLog, pgLog);
    const asPg = s.pgUser ? ["setpriv", `--reuid=${s.pgUser.uid}`, `--regid=${s.pgUser.gid}`, "--clear-groups", "--"] : [];
    if (s.pgUser) chownSync(dir, s.pgUser.uid, s.pgUser.gid);
    writeFileSync(pgLog, "");
    if (s.pgUser) chownSync(pgLog, s.pgUser.uid, s.pgUser.gid);
    const data = join(dir, "pgdata");
    const init = [...asPg, join(s.pgBin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"];
    const r = run(init[0], init.slice(1), { cwd: dir });
    if (r.status !== 0) throw new Error(`initdb failed: ${firstLines(r.stderr || r.stdout || r.error?.message, 6)}`);
    const pgPort = await freePort();
    const pgArgs = [
      ...asPg,
      join(s.pgBin, "postgres"),
      "-D",
      data,
      "-p",
      String(pgPort),
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      `unix_socket_directories=${dir}`,
    ];
    const pg = spawnGroup(pgArgs[0], pgArgs.slice(1), { cwd: dir, env: process.env, logFile: pgLog });
    s.parts = [{ name: "postgres", pgid: pg.pgid }];
    await waitFor(
      "postgres",
      pgLog,
      async () => run(join(s.pgBin, "pg_isready"), ["-h", "127.0.0.1", "-p", String(pgPort), "-U", "postgres"]).status === 0,
      pg.exited,
      60_000,
    );
    const c = run(join(s.pgBin, "createdb"), ["-h", "127.0.0.1", "-p", String(pgPort), "-U", "postgres", "otf"]);
    if (c.status !== 0) throw new Error(`createdb failed: ${firstLines(c.stderr || c.error?.message)}`);
    const port = await freePort();
    s.token = `site-${randomBytes(24).toString("hex")}`;
    s.base = `http://127.0.0.1:${port}`;
    const o = spawnGroup(
      bin,
      [
        "--address",
        `127.0.0.1:${port}`,
        "--hostname",
        `127.0.0.1:${port}`,
        "--database",
        `postgres://postgres@127.0.0.1:${pgPort}/otf?sslmode=disable`,
        "--secret",
        randomBytes(16).toString("hex"),
        "--site-token",
        s.token,
        "--engine-bins-dir",
        join(dir, "engines"),
      ],
      { cwd: dir, env: process.env, logFile: otfLog },
    );
    s.parts = [
      { name: "otfd", pgid: o.pgid },
      { name: "postgres", pgid: pg.pgid },
    ];
    await waitFor("otfd", otfLog, async () => (await http(s.base, s.token, "GET", "/ping")).status === 204, o.exited);
  };
  s.stop = async () => {
    for (const p of s.parts) await stopGroup(p.pgid, 10_000); // otfd first, then PostgreSQL
  };
  return s;
}

// ---------------------------------------------------------------- Terrence: its backend on Bun (Bun from npm)
function npmCommand() {
  const cli = process.env.npm_execpath;
  return cli?.endsWith(".js") ? [process.execPath, cli] : ["npm"];
}

/** Bun BUN_VERSION from npm, installed into .peers/bun; returns the path of its binary, or throws with the reason. */
function ensureBun(peersDir) {
  const dir = join(peersDir, "bun");
  const candidates = () => [
    join(dir, "node_modules", "bun", "bin", "bun.exe"),
    join(dir, "node_modules", "@oven", "bun-linux-x64", "bin", "bun"),
    join(dir, "node_modules", "@oven", "bun-linux-x64-baseline", "bin", "bun"),
  ];
  const working = () => candidates().find((b) => existsSync(b) && run(b, ["--version"]).stdout?.trim() === BUN_VERSION);
  let bunBin = working();
  if (bunBin) return bunBin;
  if (process.env.PEERS_INSTALL === "0") throw new Error(`no Bun ${BUN_VERSION} in ${dir} (PEERS_INSTALL=0: not installing)`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ name: "peers-bun", private: true }, null, 2)}\n`);
  const [cmd, ...pre] = npmCommand();
  console.log(`peers: npm install bun@${BUN_VERSION} into ${dir} …`);
  const r = run(cmd, [...pre, "install", "--no-audit", "--no-fund", `bun@${BUN_VERSION}`], { cwd: dir });
  bunBin = working();
  if (!bunBin) throw new Error(`npm install bun@${BUN_VERSION} gave no working bun: ${firstLines(r.stderr || r.error?.message, 6)}`);
  return bunBin;
}

export function terrence(root) {
  const peersDir = join(root, ".peers");
  const dir = process.env.TERRENCE_DIR || join(peersDir, "terrence", "backend");
  const s = server({
    key: "terrence",
    label: "Terrence",
    // Terrence's GET /api/v2/ping answers 200 with a JSON body, and is public: a bad token is not refused there (its
    // auth derive still looks the token up on every request).
    pingStatuses: [200],
    // Terrence's workspace create reads tags only from `tag-bindings`; a binding with a key and no value is its flat
    // tag, which `search[tags]` matches by key.
    createBody: (name, tagged) => ({
      data: {
        type: "workspaces",
        attributes: { name },
        ...(tagged ? { relationships: { "tag-bindings": { data: [{ type: "tag-bindings", attributes: { key: "critical" } }] } } } : {}),
      },
    }),
  });
  s.prepare = () => {
    if (!existsSync(join(dir, "index.ts")) || !existsSync(join(dir, "node_modules", "elysia"))) {
      // Terrence is not published on npm; say what the registry answers, in case that changes.
      const [cmd, ...pre] = npmCommand();
      const v = run(cmd, [...pre, "view", "terrence", "name", "version", "repository.url"], { cwd: tmpdir(), timeout: 60_000 });
      const errors = String(v.stderr ?? v.error?.message ?? "")
        .split("\n")
        .filter((l) => !/^npm (warn|notice)/.test(l))
        .join("\n");
      const npmSays = v.status === 0 ? `npm has a package "terrence": ${firstLines(v.stdout, 3)} (not known to be this Terrence)` : firstLines(errors, 2);
      return (
        `no Terrence backend with installed dependencies at ${dir} (set TERRENCE_DIR). Terrence is not on the npm registry ` +
        `(\`npm view terrence\`: ${npmSays}); its source is the GitHub repository essinghigh-org/terrence, which this harness does not fetch or build`
      );
    }
    try {
      s.bun = ensureBun(peersDir);
    } catch (e) {
      return e.message;
    }
    const revFile = join(dir, "..", "PEER_REVISION");
    const rev = existsSync(revFile) ? readFileSync(revFile, "utf8").trim() : "revision unknown (no PEER_REVISION file beside the backend directory)";
    const dep = (name) => {
      try {
        return JSON.parse(readFileSync(join(dir, "node_modules", name, "package.json"), "utf8")).version;
      } catch {
        return "?";
      }
    };
    s.version = `${rev}; Bun ${BUN_VERSION} from npm; elysia ${dep("elysia")}, drizzle-orm ${dep("drizzle-orm")}, elysia-rate-limit ${dep("elysia-rate-limit")}`;
    s.notes.push(
      `\`bun --preload bench/peers/bun-loopback.mjs index.ts\` in ${dir}: NODE_ENV=production, SQLite (DATABASE_URL=file:<temp dir>/terrence.db), admin bootstrapped with ADMIN_PASSWORD, RATE_LIMIT_MAX=1000000000 (its per-principal API rate limit, default 30/s, off in effect); its run worker and schedulers run as shipped`,
      "API token: log in as the bootstrapped admin, change the one-time password it requires, log in again, then POST /api/v2/users/:id/authentication-tokens",
      "its GET /api/v2/ping is public (200 with a JSON body; a bad token is not refused), so the authenticated ping there is the ping with the token sent: its auth layer still looks the token up in SQLite on every request that carries one",
      "tags: its workspace create reads them only from `tag-bindings`; a binding with key `critical` and no value is its flat tag, which `search[tags]` matches",
    );
    return null;
  };
  s.start = async () => {
    const tmp = mkdtempSync(join(tmpdir(), "peers-terrence-"));
    s.dirs.push(tmp);
    const logFile = join(tmp, "terrence.log");
    s.logFiles.push(logFile);
    const port = await freePort();
    const systemPort = await freePort([8787, port]);
    s.base = `http://127.0.0.1:${port}`;
    const pass1 = `Bench-${randomBytes(12).toString("hex")}-1a!`;
    const pass2 = `Bench-${randomBytes(12).toString("hex")}-2b!`;
    const p = spawnGroup(s.bun, ["--preload", join(root, "bench", "peers", "bun-loopback.mjs"), "index.ts"], {
      cwd: dir,
      logFile,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        NODE_ENV: "production",
        PORT: String(port),
        SYSTEM_API_PORT: String(systemPort),
        DATABASE_URL: `file:${join(tmp, "terrence.db")}`,
        STORAGE_DIR: join(tmp, "storage"),
        ADMIN_PASSWORD: pass1,
        RATE_LIMIT_MAX: "1000000000",
      },
    });
    s.parts = [{ name: "bun", pgid: p.pgid }];
    await waitFor("Terrence", logFile, async () => (await http(s.base, null, "GET", "/ping")).status === 200, p.exited);
    const login = async (password) => {
      const r = await http(s.base, null, "POST", "/users/login", { data: { type: "users", attributes: { username: "admin", password } } });
      const t = r.json?.data?.attributes?.token;
      if (r.status !== 200 || !t) throw new Error(`Terrence login: ${r.status} ${r.text.slice(0, 300)}`);
      return t;
    };
    const t1 = await login(pass1);
    const ch = await http(s.base, t1, "PATCH", "/account/password", {
      data: { type: "users", attributes: { "current-password": pass1, password: pass2, "password-confirmation": pass2 } },
    });
    if (ch.status !== 200) throw new Error(`Terrence password change: ${ch.status} ${ch.text.slice(0, 300)}`);
    const t2 = await login(pass2);
    const me = await http(s.base, t2, "GET", "/account/details");
    const userId = me.json?.data?.id;
    if (!userId) throw new Error(`Terrence account details: ${me.status} ${me.text.slice(0, 300)}`);
    const tok = await http(s.base, t2, "POST", `/users/${userId}/authentication-tokens`, {
      data: { type: "authentication-tokens", attributes: { description: "side-by-side bench" } },
    });
    s.token = tok.json?.data?.attributes?.token;
    if (tok.status !== 201 || !s.token) throw new Error(`Terrence token: ${tok.status} ${tok.text.slice(0, 300)}`);
  };
  s.stop = async () => {
    for (const p of s.parts) await stopGroup(p.pgid);
  };
  return s;
}

/** Removes a server's temporary directories (stores, logs). */
export function removeDirs(s) {
  for (const d of s.dirs) rmSync(d, { recursive: true, force: true });
}
