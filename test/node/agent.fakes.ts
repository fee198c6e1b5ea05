// Fakes for the agent's tests: the protocol's server side (node:http), a `terraform` script, and the part of the TFE
// API a real Terraform's `cloud` block calls. Each records what it saw so the tests can assert what the service and
// Terraform would observe.
import { chmodSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { Header } from "tar";
import type { Finish, Job, Signal } from "../../agent/protocol.ts";

export const AGENT_TOKEN = "agent-token-secret-0123456789";

export interface Recorded {
  method: string;
  path: string;
  query: URLSearchParams;
  auth: string | undefined;
  body: Buffer;
}

interface JobState {
  job: Job;
  configuration: Buffer;
  log: Buffer;
  /** Each append's offset and length, in arrival order. */
  appends: { offset: number; length: number }[];
  signal: Signal;
  lost: boolean;
  artifacts: Map<string, Buffer>;
  finish: Finish | null;
}

export class FakeService {
  readonly calls: Recorded[] = [];
  readonly jobs = new Map<string, JobState>();
  private queue: string[] = [];
  private registrations = 0;
  private server: Server;
  private waiters: { pred: () => boolean; resolve: () => void }[] = [];
  base = "";
  /** The pool `register` says the token serves: one organisation's by default; null: the shared default pool. */
  pool: { id: string | null; organizationId: string | null } | null = { id: "apool-Fake0000000001", organizationId: "org-Fake0000000001" };
  /** The agents registered and not forgotten (`forgetAgents`, as the service forgets one silent for a day). */
  readonly agents = new Set<string>();

  forgetAgents(): void {
    this.agents.clear();
  }

  constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const url = new URL(req.url ?? "/", "http://fake");
        const rec: Recorded = {
          method: req.method ?? "",
          path: url.pathname,
          query: url.searchParams,
          auth: header(req, "authorization"),
          body: Buffer.concat(chunks),
        };
        this.calls.push(rec);
        const answer = this.handle(rec);
        res.writeHead(answer.status, answer.body === undefined ? {} : { "content-type": answer.type ?? "application/json" });
        res.end(answer.body);
        this.notify();
      });
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  /** Queues a job for the next `jobs/next`, with its configuration archive. */
  offer(job: Job, configuration: Buffer, artifacts: Record<string, Buffer> = {}): JobState {
    const state: JobState = {
      job,
      configuration,
      log: Buffer.alloc(0),
      appends: [],
      signal: null,
      lost: false,
      artifacts: new Map(Object.entries(artifacts)),
      finish: null,
    };
    this.jobs.set(`${job.run}/${job.phase}`, state);
    this.queue.push(`${job.run}/${job.phase}`);
    return state;
  }

  /** Resolves once `pred` holds, checked after every request. */
  until(pred: () => boolean): Promise<void> {
    if (pred()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ pred, resolve }));
  }

  /** The protocol calls in order, without the periodic status and heartbeat calls. */
  sequence(): string[] {
    return this.calls.filter((c) => !c.path.endsWith("/status") && !c.path.endsWith("/heartbeat")).map((c) => `${c.method} ${c.path}`);
  }

  private notify(): void {
    const still: typeof this.waiters = [];
    for (const w of this.waiters) w.pred() ? w.resolve() : still.push(w);
    this.waiters = still;
  }

  private handle(rec: Recorded): { status: number; body?: string | Buffer; type?: string } {
    const json = (status: number, value: unknown) => ({ status, body: JSON.stringify(value) });
    const p = rec.path;
    if (p === "/api/agent/register") {
      if (rec.auth !== `Bearer ${AGENT_TOKEN}`) return json(401, { errors: [{ status: "401", title: "unauthorized" }] });
      const id = `agent-fake${String(this.registrations++).padStart(10, "0")}`;
      this.agents.add(id);
      return json(201, { id, ...(this.pool ? { pool: this.pool } : {}) });
    }
    let m = /^\/api\/agent\/agents\/([^/]+)\/(status|jobs\/next)$/.exec(p);
    if (m) {
      if (rec.auth !== `Bearer ${AGENT_TOKEN}`) return json(401, { errors: [{ status: "401", title: "unauthorized" }] });
      if (!this.agents.has(m[1])) return json(404, { errors: [{ status: "404", title: "not found" }] });
      if (m[2] === "status") return { status: 204 };
      const next = this.queue.shift();
      if (!next) return { status: 204 };
      return json(200, this.jobs.get(next)!.job);
    }
    m = /^\/api\/agent\/jobs\/([^/]+)\/(plan|apply)\/(configuration|artifacts\/[a-z-]+|logs|heartbeat|finish)$/.exec(p);
    if (!m) return json(404, { errors: [{ status: "404", title: "not found" }] });
    const state = this.jobs.get(`${m[1]}/${m[2]}`);
    if (!state || rec.auth !== `Bearer ${state.job.token}`) return json(401, { errors: [{ status: "401", title: "unauthorized" }] });
    if (state.lost) return json(409, { errors: [{ status: "409", title: "job lost", detail: "the lease expired" }] });
    const what = m[3];
    if (what === "configuration") return { status: 200, body: state.configuration, type: "application/octet-stream" };
    if (what.startsWith("artifacts/")) {
      const kind = what.slice("artifacts/".length);
      if (rec.method === "PUT") {
        state.artifacts.set(kind, rec.body);
        return { status: 204 };
      }
      const bytes = state.artifacts.get(kind);
      return bytes ? { status: 200, body: bytes, type: "application/octet-stream" } : json(404, { errors: [{ status: "404", title: "not found" }] });
    }
    if (what === "logs") {
      const offset = Number(rec.query.get("offset"));
      if (offset + rec.body.length === state.log.length && state.log.subarray(offset).equals(rec.body))
        return json(200, { size: state.log.length, signal: state.signal });
      if (offset !== state.log.length) return json(409, { errors: [{ status: "409", title: "log offset mismatch" }] });
      state.appends.push({ offset, length: rec.body.length });
      state.log = Buffer.concat([state.log, rec.body]);
      return json(200, { size: state.log.length, signal: state.signal });
    }
    if (what === "heartbeat") return json(200, { signal: state.signal });
    state.finish = JSON.parse(rec.body.toString("utf8")) as Finish;
    return json(200, {});
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

export function job(overrides: Partial<Job> = {}): Job {
  return {
    run: "run-TestRun00000001",
    phase: "plan",
    claim: "claim-1",
    token: "run.payload-of-the-run-token.signature",
    leaseSeconds: 60,
    hostname: "localhost:8787",
    apiBase: "http://localhost:8787/api/v2/",
    organization: "acme",
    workspace: { id: "ws-Test000000000001", name: "net", workingDirectory: "", terraformVersion: "1.11.4", projectName: "Default Project" },
    operation: {
      isDestroy: false,
      refresh: true,
      refreshOnly: false,
      targetAddrs: [],
      replaceAddrs: [],
      planOnly: false,
      savePlan: false,
      allowEmptyApply: false,
      allowConfigGeneration: false,
    },
    variables: [],
    runVariables: [],
    ...overrides,
  };
}

/** A gzipped tar of `entries`, written by hand so a test can also build archives no packer would. */
export function tarGz(entries: { path: string; body?: string; type?: "File" | "Directory" | "SymbolicLink"; linkpath?: string }[]): Buffer {
  const blocks: Buffer[] = [];
  for (const e of entries) {
    const body = Buffer.from(e.body ?? "");
    const type = e.type ?? "File";
    const h = new Header({
      path: e.path,
      mode: type === "Directory" ? 0o755 : 0o644,
      size: type === "File" ? body.length : 0,
      mtime: new Date(0),
      type,
      linkpath: e.linkpath ?? "",
      uid: 0,
      gid: 0,
    });
    const block = Buffer.alloc(512);
    h.encode(block, 0);
    blocks.push(block);
    if (type === "File" && body.length > 0) {
      blocks.push(body, Buffer.alloc((512 - (body.length % 512)) % 512));
    }
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

/**
 * A `terraform` stand-in (a Node script). It appends one JSON line per command to $FAKE_RECORD, and its behaviour
 * follows $FAKE_MODE: "hang" prints and waits for a signal (SIGINT: prints and exits 1), "stubborn" waits and
 * ignores SIGINT, "leak" prints $FAKE_LEAK, "fail" makes plan exit 1.
 */
export function fakeTerraform(dir: string): string {
  const path = join(dir, "fake-terraform.mjs");
  writeFileSync(
    path,
    `#!/usr/bin/env node
import { appendFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
const [cmd, ...args] = process.argv.slice(2);
const env = process.env;
const record = (extra) => appendFileSync(env.FAKE_RECORD, JSON.stringify({ cmd, args, cwd: process.cwd(), pid: process.pid, ...extra }) + "\\n");
const out = (s) => process.stdout.write(s);
const mode = env.FAKE_MODE ?? "";
const wait = () => setInterval(() => {}, 1000);
if (cmd === "init") {
  record({ lockBefore: existsSync(".terraform.lock.hcl") ? readFileSync(".terraform.lock.hcl", "utf8") : null });
  out("Initializing the backend...\\n");
  process.stderr.write("init: a line on stderr\\n");
  if (!existsSync(".terraform.lock.hcl")) writeFileSync(".terraform.lock.hcl", "# provider locks\\n");
  out("Terraform has been successfully initialized!\\n");
} else if (cmd === "plan") {
  const varFiles = args.filter((a) => a.startsWith("-var-file=")).map((a) => readFileSync(a.slice(10), "utf8"));
  const keys = Object.keys(env).sort();
  record({ varFiles, keys, env: Object.fromEntries(["TF_CLI_CONFIG_FILE","TF_FORCE_LOCAL_BACKEND","TF_IN_AUTOMATION","TFE_RUN_ID","TFC_RUN_ID","TFC_WORKSPACE_NAME","TFC_PROJECT_NAME","CHECKPOINT_DISABLE","REGION"].map((k) => [k, env[k]])),
    cliConfig: readFileSync(env.TF_CLI_CONFIG_FILE, "utf8"), override: readFileSync("zzz_agent_override.tf", "utf8"), files: readdirSync(".").sort() });
  if (mode === "hang" || mode === "stubborn") {
    if (mode === "hang") process.on("SIGINT", () => { record({ got: "SIGINT" }); out("Interrupt received.\\nStopping operation...\\n"); setTimeout(() => process.exit(1), 20); });
    else process.on("SIGINT", () => record({ got: "SIGINT (ignored)" }));
    out("planning...\\n");
    wait();
  } else {
    if (mode === "leak") out("the secret is " + env.FAKE_LEAK + " and again " + env.FAKE_LEAK + "\\n");
    if (mode === "big") out("x".repeat(100000) + "\\n");
    if (mode === "fail") { process.stderr.write("Error: something is wrong\\n"); process.exit(1); }
    out("\\u001b[1mPlan:\\u001b[0m 1 to add, 1 to change, 2 to destroy.\\n");
    writeFileSync(args.find((a) => a.startsWith("-out=")).slice(5), "PLANBIN");
  }
} else if (cmd === "show") {
  record({});
  out(JSON.stringify({ format_version: "1.2", resource_changes: [
    { address: "a.new", change: { actions: ["create"] } },
    { address: "a.upd", change: { actions: ["update"] } },
    { address: "a.rep", change: { actions: ["delete", "create"] } },
    { address: "a.del", change: { actions: ["delete"] } },
    { address: "a.imp", change: { actions: ["no-op"], importing: { id: "i-1" } } },
    { address: "a.same", change: { actions: ["no-op"] } },
  ], output_changes: { o: { actions: ["no-op"] } } }));
} else if (cmd === "providers") {
  record({});
  out(JSON.stringify({ format_version: "1.0", provider_schemas: {} }));
} else if (cmd === "apply") {
  record({ plan: readFileSync(args[args.length - 1], "utf8"), lock: readFileSync(".terraform.lock.hcl", "utf8") });
  if (mode === "state-refused") {
    // As Terraform does when the backend refuses the new state: the state goes to errored.tfstate, the apply fails.
    writeFileSync("errored.tfstate", '{"version":4,"serial":7,"lineage":"l-1","resources":[]}\\n');
    process.stderr.write("Error: Failed to save state\\n\\nError saving state: 409 Conflict\\n");
    process.exit(1);
  }
  out("a.new: Creating...\\n\\u001b[0m\\u001b[1m\\u001b[32m\\nApply complete! Resources: 1 imported, 2 added, 1 changed, 3 destroyed.\\n\\u001b[0m");
} else {
  process.stderr.write("fake terraform: unknown command " + cmd + "\\n");
  process.exit(1);
}
`,
  );
  chmodSync(path, 0o755);
  return path;
}

/** The part of the TFE API Terraform's `cloud` block calls for a plan and an apply with TF_FORCE_LOCAL_BACKEND. */
export class TfeStub {
  readonly calls: string[] = [];
  readonly uploads = new Map<string, Buffer>();
  private server: Server;
  host = "";

  constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const path = new URL(req.url ?? "/", "http://stub").pathname;
        this.calls.push(`${req.method} ${path}`);
        const headers = { "content-type": "application/vnd.api+json", "tfp-api-version": "2.6" };
        const send = (status: number, body?: unknown) => {
          res.writeHead(status, headers);
          res.end(body === undefined ? undefined : JSON.stringify(body));
        };
        const sv = (status: string) => ({
          data: {
            id: "sv-Sandbox00000001",
            type: "state-versions",
            attributes: {
              serial: 1,
              status,
              "hosted-state-upload-url": `http://${this.host}/upload/state`,
              "hosted-json-state-upload-url": `http://${this.host}/upload/json`,
            },
          },
        });
        if (path === "/api/v2/ping") return send(204);
        if (path.endsWith("/entitlement-set"))
          return send(200, { data: { id: "org-x", type: "entitlement-sets", attributes: { operations: true, "state-storage": true } } });
        if (path === "/api/v2/organizations/acme/workspaces/net") {
          return send(200, {
            data: {
              id: "ws-Test000000000001",
              type: "workspaces",
              attributes: { name: "net", "execution-mode": "remote", "terraform-version": "1.11.4", locked: true, permissions: { "can-queue-run": true } },
              relationships: { organization: { data: { id: "acme", type: "organizations" } } },
            },
          });
        }
        if (path.endsWith("/current-state-version")) return send(404, { errors: [{ status: "404", title: "not found" }] });
        if (req.method === "POST" && path.endsWith("/state-versions")) return send(201, sv("pending"));
        if (req.method === "PUT" && path.startsWith("/upload/")) {
          this.uploads.set(path, Buffer.concat(chunks));
          return send(200);
        }
        if (path === "/api/v2/state-versions/sv-Sandbox00000001") return send(200, sv("finalized"));
        send(404, { errors: [{ status: "404", title: "not found" }] });
      });
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.host = `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
