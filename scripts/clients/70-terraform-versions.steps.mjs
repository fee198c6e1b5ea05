// The real-client steps of Terraform versions and of the single-file agent (docs/terraform-versions.md), called from
// scripts/clients.mjs. Self-contained: its own fresh `npm start` (no built-in agent), seeded from a local releases
// stand-in (scripts/lib/releases.mjs) that serves two real Terraform builds as signed release zips (the one on PATH
// and a second one built from the Go module proxy) and lists a third version it has no zip for; the agent is the one
// file `npm run build:agent` makes, copied into an empty folder and run with plain Node, installing each version on
// first use. Then Terraform's `cloud` block plans and applies in two workspaces on two versions, each run's log
// header, `terraform-version` and JSON plan naming its own version, and a workspace on the version that cannot be
// installed fails its plan with the agent's message.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, openSync, readdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ensureTerraformVersion } from "../lib/binaries.mjs";
import { check, jsonApi, readJson } from "../lib/harness.mjs";
import { signingKey, startReleasesServer, waitForVersions } from "../lib/releases.mjs";
import { groups, killGroup, sleep, startService, stopGroup, tail } from "../lib/service.mjs";

/** The second Terraform: the newest release whose module builds without nested modules the proxy cannot date. */
export const SECOND_TERRAFORM = "v1.5.7";
/** Listed by the releases stand-in, with no zip: an agent cannot install it. */
const UNINSTALLABLE = "1.6.6";
const ORG = "tfv";

/**
 * Runs the steps on a service of its own (from `serviceRoot`); `terraform` is the client ({ path, version }), `work` the
 * harness's work directory. Cleans up after itself.
 * @param {import("./context.mjs").ClientContext} h
 */
export default async function ({ step, log, serviceRoot: root, work, terraform }) {
  const dir = join(work, "terraform-versions");
  mkdirSync(join(dir, "logs"), { recursive: true });
  const ctx = { service: null, agent: null, releases: null, versions: null, cliEnv: null, ws: {}, key: null };
  // The fresh service's default-pool token: its one agent is the single-file one.
  const agentToken = `agent.${randomBytes(32).toString("hex")}`;
  let cmdSeq = 0;

  /** @param {string} method @param {string} path @param {unknown} [body] */
  const api = async (method, path, body) => {
    const r = await jsonApi(`${ctx.service.base}/api/v2`, ctx.service.token)(method, path, body);
    check(r.status < 300, `API ${method} ${path} answered ${r.status}: ${r.text.slice(0, 400)}`);
    return r.json;
  };
  // A terraform command in `cwd`, its output kept in logs/; resolves { code, out, cmd }.
  const tf = (cwd, args, timeoutMs = 240_000) =>
    new Promise((resolve) => {
      const cmd = `terraform ${args.join(" ")}`;
      const child = spawn(terraform.path, args, { cwd, env: ctx.cliEnv, detached: true, stdio: ["ignore", "pipe", "pipe"] });
      if (child.pid) groups.add(child.pid);
      let out = "";
      child.stdout.on("data", (d) => (out += d));
      child.stderr.on("data", (d) => (out += d));
      const timer = setTimeout(() => killGroup(child.pid, "SIGKILL"), timeoutMs);
      child.on("close", (code, signal) => {
        clearTimeout(timer);
        groups.delete(child.pid);
        writeFileSync(join(dir, "logs", `${String(++cmdSeq).padStart(2, "0")}-${args[0]}.log`), `$ (cd ${cwd} && ${cmd})\n${out}\n(exit ${code ?? signal})\n`);
        resolve({ code, signal, out, cmd });
      });
    });
  const config = (name) => {
    const wd = join(dir, name);
    mkdirSync(wd, { recursive: true });
    writeFileSync(
      join(wd, "main.tf"),
      `terraform {
  cloud {
    hostname     = "localhost:${ctx.service.port}"
    organization = "${ORG}"
    workspaces {
      name = "${name}"
    }
  }
}

resource "terraform_data" "greeting" {
  input = "hello from ${name}"
}

output "greeting" {
  value = terraform_data.greeting.output
}
`,
    );
    return wd;
  };
  // The run a command started, by the run page address Terraform prints.
  const runOf = async (result) => {
    const id = /\/runs\/(run-[A-Za-z0-9]+)/.exec(result.out)?.[1];
    check(id, `no run address in the output of \`${result.cmd}\``);
    return (await api("GET", `/runs/${id}`)).data;
  };

  try {
    await step("terraform versions: a second Terraform built, both served as signed releases; a fresh service lists them", async () => {
      const second = ensureTerraformVersion(SECOND_TERRAFORM, log);
      const first = { path: realpathSync(terraform.path), version: terraform.version };
      check(first.version !== second.version, `the second Terraform is the same version as the one on PATH (${first.version})`);
      const key = signingKey(join(dir, "gnupg"));
      ctx.key = key;
      ctx.versions = { a: first.version, b: second.version, c: UNINSTALLABLE };
      ctx.releases = await startReleasesServer({
        releases: [{ version: first.version, binary: first.path }, { version: second.version, binary: second.path }, { version: UNINSTALLABLE }],
        key,
        workDir: join(dir, "releases"),
        log,
      });
      ctx.service = await startService({
        root,
        logFile: join(dir, "logs", "service.log"),
        env: { NO_AGENT: "1", TERRAFORM_RELEASES_URL: ctx.releases.indexUrl, OUTBOUND_ALLOW_PRIVATE: "1", AGENT_TOKEN: agentToken },
      });
      const listed = await waitForVersions(ctx.service.base, ctx.service.token, Object.values(ctx.versions));
      log(`terraform versions: the service lists ${listed.join(", ")} (from ${ctx.releases.indexUrl})`);
      const row = (await api("GET", `/admin/terraform-versions?filter%5Bversion%5D=${second.version}`)).data[0].attributes;
      check(row.official && row.enabled && /^[0-9a-f]{64}$/.test(row.sha), `Terraform ${second.version} is listed as ${JSON.stringify(row)}`);
    });

    await step("terraform versions: the single-file agent, built and copied into an empty folder, runs with plain Node", async () => {
      check(ctx.service, "no service (the previous step failed)");
      const built = join(dir, "build", "workspace-agent.mjs");
      const b = spawnSync(process.execPath, [join(root, "scripts", "build-agent.mjs"), "--outfile", built], { cwd: root, encoding: "utf8" });
      check(b.status === 0, `npm run build:agent failed: ${b.stderr || b.stdout}`);
      const alone = join(dir, "agent-only");
      mkdirSync(alone);
      copyFileSync(built, join(alone, "workspace-agent.mjs"));
      check(readdirSync(alone).join() === "workspace-agent.mjs", `the agent's folder holds ${readdirSync(alone).join(", ")}`);
      const logFile = join(dir, "logs", "agent.log");
      const fd = openSync(logFile, "w");
      const child = spawn(process.execPath, ["workspace-agent.mjs"], {
        cwd: alone,
        detached: true,
        stdio: ["ignore", fd, fd],
        env: {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          HOME: process.env.HOME ?? alone,
          AGENT_URL: `http://localhost:${ctx.service.port}`,
          AGENT_TOKEN: agentToken,
          AGENT_NAME: "single-file",
          AGENT_TERRAFORM_CACHE: join(dir, "agent-cache"),
          AGENT_RELEASES_KEY: ctx.key.publicKeyFile,
        },
      });
      if (child.pid) groups.add(child.pid);
      ctx.agent = { pid: child.pid, logFile };
      let agents = [];
      for (let i = 0; i < 60 && !agents.some((a) => a.attributes.name === "single-file" && a.attributes.status === "idle"); i++) {
        await sleep(500);
        agents = (await api("GET", "/admin/agents")).data;
      }
      check(
        agents.some((a) => a.attributes.name === "single-file" && a.relationships["agent-pool"].data === null),
        `the single-file agent did not register in the default pool; its log:\n${tail(logFile)}`,
      );
    });

    await step("terraform versions: two workspaces on two versions each plan and apply with their own Terraform", async () => {
      check(ctx.agent, "no agent (an earlier step failed)");
      await api("POST", "/organizations", { data: { type: "organizations", attributes: { name: ORG, email: `${ORG}@clients.test` } } });
      const cli = join(dir, "terraform.rc");
      writeFileSync(
        cli,
        `host "localhost:${ctx.service.port}" {
  services = {
    "tfe.v2"   = "${ctx.service.base}/api/v2/"
    "tfe.v2.1" = "${ctx.service.base}/api/v2/"
    "tfe.v2.2" = "${ctx.service.base}/api/v2/"
  }
}
credentials "localhost:${ctx.service.port}" {
  token = "${ctx.service.token}"
}
`,
      );
      ctx.cliEnv = { PATH: process.env.PATH, HOME: process.env.HOME, TF_CLI_CONFIG_FILE: cli, TF_IN_AUTOMATION: "1", CHECKPOINT_DISABLE: "1" };
      for (const [name, version] of [
        ["tfv-a", ctx.versions.a],
        ["tfv-b", ctx.versions.b],
        ["tfv-c", ctx.versions.c],
      ]) {
        const ws = (
          await api("POST", `/organizations/${ORG}/workspaces`, {
            data: { type: "workspaces", attributes: { name, "execution-mode": "remote", "terraform-version": version } },
          })
        ).data;
        check(ws.attributes["terraform-version"] === version, `${name} has terraform-version ${ws.attributes["terraform-version"]}, not ${version}`);
        ctx.ws[name] = ws;
      }
      for (const [name, version] of [
        ["tfv-a", ctx.versions.a],
        ["tfv-b", ctx.versions.b],
      ]) {
        const wd = config(name);
        const init = await tf(wd, ["init", "-input=false", "-no-color"]);
        check(init.code === 0, `\`${init.cmd}\` in ${name} exited ${init.code}:\n${init.out.slice(-2000)}`);
        const apply = await tf(wd, ["apply", "-auto-approve", "-input=false", "-no-color"]);
        check(
          apply.code === 0 && apply.out.includes("Apply complete! Resources: 1 added"),
          `\`${apply.cmd}\` in ${name} exited ${apply.code}:\n${apply.out.slice(-3000)}`,
        );
        const run = await runOf(apply);
        check(run.attributes.status === "applied", `${name}: run ${run.id} is ${run.attributes.status}`);
        check(
          run.attributes["terraform-version"] === version,
          `${name}: run ${run.id} has terraform-version ${run.attributes["terraform-version"]}, not ${version}`,
        );
        const apl = (await api("GET", `/applies/${run.relationships.apply.data.id}`)).data.attributes;
        const applyLog = await (await fetch(apl["log-read-url"], { signal: AbortSignal.timeout(30_000) })).text();
        check(
          applyLog.includes(`Terraform v${version}\n`),
          `${name}: the apply log's header is not "Terraform v${version}": ${JSON.stringify(applyLog.slice(0, 120))}`,
        );
        // The plan Terraform wrote names the version that made it: the binary that ran, not only what the agent said.
        const plan = await fetch(`${ctx.service.base}/api/v2/plans/${run.relationships.plan.data.id}/json-output`, {
          headers: { Authorization: `Bearer ${ctx.service.token}` },
          signal: AbortSignal.timeout(30_000),
        });
        const planJson = await readJson(plan);
        check(planJson.terraform_version === version, `${name}: the JSON plan was made by Terraform ${planJson.terraform_version}, not ${version}`);
        log(`terraform versions: ${name} ran Terraform ${version} (run ${run.id}: terraform-version, apply log header and JSON plan agree)`);
      }
      const cached = readdirSync(join(dir, "agent-cache")).filter((n) => !n.startsWith("."));
      check(
        cached.some((n) => n.startsWith(`${ctx.versions.a}_`)) && cached.some((n) => n.startsWith(`${ctx.versions.b}_`)),
        `the agent's cache holds ${cached.join(", ")}, not both versions`,
      );
    });

    await step("terraform versions: a workspace on a version the agent cannot install fails its plan with the agent's message", async () => {
      check(ctx.ws["tfv-c"], "no workspace (an earlier step failed)");
      const wd = config("tfv-c");
      const init = await tf(wd, ["init", "-input=false", "-no-color"]);
      check(init.code === 0, `\`${init.cmd}\` exited ${init.code}:\n${init.out.slice(-2000)}`);
      const plan = await tf(wd, ["plan", "-input=false", "-no-color"]);
      check(plan.code !== 0, `\`${plan.cmd}\` succeeded on a version no agent can install:\n${plan.out.slice(-2000)}`);
      const want = `Terraform ${UNINSTALLABLE} could not be installed`;
      check(plan.out.includes(want), `\`${plan.cmd}\` does not show "${want}":\n${plan.out.slice(-2000)}`);
      const run = await runOf(plan);
      check(run.attributes.status === "errored", `run ${run.id} is ${run.attributes.status}, not errored`);
      check(!existsSync(join(dir, "agent-cache", UNINSTALLABLE)), "something of the uninstallable version is in the agent's cache");
    });
  } finally {
    if (ctx.agent) await stopGroup(ctx.agent.pid);
    if (ctx.service) await ctx.service.stop();
    await ctx.releases?.close();
  }
}
