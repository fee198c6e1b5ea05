// Property-based fuzzing: every documented endpoint with a body or a query gets inputs that
// its schema rejects, plus hostile-but-valid search strings. Never a 5xx; every rejection is a JSON:API
// error; a rejected request leaves the targeted workspace byte-for-byte unchanged.
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { app } from "../../src/index";
import { openApiDocument } from "../../src/jsonapi/openapi";
import { createOrg, createWorkspace } from "../fixtures";
import { api, uniqueName } from "../helpers";

declare const __FUZZ_RUNS__: string;
declare const __FUZZ_SEED__: string;
const RUNS = Number(typeof __FUZZ_RUNS__ === "string" ? __FUZZ_RUNS__ : "100") || 100;
const SEED = Number(typeof __FUZZ_SEED__ === "string" && __FUZZ_SEED__ ? __FUZZ_SEED__ : Date.now() % 2_147_483_647);

interface Ctx {
  org: string;
  ws: { id: string; name: string };
  ids: Record<string, string>;
}
let ctx: Ctx;

beforeAll(async () => {
  const org = await createOrg();
  const ws = await createWorkspace(org);
  const team = (await api("POST", `/organizations/${org}/teams`, { body: { data: { type: "teams", attributes: { name: uniqueName("t") } } } })).body.data.id;
  const project = (await api("GET", `/organizations/${org}`)).body.data.relationships["default-project"].data.id;
  ctx = { org, ws: { id: ws.id, name: ws.attributes.name }, ids: { team_id: team, project_id: project } };
  console.log(`fuzz: ${RUNS} runs per endpoint, seed ${SEED} (FUZZ_SEED=${SEED} reproduces)`);
});

function concrete(path: string): string {
  return path
    .replace("/api/v2", "")
    .replace("{organization_name}", ctx.org)
    .replace("{workspace_id}", ctx.ws.id)
    .replace("{name}", ctx.ws.name)
    .replace(/\{(\w+)\}/g, (_, p: string) => ctx.ids[p] ?? `${p.split("_")[0]}-Fuzz0000Fuzz0000`);
}

/** Documents that their schemas reject: wrong JSON, wrong types, unknown types, deep nesting, long strings, nulls. */
const invalidBody = fc.oneof(
  fc.string({ maxLength: 40 }).map((s) => `{${s}`),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  fc
    .record({ data: fc.record({ type: fc.string({ maxLength: 20 }), attributes: fc.dictionary(fc.string({ maxLength: 30 }), fc.jsonValue({ maxDepth: 2 })) }) })
    .map((v) => JSON.stringify(v)),
  fc
    .record({
      data: fc.array(fc.record({ type: fc.oneof(fc.string({ maxLength: 12 }), fc.constant(null)), id: fc.oneof(fc.integer(), fc.string({ maxLength: 70 })) }), {
        maxLength: 4,
      }),
    })
    .map((v) => JSON.stringify(v)),
  fc.integer({ min: 50, max: 400 }).map((d) => "[".repeat(d) + "]".repeat(d)),
  fc.constantFrom(
    JSON.stringify({ data: null }),
    JSON.stringify({ data: { type: "workspaces", attributes: { name: "x".repeat(5000) } } }),
    JSON.stringify({ data: { type: "workspaces", attributes: { "auto-apply": "true", "trigger-prefixes": [1, 2] } } }),
    JSON.stringify({ data: { type: "tag-bindings", attributes: { key: "hc:x" } } }),
    JSON.stringify({ data: [{ type: "tag-bindings", attributes: { key: "k".repeat(200), value: 5 } }] }),
    JSON.stringify({ data: { type: "state-versions", attributes: { serial: -1, md5: "zz" } } }),
    "",
    "null",
    "\u0000",
  ),
);

/** Hostile but valid search strings: SQL and glob metacharacters, unicode, percent-encoding oddities. */
const hostile = fc.oneof(
  fc.constantFrom(
    "%",
    "_",
    "\\",
    "'",
    '"',
    "' OR 1=1 --",
    "*",
    "**",
    "*%*",
    "a*b",
    "%25",
    "%2",
    "%%",
    "[",
    "]",
    "\u2603",
    "ℵ",
    "\u0000x",
    "😀",
    ";DROP TABLE workspaces;",
  ),
  fc.string({ maxLength: 30 }),
);

function isErrorDocument(body: unknown): boolean {
  const errors = (body as { errors?: Array<{ status?: unknown; title?: unknown }> } | null)?.errors;
  return Array.isArray(errors) && errors.length > 0 && errors.every((e) => typeof e.status === "string" && typeof e.title === "string");
}

describe("fuzz: bodies", () => {
  it("every documented endpoint with a body survives invalid input", async () => {
    const doc = openApiDocument(app) as unknown as { paths: Record<string, Record<string, { requestBody?: unknown }>> };
    const targets = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => op.requestBody)
        .map(([method]) => ({ method: method.toUpperCase(), path })),
    );
    expect(targets.length).toBeGreaterThan(30);
    const found: string[] = [];
    for (const t of targets) {
      await fc.assert(
        fc.asyncProperty(invalidBody, async (raw) => {
          const url = concrete(t.path);
          const before = await api("GET", `/workspaces/${ctx.ws.id}`);
          const res = await api(t.method, url, { raw });
          if (res.status >= 500) found.push(`${t.method} ${t.path} ${res.status} ${raw.slice(0, 80)}`);
          expect(res.status, `${t.method} ${t.path}`).toBeLessThan(500);
          if (res.status >= 400) {
            expect(isErrorDocument(res.body), `${t.method} ${t.path} ${res.status}`).toBe(true);
            const after = await api("GET", `/workspaces/${ctx.ws.id}`);
            expect(after.text).toBe(before.text);
          }
        }),
        { numRuns: RUNS, seed: SEED },
      );
    }
    expect(found).toEqual([]);
  }, 600_000);
});

describe("fuzz: queries", () => {
  it("list endpoints answer hostile search strings with correct (possibly empty) results or a 4xx, never a 5xx", async () => {
    const params = [
      "search[name]",
      "search[wildcard-name]",
      "search[tags]",
      "search[exclude-tags]",
      "filter[project][id]",
      "filter[current-run][status]",
      "filter[tagged][0][key]",
      "filter[tagged][0][value]",
      "sort",
      "include",
      "page[number]",
      "page[size]",
      "q",
    ];
    const lists = [
      `/organizations/{organization_name}/workspaces`,
      `/organizations/{organization_name}/projects`,
      `/organizations/{organization_name}/tags`,
      `/organizations/{organization_name}/teams`,
      `/workspaces/{workspace_id}/relationships/tags`,
    ];
    for (const list of lists) {
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...params), hostile, fc.boolean(), async (param, value, encodeKey) => {
          const key = encodeKey ? encodeURIComponent(param) : param;
          const res = await api("GET", `${concrete(list)}?${key}=${encodeURIComponent(value)}`);
          expect(res.status).toBeLessThan(500);
          if (res.status >= 400) expect(isErrorDocument(res.body)).toBe(true);
          else expect(Array.isArray(res.body.data)).toBe(true);
          if (res.status === 200 && list.endsWith("/workspaces") && param === "search[name]" && !ctx.ws.name.toLowerCase().includes(value.toLowerCase())) {
            expect(res.body.data).toEqual([]);
          }
        }),
        { numRuns: RUNS, seed: SEED },
      );
    }
  }, 600_000);
});
