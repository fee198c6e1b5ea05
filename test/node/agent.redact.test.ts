// What a job must never let out (agent/redact.ts): its sensitive values in the log, in every encoding Terraform
// prints them, across the log's chunk boundaries and inside HCL and JSON values; and in the redacted JSON plan,
// whether or not Terraform marked them sensitive. The HCL value reader (agent/hcl-value.ts) the redactor relies on.
// Then a real Terraform run (needs Terraform >= 1.10 on PATH, and bwrap for its sandboxed half; SKIP_SANDBOX_TEST=1
// runs it unsandboxed only, or skips it without Terraform).
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { hclStrings, parseHclValue } from "../../agent/hcl-value.ts";
import { Agent } from "../../agent/loop.ts";
import type { JobVariable } from "../../agent/protocol.ts";
import { encodings, goJson, goJsonEscaped, goQuoted, jobPatterns, type Pattern, Redactor, redactedPlan } from "../../agent/redact.ts";
import { checkSandbox, onPath, type Sandbox } from "../../agent/sandbox.ts";
import { AGENT_TOKEN, FakeService, job, TfeStub, tarGz } from "./agent.fakes.ts";

const TOKEN = "run.payload-of-the-run-token.signature";

const sensitive = (key: string, value: string, extra: Partial<JobVariable> = {}): JobVariable => ({
  key,
  value,
  category: "terraform",
  hcl: false,
  sensitive: true,
  ...extra,
});

function patternsOf(...variables: JobVariable[]): Pattern[] {
  return jobPatterns({ token: TOKEN, variables });
}

/** The log as the service receives it when `writes` pass the redactor one after another. */
function redact(patterns: Iterable<Pattern | string>, ...writes: string[]): string {
  const out: Buffer[] = [];
  const r = new Redactor(patterns, (b) => out.push(b));
  for (const w of writes) r.write(Buffer.from(w, "utf8"));
  r.end();
  return Buffer.concat(out).toString("utf8");
}

// `<`, `>` and `&` (Go's JSON escapes them), a quote and a backslash, a template sequence, non-ASCII.
const SECRET = `p<a&s>s "w\\o\${rd}-ü`;

describe("the log's redactor: every encoding Terraform prints", () => {
  const forms: [string, string][] = [
    ["raw", SECRET],
    ["Go's %q (the plan, Outputs:)", `p<a&s>s \\"w\\\\o\${rd}-ü`],
    ["HCL-escaped (a variable file's line in a diagnostic)", `p<a&s>s \\"w\\\\o$\${rd}-ü`],
    ["Go's encoding/json (a -json log)", `p\\u003ca\\u0026s\\u003es \\"w\\\\o\${rd}-ü`],
    ["JSON.stringify", `p<a&s>s \\"w\\\\o\${rd}-ü`],
    ["ASCII-only JSON", `p\\u003ca\\u0026s\\u003es \\"w\\\\o\${rd}-\\u00fc`],
    ["JSON inside a JSON string (jsonencode in a -json log)", `p\\\\u003ca\\\\u0026s\\\\u003es \\\\\\"w\\\\\\\\o\${rd}-ü`],
    ["Go's %q of Go's JSON (Outputs: of a jsonencode)", `p\\\\u003ca\\\\u0026s\\\\u003es \\\\\\"w\\\\\\\\o\${rd}-ü`],
  ];
  for (const [name, form] of forms) {
    it(`masks the ${name} form`, () => {
      const log = redact(patternsOf(sensitive("pw", SECRET)), `before ${form} after\n`);
      expect(log).toBe("before *** after\n");
    });
  }

  it("writes the encodings as Terraform's Go does", () => {
    expect(goJsonEscaped('<>&\u2028\u0001\b\n"\\é')).toBe('\\u003c\\u003e\\u0026\\u2028\\u0001\\b\\n\\"\\\\é');
    expect(JSON.parse(`"${goJsonEscaped(SECRET)}"`)).toBe(SECRET);
    expect(goQuoted("a\u0007\u007f\u00a0é😀\t")).toBe("a\\a\\x7f\\u00a0é😀\\t");
    expect(goJson({ b: ["<", 1, true, null], a: "&" })).toBe('{"a":"\\u0026","b":["\\u003c",1,true,null]}');
    expect(encodings("plain-secret")).toEqual(new Set(["plain-secret"]));
  });

  it("masks an env variable's value, the run token, and never a value that is not sensitive", () => {
    const patterns = patternsOf(sensitive("AWS_SECRET", "aws<secret>key", { category: "env" }), {
      key: "region",
      value: "eu-west-1",
      category: "terraform",
      hcl: false,
      sensitive: false,
    });
    expect(redact(patterns, `k=aws\\u003csecret\\u003ekey t=${TOKEN} r=eu-west-1`)).toBe("k=*** t=*** r=eu-west-1");
  });

  it("leaves short and trivial values alone, and masks the rest however short", () => {
    const patterns = patternsOf(
      sensitive("flag", "true"),
      sensitive("off", "FALSE"),
      sensitive("one", "1"),
      sensitive("abc", " abc "),
      sensitive("pin", "1234"),
    );
    expect(redact(patterns, 'enabled = true, off = FALSE, n = 1, s = "abc", pin = 1234\n')).toBe('enabled = true, off = FALSE, n = 1, s = "abc", pin = ***\n');
  });
});

describe("the log's redactor: across chunk boundaries", () => {
  const patterns = patternsOf(sensitive("pw", SECRET));
  const log = `{"@message":"pw = ${goJsonEscaped(`"${goQuoted(SECRET)}"`)}","outputs":{"pw":{"value":"${goJsonEscaped(SECRET)}"}}}\n`;
  const expected = '{"@message":"pw = \\"***\\"","outputs":{"pw":{"value":"***"}}}\n';

  it("masks a secret split between two appends, wherever the split falls", () => {
    const bytes = Buffer.from(log, "utf8");
    for (let i = 0; i <= bytes.length; i++) {
      const out: Buffer[] = [];
      const r = new Redactor(patterns, (b) => out.push(b));
      r.write(bytes.subarray(0, i));
      r.write(bytes.subarray(i));
      r.end();
      expect(Buffer.concat(out).toString("utf8"), `split at ${i}`).toBe(expected);
    }
  });

  it("masks a secret that arrives a byte at a time, and holds back only what could begin one", () => {
    const bytes = Buffer.from(log, "utf8");
    const out: Buffer[] = [];
    const r = new Redactor(patterns, (b) => out.push(b));
    for (const b of bytes) r.write(Buffer.from([b]));
    r.end();
    expect(Buffer.concat(out).toString("utf8")).toBe(expected);

    const seen: string[] = [];
    const h = new Redactor(["hunter2"], (b) => seen.push(b.toString()));
    h.write(Buffer.from("pass: hun"));
    expect(seen.join("")).toBe("pass: ");
    h.write(Buffer.from("ter2 and hunt"));
    h.write(Buffer.from("ing"));
    h.end();
    expect(seen.join("")).toBe("pass: *** and hunting");
  });

  it("masks the longest of the secrets that start at the same place", () => {
    expect(redact(["secret", "secret-and-more"], "a secret-and-more b secret c")).toBe("a *** b *** c");
  });
});

describe("the log's redactor: the parts of an HCL or JSON value", () => {
  const MAP = `{
    # the database's
    user     = "admin-user"
    password = "x<y&z>w-secret"
    port     = 5432
    hosts    = ["db-one.internal", "db-two.internal"]
    cert     = <<-EOT
      -----BEGIN CERT-----
      line-one-of-the-cert
      EOT
    "quoted key" = { inner = "nested-secret", on = true }
  }`;
  const patterns = patternsOf(sensitive("db", MAP, { hcl: true }));

  it("masks every string and number of a sensitive HCL map as the plan prints them, and keeps its keys and trivial parts", () => {
    const plan = `  + db = {
      + cert         = <<-EOT
            -----BEGIN CERT-----
            line-one-of-the-cert
        EOT
      + hosts        = [
          + "db-one.internal",
          + "db-two.internal",
        ]
      + password     = "x<y&z>w-secret"
      + port         = 5432
      + "quoted key" = {
          + inner = "nested-secret"
          + on    = true
        }
      + user         = "admin-user"
    }
`;
    const log = redact(patterns, plan);
    for (const part of ["admin-user", "x<y&z>w-secret", "5432", "db-one.internal", "db-two.internal", "BEGIN CERT", "line-one-of-the-cert", "nested-secret"]) {
      expect(log).not.toContain(part);
    }
    expect(log).toContain('+ password     = "***"');
    expect(log).toContain("+ port         = ***");
    expect(log).toContain('+ "quoted key" = {');
    expect(log).toContain("+ on    = true");
  });

  it("masks the map's JSON form in a -json log line as a JSON string, so the line stays JSON", () => {
    const value = {
      cert: "-----BEGIN CERT-----\nline-one-of-the-cert\n",
      hosts: ["db-one.internal", "db-two.internal"],
      password: "x<y&z>w-secret",
      port: 5432,
      "quoted key": { inner: "nested-secret", on: true },
      user: "admin-user",
    };
    const line = `{"@message":"Outputs: 1","outputs":{"db":{"sensitive":false,"value":${goJson(value)}}},"type":"outputs"}\n`;
    const log = redact(patterns, line);
    expect(JSON.parse(log)).toEqual({ "@message": "Outputs: 1", outputs: { db: { sensitive: false, value: "***" } }, type: "outputs" });
    // jsonencode(var.db) printed as a string in a -json line: masked inside it.
    const encoded = `{"value":"${goJsonEscaped(goJson(value))}"}\n`;
    expect(JSON.parse(redact(patterns, encoded))).toEqual({ value: "***" });
    // As a `map(string)` variable holds it: its numbers and bools are strings.
    const typed = `{"value":${goJson({ a: "x<y&z>w-secret", n: "5432", on: "true" })}}\n`;
    const flat = patternsOf(sensitive("m", '{ a = "x<y&z>w-secret", n = 5432, on = true }', { hcl: true }));
    expect(JSON.parse(redact(flat, typed))).toEqual({ value: "***" });
  });

  it("masks the parts of a sensitive string that holds JSON (printed as jsonencode of its parts)", () => {
    const p = patternsOf(sensitive("creds", '{"client_id":"client-0001","client_secret":"s3cr3t<&>"}'));
    const log = redact(p, '+ creds = jsonencode(\n    {\n      + client_id     = "client-0001"\n      + client_secret = "s3cr3t<&>"\n    }\n)\n');
    expect(log).not.toContain("client-0001");
    expect(log).not.toContain("s3cr3t");
    expect(log).toContain("client_secret");
  });

  it("masks each line of a multi-line secret (a heredoc in the plan)", () => {
    const p = patternsOf(sensitive("key", "-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END KEY-----\n"));
    const log = redact(p, "  + key = <<-EOT\n        -----BEGIN KEY-----\n        MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n        -----END KEY-----\n    EOT\n");
    expect(log).toBe("  + key = <<-EOT\n        ***\n        ***\n        ***\n    EOT\n");
  });

  it("masks the strings of an HCL value it cannot read", () => {
    const p = patternsOf(sensitive("odd", '{ a = upper("half-read-secret") }', { hcl: true }));
    expect(redact(p, 'a = "HALF" and half-read-secret')).toBe('a = "HALF" and ***');
  });
});

describe("the HCL value reader", () => {
  it("reads literals, tuples, objects, heredocs, escapes and comments", () => {
    expect(
      parseHclValue(`{
        a = "x\\"y\\\\z\\n\\u00e9$\${lit}%%{lit}" // a comment
        "b-c": [1, -2.5e1, true, false, null,]
        /* block */ d = <<EOT
  kept indent
EOT
        e = <<-EOT
          stripped
            two
          EOT
        f = "\${var.x}"
      }`),
    ).toEqual({
      a: `x"y\\z\né\${lit}%{lit}`,
      "b-c": [1, -25, true, false, null],
      d: "  kept indent\n",
      e: "stripped\n  two\n",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: an interpolation kept as written
      f: "${var.x}",
    });
    expect(parseHclValue('"plain"')).toBe("plain");
    expect(parseHclValue("tomap({})")).toBeUndefined();
    expect(parseHclValue('{ a = "unterminated }')).toBeUndefined();
  });

  it("finds the strings of text it cannot read", () => {
    expect(hclStrings('f("one", [g(<<X\ntwo\nX\n)]) # "not a string"\n"three\\t"')).toEqual(["one", "two\n", "three\t"]);
  });
});

describe("the redacted JSON plan", () => {
  it("replaces every value Terraform marked sensitive, keeps the rest, and gives equal values equal stand-ins", () => {
    const plan = {
      format_version: "1.2",
      resource_changes: [
        {
          address: "a.b",
          change: {
            actions: ["update"],
            before: { name: "n", secret: "old", list: ["x", "s1"] },
            after: { name: "n", secret: "new", list: ["x", "s1"] },
            before_sensitive: { secret: true, list: [false, true] },
            after_sensitive: { secret: true, list: [false, true] },
          },
        },
      ],
      output_changes: { pw: { actions: ["create"], before: null, after: "hunter2", before_sensitive: false, after_sensitive: true } },
    };
    const out = redactedPlan(plan, { format_version: "1.0", provider_schemas: { p: {} } });
    const text = JSON.stringify(out);
    for (const secret of ["old", "new", "s1", "hunter2"]) expect(text).not.toContain(`"${secret}"`);
    const rc = (out.resource_changes as { change: { before: Record<string, unknown>; after: Record<string, unknown> } }[])[0]!.change;
    expect(rc.before.name).toBe("n");
    expect(rc.before.secret).not.toEqual(rc.after.secret);
    expect((rc.before.list as string[])[1]).toEqual((rc.after.list as string[])[1]);
    expect(out.plan_format_version).toBe("1.2");
    expect(out.provider_schemas).toEqual({ p: {} });
  });

  const MAP = '{ a = "x<y&z>w-secret", b = "second-secret", port = 5432 }';
  const value = { a: "x<y&z>w-secret", b: "second-secret", port: 5432 };
  const patterns = patternsOf(sensitive("m", MAP, { hcl: true }), sensitive("pw", "hunter2-hunter2"));
  const plan = {
    format_version: "1.2",
    // Only the fields the renderer reads may reach the redacted plan; these hold every variable in clear.
    variables: { m: { value }, pw: { value: "hunter2-hunter2" } },
    prior_state: { values: { outputs: { m: { value } } } },
    planned_values: { outputs: { m: { value } } },
    configuration: { root_module: { resources: [{ expressions: { input: { constant_value: "hunter2-hunter2" } } }] } },
    output_changes: {
      // Outputs of the variables not marked sensitive in the configuration: Terraform marked nothing.
      m: { actions: ["create"], before: null, after: value, after_unknown: false, before_sensitive: false, after_sensitive: false },
      pw: { actions: ["update"], before: "hunter2-hunter2", after: "hunter2-hunter2", before_sensitive: false, after_sensitive: false },
      enc: {
        actions: ["create"],
        before: null,
        after: JSON.stringify({ pw: "x\u003cy" }).replace("x<y", goJsonEscaped("x<y&z>w-secret")),
        after_sensitive: false,
      },
      fine: { actions: ["create"], before: null, after: "not a secret", after_sensitive: false },
    },
    resource_changes: [
      {
        address: 'terraform_data.x["second-secret"]',
        index: "second-secret",
        change: {
          actions: ["create"],
          before: null,
          after: { input: value, other: "kept", count: 5432, id: 5432.5 },
          after_unknown: { id: true },
          before_sensitive: false,
          after_sensitive: { input: {} },
          importing: { id: "import-second-secret" },
        },
      },
    ],
    deferred_changes: [
      { reason: "x", resource_change: { address: "d.x", change: { actions: ["create"], after: { v: "hunter2-hunter2" }, after_sensitive: {} } } },
    ],
    action_invocations: [{ address: "action.a.b", config_values: { token: "hunter2-hunter2" }, config_sensitive: {} }],
    relevant_attributes: [{ resource: 'terraform_data.x["second-secret"]', attribute: ["input"] }],
  };

  it("hides the job's sensitive values that Terraform did not mark, wherever they are, and marks them sensitive", () => {
    const out = redactedPlan(plan, { format_version: "1.0", provider_schemas: {} }, { secrets: patterns });
    const text = JSON.stringify(out);
    for (const secret of ["x<y&z>w-secret", "x\\u003cy", "second-secret", "hunter2-hunter2", "5432,", ":5432}"]) expect(text).not.toContain(secret);
    for (const field of ["variables", "prior_state", "planned_values", "configuration"]) expect(out).not.toHaveProperty(field);

    const outputs = out.output_changes as Record<string, Record<string, unknown>>;
    // Marked sensitive part by part, so Terraform renders `(sensitive value)` there.
    expect(outputs.m!.after_sensitive).toEqual({ a: true, b: true, port: true });
    expect(outputs.pw!.before_sensitive).toBe(true);
    expect(outputs.pw!.after_sensitive).toBe(true);
    // Unchanged stays unchanged.
    expect(outputs.pw!.before).toBe(outputs.pw!.after);
    expect(outputs.enc!.after_sensitive).toBe(true);
    expect(outputs.fine).toMatchObject({ after: "not a secret", after_sensitive: false });

    const [rc] = out.resource_changes as { address: string; index: string; change: Record<string, any> }[];
    expect(rc!.change.after_sensitive).toEqual({ input: { a: true, b: true, port: true }, count: true });
    expect(rc!.change.after.other).toBe("kept");
    expect(rc!.change.after.id).toBe(5432.5);
    expect(rc!.change.after_unknown).toEqual({ id: true });
    expect(rc!.address).toMatch(/^terraform_data\.x\["\(sensitive value [0-9a-f]{12}\)"\]$/);
    expect(rc!.index).toMatch(/^\(sensitive value [0-9a-f]{12}\)$/);
    expect(rc!.change.importing.id).toMatch(/^import-\(sensitive value [0-9a-f]{12}\)$/);
    const deferred = (out.deferred_changes as { resource_change: { change: Record<string, unknown> } }[])[0]!.resource_change.change;
    expect(deferred.after_sensitive).toEqual({ v: true });
    expect((out.action_invocations as Record<string, unknown>[])[0]!.config_sensitive).toEqual({ token: true });
    expect((out.relevant_attributes as { resource: string }[])[0]!.resource).toBe(rc!.address);
  });

  it("keeps what the renderer reads (types, attribute names) when a secret is a common word", () => {
    const out = redactedPlan(
      {
        resource_changes: [
          {
            address: 'module.data.terraform_data.x["data-key"]',
            type: "terraform_data",
            name: "x",
            index: "data-key",
            change: { actions: ["create"], before: null, after: { data: "some data here", input: "other" }, after_sensitive: {} },
          },
        ],
        output_changes: { m: { actions: ["create"], before: null, after: { data: "v" }, after_sensitive: false } },
      },
      {},
      { secrets: patternsOf(sensitive("word", "data")) },
    );
    const [rc] = out.resource_changes as Record<string, any>[];
    expect(rc!.address).toMatch(/^module\.data\.terraform_data\.x\["\(sensitive value [0-9a-f]{12}\)-key"\]$/);
    expect(rc!.type).toBe("terraform_data");
    expect(rc!.name).toBe("x");
    expect(rc!.change.after_sensitive).toEqual({ data: true });
    expect(Object.keys(rc!.change.after)).toEqual(["data", "input"]);
    expect((out.output_changes as Record<string, any>).m).toMatchObject({ after: { data: "v" }, after_sensitive: false });
  });
});

// A real Terraform 1.11.4 through the agent's job code, against the fake service: a configuration that outputs a
// sensitive HCL map and a sensitive string without marking them sensitive, uses a part of the map in a resource's
// address and prints the map's JSON. Each secret part holds a marker that no encoding changes, so a marker found
// anywhere in the log or the redacted plan is a part that escaped masking in whatever encoding Terraform chose.
const MARKERS = ["USERMARK7f3", "PASSMARK2c9", "LINEMARK5a1", "LINEMARK8d4", "PWMARK6e0"];
// `$${` is HCL's literal `${`.
const DB = `{
  user     = "db-USERMARK7f3"
  password = "p<a&s>s \\"w\\\\o$\${rd}-ü-PASSMARK2c9"
  note     = "first-LINEMARK5a1\\nsecond-LINEMARK8d4\\n"
}`;
const PW = "x<y&z>w-PWMARK6e0";
const REDACT_TF = `
variable "db" { type = map(string) }
variable "pw" { type = string }
variable "region" { type = string }

output "db" { value = var.db }
output "pw" { value = var.pw }
output "db_json" { value = jsonencode(var.db) }
output "region" { value = var.region }

resource "terraform_data" "user" {
  for_each = toset([var.db.user])
  input    = var.db
}
`;
const TERRAFORM = onPath(process.env.TERRAFORM ?? "terraform");
const SKIP_SANDBOX = process.env.SKIP_SANDBOX_TEST === "1";

describe.skipIf(SKIP_SANDBOX && !TERRAFORM)("a real Terraform run prints sensitive values it does not know are sensitive", () => {
  let svc: FakeService;
  let tfe: TfeStub;
  let base: string;
  let agent: Agent | null;
  let running: Promise<void> | null;
  let sandbox: Sandbox | null = null;

  beforeAll(async () => {
    if (!TERRAFORM) throw new Error("this test needs Terraform >= 1.10 on PATH, or TERRAFORM naming it (or SKIP_SANDBOX_TEST=1 to skip it)");
    if (SKIP_SANDBOX) return;
    const check = await checkSandbox({ terraform: realpathSync(TERRAFORM), readOnly: [] });
    if (!check.ok) throw new Error(`the sandbox does not work here: ${check.reason} (or SKIP_SANDBOX_TEST=1 to run unsandboxed only)`);
    sandbox = check.sandbox;
  });

  beforeEach(async () => {
    base = realpathSync(mkdtempSync(join(tmpdir(), "agent-redact-test-")));
    svc = new FakeService();
    await svc.start();
    tfe = new TfeStub();
    await tfe.start();
    agent = null;
    running = null;
  });

  afterEach(async () => {
    agent?.interrupt();
    await running?.catch(() => {});
    await svc.stop();
    await tfe.stop();
    rmSync(base, { recursive: true, force: true });
  });

  function runJob(phase: "plan" | "apply", structured: boolean, sandboxed: boolean, artifacts: Record<string, Buffer> = {}) {
    const j = job({
      run: `run-Redact${structured ? "Json" : "Text"}${sandboxed ? "Box" : "Raw"}0`.padEnd(20, "0"),
      phase,
      hostname: tfe.host,
      apiBase: `http://${tfe.host}/api/v2/`,
      workspace: { ...job().workspace, structuredRunOutput: structured },
      variables: [
        sensitive("db", DB, { hcl: true }),
        sensitive("pw", PW),
        { key: "region", value: "region-in-clear", category: "terraform", hcl: false, sensitive: false },
      ],
    });
    const state = svc.offer(j, tarGz([{ path: "main.tf", body: REDACT_TF }]), artifacts);
    if (!agent) {
      agent = new Agent({
        url: svc.base,
        token: AGENT_TOKEN,
        name: "redacting",
        terraform: realpathSync(TERRAFORM!),
        terraformVersion: "1.11.4",
        tmpDir: base,
        sandbox: sandboxed ? sandbox : null,
        heartbeatMs: 50,
        flushMs: 10,
        statusMs: 200,
        idleDelayMs: 5,
        retryDelayMs: 5,
      });
      running = agent.run();
    }
    return svc.until(() => state.finish !== null).then(() => state);
  }

  const cases = [
    { structured: false, sandboxed: false },
    { structured: true, sandboxed: false },
    ...(SKIP_SANDBOX
      ? []
      : [
          { structured: false, sandboxed: true },
          { structured: true, sandboxed: true },
        ]),
  ];
  for (const { structured, sandboxed } of cases) {
    it(`hides them in the ${structured ? "JSON" : "human"} log and the redacted plan (${sandboxed ? "sandboxed" : "unsandboxed"})`, async () => {
      const plan = await runJob("plan", structured, sandboxed);
      const planLog = plan.log.toString();
      expect(plan.finish, planLog).toMatchObject({ status: "finished", resourceAdditions: 1 });
      const apply = await runJob("apply", structured, sandboxed, Object.fromEntries(plan.artifacts));
      const applyLog = apply.log.toString();
      expect(apply.finish, applyLog).toMatchObject({ status: "finished", resourceAdditions: 1 });
      const redacted = plan.artifacts.get("plan-json-redacted")!.toString();

      // Terraform did print them: the unredacted plan (workspace admins only) holds every marker.
      const full = plan.artifacts.get("plan-json")!.toString();
      for (const m of MARKERS) expect(full).toContain(m);
      for (const [what, text] of [
        ["plan log", planLog],
        ["apply log", applyLog],
        ["redacted plan", redacted],
      ]) {
        for (const m of MARKERS) expect(text, `${m} in the ${what}`).not.toContain(m);
        for (const raw of ["p<a&s>s", "p\\u003ca\\u0026s", "x<y&z>w", "x\\u003cy\\u0026z"]) expect(text, `${raw} in the ${what}`).not.toContain(raw);
      }
      // What is not secret stays readable, and a -json log stays JSON line by line.
      expect(applyLog).toContain("region-in-clear");
      expect(structured ? planLog : applyLog).toContain("***");
      if (structured) {
        for (const line of applyLog.split("\n").filter((l) => l.startsWith("{"))) expect(() => JSON.parse(line), line).not.toThrow();
      } else {
        expect(applyLog).toMatch(/terraform_data\.user\["\*\*\*"\]: Creation complete/);
      }

      // The redacted plan marks what held a secret, so Terraform renders it as a sensitive value.
      const doc = JSON.parse(redacted);
      expect(doc.output_changes.db.after_sensitive).toEqual({ note: true, password: true, user: true });
      expect(doc.output_changes.pw.after_sensitive).toBe(true);
      expect(doc.output_changes.db_json.after_sensitive).toBe(true);
      expect(doc.output_changes.region).toMatchObject({ after: "region-in-clear", after_sensitive: false });
      expect(doc.resource_changes[0].address).toMatch(/^terraform_data\.user\["\(sensitive value [0-9a-f]{12}\)"\]$/);
      expect(doc.resource_changes[0].change.after_sensitive.input).toEqual({ note: true, password: true, user: true });
    }, 60_000);
  }
});
