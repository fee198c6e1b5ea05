#!/usr/bin/env node
// `npm run test:clients`: drives the REAL clients against the service on a fresh local store: Terraform's `cloud`
// block, the `tfe` provider (terraform-provider-tfe) and OpenTofu's `cloud` block (with and without state
// encryption); and remote runs: the `cloud` block with workspaces in `remote` and `agent` execution mode, run by the
// service's agents on configurations using the hashicorp/null stand-in (test/clients/null-provider). The provider,
// `tofu` and the stand-in are built from the Go module proxy and cached outside the repository (see
// scripts/lib/binaries.mjs). Fixtures: test/clients/**.
//
// How the clients reach a local plain-http service: the CLI configuration (TF_CLI_CONFIG_FILE) maps the host
// "localhost:<port>" to the service with a `host` block (tfe.v2, tfe.v2.1, tfe.v2.2 services as absolute http
// URLs), so neither Terraform, OpenTofu nor the provider runs https service discovery; the provider is loaded through
// `dev_overrides`. The clients talk to a recording proxy (scripts/lib/proxy.mjs) in front of the service, so a
// failing step names the HTTP exchange that failed (method, path, status, body).
//
// Each step prints one line (PASS/FAIL, seconds, name); a table and "N passed, M failed" close the run; the exit
// status is non-zero when any step failed.
//   --only <regex>   run only the steps whose name matches (steps depend on earlier ones: use with care)
//   --keep           leave the service running and the work directory in place afterwards
// CLIENTS_CACHE_DIR: where the built binaries are cached (default ~/.cache/workspace-service-clients);
// CLIENTS_SERVICE_ROOT: run `npm start` from another checkout (default: this one).
// Node built-ins only. Needs `go` (to build the provider and tofu once) and terraform >= 1.10 on PATH (else built too),
// and util-linux `script` (a pseudo-terminal for the interactive remote-run steps).
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { closeSync, cpSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureNullProvider, ensureProvider, ensureTerraform, ensureTofu } from "./lib/binaries.mjs";
import { loginSteps } from "./lib/login-e2e.mjs";
import { registrySteps } from "./clients/registry.mjs";
import { startRecordingProxy } from "./lib/proxy.mjs";
import { startRunTaskReceiver } from "./lib/receivers.mjs";
import { groups, killAllGroups, killGroup, sleep, startService, stopGroup, tail } from "./lib/service.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const fixtures = join(root, "test", "clients");
const ORG = "clients";
const OTHER_ORG = "clients-other";
const OVERALL_TIMEOUT_MS = 20 * 60_000; // service start and every scenario
const TF_TIMEOUT_MS = 180_000; // one terraform command

const argv = process.argv.slice(2);
const opts = { only: null, keep: false };
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === "--only") opts.only = new RegExp(argv[++i]);
  else if (a.startsWith("--only=")) opts.only = new RegExp(a.slice(7));
  else if (a === "--keep") opts.keep = true;
  else if (a === "-h" || a === "--help") {
    console.log("usage: npm run test:clients -- [--only <regex>] [--keep]");
    process.exit(0);
  } else {
    console.error(`clients: unknown option ${a}`);
    process.exit(2);
  }
}

const t0 = Date.now();
const results = []; // { name, ok, seconds, detail }
const log = (msg) => console.log(`clients: ${msg}`);
let work = null;
let service = null;
let proxy = null;
process.on("exit", () => {
  if (!opts.keep) killAllGroups();
});
for (const [sig, code] of [
  ["SIGINT", 130],
  ["SIGTERM", 143],
  ["SIGHUP", 129],
]) {
  process.on(sig, () => {
    console.error(`clients: ${sig}: stopping`);
    killAllGroups();
    if (service) rmSync(service.storeDir, { recursive: true, force: true });
    process.exit(code);
  });
}

function fatal(msg) {
  console.error(`clients: ERROR: ${msg}`);
  killAllGroups();
  console.log("0 passed, 1 failed");
  process.exit(1);
}

// ---------------------------------------------------------------- binaries
let terraform;
let provider;
let tofu;
let nullProvider;
try {
  terraform = ensureTerraform(log);
  provider = ensureProvider(log);
  tofu = ensureTofu(log);
  nullProvider = ensureNullProvider(log);
} catch (e) {
  fatal(e.message);
}
log(
  `terraform ${terraform.version} (${terraform.path}, ${terraform.source}); terraform-provider-tfe ${provider.version} (${provider.path}${provider.built ? ", just built" : ", cached"}); tofu ${tofu.version} (${tofu.path}${tofu.built ? ", just built" : ", cached"}); hashicorp/null stand-in ${nullProvider.version} (${nullProvider.mirror}${nullProvider.built ? ", just built" : ", cached"})`,
);

// The time limit covers the scenarios (the binaries above are built once and cached).
setTimeout(() => {
  console.error(`clients: ERROR: time limit (${OVERALL_TIMEOUT_MS / 60000} min) reached; stopping everything`);
  killAllGroups();
  console.log(`${results.filter((r) => r.ok).length} passed, ${results.filter((r) => !r.ok).length + 1} failed`);
  process.exit(1);
}, OVERALL_TIMEOUT_MS).unref();

// ---------------------------------------------------------------- service, proxy, CLI configuration
work = mkdtempSync(join(tmpdir(), "clients-work-"));
mkdirSync(join(work, "logs"));
try {
  // The service's own agent (default pool, `remote` workspaces) installs providers from the stand-in's mirror and
  // runs the terraform found here.
  service = await startService({
    root: process.env.CLIENTS_SERVICE_ROOT || root,
    logFile: join(work, "logs", "service.log"),
    env: { AGENT_PLUGIN_MIRROR: nullProvider.mirror, TERRAFORM: terraform.path, PATH: `${dirname(terraform.path)}${delimiter}${process.env.PATH}` },
  });
} catch (e) {
  fatal(e.message);
}
proxy = await startRecordingProxy({ target: service.base });
const HOST = `localhost:${proxy.port}`; // the name the clients use (cloud block hostname, provider hostname)
const apiURL = `${proxy.base}/api/v2/`;
log(`service ${service.base} up after ${service.startSeconds.toFixed(1)} s (store ${service.storeDir}); clients use ${HOST} -> proxy ${proxy.base}`);
log(`work directory ${work}`);

// The host and credentials blocks, for Terraform and OpenTofu alike (OpenTofu reads the same CLI configuration
// syntax from TF_CLI_CONFIG_FILE; TF_TOKEN_<host> cannot name a host with a port, so the token is given here).
const hostBlocks = `host ${JSON.stringify(HOST)} {
  services = {
    "tfe.v2"   = ${JSON.stringify(apiURL)}
    "tfe.v2.1" = ${JSON.stringify(apiURL)}
    "tfe.v2.2" = ${JSON.stringify(apiURL)}
  }
}

credentials ${JSON.stringify(HOST)} {
  token = ${JSON.stringify(service.token)}
}
`;
const cliConfig = join(work, "terraform.rc");
writeFileSync(
  cliConfig,
  `provider_installation {
  dev_overrides {
    "hashicorp/tfe" = ${JSON.stringify(provider.dir)}
  }
  filesystem_mirror {
    path    = ${JSON.stringify(nullProvider.mirror)}
    include = ["registry.terraform.io/hashicorp/null"]
  }
  direct {
    exclude = ["registry.terraform.io/hashicorp/null"]
  }
}

${hostBlocks}`,
);
// OpenTofu's configurations use built-in resources only: no provider installation settings.
const tofuCliConfig = join(work, "tofu.rc");
writeFileSync(tofuCliConfig, hostBlocks);

// Only our settings reach terraform: any TF_*/TFE_* of the caller's environment is dropped.
const tfEnv = {
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(TF_|TFE_|TFC_)/.test(k))),
  TF_CLI_CONFIG_FILE: cliConfig,
  TF_IN_AUTOMATION: "1",
  CHECKPOINT_DISABLE: "1",
  TF_CLOUD_HOSTNAME: HOST,
  TF_CLOUD_ORGANIZATION: ORG,
  TF_VAR_tfe_hostname: HOST,
  TF_VAR_tfe_token: service.token,
  TF_VAR_organization: ORG,
  TF_VAR_outputs_workspace: "cb-migrated",
};
const TF = { name: "terraform", path: terraform.path, env: tfEnv };
const TOFU = { name: "tofu", path: tofu.path, env: { ...tfEnv, TF_CLI_CONFIG_FILE: tofuCliConfig } };

// ---------------------------------------------------------------- helpers
let cmdSeq = 0;
// Runs terraform (or `client`: TOFU) in `dir`. Resolves { code, signal, out, cmd, logFile }. With `background`,
// returns { child, pgid, done, output() } at once (the command runs in its own process group).
function tf(dir, args, { input = null, env = {}, timeoutMs = TF_TIMEOUT_MS, background = false, client = TF } = {}) {
  const cmd = `${client.name} ${args.join(" ")}`;
  const logFile = join(work, "logs", `${String(++cmdSeq).padStart(3, "0")}-${client === TF ? "" : `${client.name}-`}${args[0]}.log`);
  const child = spawn(client.path, [...args], {
    cwd: dir,
    env: { ...client.env, ...env },
    detached: true,
    stdio: [input === null ? "ignore" : "pipe", "pipe", "pipe"],
  });
  if (child.pid) groups.add(child.pid);
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  if (input !== null) child.stdin.end(input);
  const timer = setTimeout(() => killGroup(child.pid, "SIGKILL"), timeoutMs);
  const done = new Promise((resolve) => {
    child.on("error", (e) => (out += `\n(spawn error: ${e.message})`));
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      groups.delete(child.pid);
      writeFileSync(logFile, `$ (cd ${dir} && ${cmd})\n${out}\n(exit ${code ?? signal})\n`);
      resolve({ code, signal, out, cmd, logFile });
    });
  });
  if (background) return { child, pgid: child.pid, done, output: () => out };
  return done;
}

class StepError extends Error {
  constructor(message, result, related) {
    super(message);
    this.result = result;
    this.related = related;
  }
}
// `related`: [{ label, match(record) => bool, pick?: [attribute names] }]: for a failure no HTTP error explains (a
// drift, a wrong value), the client exchanges to show (the last one matching each entry, with its status and body).
function check(cond, message, result, related) {
  if (!cond) throw new StepError(message, result, related);
}
async function tfOk(dir, args, options) {
  const r = await tf(dir, args, options);
  check(r.code === 0, `\`${r.cmd}\` exited with ${r.code ?? r.signal}`, r);
  return r;
}

async function api(method, path, body) {
  const res = await fetch(`${service.base}/api/v2${path}`, {
    method,
    headers: { Authorization: `Bearer ${service.token}`, "Content-Type": "application/vnd.api+json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {}
  return { status: res.status, json, text };
}
async function apiOk(method, path, body, want = [200, 201, 204]) {
  const r = await api(method, path, body);
  check(want.includes(r.status), `harness API call ${method} /api/v2${path} answered ${r.status}: ${r.text.slice(0, 400)}`);
  return r;
}
const workspaceByName = async (name, org = ORG) => (await apiOk("GET", `/organizations/${org}/workspaces/${name}`)).json.data;
async function createWorkspace(org, name, { tags = [], bindings = {} } = {}) {
  const data = { type: "workspaces", attributes: { name } };
  const rel = {};
  if (tags.length) rel.tags = { data: tags.map((t) => ({ type: "tags", attributes: { name: t } })) };
  if (Object.keys(bindings).length) {
    rel["tag-bindings"] = { data: Object.entries(bindings).map(([key, value]) => ({ type: "tag-bindings", attributes: { key, value } })) };
  }
  if (Object.keys(rel).length) data.relationships = rel;
  return (await apiOk("POST", `/organizations/${org}/workspaces`, { data })).json.data;
}
async function waitFor(what, fn, timeoutMs = 60_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    check(Date.now() < until, `timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await sleep(250);
  }
}
// JSON with object keys sorted, for order-insensitive comparison of maps.
const canon = (v) =>
  JSON.stringify(v, (_, x) =>
    x && typeof x === "object" && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([p], [q]) => (p < q ? -1 : 1))) : x,
  );
const md5 = (buf) => createHash("md5").update(buf).digest("hex");
const sameSet = (a, b) => a.length === b.length && [...a].sort().join("\n") === [...b].sort().join("\n");
const workspaceList = (out) =>
  out
    .split("\n")
    .map((l) => l.replace(/^\*/, "").trim())
    .filter(Boolean);

// The state version behind a workspace's current-state-version, and its state downloaded through the signed URL
// without a token. Resolves { sv, bytes, state }.
async function currentState(wsId) {
  const sv = (await apiOk("GET", `/workspaces/${wsId}/current-state-version`)).json.data;
  const url = sv.attributes["hosted-state-download-url"];
  check(typeof url === "string" && url.startsWith("http"), `current state version ${sv.id} has no hosted-state-download-url (${url})`);
  const res = await fetch(url, { signal: AbortSignal.timeout(60_000) }); // signed: no Authorization header
  const bytes = Buffer.from(await res.arrayBuffer());
  check(res.status === 200, `GET ${url} (signed download URL, no token) answered ${res.status}: ${bytes.toString("utf8", 0, 300)}`);
  let state;
  try {
    state = JSON.parse(bytes.toString("utf8"));
  } catch (e) {
    check(false, `the state downloaded from ${url} is not JSON: ${e.message}`);
  }
  return { sv, bytes, state };
}

// Copies a fixture directory to a fresh directory under the work directory.
function fixture(name, into = name.replace(/\//g, "-")) {
  const dir = join(work, into);
  mkdirSync(dir, { recursive: true });
  cpSync(join(fixtures, name), dir, { recursive: true });
  return dir;
}

// Plans with -out and explains every change: resource changes (with the attributes that differ), drift, outputs.
// `options` as tf's (client, env).
async function planChanges(dir, args = [], options = {}) {
  const planFile = join(dir, `plan-${cmdSeq + 1}.bin`);
  const r = await tf(dir, ["plan", "-input=false", "-no-color", "-detailed-exitcode", `-out=${planFile}`, ...args], options);
  check(r.code === 0 || r.code === 2, `\`${r.cmd}\` exited with ${r.code ?? r.signal}`, r);
  const show = await tfOk(dir, ["show", "-json", planFile], options);
  const plan = JSON.parse(show.out.slice(show.out.indexOf("{")));
  const changes = [];
  const diffKeys = (before, after, unknown) => {
    const keys = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {}), ...Object.keys(unknown ?? {})]);
    return [...keys]
      .filter((k) => JSON.stringify(before?.[k]) !== JSON.stringify(after?.[k]) || unknown?.[k])
      .map((k) => `${k}: ${JSON.stringify(before?.[k])} -> ${unknown?.[k] ? "(known after apply)" : JSON.stringify(after?.[k])}`);
  };
  for (const rc of plan.resource_changes ?? []) {
    const actions = rc.change.actions;
    if (actions.length === 1 && (actions[0] === "no-op" || actions[0] === "read")) continue;
    changes.push(`${rc.address} ${actions.join("+")}: ${diffKeys(rc.change.before, rc.change.after, rc.change.after_unknown).join("; ")}`);
  }
  const drift = [];
  for (const rd of plan.resource_drift ?? []) {
    drift.push(`drift (changed outside Terraform) ${rd.address}: ${diffKeys(rd.change.before, rd.change.after, {}).join("; ")}`);
  }
  for (const [name, oc] of Object.entries(plan.output_changes ?? {})) {
    if (oc.actions.length === 1 && oc.actions[0] === "no-op") continue;
    changes.push(
      `output ${name} ${oc.actions.join("+")}: ${oc.after_sensitive || oc.before_sensitive ? "(sensitive)" : `${JSON.stringify(oc.before)} -> ${JSON.stringify(oc.after)}`}`,
    );
  }
  return { code: r.code, changes, drift, result: r, planFile };
}
// The failure text for a plan that should be empty: the changes, then any refresh-detected drift (which names
// the attributes the service returned differently from what the client stored).
const planProblem = (p) => `${p.changes.join(" | ") || `exit ${p.code}`}${p.drift.length ? ` || ${p.drift.join(" | ")}` : ""}`;
function showJson(out) {
  return JSON.parse(out.slice(out.indexOf("{")));
}
async function stateResources(dir) {
  const r = await tfOk(dir, ["show", "-json"]);
  const s = showJson(r.out);
  const map = {};
  const walk = (m) => {
    for (const res of m?.resources ?? []) map[res.address] = res.values;
    for (const c of m?.child_modules ?? []) walk(c);
  };
  walk(s.values?.root_module);
  return map;
}

// ---------------------------------------------------------------- steps
function describeFailure(e, mark) {
  const lines = [e.message];
  const r = e.result;
  if (r?.out) {
    const errs = r.out
      .split("\n")
      .map((l) => l.replace(/^[│╷╵ ]+/, "").trimEnd())
      .filter(Boolean);
    const i = errs.findIndex((l) => /^Error:/.test(l));
    const excerpt = (i >= 0 ? errs.slice(i, i + 8) : errs.slice(-8)).join(" / ");
    lines.push(`${r.cmd?.split(" ")[0] ?? "terraform"} said: ${excerpt.slice(0, 800)}`);
    lines.push(`full output: ${r.logFile}`);
  }
  for (const rel of e.related ?? []) {
    const matching = proxy.records.filter((x) => x.seq > (rel.since ?? mark) && rel.match(x));
    if (!matching.length) {
      lines.push(`${rel.label}: no such client request`);
      continue;
    }
    if (rel.all) {
      lines.push(`${rel.label}:`);
      for (const rec of matching.slice(-8)) {
        lines.push(`  ${rec.method} ${rec.path} -> ${rec.status}${rec.reqBody ? `  body: ${rec.reqBody.replace(/\s+/g, " ").slice(0, 500)}` : ""}`);
      }
      continue;
    }
    const rec = matching.at(-1);
    lines.push(`${rel.label}: ${rec.method} ${rec.path} -> ${rec.status}`);
    if (rec.reqBody && rec.method !== "GET") lines.push(`  request body: ${rec.reqBody.replace(/\s+/g, " ").slice(0, 800)}`);
    let body = rec.resBody.replace(/\s+/g, " ").slice(0, 800);
    if (rel.pick) {
      try {
        const j = JSON.parse(rec.resBody);
        const items = Array.isArray(j.data) ? j.data : [j.data];
        body = canon(items.map((d) => (rel.pick.length ? Object.fromEntries(rel.pick.map((k) => [k, d?.attributes?.[k]])) : d?.attributes)));
      } catch {
        body = `(not complete JSON) ${body}`;
      }
    }
    lines.push(`  response${rel.pick?.length ? ` (${rel.pick.join(", ")})` : ""}: ${body}`);
  }
  const failed = proxy.records.filter((x) => x.seq > mark && (x.status >= 400 || x.status === 0));
  if (failed.length) {
    const last = failed.at(-1);
    // After a terraform command failed, its last failed exchange is the likely cause; after a failed check of the
    // harness's own, it may be an expected miss (a lookup before a create).
    const label = r?.out && r.code !== 0 ? "last failed client request" : "last non-2xx client request in this step (may be an expected lookup)";
    lines.push(`${label}: ${last.method} ${last.path} -> ${last.status || "(no response)"}`);
    if (last.reqBody && last.method !== "GET") lines.push(`  request body: ${last.reqBody.replace(/\s+/g, " ").slice(0, 600)}`);
    lines.push(`  response body: ${last.resBody.replace(/\s+/g, " ").slice(0, 800) || "(empty)"}`);
    if (failed.length > 1) {
      lines.push(
        `  (${failed.length - 1} earlier non-2xx in this step: ${failed
          .slice(-6, -1)
          .map((x) => `${x.method} ${x.path.split("?")[0]} ${x.status}`)
          .join(", ")})`,
      );
    }
  } else {
    lines.push("no client request failed during this step (every exchange answered < 400)");
  }
  return lines;
}
const stepTerminals = new Set(); // process groups of tfTerminal() commands started by the current step
async function step(name, fn) {
  if (opts.only && !opts.only.test(name)) return;
  const mark = proxy.mark();
  const started = Date.now();
  let ok = true;
  let detail = [];
  try {
    await fn();
  } catch (e) {
    ok = false;
    detail = e instanceof StepError ? describeFailure(e, mark) : [`harness error: ${e.stack ?? e}`, ...describeFailure({ message: "" }, mark).slice(1)];
  } finally {
    // A terminal command a failed step left waiting (at a prompt) would hold its run and the workspace's queue.
    for (const pid of stepTerminals) if (groups.has(pid)) killGroup(pid, "SIGKILL");
    stepTerminals.clear();
  }
  const seconds = (Date.now() - started) / 1000;
  results.push({ name, ok, seconds, detail });
  console.log(`${ok ? "PASS" : "FAIL"}  ${seconds.toFixed(1).padStart(6)} s  ${name}`);
  for (const l of detail) console.log(`        ${l}`);
}

// ---------------------------------------------------------------- setup through the API
await step("setup: organisations and decoy workspaces (through the API)", async () => {
  // The CLI configuration's host block stands in for discovery; the document itself must map the same services.
  const disco = await fetch(`${service.base}/.well-known/terraform.json`).then((r) => r.json());
  for (const id of ["tfe.v2", "tfe.v2.1", "tfe.v2.2"])
    check(disco[id] === "/api/v2/", `/.well-known/terraform.json maps ${id} to ${JSON.stringify(disco[id])}`);
  // Local operations by default: these scenarios test state storage and locking with Terraform running here; the
  // remote-run scenarios use their own organisation and set each workspace's execution mode.
  for (const name of [ORG, OTHER_ORG]) {
    await apiOk("POST", "/organizations", {
      data: { type: "organizations", attributes: { name, email: `${name}@clients.test`, "default-execution-mode": "local" } },
    });
  }
  // Decoys: none of these may be listed by the tag-set or tag-map configurations.
  await createWorkspace(ORG, "decoy-one-tag", { tags: ["clients-app"] });
  await createWorkspace(OTHER_ORG, "decoy-other-org", { tags: ["clients-app", "clients-cli"], bindings: { env: "dev", team: "clients" } });
  await createWorkspace(ORG, "decoy-env-prod", { bindings: { env: "prod", team: "clients" } });
  await createWorkspace(ORG, "decoy-half", { bindings: { env: "dev" } });
  await createWorkspace(ORG, "decoy-flat", { tags: ["env", "team", "dev", "clients"] });
});

// ---------------------------------------------------------------- cloud block
const mainDir = fixture("cloud/main");
let mainWs = null;
const gen = (g, sleepSeconds = 0) => ["-var", `generation=${g}`, "-var", `sleep_seconds=${sleepSeconds}`];

await step("cloud: init creates the workspace", async () => {
  await tfOk(mainDir, ["init", "-input=false", "-no-color"]);
  const r = await api("GET", `/organizations/${ORG}/workspaces/cb-main`);
  check(r.status === 200, `after init, GET /organizations/${ORG}/workspaces/cb-main answered ${r.status} (expected the workspace): ${r.text.slice(0, 300)}`);
  mainWs = r.json.data;
});

await step("cloud: apply; state version, outputs and signed download URL through the API", async () => {
  await tfOk(mainDir, ["apply", "-auto-approve", "-input=false", "-no-color", ...gen(1)]);
  mainWs ??= await workspaceByName("cb-main");
  const { sv, bytes, state } = await currentState(mainWs.id);
  check(sv.attributes.status === "finalized", `current state version ${sv.id} status is ${sv.attributes.status}, expected finalized`);
  check(sv.attributes.serial === state.serial, `state version serial ${sv.attributes.serial} != downloaded state's serial ${state.serial}`);
  if (sv.attributes.lineage !== undefined)
    check(sv.attributes.lineage === state.lineage, `state version lineage ${sv.attributes.lineage} != state's ${state.lineage}`);
  const addrs = state.resources.map((r) => `${r.type}.${r.name}`).sort();
  check(sameSet(addrs, ["terraform_data.base", "terraform_data.slow"]), `downloaded state has resources ${addrs.join(", ")}`);
  check(state.outputs?.greeting?.value === "hello", `downloaded state's outputs: ${JSON.stringify(state.outputs)}`);
  const pulled = await tfOk(mainDir, ["state", "pull"]);
  check(
    md5(Buffer.from(pulled.out)) === md5(bytes) || JSON.stringify(JSON.parse(pulled.out)) === JSON.stringify(state),
    "`terraform state pull` differs from the state downloaded through the signed URL",
  );
  // Outputs through the API: the current state version's outputs.
  const outs = (await apiOk("GET", `/workspaces/${mainWs.id}/current-state-version-outputs`)).json.data;
  const byName = Object.fromEntries(outs.map((o) => [o.attributes.name, o.attributes]));
  check(sameSet(Object.keys(byName), ["greeting", "numbers", "object", "secret"]), `current-state-version-outputs lists ${Object.keys(byName).join(", ")}`);
  check(byName.greeting.value === "hello" && byName.greeting.sensitive === false, `output greeting: ${JSON.stringify(byName.greeting)}`);
  check(JSON.stringify(byName.numbers.value) === "[1,2,3]", `output numbers: ${JSON.stringify(byName.numbers)}`);
  check(byName.object.value?.slow === "generation-1", `output object: ${JSON.stringify(byName.object)}`);
  check(
    byName.secret.sensitive === true && byName.secret.value !== "s3cr3t",
    `output secret must be sensitive and its value not listed: ${JSON.stringify(byName.secret)}`,
  );
  const svOuts = (await apiOk("GET", `/state-versions/${sv.id}/outputs`)).json.data;
  check(svOuts.length === 4, `GET /state-versions/${sv.id}/outputs lists ${svOuts.length} outputs, expected 4`);
  const secretOut = svOuts.find((o) => o.attributes.name === "secret");
  const shown = (await apiOk("GET", `/state-version-outputs/${secretOut.id}`)).json.data.attributes;
  check(shown.value === "s3cr3t", `GET /state-version-outputs/${secretOut.id} (the sensitive output, read by id) value: ${JSON.stringify(shown.value)}`);
  const ws = (await apiOk("GET", `/workspaces/${mainWs.id}`)).json.data.attributes;
  check(ws.locked === false, "workspace still locked after apply");
});

await step("cloud: state list, output -json and a second plan with no changes", async () => {
  const list = await tfOk(mainDir, ["state", "list"]);
  check(sameSet(workspaceList(list.out), ["terraform_data.base", "terraform_data.slow"]), `terraform state list: ${list.out.trim()}`, list);
  const out = await tfOk(mainDir, ["output", "-json"]);
  const o = JSON.parse(out.out);
  check(
    o.greeting?.value === "hello" && JSON.stringify(o.numbers?.value) === "[1,2,3]" && o.object?.value?.slow === "generation-1",
    `terraform output -json: ${out.out.slice(0, 400)}`,
    out,
  );
  check(o.secret?.sensitive === true && o.secret?.value === "s3cr3t", `terraform output -json secret: ${JSON.stringify(o.secret)}`, out);
  const p = await planChanges(mainDir, gen(1));
  check(p.code === 0 && p.changes.length === 0, `second plan is not empty: ${planProblem(p)}`, p.result);
});

// Lock contention: a plan with -lock-timeout=0 fails while a long apply holds the lock, which the apply releases.
async function lockContention(dir, wsId, client) {
  const bg = tf(dir, ["apply", "-auto-approve", "-input=false", "-no-color", ...gen(2, 12)], { background: true, client });
  try {
    await waitFor("the long apply to lock the workspace", async () => (await api("GET", `/workspaces/${wsId}`)).json?.data?.attributes?.locked === true);
    const p = await tf(dir, ["plan", "-lock-timeout=0", "-input=false", "-no-color", ...gen(2)], { client });
    check(p.code !== 0, "plan -lock-timeout=0 succeeded while another apply held the lock", p);
    check(/state lock|locked/i.test(p.out), "plan -lock-timeout=0 failed, but not on the lock", p);
  } finally {
    const r = await bg.done;
    check(r.code === 0, `the long apply exited with ${r.code ?? r.signal}`, r);
  }
  const ws = (await apiOk("GET", `/workspaces/${wsId}`)).json.data.attributes;
  check(ws.locked === false, `after the long apply the workspace is still locked (${JSON.stringify(ws["locked-by"] ?? null)})`);
  const p2 = await planChanges(dir, ["-lock-timeout=0", ...gen(2)], { client });
  check(p2.code === 0 && p2.changes.length === 0, `plan after the apply: ${planProblem(p2)}`, p2.result);
}

// kill -9 mid-apply leaves the workspace locked (plans fail on the lock) until `force-unlock <org>/<workspace>`.
async function killThenForceUnlock(dir, wsId, lockId, client) {
  const bg = tf(dir, ["apply", "-auto-approve", "-input=false", "-no-color", ...gen(3, 120)], { background: true, timeoutMs: 150_000, client });
  try {
    await waitFor("the apply to lock the workspace", async () => (await api("GET", `/workspaces/${wsId}`)).json?.data?.attributes?.locked === true);
    await waitFor("the apply to reach the provisioner", async () => /Provisioning with 'local-exec'|Still creating/.test(bg.output()));
  } finally {
    killGroup(bg.pgid, "SIGKILL");
  }
  const killed = await bg.done;
  check(killed.signal === "SIGKILL", `${client.name} apply was not killed (exit ${killed.code})`, killed);
  const locked = (await apiOk("GET", `/workspaces/${wsId}`)).json.data.attributes;
  check(locked.locked === true, "after kill -9 the workspace is not locked any more (the lock must stay until force-unlock)");
  const blocked = await tf(dir, ["plan", "-lock-timeout=0", "-input=false", "-no-color", ...gen(3)], { client });
  check(blocked.code !== 0 && /state lock|locked/i.test(blocked.out), "plan after kill -9 did not fail on the lock", blocked);
  await tfOk(dir, ["force-unlock", "-force", lockId], { client });
  const unlocked = (await apiOk("GET", `/workspaces/${wsId}`)).json.data.attributes;
  check(unlocked.locked === false, "after force-unlock the workspace is still locked");
  await tfOk(dir, ["apply", "-auto-approve", "-input=false", "-no-color", ...gen(3)], { client });
  const p = await planChanges(dir, gen(3), { client });
  check(p.code === 0 && p.changes.length === 0, `plan after recovery: ${planProblem(p)}`, p.result);
}

await step("cloud: lock contention (plan -lock-timeout=0 during a long apply fails; the lock is released)", async () => {
  await lockContention(mainDir, mainWs.id, TF);
});

await step("cloud: kill -9 mid-apply leaves the lock; force-unlock clears it", async () => {
  await killThenForceUnlock(mainDir, mainWs.id, `${ORG}/cb-main`, TF);
});

await step("cloud: migration of an existing local state into the cloud block", async () => {
  const dir = fixture("cloud/migrate-local", "migrate");
  await tfOk(dir, ["init", "-input=false", "-no-color"]);
  await tfOk(dir, ["apply", "-auto-approve", "-input=false", "-no-color"]);
  const local = JSON.parse(readFileSync(join(dir, "terraform.tfstate"), "utf8"));
  cpSync(join(fixtures, "cloud", "migrate-cloud", "main.tf"), join(dir, "main.tf"));
  // -force-copy is refused for HCP Terraform migrations: answer the interactive prompt ("copy existing state?");
  // -migrate-state is refused too: a plain init finds the local state and asks.
  const mig = await tf(dir, ["init", "-no-color"], { input: "yes\nyes\n" });
  check(mig.code === 0, `\`${mig.cmd}\` (answering "yes" to the migration prompt) exited with ${mig.code ?? mig.signal}`, mig);
  const ws = await workspaceByName("cb-migrated");
  const { state } = await currentState(ws.id);
  const upload = proxy.records.filter((x) => x.method === "POST" && x.path.startsWith(`/api/v2/workspaces/${ws.id}/state-versions`)).at(-1);
  const sentLineage = (/"lineage":"([^"]+)"/.exec(upload?.reqBody ?? "") ?? [])[1];
  check(state.lineage === sentLineage, `stored state lineage ${state.lineage} != the lineage terraform uploaded (${sentLineage})`);
  // (Terraform 1.11 gives the migrated state a new lineage itself, so the local lineage is not compared.)
  check(JSON.stringify(state.resources) === JSON.stringify(local.resources), "migrated state's resources differ from the local state's");
  check(state.outputs?.answer?.value === 42, `migrated outputs: ${JSON.stringify(state.outputs)}`);
  const p = await planChanges(dir);
  check(p.code === 0 && p.changes.length === 0, `plan after migration: ${planProblem(p)}`, p.result);
});

// Tag strategies: init creates the first workspace (its name given at the prompt), `workspace new` a second;
// `workspace list` must show exactly those (decoys left out); select; delete.
async function tagScenario({ fixtureName, first, second, checkTags }) {
  const dir = fixture(fixtureName);
  const init = await tf(dir, ["init", "-no-color"], { input: `${first}\n` });
  check(init.code === 0, `\`${init.cmd}\` (answering "${first}" at the workspace-name prompt) exited with ${init.code ?? init.signal}`, init);
  await checkTags(await workspaceByName(first));
  const nw = await tfOk(dir, ["workspace", "new", "-no-color", second]);
  await checkTags(await workspaceByName(second));
  let list = await tfOk(dir, ["workspace", "list", "-no-color"]);
  check(
    sameSet(workspaceList(list.out), [first, second]),
    `terraform workspace list shows [${workspaceList(list.out).join(", ")}], expected exactly [${first}, ${second}]`,
    list,
  );
  await tfOk(dir, ["workspace", "select", "-no-color", first]);
  const shown = await tfOk(dir, ["workspace", "show", "-no-color"]);
  check(shown.out.trim() === first, `terraform workspace show: ${shown.out.trim()}`, shown);
  await tfOk(dir, ["apply", "-auto-approve", "-input=false", "-no-color"]);
  await tfOk(dir, ["workspace", "delete", "-no-color", second], { env: {} });
  const gone = await api("GET", `/organizations/${ORG}/workspaces/${second}`);
  check(gone.status === 404, `after workspace delete, GET /organizations/${ORG}/workspaces/${second} answered ${gone.status}`);
  list = await tfOk(dir, ["workspace", "list", "-no-color"]);
  check(sameSet(workspaceList(list.out), [first]), `terraform workspace list after delete shows [${workspaceList(list.out).join(", ")}]`, list);
  void nw;
}

await step("cloud: tag set with workspace new/list/select/delete (decoys not listed)", async () => {
  await tagScenario({
    fixtureName: "cloud/tag-set",
    first: "ts-one",
    second: "ts-two",
    checkTags: async (ws) => {
      const names = ws.attributes["tag-names"] ?? [];
      check(
        ["clients-app", "clients-cli"].every((t) => names.includes(t)),
        `workspace ${ws.attributes.name} tag-names ${JSON.stringify(names)}, expected clients-app and clients-cli`,
      );
    },
  });
});

await step("cloud: key-value tag map with workspace new/list/select/delete (decoys not listed)", async () => {
  await tagScenario({
    fixtureName: "cloud/tag-map",
    first: "kv-one",
    second: "kv-two",
    checkTags: async (ws) => {
      const b = (await apiOk("GET", `/workspaces/${ws.id}/tag-bindings`)).json.data.map((x) => x.attributes);
      const got = Object.fromEntries(b.map((x) => [x.key, x.value]));
      check(got.env === "dev" && got.team === "clients", `workspace ${ws.attributes.name} tag bindings ${JSON.stringify(got)}, expected env=dev, team=clients`);
    },
  });
});

await step("cloud: a state of several MB round-tripped with its md5 checked", async () => {
  const dir = fixture("cloud/big");
  const blob = randomBytes(1536 * 1024).toString("hex"); // 3 MiB of text; the state holds it twice
  writeFileSync(join(dir, "big.txt"), blob);
  await tfOk(dir, ["init", "-input=false", "-no-color"]);
  const mark = proxy.mark();
  await tfOk(dir, ["apply", "-auto-approve", "-input=false", "-no-color"]);
  const ws = await workspaceByName("cb-big");
  const create = proxy.records.filter((x) => x.seq > mark && x.method === "POST" && x.path.startsWith(`/api/v2/workspaces/${ws.id}/state-versions`)).at(-1);
  check(create && create.status === 201, `no successful POST /api/v2/workspaces/${ws.id}/state-versions from terraform (got ${create?.status})`);
  const sentMd5 = (/"md5":"([0-9a-f]{32})"/.exec(create.reqBody) ?? [])[1];
  check(sentMd5, `could not read the md5 terraform sent in POST .../state-versions: ${create.reqBody.slice(0, 300)}`);
  const { bytes, state } = await currentState(ws.id);
  check(bytes.length > 5 * 1024 * 1024, `downloaded state is ${bytes.length} bytes, expected more than 5 MiB`);
  check(
    md5(bytes) === sentMd5,
    `md5 of the state downloaded through the signed URL ${md5(bytes)} != md5 terraform uploaded ${sentMd5} (${bytes.length} bytes)`,
  );
  const attr = state.resources?.[0]?.instances?.[0]?.attributes?.input; // terraform_data: { value, type }
  const input = typeof attr === "object" && attr !== null ? attr.value : attr;
  check(input === blob, `the big attribute came back different (md5 ${md5(String(input))} vs ${md5(blob)})`);
  // `state pull` prints the state and one more newline: compare without trailing newlines.
  const pulled = await tfOk(dir, ["state", "pull"]);
  const trimmed = (b) => md5(b.toString("utf8").replace(/\n+$/, ""));
  check(
    trimmed(Buffer.from(pulled.out)) === trimmed(bytes),
    `\`terraform state pull\` (md5 ${md5(Buffer.from(pulled.out))}) differs from the state downloaded through the signed URL (md5 ${md5(bytes)})`,
    pulled,
  );
  const p = await planChanges(dir);
  check(p.code === 0 && p.changes.length === 0, `plan after the big apply: ${planProblem(p)}`, p.result);
});

// ---------------------------------------------------------------- tfe provider
const provDir = fixture("provider/v1", "provider");
let ids = {};
const getWs = async (id) => (await apiOk("GET", `/workspaces/${id}`)).json.data;

// The provider's own exchanges about its workspace: shown when a provider step fails without an HTTP error.
let provApplyMark = 0; // proxy mark before the last provider apply
const wsRelated = () => [
  {
    label: "the provider's writes of its workspace during the last apply",
    since: provApplyMark,
    all: true,
    match: (x) =>
      x.method !== "GET" &&
      (x.path.split("?")[0] === `/api/v2/organizations/${ORG}/workspaces` || (ids.workspace && x.path.startsWith(`/api/v2/workspaces/${ids.workspace}`))),
  },
  {
    label: "the provider's last read of the workspace",
    since: 0,
    match: (x) => x.method === "GET" && ids.workspace && x.path.split("?")[0] === `/api/v2/workspaces/${ids.workspace}`,
    pick: ["tag-names", "execution-mode", "terraform-version"],
  },
];

// Checks the API against the configuration `v` (the attributes v1 / v2 set).
async function checkProviderObjects(v) {
  const res = await stateResources(provDir);
  ids = {
    project: res["tfe_project.main"]?.id,
    workspace: res["tfe_workspace.main"]?.id,
    writers: res["tfe_team.writers"]?.id,
    custom: res["tfe_team.custom"]?.id,
    accessWriters: res["tfe_team_access.writers"]?.id,
    accessCustom: res["tfe_team_access.custom"]?.id,
    projectAccess: res["tfe_team_project_access.writers"]?.id,
  };
  for (const [k, id] of Object.entries(ids)) check(id, `no ${k} id in the provider's state`);
  const problems = [];
  const expect = (what, got, want) => {
    if (canon(got) !== canon(want)) problems.push(`${what}: API has ${JSON.stringify(got)}, configuration says ${JSON.stringify(want)}`);
  };
  const project = (await apiOk("GET", `/projects/${ids.project}`)).json.data;
  expect("project name", project.attributes.name, v.projectName);
  expect("project description", project.attributes.description, v.projectDescription);
  const ws = await getWs(ids.workspace);
  const a = ws.attributes;
  expect("workspace description", a.description, v.description);
  expect("workspace auto-apply", a["auto-apply"], v.autoApply);
  expect("workspace working-directory", a["working-directory"], v.workingDirectory);
  expect("workspace terraform-version", a["terraform-version"], v.terraformVersion);
  expect("workspace project", ws.relationships?.project?.data?.id, ids.project);
  expect("workspace execution-mode", a["execution-mode"], v.executionMode);
  expect("workspace tag-names (sorted)", [...(a["tag-names"] ?? [])].sort(), [...v.tagNames].sort());
  const bindings = (await apiOk("GET", `/workspaces/${ids.workspace}/tag-bindings`)).json.data.map((x) => x.attributes);
  const kv = Object.fromEntries(bindings.filter((b) => b.value !== undefined && b.value !== null && b.value !== "").map((b) => [b.key, b.value]));
  expect("workspace tag bindings with a value", kv, v.tags);
  const ta = (await apiOk("GET", `/team-workspaces/${ids.accessWriters}`)).json.data.attributes;
  expect("team access (writers) access", ta.access, v.writersAccess);
  const tc = (await apiOk("GET", `/team-workspaces/${ids.accessCustom}`)).json.data.attributes;
  expect("team access (custom) access", tc.access, "custom");
  for (const [k, want] of Object.entries(v.custom)) expect(`team access (custom) ${k}`, tc[k], want);
  const tp = (await apiOk("GET", `/team-projects/${ids.projectAccess}`)).json.data.attributes;
  expect("team project access", tp.access, v.projectAccess);
  check(problems.length === 0, `the API disagrees with the applied configuration: ${problems.join("; ")}`, undefined, wsRelated());
}
const V1 = {
  projectName: "clients-provider",
  projectDescription: "Project managed by terraform-provider-tfe",
  description: "Workspace managed by terraform-provider-tfe",
  autoApply: true,
  workingDirectory: "infra/app",
  terraformVersion: "1.11.4",
  executionMode: "local",
  tagNames: ["clients-prov", "blue"],
  tags: { stage: "prov-dev", owner: "clients" },
  writersAccess: "write",
  custom: { runs: "plan", variables: "read", "state-versions": "read-outputs", "sentinel-mocks": "none", "workspace-locking": false, "run-tasks": false },
  projectAccess: "maintain",
};
const V2 = {
  ...V1,
  projectName: "clients-provider-2",
  projectDescription: "Project managed by terraform-provider-tfe, changed",
  description: "Workspace managed by terraform-provider-tfe, changed",
  autoApply: false,
  workingDirectory: "infra/app2",
  terraformVersion: "~> 1.10.0",
  executionMode: "remote",
  tagNames: ["clients-prov", "green"],
  tags: { stage: "prov-dev", owner: "platform" },
  writersAccess: "read",
  custom: { runs: "apply", variables: "write", "state-versions": "read", "sentinel-mocks": "read", "workspace-locking": true, "run-tasks": false },
  projectAccess: "write",
};

await step("provider: apply (project, workspace, settings, teams, team access, project access, data sources)", async () => {
  // With dev_overrides there is nothing for `terraform init` to install: plan and apply run without it.
  provApplyMark = proxy.mark();
  await tfOk(provDir, ["apply", "-auto-approve", "-input=false", "-no-color"]);
});

await step("provider: every resource matches the API", async () => {
  await checkProviderObjects(V1);
});

await step("provider: data sources (tfe_workspace, tfe_workspace_ids, tfe_project, tfe_outputs)", async () => {
  const r = await tfOk(provDir, ["output", "-json"]);
  const o = JSON.parse(r.out);
  const problems = [];
  const d = o.data_workspace?.value ?? {};
  if (d.id !== ids.workspace) problems.push(`data.tfe_workspace id ${d.id} != ${ids.workspace}`);
  if (d.description !== V1.description) problems.push(`data.tfe_workspace description ${JSON.stringify(d.description)}`);
  if (d.project_id !== ids.project) problems.push(`data.tfe_workspace project_id ${d.project_id}`);
  if (d.working_directory !== V1.workingDirectory) problems.push(`data.tfe_workspace working_directory ${d.working_directory}`);
  if (!sameSet(d.tag_names ?? [], V1.tagNames)) problems.push(`data.tfe_workspace tag_names ${JSON.stringify(d.tag_names)}`);
  const all = (await apiOk("GET", `/organizations/${ORG}/workspaces?page%5Bsize%5D=100`)).json.data;
  const wantAll = Object.fromEntries(all.map((w) => [w.attributes.name, w.id]));
  if (JSON.stringify(Object.entries(o.all_ids?.value ?? {}).sort()) !== JSON.stringify(Object.entries(wantAll).sort())) {
    problems.push(`tfe_workspace_ids names=["*"]: ${JSON.stringify(o.all_ids?.value)}, the API lists ${JSON.stringify(wantAll)}`);
  }
  if (JSON.stringify(o.by_tag_ids?.value) !== JSON.stringify({ "prov-main": ids.workspace }))
    problems.push(`tfe_workspace_ids tag_names=["clients-prov"]: ${JSON.stringify(o.by_tag_ids?.value)}`);
  if (JSON.stringify(o.by_binding_ids?.value) !== JSON.stringify({ "prov-main": ids.workspace }))
    problems.push(`tfe_workspace_ids tag_filters stage=prov-dev: ${JSON.stringify(o.by_binding_ids?.value)}`);
  const p = o.data_project?.value ?? {};
  if (p.id !== ids.project) problems.push(`data.tfe_project id ${p.id} != ${ids.project}`);
  if (!sameSet(p.workspace_ids ?? [], [ids.workspace])) problems.push(`data.tfe_project workspace_ids ${JSON.stringify(p.workspace_ids)}`);
  const other = o.other_outputs?.value ?? {};
  if (other.answer !== 42 || other.migrated !== "local-first") problems.push(`data.tfe_outputs (cb-migrated) values ${JSON.stringify(other)}`);
  check(problems.length === 0, problems.join("; "), r, wsRelated());
});

await step("provider: a second plan shows no changes", async () => {
  const p = await planChanges(provDir);
  check(p.code === 0 && p.changes.length === 0, `the second plan is not empty: ${planProblem(p)}`, p.result, wsRelated());
});

await step("provider: a changed configuration applied and checked against the API", async () => {
  cpSync(join(fixtures, "provider", "v2", "main.tf"), join(provDir, "main.tf"));
  provApplyMark = proxy.mark();
  await tfOk(provDir, ["apply", "-auto-approve", "-input=false", "-no-color"]);
  await checkProviderObjects(V2);
  const p = await planChanges(provDir);
  check(p.code === 0 && p.changes.length === 0, `the plan after the change is not empty: ${planProblem(p)}`, p.result, wsRelated());
});

await step("provider: destroy, with every resource gone afterwards", async () => {
  await tfOk(provDir, ["destroy", "-auto-approve", "-input=false", "-no-color"]);
  const paths = {
    project: `/projects/${ids.project}`,
    workspace: `/workspaces/${ids.workspace}`,
    "team writers": `/teams/${ids.writers}`,
    "team custom": `/teams/${ids.custom}`,
    "team access writers": `/team-workspaces/${ids.accessWriters}`,
    "team access custom": `/team-workspaces/${ids.accessCustom}`,
    "team project access": `/team-projects/${ids.projectAccess}`,
  };
  const missing = Object.entries(ids)
    .filter(([, id]) => !id)
    .map(([k]) => k);
  check(missing.length === 0, `the provider's state never held ids for: ${missing.join(", ")} (an earlier provider step failed)`);
  const left = [];
  for (const [what, path] of Object.entries(paths)) {
    const r = await api("GET", path);
    if (r.status !== 404) left.push(`${what} (GET /api/v2${path} -> ${r.status})`);
  }
  check(left.length === 0, `still there after destroy: ${left.join(", ")}`);
});

// ---------------------------------------------------------------- tfe provider: variables and variable sets
const varsDir = fixture("provider/variables", "provider-variables");
const varsIds = {};

await step("provider: variables and a variable set applied and checked against the API (sensitive value never shown)", async () => {
  await tfOk(varsDir, ["apply", "-auto-approve", "-input=false", "-no-color"]);
  const res = await stateResources(varsDir);
  varsIds.workspace = res["tfe_workspace.vars"]?.id;
  varsIds.set = res["tfe_variable_set.shared"]?.id;
  check(varsIds.workspace && varsIds.set, "no workspace or variable set id in the provider's state");
  const vars = (await apiOk("GET", `/workspaces/${varsIds.workspace}/vars`)).json.data.map((v) => v.attributes);
  const byKey = Object.fromEntries(vars.map((v) => [v.key, v]));
  const problems = [];
  const want = {
    region: ["eu-west-1", "terraform", false, false],
    TF_LOG: ["info", "env", false, false],
    sizes: ["[1, 2, 3]", "terraform", true, false],
    db_password: [null, "terraform", false, true],
  };
  for (const [key, [value, category, hcl, sensitive]] of Object.entries(want)) {
    const v = byKey[key];
    if (!v) problems.push(`variable ${key} missing`);
    else if (v.value !== value || v.category !== category || v.hcl !== hcl || v.sensitive !== sensitive) problems.push(`variable ${key}: ${JSON.stringify(v)}`);
  }
  if (vars.length !== 4) problems.push(`${vars.length} workspace variables, want 4`);
  const set = (await apiOk("GET", `/varsets/${varsIds.set}`)).json.data;
  if (set.attributes.name !== "clients-shared") problems.push(`variable set name ${set.attributes.name}`);
  const applied = (await apiOk("GET", `/workspaces/${varsIds.workspace}/varsets`)).json.data.map((x) => x.id);
  if (!applied.includes(varsIds.set)) problems.push(`the set is not applied to the workspace: ${JSON.stringify(applied)}`);
  const setVars = (await apiOk("GET", `/varsets/${varsIds.set}/relationships/vars`)).json.data.map((v) => `${v.attributes.key}=${v.attributes.value}`);
  if (JSON.stringify(setVars) !== JSON.stringify(["SHARED_FLAG=yes"])) problems.push(`the set's variables: ${JSON.stringify(setVars)}`);
  const raw = JSON.stringify((await apiOk("GET", `/workspaces/${varsIds.workspace}/all-vars`)).json);
  if (raw.includes("clients-s3cret-value")) problems.push("the sensitive value appears in /all-vars");
  check(problems.length === 0, problems.join("; "));
});

await step("provider: variables, a second plan shows no changes", async () => {
  const p = await planChanges(varsDir);
  check(p.code === 0 && p.changes.length === 0, `the second plan is not empty: ${planProblem(p)}`, p.result);
});

await step("provider: variables destroyed, the workspace and the set gone", async () => {
  await tfOk(varsDir, ["destroy", "-auto-approve", "-input=false", "-no-color"]);
  const left = [];
  for (const path of [`/workspaces/${varsIds.workspace}`, `/varsets/${varsIds.set}`]) {
    const r = await api("GET", path);
    if (r.status !== 404) left.push(`GET /api/v2${path} -> ${r.status}`);
  }
  check(left.length === 0, `still there after destroy: ${left.join(", ")}`);
});

// ---------------------------------------------------------------- cloud block: destroy (last: tfe_outputs read cb-migrated, not cb-main)
await step("cloud: destroy", async () => {
  await tfOk(mainDir, ["destroy", "-auto-approve", "-input=false", "-no-color", ...gen(3)]);
  const list = await tfOk(mainDir, ["state", "list"]);
  check(list.out.trim() === "", `terraform state list after destroy: ${list.out.trim()}`, list);
  const { state } = await currentState(mainWs.id);
  check((state.resources ?? []).length === 0, `the current state still has resources: ${state.resources.map((r) => `${r.type}.${r.name}`).join(", ")}`);
  const outs = (await apiOk("GET", `/workspaces/${mainWs.id}/current-state-version-outputs`)).json.data;
  check(outs.length === 0, `current-state-version-outputs after destroy lists ${outs.map((o) => o.attributes.name).join(", ")}`);
  const ws = (await apiOk("GET", `/workspaces/${mainWs.id}`)).json.data.attributes;
  check(ws.locked === false, "workspace locked after destroy");
});

// ---------------------------------------------------------------- OpenTofu: cloud block
const tofuDir = fixture("tofu/main", "tofu-main");
let tofuWs = null;
const tofuResources = ["terraform_data.base", "terraform_data.slow"];
// The resource addresses a plan creates (its `changes` lines: "<address> <actions>: ...", outputs left out).
const created = (p) => p.changes.filter((c) => !c.startsWith("output ") && / create: /.test(c)).map((c) => c.split(" ")[0]);

await step("tofu: init creates the workspace", async () => {
  await tfOk(tofuDir, ["init", "-input=false", "-no-color"], { client: TOFU });
  const r = await api("GET", `/organizations/${ORG}/workspaces/tofu-main`);
  check(
    r.status === 200,
    `after tofu init, GET /organizations/${ORG}/workspaces/tofu-main answered ${r.status} (expected the workspace): ${r.text.slice(0, 300)}`,
  );
  tofuWs = r.json.data;
});

await step("tofu: plan -out, apply of the saved plan; state version, state pull and outputs through the API", async () => {
  tofuWs ??= await workspaceByName("tofu-main");
  const p = await planChanges(tofuDir, gen(1), { client: TOFU });
  check(p.code === 2 && sameSet(created(p), tofuResources), `tofu plan should create ${tofuResources.join(", ")}: ${planProblem(p)}`, p.result);
  await tfOk(tofuDir, ["apply", "-input=false", "-no-color", p.planFile], { client: TOFU });
  const { sv, bytes, state } = await currentState(tofuWs.id);
  check(sv.attributes.status === "finalized", `current state version ${sv.id} status is ${sv.attributes.status}, expected finalized`);
  check(sv.attributes.serial === state.serial, `state version serial ${sv.attributes.serial} != downloaded state's serial ${state.serial}`);
  const addrs = (state.resources ?? []).map((r) => `${r.type}.${r.name}`);
  check(sameSet(addrs, tofuResources), `downloaded state has resources ${addrs.join(", ")}`);
  check(state.outputs?.greeting?.value === "hello from tofu", `downloaded state's outputs: ${JSON.stringify(state.outputs)}`);
  const pulled = await tfOk(tofuDir, ["state", "pull"], { client: TOFU });
  check(
    md5(Buffer.from(pulled.out)) === md5(bytes) || JSON.stringify(JSON.parse(pulled.out)) === JSON.stringify(state),
    "`tofu state pull` differs from the state downloaded through the signed URL",
    pulled,
  );
  const outs = (await apiOk("GET", `/workspaces/${tofuWs.id}/current-state-version-outputs`)).json.data;
  const byName = Object.fromEntries(outs.map((o) => [o.attributes.name, o.attributes]));
  check(sameSet(Object.keys(byName), ["greeting", "object", "secret"]), `current-state-version-outputs lists ${Object.keys(byName).join(", ")}`);
  check(byName.object.value?.slow === "generation-1", `output object: ${JSON.stringify(byName.object)}`);
  check(
    byName.secret.sensitive === true && byName.secret.value !== "t0fu-s3cr3t",
    `output secret must be sensitive, its value not listed: ${JSON.stringify(byName.secret)}`,
  );
  const ws = (await apiOk("GET", `/workspaces/${tofuWs.id}`)).json.data.attributes;
  check(ws.locked === false, "workspace still locked after tofu apply");
});

await step("tofu: state list, output -json and a second plan with no changes", async () => {
  const list = await tfOk(tofuDir, ["state", "list"], { client: TOFU });
  check(sameSet(workspaceList(list.out), tofuResources), `tofu state list: ${list.out.trim()}`, list);
  const out = await tfOk(tofuDir, ["output", "-json"], { client: TOFU });
  const o = JSON.parse(out.out);
  check(o.greeting?.value === "hello from tofu" && o.object?.value?.slow === "generation-1", `tofu output -json: ${out.out.slice(0, 400)}`, out);
  check(o.secret?.sensitive === true && o.secret?.value === "t0fu-s3cr3t", `tofu output -json secret: ${JSON.stringify(o.secret)}`, out);
  const p = await planChanges(tofuDir, gen(1), { client: TOFU });
  check(p.code === 0 && p.changes.length === 0, `second tofu plan is not empty: ${planProblem(p)}`, p.result);
});

await step("tofu: lock contention (plan -lock-timeout=0 during a long apply fails; the lock is released)", async () => {
  await lockContention(tofuDir, tofuWs.id, TOFU);
});

await step("tofu: kill -9 mid-apply leaves the lock; force-unlock clears it", async () => {
  await killThenForceUnlock(tofuDir, tofuWs.id, `${ORG}/tofu-main`, TOFU);
});

// ---------------------------------------------------------------- OpenTofu: state and plan encryption
// The service stores what tofu uploads: the encrypted envelope ({ serial, lineage, meta, encrypted_data,
// encryption_version }), whose resources it cannot read. Only tofu with the passphrase reads the state.
const encDir = fixture("tofu/encrypted", "tofu-encrypted");
const encEnv = { TF_VAR_passphrase: "clients-tofu-passphrase-0123456789" };
const encResources = ["terraform_data.first", "terraform_data.second"];
let encWs = null;
// `tofu state pull` decrypts (it prints the state in plain text); resolves the parsed state.
async function encPull() {
  const r = await tfOk(encDir, ["state", "pull"], { client: TOFU, env: encEnv });
  let state;
  try {
    state = JSON.parse(r.out);
  } catch (e) {
    check(false, `tofu state pull printed no JSON state: ${e.message}`, r);
  }
  const addrs = (state.resources ?? []).map((x) => `${x.type}.${x.name}`);
  check(sameSet(addrs, encResources), `tofu state pull (with the passphrase) lists resources [${addrs.join(", ")}]`, r);
  return state;
}
// The raw current state through the API's signed download URL: the encrypted envelope, no plain text in it.
async function checkEnvelope() {
  const { sv, bytes, state } = await currentState(encWs.id);
  check(
    typeof state.encryption_version === "string" && typeof state.encrypted_data === "string" && state.meta,
    `the stored state is not an OpenTofu encrypted envelope (keys: ${Object.keys(state).join(", ")})`,
  );
  check(state.resources === undefined && state.outputs === undefined, "the stored state has plain resources or outputs next to the encrypted data");
  const text = bytes.toString("utf8");
  for (const plain of ["tofu-enc-first-value", "tofu-enc-second-value", "terraform_data"])
    check(!text.includes(plain), `the stored state contains "${plain}" in plain text`);
  check(sv.attributes.serial === state.serial, `state version serial ${sv.attributes.serial} != the envelope's serial ${state.serial}`);
  return state;
}

await step("tofu encryption: init, plan -out (encrypted plan file) and apply with pbkdf2 and aes_gcm; two resources", async () => {
  await tfOk(encDir, ["init", "-input=false", "-no-color"], { client: TOFU, env: encEnv });
  encWs = await workspaceByName("tofu-encrypted");
  const p = await planChanges(encDir, [], { client: TOFU, env: encEnv });
  check(p.code === 2 && sameSet(created(p), encResources), `tofu plan should create ${encResources.join(", ")}: ${planProblem(p)}`, p.result);
  // A plain plan file is a zip archive ("PK"); an encrypted one is a JSON envelope.
  const planBytes = readFileSync(p.planFile);
  let envelope = null;
  try {
    envelope = JSON.parse(planBytes.toString("utf8"));
  } catch {}
  check(
    planBytes.subarray(0, 2).toString() !== "PK" && typeof envelope?.encryption_version === "string",
    `the saved plan ${p.planFile} is not encrypted (starts with ${JSON.stringify(planBytes.subarray(0, 8).toString("latin1"))})`,
  );
  await tfOk(encDir, ["apply", "-input=false", "-no-color", p.planFile], { client: TOFU, env: encEnv });
  const list = await tfOk(encDir, ["state", "list"], { client: TOFU, env: encEnv });
  check(sameSet(workspaceList(list.out), encResources), `tofu state list: ${list.out.trim()}`, list);
  const ws = (await apiOk("GET", `/workspaces/${encWs.id}`)).json.data.attributes;
  check(ws.locked === false, "workspace still locked after tofu apply");
});

await step("tofu encryption: the API serves the encrypted envelope; state pull decrypts it with the passphrase, not a wrong one", async () => {
  const envelope = await checkEnvelope();
  const state = await encPull();
  check(
    state.lineage === envelope.lineage && state.serial === envelope.serial,
    `decrypted lineage/serial ${state.lineage}/${state.serial} != the envelope's ${envelope.lineage}/${envelope.serial}`,
  );
  // The outputs as the decrypted state holds them (`tofu output` reads current-state-version-outputs instead,
  // which the service derives from the stored state, here the envelope).
  check(
    JSON.stringify(state.outputs?.names?.value) === JSON.stringify(["tofu-enc-first-value", "tofu-enc-second-value"]),
    `the decrypted state's outputs: ${JSON.stringify(state.outputs)}`,
  );
  const wrong = await tf(encDir, ["state", "pull"], { client: TOFU, env: { TF_VAR_passphrase: "not-the-right-passphrase-at-all" } });
  check(wrong.code !== 0, "tofu state pull with a wrong passphrase succeeded: the state is not encrypted with the passphrase", wrong);
  const p = await planChanges(encDir, [], { client: TOFU, env: encEnv });
  check(p.code === 0 && p.changes.length === 0, `second tofu plan is not empty: ${planProblem(p)}`, p.result);
});

// Last of the scenario: a safe delete the service answered with 204 would delete the workspace.
await step("tofu encryption: safe delete refused (409) for state the service cannot read; workspace and state kept", async () => {
  const r = await api("POST", `/workspaces/${encWs.id}/actions/safe-delete`);
  check(
    r.status === 409 && r.json?.errors?.[0]?.status === "409",
    `POST /api/v2/workspaces/${encWs.id}/actions/safe-delete answered ${r.status} (expected 409: the encrypted state's resources cannot be counted): ${r.text.slice(0, 400)}`,
  );
  const ws = await api("GET", `/workspaces/${encWs.id}`);
  check(ws.status === 200, `after the refused safe delete, GET /api/v2/workspaces/${encWs.id} answered ${ws.status}`);
  await checkEnvelope();
  await encPull();
});

// ---------------------------------------------------------------- remote runs
// Terraform's `cloud` block with remote operations. Workspaces in `remote` execution mode are run by the service's
// own agent (started by `npm start`, given the stand-in's mirror in AGENT_PLUGIN_MIRROR); a workspace in `agent`
// mode by an agent process of an organisation agent pool started here (`npm run agent`). The configurations use
// null_resource (test/clients/null-provider), installed on both sides from the same filesystem mirror, so the hashes
// in the uploaded .terraform.lock.hcl match. A separate organisation, so `--only remote` runs on its own.
const REMOTE_ORG = "clients-remote";
const remoteEnv = { TF_CLOUD_ORGANIZATION: REMOTE_ORG };
const remote = { dir: null, ws: null, cancelDir: null, cancelWs: null, pool: null, agentWs: null, agent: null };
const serviceRoot = process.env.CLIENTS_SERVICE_ROOT || root;
const shq = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;

// Terraform in a pseudo-terminal (util-linux `script`), so it prompts as it does for a person: `type(text)` sends
// keystrokes ("\x03" is Ctrl-C, which the terminal turns into SIGINT for terraform). As tf() with `background`;
// `output()` has the terminal's carriage returns removed.
function tfTerminal(dir, args, { env = {}, timeoutMs = TF_TIMEOUT_MS } = {}) {
  const cmd = `terraform ${args.join(" ")} (in a terminal)`;
  const logFile = join(work, "logs", `${String(++cmdSeq).padStart(3, "0")}-${args[0]}-tty.log`);
  const child = spawn("script", ["-qfec", [TF.path, ...args].map(shq).join(" "), "/dev/null"], {
    cwd: dir,
    env: { ...TF.env, ...env },
    detached: true,
    stdio: ["pipe", "pipe", "pipe"],
  });
  if (child.pid) {
    groups.add(child.pid);
    stepTerminals.add(child.pid);
  }
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  child.stdin.on("error", () => {});
  const timer = setTimeout(() => killGroup(child.pid, "SIGKILL"), timeoutMs);
  const clean = () => out.replace(/\r/g, "");
  const done = new Promise((resolve) => {
    child.on("error", (e) => (out += `\n(spawn error: ${e.message})`));
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      groups.delete(child.pid);
      child.stdin.destroy();
      writeFileSync(logFile, `$ (cd ${dir} && ${cmd})\n${clean()}\n(exit ${code ?? signal})\n`);
      resolve({ code, signal, out: clean(), cmd, logFile });
    });
  });
  return { child, pgid: child.pid, done, output: clean, type: (text) => child.stdin.write(text), cmd, logFile };
}
// Waits until a background command's output matches `re` at least `count` times; fails with its output so far.
async function waitOutput(bg, re, what, count = 1, timeoutMs = 120_000) {
  const g = new RegExp(re.source, `${re.flags.replace("g", "")}g`);
  let exited = null;
  bg.done.then((r) => (exited = r));
  const until = Date.now() + timeoutMs;
  for (;;) {
    if ((bg.output().match(g) ?? []).length >= count) return;
    if (exited) check(false, `\`${exited.cmd}\` exited (${exited.code ?? exited.signal}) before ${what}`, exited);
    if (Date.now() > until) {
      killGroup(bg.pgid, "SIGKILL");
      check(false, `timed out after ${timeoutMs / 1000} s waiting for ${what}`, await bg.done);
    }
    await sleep(100);
  }
}
const PROMPT = /Enter a value:/;

// The run a command created: the run URL Terraform prints (…/runs/run-…), else its POST /runs through the proxy.
function runIdOf(out, mark) {
  const m = /\/runs\/(run-[A-Za-z0-9]+)/.exec(out);
  if (m) return m[1];
  const rec = proxy.records.filter((x) => x.seq > mark && x.method === "POST" && x.path.split("?")[0] === "/api/v2/runs" && x.status === 201).at(-1);
  try {
    return JSON.parse(rec.resBody).data.id;
  } catch {
    return null;
  }
}
async function runIdFrom(bg, mark, what) {
  let id = null;
  let exited = null;
  bg.done.then((r) => (exited = r));
  await waitFor(
    `${what}: its run (the run URL in its output)`,
    async () => {
      id = runIdOf(bg.output(), mark);
      if (!id && exited) check(false, `\`${exited.cmd}\` exited (${exited.code ?? exited.signal}) without creating a run`, exited);
      return id;
    },
    120_000,
  );
  return id;
}
// { run, plan, apply }: the run's attributes and its plan's and apply's, through the API.
async function readRun(id) {
  const run = (await apiOk("GET", `/runs/${id}`)).json.data;
  const plan = (await apiOk("GET", `/plans/${run.relationships.plan.data.id}`)).json.data.attributes;
  const apply = (await apiOk("GET", `/applies/${run.relationships.apply.data.id}`)).json.data.attributes;
  return { id, run: run.attributes, relationships: run.relationships, plan, apply };
}
const runStatus = async (id) => (await api("GET", `/runs/${id}`)).json?.data?.attributes?.status;
async function waitRunStatus(id, statuses, timeoutMs = 120_000) {
  let last = null;
  try {
    await waitFor(
      `run ${id} to reach ${statuses.join(" or ")}`,
      async () => {
        last = await runStatus(id);
        return statuses.includes(last);
      },
      timeoutMs,
    );
  } catch (e) {
    throw new StepError(`${e.message} (last status ${last})`);
  }
}
const runSummary = (r) =>
  `run ${r.id}: status ${r.run.status}, plan ${r.plan.status} (+${r.plan["resource-additions"]} ~${r.plan["resource-changes"]} -${r.plan["resource-destructions"]}), apply ${r.apply.status}`;
// A run's status-timestamps key as epoch milliseconds (NaN when missing).
const at = (r, key) => Date.parse(r.run["status-timestamps"]?.[key] ?? "");
// The finished command's run, read through the API; `want` its final status.
async function finishedRun(result, mark, want) {
  const id = runIdOf(result.out, mark);
  check(id, `no run id in the output of \`${result.cmd}\` nor a POST /api/v2/runs from it`, result);
  const r = await readRun(id);
  check(r.run.status === want, `${runSummary(r)}; expected ${want}`, result);
  return r;
}
// The resources of a workspace's current state: { "<type>.<name>[<index>]": attributes }.
async function remoteState(wsId) {
  const { sv, state } = await currentState(wsId);
  const res = {};
  for (const r of state.resources ?? []) {
    if (r.mode !== "managed") continue;
    for (const i of r.instances ?? []) res[`${r.type}.${r.name}${i.index_key === undefined ? "" : `[${JSON.stringify(i.index_key)}]`}`] = i.attributes;
  }
  return { sv, state, res };
}
const sameKeys = (res, want) => sameSet(Object.keys(res), want);
const clientCalled = (mark, method, path) => proxy.records.some((x) => x.seq > mark && x.method === method && x.path.split("?")[0] === path && x.status < 300);

await step("remote: organisation and workspaces in remote execution mode (through the API)", async () => {
  remote.dir = fixture("remote/main", "remote-main");
  remote.cancelDir = fixture("remote/cancel", "remote-cancel");
  await apiOk("POST", "/organizations", { data: { type: "organizations", attributes: { name: REMOTE_ORG, email: `${REMOTE_ORG}@clients.test` } } });
  for (const name of ["rr-main", "rr-cancel"]) {
    const ws = (
      await apiOk("POST", `/organizations/${REMOTE_ORG}/workspaces`, { data: { type: "workspaces", attributes: { name, "execution-mode": "remote" } } })
    ).json.data;
    check(ws.attributes["execution-mode"] === "remote", `workspace ${name} execution-mode ${ws.attributes["execution-mode"]}, expected remote`);
    if (name === "rr-main") remote.ws = ws;
    else remote.cancelWs = ws;
  }
  // Makes the stand-in's plan wait (up to 2 minutes, cut short by a cancel) in rr-cancel only.
  await apiOk("POST", `/workspaces/${remote.cancelWs.id}/vars`, {
    data: { type: "vars", attributes: { key: "NULL_STANDIN_PLAN_SECONDS", value: "120", category: "env", hcl: false, sensitive: false } },
  });
  const ent = (await apiOk("GET", `/organizations/${REMOTE_ORG}/entitlement-set`)).json.data.attributes;
  check(ent.operations === true, `the organisation's entitlement-set says operations: ${ent.operations}, so Terraform would run everything locally`);
});

await step("remote: init installs null from the mirror; plan streams the remote plan (1 to add)", async () => {
  const init = await tfOk(remote.dir, ["init", "-input=false", "-no-color"], { env: remoteEnv });
  const lock = readFileSync(join(remote.dir, ".terraform.lock.hcl"), "utf8");
  check(
    /registry\.terraform\.io\/hashicorp\/null"[\s\S]*version\s*=\s*"3\.2\.3"/.test(lock),
    `.terraform.lock.hcl does not pin hashicorp/null 3.2.3: ${lock}`,
    init,
  );
  const mark = proxy.mark();
  const p = await tfOk(remote.dir, ["plan", "-input=false", "-no-color"], { env: remoteEnv });
  check(/Running plan in /.test(p.out), 'terraform plan did not run remotely (no "Running plan in …" header)', p);
  check(p.out.includes("Plan: 1 to add, 0 to change, 0 to destroy."), 'the streamed plan does not say "Plan: 1 to add, 0 to change, 0 to destroy."', p);
  const r = await finishedRun(p, mark, "planned_and_finished");
  check(r.run["plan-only"] === true, `${runSummary(r)}: plan-only ${r.run["plan-only"]}, expected true (a speculative plan)`, p);
  check(
    r.plan.status === "finished" && r.plan["resource-additions"] === 1 && r.plan["has-changes"] === true,
    `${runSummary(r)}; has-changes ${r.plan["has-changes"]}`,
    p,
  );
  const ws = (await apiOk("GET", `/workspaces/${remote.ws.id}`)).json.data.attributes;
  check(ws.locked === false, "the workspace is locked after a speculative plan");
});

await step("remote: apply -auto-approve applies; the workspace's state has the resource", async () => {
  const mark = proxy.mark();
  const a = await tfOk(remote.dir, ["apply", "-auto-approve", "-input=false", "-no-color"], { env: remoteEnv });
  check(
    a.out.includes("Apply complete! Resources: 1 added, 0 changed, 0 destroyed."),
    'the streamed apply log does not say "Apply complete! Resources: 1 added, 0 changed, 0 destroyed."',
    a,
  );
  const r = await finishedRun(a, mark, "applied");
  check(
    r.run["auto-apply"] === true && r.apply.status === "finished" && r.apply["resource-additions"] === 1,
    `${runSummary(r)}; auto-apply ${r.run["auto-apply"]}`,
    a,
  );
  check(
    !clientCalled(mark, "POST", `/api/v2/runs/${r.id}/actions/apply`),
    "terraform apply -auto-approve confirmed the run itself; the run's auto-apply should have applied it",
  );
  const { res } = await remoteState(remote.ws.id);
  check(sameKeys(res, ["null_resource.foo"]), `the state has [${Object.keys(res).join(", ")}], expected [null_resource.foo]`);
  check(
    res["null_resource.foo"].triggers?.generation === "1" && /^\d+$/.test(res["null_resource.foo"].id ?? ""),
    `null_resource.foo in the state: ${JSON.stringify(res["null_resource.foo"])}`,
  );
  const ws = (await apiOk("GET", `/workspaces/${remote.ws.id}`)).json.data;
  check(
    ws.attributes.locked === false,
    `the workspace is still locked after the run applied (${JSON.stringify(ws.relationships?.["locked-by"]?.data ?? null)})`,
  );
  check(
    ws.relationships?.["current-run"]?.data?.id === r.id,
    `the workspace's current-run is ${JSON.stringify(ws.relationships?.["current-run"]?.data ?? null)}, expected ${r.id}`,
  );
});

await step("remote: interactive apply confirmed by typing yes in a terminal", async () => {
  const before = (await remoteState(remote.ws.id)).res["null_resource.foo"];
  const mark = proxy.mark();
  const bg = tfTerminal(remote.dir, ["apply", "-no-color", "-var", "generation=2"], { env: remoteEnv });
  await waitOutput(bg, PROMPT, "the confirmation prompt");
  check(bg.output().includes('Do you want to perform these actions in workspace "rr-main"?'), "the prompt is not Terraform's remote apply confirmation", {
    out: bg.output(),
    cmd: bg.cmd,
    logFile: bg.logFile,
  });
  const id = runIdOf(bg.output(), mark);
  check(id, "terraform prompts without having created a run (no run URL in its output): it planned locally", {
    out: bg.output(),
    cmd: bg.cmd,
    logFile: bg.logFile,
  });
  const waiting = await readRun(id);
  check(
    waiting.run.status === "planned" && waiting.run.actions?.["is-confirmable"] === true,
    `${runSummary(waiting)}; is-confirmable ${waiting.run.actions?.["is-confirmable"]} while Terraform asks`,
  );
  bg.type("yes\n");
  const a = await bg.done;
  check(a.code === 0, `\`${a.cmd}\` exited with ${a.code ?? a.signal}`, a);
  check(
    a.out.includes("Apply complete! Resources: 1 added, 0 changed, 1 destroyed."),
    'the streamed apply log does not say "Apply complete! Resources: 1 added, 0 changed, 1 destroyed."',
    a,
  );
  check(clientCalled(mark, "POST", `/api/v2/runs/${id}/actions/apply`), `terraform did not confirm run ${id} with POST /api/v2/runs/${id}/actions/apply`, a);
  const r = await finishedRun(a, mark, "applied");
  check(r.run["auto-apply"] === false, `${runSummary(r)}: auto-apply ${r.run["auto-apply"]}, expected false`);
  const after = (await remoteState(remote.ws.id)).res["null_resource.foo"];
  check(
    after?.triggers?.generation === "2" && after.id !== before?.id,
    `null_resource.foo was not replaced: before ${JSON.stringify(before)}, after ${JSON.stringify(after)}`,
  );
});

await step("remote: interactive apply answered no is discarded; the state is unchanged", async () => {
  const before = await remoteState(remote.ws.id);
  const mark = proxy.mark();
  const bg = tfTerminal(remote.dir, ["apply", "-no-color", "-var", "generation=3"], { env: remoteEnv });
  await waitOutput(bg, PROMPT, "the confirmation prompt");
  bg.type("no\n");
  const a = await bg.done;
  check(a.code !== 0 && a.out.includes("Apply discarded."), `\`${a.cmd}\` answered "no" should fail with "Apply discarded." (exit ${a.code ?? a.signal})`, a);
  const r = await finishedRun(a, mark, "discarded");
  check(
    clientCalled(mark, "POST", `/api/v2/runs/${r.id}/actions/discard`),
    `terraform did not discard run ${r.id} with POST /api/v2/runs/${r.id}/actions/discard`,
    a,
  );
  check(r.apply.status === "unreachable", `${runSummary(r)}: the apply of a discarded run`);
  const after = await remoteState(remote.ws.id);
  check(after.sv.id === before.sv.id, `a new state version ${after.sv.id} after a discarded run (was ${before.sv.id})`);
  const ws = (await apiOk("GET", `/workspaces/${remote.ws.id}`)).json.data.attributes;
  check(ws.locked === false, "the workspace is still locked after the run was discarded");
});

await step("remote: apply -target creates only the targeted resource", async () => {
  const mark = proxy.mark();
  const a = await tfOk(
    remote.dir,
    ["apply", "-auto-approve", "-input=false", "-no-color", "-var", "generation=2", "-var", "bars=2", "-target=null_resource.bar[0]"],
    {
      env: remoteEnv,
    },
  );
  check(
    a.out.includes("Apply complete! Resources: 1 added, 0 changed, 0 destroyed."),
    'the streamed apply log does not say "Apply complete! Resources: 1 added, 0 changed, 0 destroyed."',
    a,
  );
  const r = await finishedRun(a, mark, "applied");
  check(JSON.stringify(r.run["target-addrs"]) === JSON.stringify(["null_resource.bar[0]"]), `run target-addrs ${JSON.stringify(r.run["target-addrs"])}`);
  // Terraform parses a `-var` of a primitive type (string, number, bool) as a literal string and sends it as an HCL
  // string (internal/configs/named_values.go decodeVariableType; internal/cloud/cloud_variables.go), so the number
  // `bars` arrives as "2" and the remote plan converts it back to a number.
  const vars = Object.fromEntries((r.run.variables ?? []).map((v) => [v.key, v.value]));
  check(vars.bars === '"2"' && vars.generation === '"2"', `run variables ${JSON.stringify(r.run.variables)}, expected bars = "2" and generation = "2"`);
  const { res } = await remoteState(remote.ws.id);
  check(
    sameKeys(res, ["null_resource.foo", "null_resource.bar[0]"]),
    `the state has [${Object.keys(res).join(", ")}], expected null_resource.foo and null_resource.bar[0] only`,
  );
});

await step("remote: apply -refresh-only runs a refresh-only run and changes no resource", async () => {
  const before = await remoteState(remote.ws.id);
  const mark = proxy.mark();
  const a = await tfOk(remote.dir, ["apply", "-refresh-only", "-auto-approve", "-input=false", "-no-color", "-var", "generation=9", "-var", "bars=2"], {
    env: remoteEnv,
  });
  // A refresh-only plan ignores the configuration's changes (generation 9, bars 2): nothing drifted, nothing to do.
  check(a.out.includes("No changes."), 'the refresh-only plan is not "No changes." (a refresh-only run must not plan the configuration\'s changes)', a);
  const id = runIdOf(a.out, mark);
  check(id, "no run id in the output of terraform apply -refresh-only", a);
  const r = await readRun(id);
  check(r.run["refresh-only"] === true, `${runSummary(r)}: refresh-only ${r.run["refresh-only"]}, expected true`);
  check(["planned_and_finished", "applied"].includes(r.run.status) && r.plan.status === "finished", `${runSummary(r)}; expected a finished refresh-only run`);
  const after = await remoteState(remote.ws.id);
  check(sameKeys(after.res, Object.keys(before.res)), `the state changed: [${Object.keys(after.res).join(", ")}], was [${Object.keys(before.res).join(", ")}]`);
  check(after.res["null_resource.foo"].id === before.res["null_resource.foo"].id, "null_resource.foo changed in a refresh-only run");
});

await step('remote: a second apply waits for the first ("Waiting for 1 run(s)") and applies after it', async () => {
  const markA = proxy.mark();
  const first = tfTerminal(remote.dir, ["apply", "-no-color", "-var", "generation=4", "-var", "bars=1"], { env: remoteEnv });
  let second = null;
  try {
    await waitOutput(first, PROMPT, "the first apply's confirmation prompt");
    const idA = runIdOf(first.output(), markA);
    check(idA, "the first apply prompts without having created a run (no run URL in its output)", {
      out: first.output(),
      cmd: first.cmd,
      logFile: first.logFile,
    });
    const markB = proxy.mark();
    second = tf(remote.dir, ["apply", "-auto-approve", "-input=false", "-no-color", "-var", "generation=5", "-var", "bars=1"], {
      env: remoteEnv,
      background: true,
    });
    await waitOutput(
      second,
      /Waiting for \d+ run\(s\) to finish before being queued/,
      'the second apply to say "Waiting for 1 run(s) to finish before being queued..."',
    );
    check(/Waiting for 1 run\(s\) to finish before being queued/.test(second.output()), "the second apply waits for a number of runs other than 1", {
      out: second.output(),
      cmd: "terraform apply (second)",
    });
    const idB = await runIdFrom(second, markB, "the second apply");
    check(
      (await runStatus(idB)) === "pending",
      `the second run ${idB} is ${await runStatus(idB)} while the first (${idA}) awaits confirmation, expected pending`,
    );
    first.type("yes\n");
    const a = await first.done;
    check(a.code === 0, `the first apply \`${a.cmd}\` exited with ${a.code ?? a.signal}`, a);
    const b = await second.done;
    check(b.code === 0, `the second apply \`${b.cmd}\` exited with ${b.code ?? b.signal}`, b);
    check(
      b.out.includes("Apply complete! Resources: 1 added, 0 changed, 1 destroyed."),
      'the second apply\'s log does not say "Apply complete! Resources: 1 added, 0 changed, 1 destroyed."',
      b,
    );
    const ra = await readRun(idA);
    const rb = await readRun(idB);
    check(ra.run.status === "applied" && rb.run.status === "applied", `${runSummary(ra)}; ${runSummary(rb)}; expected both applied`);
    check(
      at(rb, "plan-queued-at") >= at(ra, "applied-at"),
      `the second run was queued (plan-queued-at ${rb.run["status-timestamps"]?.["plan-queued-at"]}) before the first applied (applied-at ${ra.run["status-timestamps"]?.["applied-at"]})`,
    );
  } finally {
    killGroup(first.pgid, "SIGKILL");
    if (second) killGroup(second.pgid, "SIGKILL");
  }
  const { res } = await remoteState(remote.ws.id);
  check(
    res["null_resource.foo"]?.triggers?.generation === "5",
    `null_resource.foo in the state after both applies: ${JSON.stringify(res["null_resource.foo"])}`,
  );
  check(sameKeys(res, ["null_resource.foo", "null_resource.bar[0]"]), `the state has [${Object.keys(res).join(", ")}]`);
});

// Ctrl-C while the run is planning. `terraform apply` then reads the run, asks whether to cancel it (not with
// -auto-approve) and posts actions/cancel; the agent interrupts its terraform, and the run ends canceled.
// `terraform plan` only stops streaming, as its header says ("Pressing Ctrl-C will stop streaming the logs, but will
// not stop the plan running remotely"): opPlan (internal/cloud/backend_plan.go) returns no run on an error, so the
// backend's Operation has no run to offer to cancel (TestCloud_planCanceled expects only a failed operation).
// `how`: "prompt" (a terminal, answered yes), "signal" (SIGINT, no terminal), "stream-only" (a terminal, no prompt).
async function interruptPlanning({ args, how }) {
  await tfOk(remote.cancelDir, ["init", "-input=false", "-no-color"], { env: remoteEnv });
  const mark = proxy.mark();
  const terminal = how !== "signal";
  const bg = terminal ? tfTerminal(remote.cancelDir, args, { env: remoteEnv }) : tf(remote.cancelDir, args, { env: remoteEnv, background: true });
  let id = null;
  try {
    id = await runIdFrom(bg, mark, `\`terraform ${args.join(" ")}\``);
    await waitRunStatus(id, ["planning"]);
    if (how === "prompt") {
      bg.type("\x03");
      await waitOutput(bg, /Do you want to cancel the remote operation\?[\s\S]*Enter a value:/, "the prompt to cancel the remote operation");
      bg.type("yes\n");
    } else if (how === "signal") {
      process.kill(bg.pgid, "SIGINT");
    } else {
      bg.type("\x03");
    }
    const r = await bg.done;
    if (how === "stream-only") {
      check(r.code !== 0 && r.code !== null, `\`${r.cmd}\` interrupted exited with ${r.code ?? r.signal}, expected a failure`, r);
      check(!r.out.includes("cancel the remote operation"), "terraform plan offered to cancel the remote run; Terraform's plan only stops streaming", r);
      check(!clientCalled(mark, "POST", `/api/v2/runs/${id}/actions/cancel`), `terraform plan canceled run ${id} itself`, r);
      const still = await runStatus(id);
      check(still === "planning", `run ${id} is ${still} after terraform plan stopped streaming, expected still planning`, r);
      // The run plans on; a user cancels it through the API (as in the UI), and the agent stops its terraform.
      await apiOk("POST", `/runs/${id}/actions/cancel`, { comment: "stopped by the clients test" }, [200, 202]);
    } else {
      check(r.out.includes("The remote operation was successfully cancelled."), 'terraform did not say "The remote operation was successfully cancelled."', r);
      check(
        clientCalled(mark, "POST", `/api/v2/runs/${id}/actions/cancel`),
        `terraform did not cancel run ${id} with POST /api/v2/runs/${id}/actions/cancel`,
        r,
      );
    }
    // Well inside the stand-in's 120 s plan: only an interrupted terraform ends the run this soon.
    await waitRunStatus(id, ["canceled"], 60_000);
    const run = await readRun(id);
    check(run.plan.status === "canceled", `${runSummary(run)}; expected the plan canceled`);
    const ws = (await apiOk("GET", `/workspaces/${remote.cancelWs.id}`)).json.data.attributes;
    check(ws.locked === false, "the workspace is still locked after the run was canceled");
    return run;
  } finally {
    killGroup(bg.pgid, "SIGKILL");
    // A failed step must not leave its run planning: the stand-in's 120 s plan would hold the agent from the next.
    if (id && !["canceled", "errored", "planned_and_finished", "discarded", "applied"].includes(await runStatus(id).catch(() => null))) {
      await api("POST", `/runs/${id}/actions/cancel`, {}).catch(() => {});
    }
  }
}

await step("remote: Ctrl-C during terraform plan stops streaming; the run plans on until canceled through the API", async () => {
  const r = await interruptPlanning({ args: ["plan", "-no-color"], how: "stream-only" });
  check(r.run["plan-only"] === true, `${runSummary(r)}: expected the speculative plan's run`);
});

await step("remote: Ctrl-C during apply's plan, answered yes, cancels the planning run", async () => {
  const r = await interruptPlanning({ args: ["apply", "-no-color"], how: "prompt" });
  check(r.run["plan-only"] === false && r.run["auto-apply"] === false, `${runSummary(r)}: expected the interactive apply's run`);
});

await step("remote: SIGINT during apply -auto-approve's plan cancels the run without asking; the lock is released", async () => {
  await interruptPlanning({ args: ["apply", "-auto-approve", "-input=false", "-no-color"], how: "signal" });
  const sv = await api("GET", `/workspaces/${remote.cancelWs.id}/current-state-version`);
  check(sv.status === 404, `the workspace has a current state version (${sv.status}) after its only run was canceled`);
});

await step("remote: apply -destroy destroys every resource", async () => {
  const mark = proxy.mark();
  const a = await tfOk(remote.dir, ["apply", "-destroy", "-auto-approve", "-input=false", "-no-color", "-var", "generation=5", "-var", "bars=1"], {
    env: remoteEnv,
  });
  check(
    /(Apply|Destroy) complete! Resources: (0 added, 0 changed, )?2 destroyed\./.test(a.out),
    "the streamed apply log does not say that 2 resources were destroyed",
    a,
  );
  const r = await finishedRun(a, mark, "applied");
  check(r.run["is-destroy"] === true && r.apply["resource-destructions"] === 2, `${runSummary(r)}; is-destroy ${r.run["is-destroy"]}`);
  const { res } = await remoteState(remote.ws.id);
  check(Object.keys(res).length === 0, `the state still has [${Object.keys(res).join(", ")}] after the destroy`);
});

await step("remote: run trigger: an apply in rr-main queues a run in rr-target, which applies by itself (auto-apply-run-trigger)", async () => {
  const target = (
    await apiOk("POST", `/organizations/${REMOTE_ORG}/workspaces`, {
      data: { type: "workspaces", attributes: { name: "rr-target", "execution-mode": "remote", "auto-apply-run-trigger": true } },
    })
  ).json.data;
  const dir = fixture("remote/main", "remote-target");
  writeFileSync(join(dir, "main.tf"), readFileSync(join(dir, "main.tf"), "utf8").replace('name = "rr-main"', 'name = "rr-target"'));
  await tfOk(dir, ["init", "-input=false", "-no-color"], { env: remoteEnv });
  await tfOk(dir, ["apply", "-auto-approve", "-input=false", "-no-color"], { env: remoteEnv });
  const before = (await apiOk("GET", `/workspaces/${target.id}/runs`)).json.data.map((r) => r.id);
  const trigger = (
    await apiOk("POST", `/workspaces/${target.id}/run-triggers`, {
      data: { type: "run-triggers", relationships: { sourceable: { data: { type: "workspaces", id: remote.ws.id } } } },
    })
  ).json.data;
  const mark = proxy.mark();
  const a = await tfOk(remote.dir, ["apply", "-auto-approve", "-input=false", "-no-color", "-var", "generation=6"], { env: remoteEnv });
  const source = await finishedRun(a, mark, "applied");
  let triggered = null;
  await waitFor(
    "a run in rr-target queued by the run trigger",
    async () => {
      triggered = (await apiOk("GET", `/workspaces/${target.id}/runs`)).json.data.find((r) => !before.includes(r.id)) ?? null;
      return triggered;
    },
    60_000,
  );
  check(triggered.attributes.source === "tfe-run-trigger", `the triggered run's source is ${triggered.attributes.source}, expected tfe-run-trigger`);
  check(triggered.attributes.message.includes(source.id), `the triggered run's message "${triggered.attributes.message}" does not name ${source.id}`);
  await waitRunStatus(triggered.id, ["applied", "planned_and_finished"], 180_000);
  const queuedMs = Date.parse(triggered.attributes["created-at"]) - at(source, "applied-at");
  log(`run trigger: ${source.id} applied, ${triggered.id} queued ${queuedMs} ms later in rr-target, and it applied by itself`);
  await apiOk("DELETE", `/run-triggers/${trigger.id}`);
});

await step("remote: run task: a mandatory post-plan task that fails stops the apply with its message; an advisory one lets it go on", async () => {
  const receiver = await startRunTaskReceiver();
  try {
    const task = (
      await apiOk("POST", `/organizations/${REMOTE_ORG}/tasks`, {
        data: { type: "tasks", attributes: { name: "clients-gate", url: receiver.url, category: "task", "hmac-key": "clients-key" } },
      })
    ).json.data;
    const attached = (
      await apiOk("POST", `/workspaces/${remote.ws.id}/tasks`, {
        data: {
          type: "workspace-tasks",
          attributes: { "enforcement-level": "mandatory", stages: ["post_plan"] },
          relationships: { task: { data: { type: "tasks", id: task.id } } },
        },
      })
    ).json.data;
    receiver.state.verdict = { status: "failed", message: "clients-gate found 1 policy violation" };
    let mark = proxy.mark();
    const stopped = await tf(remote.dir, ["apply", "-auto-approve", "-input=false", "-no-color", "-var", "generation=7"], { env: remoteEnv });
    check(stopped.code !== 0, "terraform apply succeeded although a mandatory post-plan run task failed", stopped);
    check(stopped.out.includes("clients-gate found 1 policy violation"), "terraform did not print the run task's message", stopped);
    const failed = await finishedRun(stopped, mark, "errored");
    check(failed.apply.status === "unreachable", `${runSummary(failed)}: the apply ran although the mandatory task failed`, stopped);
    check(
      receiver.state.requests.some((r) => r.payload?.stage === "post_plan" && r.signature),
      "the run task request was not signed",
      stopped,
    );

    await apiOk("PATCH", `/workspaces/${remote.ws.id}/tasks/${attached.id}`, {
      data: { type: "workspace-tasks", attributes: { "enforcement-level": "advisory" } },
    });
    receiver.state.verdict = { status: "failed", message: "clients-gate advises a review" };
    mark = proxy.mark();
    const went = await tfOk(remote.dir, ["apply", "-auto-approve", "-input=false", "-no-color", "-var", "generation=7"], { env: remoteEnv });
    check(went.out.includes("clients-gate advises a review"), "terraform did not print the advisory run task's message", went);
    await finishedRun(went, mark, "applied");
    await apiOk("DELETE", `/workspaces/${remote.ws.id}/tasks/${attached.id}`);
    await apiOk("DELETE", `/tasks/${task.id}`);
  } finally {
    await receiver.close();
  }
});

// ---------------------------------------------------------------- remote runs on a pool's agent
await step("agent: a pool, its token, a workspace in agent mode and an agent process of the pool", async () => {
  remote.pool = (
    await apiOk("POST", `/organizations/${REMOTE_ORG}/agent-pools`, {
      data: { type: "agent-pools", attributes: { name: "clients-pool", "organization-scoped": true } },
    })
  ).json.data;
  const token = (
    await apiOk("POST", `/agent-pools/${remote.pool.id}/authentication-tokens`, {
      data: { type: "authentication-tokens", attributes: { description: "clients agent" } },
    })
  ).json.data.attributes.token;
  check(typeof token === "string" && token.length > 0, "the agent token's create answered no token");
  remote.agentWs = (
    await apiOk("POST", `/organizations/${REMOTE_ORG}/workspaces`, {
      data: { type: "workspaces", attributes: { name: "rr-agent", "execution-mode": "agent", "agent-pool-id": remote.pool.id } },
    })
  ).json.data;
  check(remote.agentWs.attributes["execution-mode"] === "agent", `workspace rr-agent execution-mode ${remote.agentWs.attributes["execution-mode"]}`);
  const logFile = join(work, "logs", "agent-pool.log");
  const fd = openSync(logFile, "w");
  const args = ["--url", service.base, "--token", token, "--plugin-mirror", nullProvider.mirror, "--terraform", terraform.path, "--name", "clients-pool-agent"];
  const child = spawn("npm", ["run", "agent", "--", ...args], {
    cwd: serviceRoot,
    detached: true,
    stdio: ["ignore", fd, fd],
    // Not the clients' TF_* settings (their CLI configuration): the agent writes its own for each job.
    env: Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(TF_|TFE_|TFC_|AGENT_)/.test(k))),
  });
  closeSync(fd);
  if (child.pid) groups.add(child.pid);
  let exited = null;
  child.on("exit", (code, sig) => (exited = sig ?? `code ${code}`));
  remote.agent = { pid: child.pid, logFile };
  let agents = [];
  try {
    await waitFor("the pool's agent to register (GET /agent-pools/:id/agents)", async () => {
      check(!exited, `npm run agent exited (${exited}); last lines of ${logFile}:\n${tail(logFile)}`);
      agents = (await api("GET", `/agent-pools/${remote.pool.id}/agents`)).json?.data ?? [];
      return agents.some((x) => ["idle", "busy"].includes(x.attributes?.status));
    });
  } catch (e) {
    throw new StepError(`${e.message}; agents listed: ${JSON.stringify(agents.map((x) => x.attributes))}; last lines of ${logFile}:\n${tail(logFile)}`);
  }
});

await step("agent: plan and apply -auto-approve run on the pool's agent", async () => {
  const dir = fixture("remote/agent", "remote-agent");
  await tfOk(dir, ["init", "-input=false", "-no-color"], { env: remoteEnv });
  let mark = proxy.mark();
  const p = await tfOk(dir, ["plan", "-input=false", "-no-color"], { env: remoteEnv });
  check(p.out.includes("Plan: 1 to add, 0 to change, 0 to destroy."), 'the streamed plan does not say "Plan: 1 to add, 0 to change, 0 to destroy."', p);
  const planned = await finishedRun(p, mark, "planned_and_finished");
  mark = proxy.mark();
  const a = await tfOk(dir, ["apply", "-auto-approve", "-input=false", "-no-color"], { env: remoteEnv });
  check(
    a.out.includes("Apply complete! Resources: 1 added, 0 changed, 0 destroyed."),
    'the streamed apply log does not say "Apply complete! Resources: 1 added, 0 changed, 0 destroyed."',
    a,
  );
  const r = await finishedRun(a, mark, "applied");
  for (const [label, phase] of [
    ["the speculative plan", planned.plan],
    ["the plan", r.plan],
    ["the apply", r.apply],
  ]) {
    const d = phase["execution-details"] ?? {};
    check(
      d.mode === "agent" && d["agent-pool-id"] === remote.pool.id,
      `${label}'s execution-details ${JSON.stringify(d)}: expected mode agent on pool ${remote.pool.id}`,
    );
  }
  const { res } = await remoteState(remote.agentWs.id);
  check(sameKeys(res, ["null_resource.foo"]), `the state has [${Object.keys(res).join(", ")}], expected [null_resource.foo]`);
});

// ---------------------------------------------------------------- large states: scripts/clients/large-states.mjs
await import("./clients/large-states.mjs").then((m) =>
  m.largeStateSteps({
    step,
    check,
    tfOk,
    apiOk,
    fixture,
    currentState,
    md5,
    finishedRun,
    workspaceByName,
    proxy,
    remoteOrg: REMOTE_ORG,
    remoteEnv,
    terraformVersion: terraform.version,
    // An API path followed through its redirect (a signed URL) with the admin token.
    fetchApi: (path) => fetch(`${service.base}/api/v2${path}`, { headers: { Authorization: `Bearer ${service.token}` }, signal: AbortSignal.timeout(120_000) }),
  }),
);

// ---------------------------------------------------------------- terraform login (login.v1): scripts/lib/login-e2e.mjs
await loginSteps({
  step,
  check,
  tf,
  tfOk,
  apiOk,
  waitFor,
  killGroup,
  work,
  host: HOST,
  base: proxy.base,
  apiURL,
  org: "clients-login",
  adminToken: service.token,
});

// ---------------------------------------------------------------- Terraform versions and the single-file agent (their own service)
await import("./clients/terraform-versions.mjs").then((m) =>
  m.terraformVersionSteps({ step, check, log, root: process.env.CLIENTS_SERVICE_ROOT || root, work, terraform }),
);
// ---------------------------------------------------------------- the private registry: scripts/clients/registry.mjs
await registrySteps({
  step,
  check,
  tf,
  tfOk,
  work,
  base: proxy.base,
  serviceBase: service.base,
  adminToken: service.token,
  clients: { terraform: TF, tofu: TOFU },
  nullProvider,
});

// ---------------------------------------------------------------- runs from a repository: scripts/clients/vcs.mjs
await import("./clients/vcs.mjs").then((m) => m.vcsSteps({ step, check, log, work, root: serviceRoot, org: REMOTE_ORG, apiOk, waitFor }));

// ---------------------------------------------------------------- summary
const seconds = (Date.now() - t0) / 1000;
const passed = results.filter((r) => r.ok).length;
const failed = results.length - passed;
if (remote.agent) await stopGroup(remote.agent.pid); // SIGTERM: the agent deregisters before the service stops
await proxy.close();
if (opts.keep) {
  log(
    `--keep: service left running on ${service.base} (process group ${service.pid}; stop it with: kill -- -${service.pid}); clients host ${HOST} via the proxy is gone`,
  );
  log(`        token ${service.token}; store ${service.storeDir}; work directory ${work}`);
  groups.delete(service.pid);
} else {
  await service.stop();
  if (failed === 0) rmSync(work, { recursive: true, force: true });
  else log(`work directory kept for inspection: ${work} (terraform output per command in logs/, service log in logs/service.log)`);
}
const width = Math.max(...results.map((r) => r.name.length), 4);
console.log("");
console.log(`| ${"step".padEnd(width)} | result | seconds |`);
console.log(`|${"-".repeat(width + 2)}|--------|--------:|`);
for (const r of results) console.log(`| ${r.name.padEnd(width)} | ${r.ok ? "PASS  " : "FAIL  "} | ${r.seconds.toFixed(1).padStart(7)} |`);
console.log("");
log(`terraform ${terraform.version}, terraform-provider-tfe ${provider.version}, tofu ${tofu.version}; total ${seconds.toFixed(0)} s`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed || results.length === 0 ? 1 : 0);
