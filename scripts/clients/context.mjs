// The clients harness (scripts/clients.mjs) and its step files (scripts/clients/NN-<client>.steps.mjs): running
// terraform and tofu (in a pipe or a terminal), the admin's API calls, fixtures, plans explained, a failed step's
// client exchanges (through the recording proxy), and the remote-run helpers. Step files get all of it as `ctx`.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { check, jsonApi, StepError, stepRunner, waitFor } from "../lib/harness.mjs";
import { groups, killGroup, sleep } from "../lib/service.mjs";

// JSON with object keys sorted, for order-insensitive comparison of maps.
export const canon = (v) =>
  JSON.stringify(v, (_, x) =>
    x && typeof x === "object" && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([p], [q]) => (p < q ? -1 : 1))) : x,
  );
export const md5 = (buf) => createHash("md5").update(buf).digest("hex");
export const sameSet = (a, b) => a.length === b.length && [...a].sort().join("\n") === [...b].sort().join("\n");
export const workspaceList = (out) =>
  out
    .split("\n")
    .map((l) => l.replace(/^\*/, "").trim())
    .filter(Boolean);

// The failure text for a plan that should be empty: the changes, then any refresh-detected drift (which names
// the attributes the service returned differently from what the client stored).
export const planProblem = (p) => `${p.changes.join(" | ") || `exit ${p.code}`}${p.drift.length ? ` || ${p.drift.join(" | ")}` : ""}`;
export function showJson(out) {
  return JSON.parse(out.slice(out.indexOf("{")));
}

/**
 * @param {{ root: string, fixtures: string, work: string, service: any, proxy: any, TF: Client, TOFU: Client, ORG: string, OTHER_ORG: string,
 *   TF_TIMEOUT_MS: number, only: RegExp | null, log: (msg: string) => void, terraform: any, provider: any, tofu: any, nullProvider: any,
 *   HOST: string, apiURL: string }} env
 */
export function clientContext(env) {
  const { root, fixtures, work, service, proxy, TF, ORG, TF_TIMEOUT_MS } = env;
  // ---------------------------------------------------------------- helpers
  let cmdSeq = 0;
  // Runs terraform (or `client`: TOFU) in `dir`. Resolves { code, signal, out, cmd, logFile }. With `background`,
  // returns { child, pgid, done, output() } at once (the command runs in its own process group).
  /**
   * @overload
   * @param {string} dir @param {string[]} args @param {TfOptions & { background?: false }} [options]
   * @returns {Promise<TfResult>}
   */
  /**
   * @overload
   * @param {string} dir @param {string[]} args @param {TfOptions & { background: true }} options
   * @returns {Background}
   */
  /**
   * @param {string} dir @param {string[]} args @param {TfOptions & { background?: boolean }} [options]
   * @returns {Background | Promise<TfResult>}
   */
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

  async function tfOk(dir, args, options) {
    const r = await tf(dir, args, options);
    check(r.code === 0, `\`${r.cmd}\` exited with ${r.code ?? r.signal}`, r);
    return r;
  }

  /** The site admin's API call straight to the service (not through the proxy): { status, json, text }. */
  const api = jsonApi(`${service.base}/api/v2`, service.token);
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
  // ---- cloud/tofu shared
  const gen = (g, sleepSeconds = 0) => ["-var", `generation=${g}`, "-var", `sleep_seconds=${sleepSeconds}`];
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
  // ---- remote
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
    /** @type {TfResult | null} */
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
    /** @type {TfResult | null} */
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
  const clientCalled = (mark, method, path) =>
    proxy.records.some((x) => x.seq > mark && x.method === method && x.path.split("?")[0] === path && x.status < 300);

  // ---------------------------------------------------------------- steps
  const stepTerminals = new Set(); // process groups of tfTerminal() commands started by the current step
  const { step, results, passed, failed } = stepRunner({
    only: env.only,
    before: () => proxy.mark(),
    describe: (e, mark) =>
      e instanceof StepError ? describeFailure(e, mark) : [`harness error: ${e.stack ?? e}`, ...describeFailure({ message: "" }, mark).slice(1)],
    // A terminal command a failed step left waiting (at a prompt) would hold its run and the workspace's queue.
    after: () => {
      for (const pid of stepTerminals) if (groups.has(pid)) killGroup(pid, "SIGKILL");
      stepTerminals.clear();
    },
  });
  /** The `cloud` block's main workspace: its directory and workspace, shared by 10-cloud and 25-cloud-destroy. */
  const main = { dir: "", ws: null };

  const steps = { step, results, passed, failed, main };
  const commands = { tf, tfOk, api, apiOk, workspaceByName, createWorkspace, currentState, fixture, planChanges, stateResources };
  const cloud = { gen, lockContention, killThenForceUnlock };
  const remoteOrg = { REMOTE_ORG, remoteEnv, remote, serviceRoot, shq, tfTerminal, waitOutput, PROMPT };
  const runs = { runIdOf, runIdFrom, readRun, runStatus, waitRunStatus, runSummary, at, finishedRun, remoteState, sameKeys, clientCalled };
  return { ...env, ...steps, ...commands, ...cloud, ...remoteOrg, ...runs };
}

/** @typedef {{ name: string, path: string, env: Record<string, string> }} Client */
/** @typedef {{ code: number | null, signal: NodeJS.Signals | null, out: string, cmd: string, logFile: string }} TfResult */
/** @typedef {{ child: import("node:child_process").ChildProcess, pgid: number, done: Promise<TfResult>, output: () => string }} Background */
/** @typedef {{ input?: string | null, env?: Record<string, string>, timeoutMs?: number, client?: Client }} TfOptions */
/** @typedef {ReturnType<typeof clientContext>} ClientContext */
