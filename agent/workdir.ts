/**
 * What a job's directory holds besides the configuration, as pure functions of the job: the `cloud` override, the
 * CLI configuration, the variable files, Terraform's environment and its command lines (docs/runs.md, "What the
 * agent runs").
 */
import type { Job, JobVariable } from "./protocol.ts";

export const OVERRIDE_FILE = "zzz_agent_override.tf";

/** An HCL quoted string: escapes, and `${`/`%{` kept literal so a value is never read as a template. */
export function hclString(value: string): string {
  let out = '"';
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    const code = value.charCodeAt(i);
    if (c === '"') out += '\\"';
    else if (c === "\\") out += "\\\\";
    else if (c === "\n") out += "\\n";
    else if (c === "\r") out += "\\r";
    else if (c === "\t") out += "\\t";
    else if ((c === "$" || c === "%") && value[i + 1] === "{") out += `${c}${c}`;
    else if (code < 0x20 || code === 0x7f) out += `\\u${code.toString(16).padStart(4, "0")}`;
    else out += c;
  }
  return `${out}"`;
}

/** `terraform { cloud { … } }`: an override file replaces any backend or cloud block the configuration has. */
export function overrideFile(job: Job): string {
  return `# Written by the workspace agent for run ${job.run}: state goes through the service.
terraform {
  cloud {
    hostname     = ${hclString(job.hostname)}
    organization = ${hclString(job.organization)}
    workspaces {
      name = ${hclString(job.workspace.name)}
    }
  }
}
`;
}

/**
 * The CLI configuration: the run token as the host's credentials; the API's services when it is plain http (service
 * discovery is https-only); the operator's provider mirror as the only installation source when one is given.
 */
export function cliConfig(job: Job, options: { pluginMirror?: string | null; readOnlyCache?: string | null }): string {
  const host = hclString(job.hostname);
  let text = `credentials ${host} {\n  token = ${hclString(job.token)}\n}\n`;
  if (job.apiBase.startsWith("http:")) {
    const base = hclString(job.apiBase);
    const registry = (kind: string) => hclString(new URL(`/api/registry/v1/${kind}/`, job.apiBase).href);
    text += `\nhost ${host} {\n  services = {\n    "tfe.v2"   = ${base}\n    "tfe.v2.1" = ${base}\n    "tfe.v2.2" = ${base}\n    "modules.v1" = ${registry("modules")}\n    "providers.v1" = ${registry("providers")}\n  }\n}\n`;
  }
  // The service's own private registry stays a source beside any mirror: the run token is its credential there.
  const own = hclString(`${job.hostname}/*/*`);
  if (options.pluginMirror) {
    text += `\nprovider_installation {\n  filesystem_mirror {\n    path = ${hclString(options.pluginMirror)}\n    exclude = [${own}]\n  }\n  direct {\n    include = [${own}]\n  }\n}\n`;
  } else if (options.readOnlyCache) {
    // A sandboxed job cannot write the shared cache (it could plant a provider another tenant's job would run), and
    // Terraform refuses a plugin cache it cannot write to: the cache is a mirror looked at before the registry.
    text += `\nprovider_installation {\n  filesystem_mirror {\n    path = ${hclString(options.readOnlyCache)}\n  }\n  direct {}\n}\n`;
  }
  return text;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** A `-var-file` body for the workspace's Terraform variables: HCL values as written, others quoted. */
export function variablesFile(variables: JobVariable[]): { text: string; skipped: string[] } {
  const lines: string[] = [];
  const skipped: string[] = [];
  for (const v of variables) {
    if (v.category !== "terraform") continue;
    if (!IDENTIFIER.test(v.key)) {
      skipped.push(v.key);
      continue;
    }
    lines.push(`${v.key} = ${v.hcl ? v.value : hclString(v.value)}`);
  }
  return { text: lines.length > 0 ? `${lines.join("\n")}\n` : "", skipped };
}

/** The run's variables (HCL literals, as the API echoes them), for a later `-var-file` so they win. */
export function runVariablesFile(vars: { key: string; value: string }[]): { text: string; skipped: string[] } {
  return variablesFile(vars.map((v) => ({ key: v.key, value: v.value, category: "terraform", hcl: true, sensitive: false })));
}

/** What of the agent's own environment reaches Terraform: never its token, nor the operator's TF_* settings. */
const INHERITED = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LC_ALL",
  "TZ",
  "TMPDIR",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "TF_PLUGIN_CACHE_DIR",
];

/**
 * The protocol's settings, applied after the workspace's env variables so none of them can be overridden.
 * `sandboxHome`: the job runs sandboxed (agent/sandbox.ts) with this directory, its own, as HOME; its /tmp is its own,
 * and the plugin cache is read-only there (a mirror in the CLI configuration, not TF_PLUGIN_CACHE_DIR).
 */
export function terraformEnv(
  job: Job,
  options: { cliConfigFile: string; base?: NodeJS.ProcessEnv; pluginCacheDir?: string | null; sandboxHome?: string | null },
): Record<string, string> {
  const base = options.base ?? process.env;
  const env: Record<string, string> = {};
  for (const k of INHERITED) if (base[k] !== undefined) env[k] = base[k]!;
  if (options.sandboxHome) {
    env.HOME = options.sandboxHome;
    env.TMPDIR = "/tmp";
    delete env.TF_PLUGIN_CACHE_DIR;
  } else if (options.pluginCacheDir) env.TF_PLUGIN_CACHE_DIR = options.pluginCacheDir;
  env.CHECKPOINT_DISABLE = "1";
  env.TFC_WORKSPACE_NAME = job.workspace.name;
  env.TFC_WORKSPACE_SLUG = `${job.organization}/${job.workspace.name}`;
  if (job.workspace.projectName) env.TFC_PROJECT_NAME = job.workspace.projectName;
  for (const v of job.variables) if (v.category === "env") env[v.key] = v.value;
  env.TF_CLI_CONFIG_FILE = options.cliConfigFile;
  // The cloud block runs the operation here rather than starting another remote run.
  env.TF_FORCE_LOCAL_BACKEND = "1";
  env.TF_IN_AUTOMATION = "1";
  env.TF_INPUT = "0";
  // TFE_RUN_ID makes the state versions Terraform writes name this run.
  env.TFE_RUN_ID = job.run;
  env.TFC_RUN_ID = job.run;
  return env;
}

/** `terraform plan` arguments from the run's options. */
export function planArgs(job: Job, paths: { planFile: string; varFiles: string[]; generatedConfig: string }): string[] {
  const op = job.operation;
  const args = ["plan", "-input=false", "-lock=false", `-out=${paths.planFile}`];
  if (op.isDestroy) args.push("-destroy");
  if (op.refreshOnly) args.push("-refresh-only");
  if (!op.refresh) args.push("-refresh=false");
  for (const t of op.targetAddrs ?? []) args.push(`-target=${t}`);
  for (const r of op.replaceAddrs ?? []) args.push(`-replace=${r}`);
  if (op.allowConfigGeneration) args.push(`-generate-config-out=${paths.generatedConfig}`);
  for (const f of paths.varFiles) args.push(`-var-file=${f}`);
  return args;
}

/** The working directory inside the unpacked configuration, or null if it would leave it. */
export function workingDirectory(dir: string): string | null {
  const parts = dir
    .replace(/\\/g, "/")
    .split("/")
    .filter((p) => p !== "" && p !== ".");
  if (dir.startsWith("/") || parts.includes("..")) return null;
  return parts.join("/");
}
