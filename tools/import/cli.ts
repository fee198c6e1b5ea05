/**
 * `npm run import` and `npm run export`: copy one organisation from a server that speaks the HCP Terraform API (HCP
 * Terraform, Terraform Enterprise, another deploy of this service) into this service, or into a file and back.
 * Exit status: 0 when everything was copied, 1 when the summary lists failures (run again to finish), 2 when nothing
 * could start (bad arguments, a wrong token, an unknown organisation, an unreachable server): then nothing was written.
 */
import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import { ApiClient } from "./api.client.ts";
import { Progress, Report } from "./report.ts";
import { ExportWriter, readExport } from "./snapshot.file.ts";
import type { Snapshot, StateBytes, StateReader } from "./snapshot.types.ts";
import { globMatcher, pool, readSource } from "./source.read.ts";
import { checkTarget, writeTarget } from "./target.write.ts";

const USAGE = `usage:
  npm run import -- --from <URL or export file> [--from-token <token>] --organization <name>
                    --to <URL> --to-token <site-admin token> [--dry-run] [--json] [--workspaces <glob>]
  npm run export -- --from <URL> --from-token <token> --organization <name> --out <file> [--json] [--workspaces <glob>]
options: --rate <requests per second on the source, default 30>  --concurrency <workspaces at once, default 8>
tokens may also come from FROM_TOKEN and TO_TOKEN in the environment.`;

class UsageError extends Error {}

const options = {
  from: { type: "string" },
  "from-token": { type: "string" },
  organization: { type: "string" },
  to: { type: "string" },
  "to-token": { type: "string" },
  out: { type: "string" },
  "dry-run": { type: "boolean" },
  json: { type: "boolean" },
  workspaces: { type: "string" },
  rate: { type: "string" },
  concurrency: { type: "string" },
  help: { type: "boolean" },
} as const;

type Args = ReturnType<typeof parseArgs<{ options: typeof options }>>["values"];

const isUrl = (s: string) => /^https?:\/\//i.test(s);
const need = (v: string | undefined, name: string): string => {
  if (!v) throw new UsageError(`--${name} is required`);
  return v;
};
const number = (v: string | undefined, fallback: number, name: string): number => {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new UsageError(`--${name} must be a number`);
  return n;
};

/** The source: a server (read through its API) or an export file. */
async function openSource(a: Args, progress: Progress, counter: { requests: number }): Promise<{ snapshot: Snapshot; reader: StateReader; from: string }> {
  const from = need(a.from, "from");
  const organization = a.organization;
  if (!isUrl(from)) {
    if (!existsSync(from)) throw new UsageError(`--from ${from} is neither a URL nor an existing file`);
    const { snapshot, reader } = await readExport(from);
    if (organization && organization !== snapshot.organization.name) {
      throw new UsageError(`${from} holds organisation "${snapshot.organization.name}", not "${organization}"`);
    }
    const chosen = globMatcher(a.workspaces);
    snapshot.workspaces = snapshot.workspaces.filter((w) => chosen(w.name));
    return { snapshot, reader, from };
  }
  const token = need(a["from-token"] ?? process.env.FROM_TOKEN, "from-token");
  const client = new ApiClient({
    base: from,
    token,
    rate: number(a.rate, 30, "rate"),
    counter,
    onThrottle: (s) => progress.note(`the source asked to slow down: waiting ${s.toFixed(1)} s`),
  });
  const { snapshot, reader } = await readSource(client, need(organization, "organization"), {
    workspaces: a.workspaces,
    progress,
    concurrency: number(a.concurrency, 8, "concurrency"),
  });
  return { snapshot, reader, from };
}

async function runImport(a: Args, progress: Progress, report: Report, counter: { requests: number }): Promise<Record<string, unknown>> {
  const to = need(a.to, "to");
  if (!isUrl(to)) throw new UsageError("--to must be a URL");
  const toToken = need(a["to-token"] ?? process.env.TO_TOKEN, "to-token");
  const target = new ApiClient({ base: to, token: toToken, counter });
  // Both ends are checked, and the whole source read but for state bytes, before anything is written.
  if (a.organization && a.from && isUrl(a.from)) await checkTarget(target, a.organization);
  const { snapshot, reader, from } = await openSource(a, progress, counter);
  const checked = await checkTarget(target, snapshot.organization.name);
  await writeTarget(
    target,
    snapshot,
    reader,
    { dryRun: a["dry-run"] === true, progress, report, concurrency: number(a.concurrency, 8, "concurrency") },
    checked,
  );
  return { command: "import", from, to, organization: snapshot.organization.name, "dry-run": a["dry-run"] === true };
}

async function runExport(a: Args, progress: Progress, report: Report, counter: { requests: number }): Promise<Record<string, unknown>> {
  const out = need(a.out, "out");
  if (!isUrl(need(a.from, "from"))) throw new UsageError("export reads a server: --from must be a URL");
  const { snapshot, reader, from } = await openSource(a, progress, counter);
  const file = new ExportWriter(out, { url: from, organization: snapshot.organization.name });
  try {
    await file.line({ kind: "organization", organization: snapshot.organization });
    report.copied("organization");
    for (const p of snapshot.agentPools) await file.line({ kind: "agent-pool", pool: p });
    report.copied("agent-pools", snapshot.agentPools.length);
    for (const p of snapshot.projects) {
      await file.line({ kind: "project", project: p });
      report.copied("tags", p.tagBindings.length);
      report.copied("team-access", p.teamAccess.length);
    }
    report.copied("projects", snapshot.projects.length);
    for (const t of snapshot.teams) await file.line({ kind: "team", team: t });
    report.copied("teams", snapshot.teams.length);
    progress.start("workspaces", snapshot.workspaces.length);
    await pool(snapshot.workspaces, number(a.concurrency, 8, "concurrency"), async (ws) => {
      const states: StateBytes[] = [];
      for (const sv of ws.stateVersions) states.push(await reader.read(ws.name, sv));
      await file.workspace(ws, states);
      report.copied("workspaces");
      report.copied("state-versions", states.length);
      report.copied("variables", ws.variables.length);
      report.copied("tags", ws.tags.length + ws.tagBindings.length);
      report.copied("team-access", ws.teamAccess.length);
      report.copied("remote-state-consumers", ws.remoteStateConsumers.length);
      if (ws.lock.locked) report.copied("locks");
      for (const v of ws.variables) if (v.sensitive) report.sensitive.push({ workspace: ws.name, key: v.key, category: v.category });
      progress.tick("workspaces");
    });
    for (const s of snapshot.variableSets) {
      await file.line({ kind: "variable-set", set: s });
      report.copied("variable-sets");
      report.copied("variables", s.variables.length);
      for (const v of s.variables) if (v.sensitive) report.sensitive.push({ varset: s.name, key: v.key, category: v.category });
    }
    await file.close();
  } catch (e) {
    file.abort();
    throw e;
  }
  report.notices.push("sensitive values, agent tokens, OAuth secrets, runs and configuration versions are not in the file");
  return { command: "export", from, out, organization: snapshot.organization.name };
}

export async function main(command: string, argv: string[]): Promise<number> {
  let a: Args;
  try {
    a = parseArgs({ args: argv, options, strict: true }).values;
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (a.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const progress = new Progress(process.stderr);
  const report = new Report();
  const counter = { requests: 0 };
  const started = Date.now();
  let about: Record<string, unknown>;
  try {
    if (command === "import") about = await runImport(a, progress, report, counter);
    else if (command === "export") about = await runExport(a, progress, report, counter);
    else throw new UsageError(`unknown command ${command}`);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    process.stderr.write(`${command}: ${message}\n${e instanceof UsageError ? `${USAGE}\n` : "nothing was written.\n"}`);
    if (a.json) process.stdout.write(`${JSON.stringify({ command, error: message })}\n`);
    return 2;
  }
  const seconds = (Date.now() - started) / 1000;
  const failed = report.failures.length > 0;
  const summary = { ...about, seconds, requests: counter.requests };
  if (a.json) process.stdout.write(`${JSON.stringify(report.json(summary))}\n`);
  else {
    const what = about.command === "export" ? `Exported ${about.organization} to ${about.out}` : `Imported ${about.organization} into ${about.to}`;
    const header = a["dry-run"]
      ? `Dry run: nothing was written. "copied" counts what an import would copy; the changes it would make are:\n${report.planned.map((l) => `  ${l}`).join("\n") || "  (none)"}`
      : `${what} in ${seconds.toFixed(1)} s (${counter.requests} requests).`;
    process.stdout.write(`${report.text(header)}\n`);
    if (failed) process.stdout.write("\nSome items failed: what was written is consistent; run the same command again to finish.\n");
  }
  return failed ? 1 : 0;
}

const [command, ...rest] = process.argv.slice(2);
process.exitCode = await main(command ?? "", rest);
