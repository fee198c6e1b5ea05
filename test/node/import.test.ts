// `npm run import` and `npm run export` between real servers (`npm start`, each on its own store): a source seeded
// through the API with every kind the importer copies, a target it imports into, and a fresh one for the dry run, the
// error cases and the restore of export files. Both organisations are compared through the API, field by field.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs module shared with the client harnesses
import { startService } from "../../scripts/lib/service.mjs";
import { apiOf, orgView, pushState, seed, stateOf } from "./import.fixtures.ts";

type Service = { base: string; port: number; token: string; stop: () => Promise<void> };
const root = join(import.meta.dirname, "..", "..");
const tsx = join(root, "node_modules", "tsx", "dist", "cli.mjs");
const hasTerraform = spawnSync("terraform", ["version"], { stdio: "ignore" }).status === 0;

let work: string;
let source: Service;
let target: Service;
let fresh: Service;
let terraformState: string | undefined;

/** Runs the CLI; resolves its exit status, stdout and stderr, and the `--json` summary when it printed one. */
function cli(command: "import" | "export", args: string[]): Promise<{ code: number; stdout: string; stderr: string; summary: any }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [tsx, join(root, "tools", "import", "cli.ts"), command, ...args], {
      cwd: root,
      env: { ...process.env, FROM_TOKEN: "", TO_TOKEN: "" },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("exit", (code) => {
      const last = stdout.trim().split("\n").pop() ?? "";
      let summary: any = null;
      try {
        summary = JSON.parse(last);
      } catch {}
      resolve({ code: code ?? -1, stdout, stderr, summary });
    });
  });
}

const from = () => ["--from", source.base, "--from-token", source.token, "--organization", "acme"];
const into = (s: Service) => ["--to", s.base, "--to-token", s.token];
const copied = (summary: any) => Object.fromEntries(Object.entries(summary.counts).map(([k, v]: [string, any]) => [k, v.copied]));

/** A state Terraform itself wrote, for the plan against the imported workspace. */
function terraformApply(dir: string): string | undefined {
  if (!hasTerraform) return undefined;
  writeFileSync(join(dir, "main.tf"), 'resource "terraform_data" "x" {\n  input = "hello"\n}\noutput "greeting" {\n  value = terraform_data.x.output\n}\n');
  const env = { ...process.env, CHECKPOINT_DISABLE: "1", TF_IN_AUTOMATION: "1" };
  for (const args of [
    ["init", "-input=false"],
    ["apply", "-auto-approve", "-input=false"],
  ]) {
    const r = spawnSync("terraform", args, { cwd: dir, env, encoding: "utf8" });
    if (r.status !== 0) throw new Error(`terraform ${args[0]}: ${r.stderr}`);
  }
  return readFileSync(join(dir, "terraform.tfstate"), "utf8");
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "import-test-"));
  const start = (name: string) => startService({ root, logFile: join(work, `${name}.log`), env: { NO_AGENT: "1" } }) as Promise<Service>;
  [source, target, fresh] = await Promise.all([start("source"), start("target"), start("fresh")]);
  const tfDir = join(work, "apply");
  spawnSync("mkdir", ["-p", tfDir]);
  terraformState = terraformApply(tfDir);
  await seed(apiOf(source.base, source.token), "acme", { terraformState });
}, 300_000);

afterAll(async () => {
  await Promise.all([source?.stop(), target?.stop(), fresh?.stop()]);
  if (work) rmSync(work, { recursive: true, force: true });
}, 60_000);

describe("npm run import", () => {
  it("refuses a wrong token, an unknown organisation and an unreachable server, writing nothing", async () => {
    const cases = [
      { args: ["--from", source.base, "--from-token", "wrong.atlasv1.token", "--organization", "acme", ...into(fresh)], says: "refused the token (401)" },
      { args: ["--from", source.base, "--from-token", source.token, "--organization", "nobody", ...into(fresh)], says: 'no organisation "nobody"' },
      { args: ["--from", "http://127.0.0.1:9", "--from-token", source.token, "--organization", "acme", ...into(fresh)], says: "is unreachable" },
      { args: [...from(), "--to", fresh.base, "--to-token", "wrong.atlasv1.token"], says: "refused the token (401): check --to-token" },
      { args: [...from(), "--to", fresh.base], says: "--to-token is required" },
    ];
    for (const c of cases) {
      const r = await cli("import", [...c.args, "--json"]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(c.says);
      expect(r.summary.error).toContain(c.says);
    }
    expect((await apiOf(fresh.base, fresh.token)("GET", "/organizations/acme")).status).toBe(404);
  }, 120_000);

  it("a dry run says what it would copy and writes nothing", async () => {
    const r = await cli("import", [...from(), ...into(fresh), "--dry-run", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.summary["dry-run"]).toBe(true);
    expect(copied(r.summary)).toMatchObject({
      workspaces: 5,
      projects: 1,
      teams: 2,
      "state-versions": hasTerraform ? 7 : 6,
      "variable-sets": 2,
      variables: 11,
    });
    expect(r.summary.planned).toContain("create workspace app-prod");
    expect((await apiOf(fresh.base, fresh.token)("GET", "/organizations/acme")).status).toBe(404);
  }, 120_000);

  it("copies every kind, equal field by field through the API; a second run copies nothing twice", async () => {
    const first = await cli("import", [...from(), ...into(target), "--json"]);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect(copied(first.summary)).toMatchObject({
      organization: 1,
      "agent-pools": 1,
      projects: 1,
      teams: 2,
      workspaces: 5,
      tags: 4,
      variables: 11,
      "state-versions": hasTerraform ? 7 : 6,
      locks: 1,
      "remote-state-consumers": 1,
      "variable-sets": 2,
      "team-access": 3,
    });
    expect(first.summary["sensitive-variables"]).toEqual([
      { workspace: "app-dev", key: "db_password", category: "terraform" },
      { workspace: "app-prod", key: "db_password", category: "terraform" },
      { varset: "shared", key: "API_TOKEN", category: "env" },
    ]);
    expect(first.summary.failures).toEqual([]);
    const want = await orgView(source.base, source.token, "acme");
    expect(await orgView(target.base, target.token, "acme")).toEqual(want);
    // The lock with its reason; the history in order, the current one last.
    const held = want.workspaces.find((w: any) => w.name === "held");
    expect(held).toMatchObject({ locked: true, "locked-reason": "maintenance window" });
    expect(want.workspaces.find((w: any) => w.name === "app-prod").history.map((h: any) => h.serial)).toEqual([1, 2, 3]);

    const again = await cli("import", [...from(), ...into(target), "--json"]);
    expect(again.code, again.stderr).toBe(0);
    expect(Object.values(copied(again.summary)).every((n) => n === 0)).toBe(true);
    expect(again.summary.counts["state-versions"].skipped).toBe(hasTerraform ? 7 : 6);
    expect(await orgView(target.base, target.token, "acme")).toEqual(want);
  }, 300_000);

  it("finishes an interrupted run: state written since is copied, in order, once", async () => {
    const src = apiOf(source.base, source.token);
    const prod = (await src("GET", "/organizations/acme/workspaces/app-prod")).body.data;
    const lineage = JSON.parse(
      Buffer.from(
        await (
          await fetch(
            new URL((await src("GET", `/workspaces/${prod.id}/current-state-version`)).body.data.attributes["hosted-state-download-url"], source.base),
          )
        ).arrayBuffer(),
      ).toString(),
    ).lineage;
    for (const s of [4, 5]) await pushState(src, prod.id, stateOf(s, lineage, { url: `https://v${s}.example.com` }));
    const r = await cli("import", [...from(), ...into(target), "--workspaces", "app-*", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.summary.counts["state-versions"]).toMatchObject({ copied: 2, skipped: 3 });
    expect(r.summary.counts.workspaces).toMatchObject({ copied: 0, skipped: 2 });
    expect(await orgView(target.base, target.token, "acme")).toEqual(await orgView(source.base, source.token, "acme"));
  }, 300_000);

  it.skipIf(!hasTerraform)(
    "an imported workspace plans with no changes against its imported state",
    async () => {
      const dir = join(work, "plan");
      spawnSync("mkdir", ["-p", dir]);
      const host = `localhost:${target.port}`;
      const api = `${target.base}/api/v2/`;
      writeFileSync(
        join(dir, "main.tf"),
        `resource "terraform_data" "x" {\n  input = "hello"\n}\noutput "greeting" {\n  value = terraform_data.x.output\n}\nterraform {\n  cloud {\n    hostname = "${host}"\n    organization = "acme"\n    workspaces { name = "tf-plan" }\n  }\n}\n`,
      );
      writeFileSync(
        join(dir, "terraform.rc"),
        `host "${host}" {\n  services = { "tfe.v2" = "${api}", "tfe.v2.1" = "${api}", "tfe.v2.2" = "${api}" }\n}\ncredentials "${host}" { token = "${target.token}" }\n`,
      );
      const env = {
        ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(TF_|TFE_)/.test(k))),
        TF_CLI_CONFIG_FILE: join(dir, "terraform.rc"),
        CHECKPOINT_DISABLE: "1",
        TF_IN_AUTOMATION: "1",
      };
      const init = spawnSync("terraform", ["init", "-input=false"], { cwd: dir, env, encoding: "utf8" });
      expect(init.status, init.stdout + init.stderr).toBe(0);
      const plan = spawnSync("terraform", ["plan", "-detailed-exitcode", "-input=false"], { cwd: dir, env, encoding: "utf8" });
      // -detailed-exitcode: 0 is "no changes", 2 would be a diff.
      expect(plan.status, plan.stdout + plan.stderr).toBe(0);
      expect(plan.stdout).toContain("No changes");
    },
    120_000,
  );
});

describe("npm run export, and import from the file", () => {
  it("restores into a fresh server equal to the source, field by field", async () => {
    const file = join(work, "acme.export");
    const exported = await cli("export", [...from(), "--out", file, "--json"]);
    expect(exported.code, exported.stderr).toBe(0);
    const lines = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ format: "workspace-service-export", version: 2 });
    // The placeholders of sensitive values are marked, their values absent.
    const prod = lines.find((l) => l.kind === "workspace" && l.workspace.name === "app-prod").workspace;
    expect(prod.variables.find((v: any) => v.key === "db_password")).toMatchObject({ sensitive: true, value: null, withheld: true });
    expect(readFileSync(file, "utf8")).not.toContain("secret-app-prod");

    const restored = await cli("import", ["--from", file, ...into(fresh), "--json"]);
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.summary.failures).toEqual([]);
    expect(await orgView(fresh.base, fresh.token, "acme")).toEqual(await orgView(source.base, source.token, "acme"));
  }, 300_000);

  it("restores a file of the previous version (one JSON document)", async () => {
    const lineage = "3f0b7c9e-0000-4000-8000-000000000001";
    const states = [1, 2].map((s) => stateOf(s, lineage, { n: s }));
    const { createHash } = await import("node:crypto");
    const v1 = {
      format: "workspace-service-export",
      version: 1,
      organization: { name: "old", settings: { email: "old@example.com" } },
      projects: [{ name: "legacy", settings: { description: "from v1" } }],
      teams: [{ name: "owners", settings: {} }],
      agentPools: [],
      workspaces: [
        {
          name: "kept",
          project: "legacy",
          settings: { description: "v1 workspace" },
          tags: ["old"],
          variables: [{ key: "k", value: "v", description: null, category: "terraform", hcl: false, sensitive: false }],
          stateVersions: states.map((s, i) => ({
            serial: i + 1,
            lineage,
            md5: createHash("md5").update(s).digest("hex"),
            state: Buffer.from(s).toString("base64"),
          })),
        },
      ],
      variableSets: [],
    };
    const file = join(work, "old.json");
    writeFileSync(file, JSON.stringify(v1, null, 2));
    const r = await cli("import", ["--from", file, ...into(fresh), "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const view = await orgView(fresh.base, fresh.token, "old");
    const kept = view.workspaces.find((w: any) => w.name === "kept");
    expect(kept).toMatchObject({ project: "legacy", description: "v1 workspace", "tag-names": ["old"], current: 2 });
    expect(kept.history.map((h: any) => [h.serial, h.lineage, h.md5])).toEqual(
      states.map((s, i) => [i + 1, lineage, createHash("md5").update(s).digest("hex")]),
    );
    expect(kept.vars).toEqual([{ key: "k", value: "v", category: "terraform", hcl: false, sensitive: false, description: "" }]);
  }, 120_000);
});
