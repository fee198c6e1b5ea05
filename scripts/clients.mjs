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
// The steps live in scripts/clients/NN-<client>.steps.mjs, run in name order; each exports a default
// `async (ctx) => {}` given the harness (scripts/clients/context.mjs). Each step prints one line (PASS/FAIL, seconds,
// name); a table and "N passed, M failed" close the run; the exit status is non-zero when any step failed.
//   --only <regex>   run only the steps whose name matches (steps depend on earlier ones: use with care)
//   --keep           leave the service running and the work directory in place afterwards
// CLIENTS_CACHE_DIR: where the built binaries are cached (default ~/.cache/workspace-service-clients);
// CLIENTS_SERVICE_ROOT: run `npm start` from another checkout (default: this one).
// Node built-ins only. Needs `go` (to build the provider and tofu once) and terraform >= 1.10 on PATH (else built too),
// and util-linux `script` (a pseudo-terminal for the interactive remote-run steps).
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { clientContext } from "./clients/context.mjs";
import { ensureNullProvider, ensureProvider, ensureTerraform, ensureTofu } from "./lib/binaries.mjs";
import { onExit, printTable } from "./lib/harness.mjs";
import { startRecordingProxy } from "./lib/proxy.mjs";
import { groups, killAllGroups, startService, stopGroup } from "./lib/service.mjs";

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
/** @type {import("./lib/harness.mjs").StepResult[]} */
let results = []; // the step runner's, once the service is up
const log = (msg) => console.log(`clients: ${msg}`);
/** @type {string} */
let work;
/** @type {Awaited<ReturnType<typeof startService>>} */
let service;
// On exit the processes stop (unless --keep); on a signal (exit status 128 + its number) the store goes too.
onExit(() => opts.keep || killAllGroups(), {
  signals: ["SIGINT", "SIGTERM", "SIGHUP"],
  onSignal: (sig) => {
    console.error(`clients: ${sig}: stopping`);
    killAllGroups();
    if (service) rmSync(service.storeDir, { recursive: true, force: true });
  },
});

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
const proxy = await startRecordingProxy({ target: service.base });
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

// ---------------------------------------------------------------- the steps: scripts/clients/NN-<client>.steps.mjs
const ctx = clientContext({
  root,
  fixtures,
  work,
  service,
  proxy,
  TF,
  TOFU,
  ORG,
  OTHER_ORG,
  TF_TIMEOUT_MS,
  only: opts.only,
  log,
  terraform,
  provider,
  tofu,
  nullProvider,
  HOST,
  apiURL,
});
results = ctx.results;
const stepDir = join(root, "scripts", "clients");
for (const file of readdirSync(stepDir)
  .filter((f) => f.endsWith(".steps.mjs"))
  .sort()) {
  const mod = await import(pathToFileURL(join(stepDir, file)).href);
  await mod.default(ctx);
}

// ---------------------------------------------------------------- summary
const seconds = (Date.now() - t0) / 1000;
const passed = ctx.passed();
const failed = ctx.failed();
if (ctx.remote.agent) await stopGroup(ctx.remote.agent.pid); // SIGTERM: the agent deregisters before the service stops
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
printTable(results);
log(`terraform ${terraform.version}, terraform-provider-tfe ${provider.version}, tofu ${tofu.version}; total ${seconds.toFixed(0)} s`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed || results.length === 0 ? 1 : 0);
