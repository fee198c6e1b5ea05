// Property-based fuzzing (issue 8), driven by the OpenAPI document the routes' zod schemas produce, so
// every endpoint that exists when it runs is covered:
// - every documented body gets documents its schema rejects (one member broken: wrong type, null,
//   over-long strings at the limits table's bounds, out-of-range numbers, unknown `type`, missing
//   members, deep nesting, too many items) plus malformed JSON: never a 5xx, a 422 blaming that member,
//   and the targeted workspace byte-for-byte unchanged;
// - every documented query gets invalid values, percent-encoding oddities and junk parameters (ignored);
// - every list gets hostile but valid search strings; the workspace list's name searches are checked
//   against an oracle.
// `FUZZ_RUNS` (npm run fuzz: 1,000) sets the inputs per endpoint; `FUZZ_SEED` replays a run.
import { Validator } from "@cfworker/json-schema";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { app } from "../src/index";
import { LIMITS } from "../src/limits";
import { openApiDocument } from "../src/openapi";
import { api, type ApiResponse, createOrg, createWorkspace, uniqueName } from "./helpers";

declare const __FUZZ_RUNS__: string;
declare const __FUZZ_SEED__: string;
const RUNS = Number(typeof __FUZZ_RUNS__ === "string" ? __FUZZ_RUNS__ : "100") || 100;
const SEED = Number(typeof __FUZZ_SEED__ === "string" && __FUZZ_SEED__ ? __FUZZ_SEED__ : Date.now() % 2_147_483_647);
/** Generous per-endpoint budget: a few ms per request, a handful of requests per input. */
const TIMEOUT = 60_000 + RUNS * 400;
const OPTIONS = { numRuns: RUNS, seed: SEED, endOnFailure: RUNS > 100 };

/** Routes under /api/v2 that are deliberately not in the OpenAPI document. */
const UNDOCUMENTED = new Set(["GET /api/v2/openapi.json"]);

// ---------------------------------------------------------------------------------------------------
// The document

interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  const?: unknown;
  maxLength?: number;
  minLength?: number;
  maximum?: number;
  minimum?: number;
  maxItems?: number;
  minItems?: number;
  pattern?: string;
  additionalProperties?: boolean | Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  $ref?: string;
}
interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: Schema;
}
interface Operation {
  description?: string;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
}
interface OpenApi {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

const doc = openApiDocument(app) as unknown as OpenApi;

/** Inlines `$ref`s (component schemas are not recursive). */
function deref(s: Schema): Schema {
  if (s.$ref) return deref(doc.components!.schemas![s.$ref.split("/").pop()!]);
  const out: Schema = { ...s };
  if (s.properties) out.properties = Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, deref(v)]));
  if (s.items) out.items = deref(s.items);
  if (s.anyOf) out.anyOf = s.anyOf.map(deref);
  if (s.oneOf) out.oneOf = s.oneOf.map(deref);
  return out;
}

interface Op {
  method: string;
  path: string;
  /** Path parameters: ids without a fixture are made up to match their schema. */
  params: Parameter[];
  body?: Schema;
  /** The handler parses an optional body itself (its description says so). */
  handlerBody: boolean;
  query: Parameter[];
}
const OPS: Op[] = Object.entries(doc.paths).flatMap(([path, ops]) =>
  Object.entries(ops).map(([method, op]) => {
    const content = op.requestBody?.content ?? {};
    const media = content["application/vnd.api+json"] ?? Object.values(content)[0];
    const params = (op.parameters ?? []).map((p) => ({ ...p, schema: deref(p.schema ?? {}) }));
    return {
      method: method.toUpperCase(),
      path,
      params: params.filter((p) => p.in === "path"),
      body: media ? deref(media.schema) : undefined,
      handlerBody: !media && /Body \(optional\)/.test(op.description ?? ""),
      query: params.filter((p) => p.in === "query"),
    };
  }),
);
const label = (op: Op) => `${op.method} ${op.path.replace("/api/v2", "")}`;

// ---------------------------------------------------------------------------------------------------
// Fixtures: real resources for path parameters, a target workspace, and an oracle organisation

interface Ctx {
  org: string;
  ws: { id: string; name: string };
  /** By parameter name, or by `collection/param` where a name is ambiguous (`{id}`). */
  ids: Record<string, string>;
  oracleOrg: string;
}
let ctx: Ctx;

/** Names whose characters matter to LIKE and glob patterns (workspace names allow letters, digits, - and _). */
const ORACLE_NAMES = ["fz-a_b-1", "fz-aXb-2", "FZ-A_B-3", "fz-100-4", "fz__5", "fz-a-b-6", "zz-tail-fz"];

beforeAll(async () => {
  const org = await createOrg();
  const ws = await createWorkspace(org);
  const created = (res: ApiResponse) => (res.status === 201 ? (res.body.data.id as string) : undefined);
  const post = (path: string, body: unknown) => api("POST", path, { body });
  const team = created(await post(`/organizations/${org}/teams`, { data: { type: "teams", attributes: { name: uniqueName("t") } } }));
  const project = (await api("GET", `/organizations/${org}`)).body.data.relationships["default-project"].data.id as string;
  const sshKey = created(await post(`/organizations/${org}/ssh-keys`, { data: { type: "ssh-keys", attributes: { name: uniqueName("k"), value: "ssh-ed25519 AAAA" } } }));
  const pool = created(await post(`/organizations/${org}/agent-pools`, { data: { type: "agent-pools", attributes: { name: uniqueName("p") } } }));
  await post(`/workspaces/${ws.id}/relationships/tags`, { data: [{ type: "tags", attributes: { name: "fuzz" } }] });
  const tag = (await api("GET", `/organizations/${org}/tags`)).body?.data?.[0]?.id as string | undefined;
  const grant = (kind: "workspace" | "project", id: string) =>
    team
      ? post(`/team-${kind}s`, {
          data: { type: `team-${kind}s`, attributes: { access: "read" }, relationships: { [kind]: { data: { type: `${kind}s`, id } }, team: { data: { type: "teams", id: team } } } },
        }).then(created)
      : undefined;
  const fixtures = {
    team_id: team,
    project_id: project,
    ssh_key_id: sshKey,
    pool_id: pool,
    tag_id: tag,
    "team-workspaces/id": await grant("workspace", ws.id),
    "team-projects/id": await grant("project", project),
  };
  const ids: Record<string, string> = {};
  for (const [k, v] of Object.entries(fixtures)) if (v) ids[k] = v;

  const oracleOrg = await createOrg();
  for (const name of ORACLE_NAMES) await createWorkspace(oracleOrg, { name });
  ctx = { org, ws: { id: ws.id, name: ws.attributes.name as string }, ids, oracleOrg };
  console.log(`fuzz: ${RUNS} runs per endpoint, seed ${SEED} (FUZZ_SEED=${SEED} reproduces)`);
});

/** The operation's URL with fixtures for its path parameters (or made-up ids its schema accepts). */
function concrete(op: Op): string {
  return op.path
    .replace("/api/v2", "")
    .replace("{organization_name}", ctx.org)
    .replace("{workspace_id}", ctx.ws.id)
    .replace("{name}", ctx.ws.name)
    .replace(/([\w-]+)\/\{(\w+)\}/g, (_, collection: string, p: string) => {
      const id = ctx.ids[`${collection}/${p}`] ?? ctx.ids[p];
      if (id) return `${collection}/${id}`;
      const pattern = op.params.find((x) => x.name === p)?.schema?.pattern;
      const made = pattern ? fc.sample(fc.stringMatching(new RegExp(pattern)), { numRuns: 1, seed: 7 })[0] : `${p.split("_")[0]}-Fuzz0000Fuzz0000`;
      return `${collection}/${made}`;
    });
}

/** Values for required query parameters (filters naming the fixtures). */
function baselineQuery(op: Op): Array<[string, string]> {
  const known: Record<string, () => string> = {
    "filter[workspace][id]": () => ctx.ws.id,
    "filter[project][id]": () => ctx.ids.project_id,
    "filter[workspace][name]": () => ctx.ws.name,
    "filter[organization][name]": () => ctx.org,
  };
  return op.query.filter((p) => p.required).map((p) => [p.name, known[p.name]?.() ?? "x"]);
}

const encodeQuery = (pairs: Array<[string, string]>) => pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&");
const short = (s: string) => (s.length > 160 ? `${s.slice(0, 160)}…(${s.length} chars)` : s);

// ---------------------------------------------------------------------------------------------------
// Assertions shared by every property

interface ErrorObject {
  status?: unknown;
  title?: unknown;
  source?: { pointer?: unknown; parameter?: unknown };
}
function errorsOf(res: ApiResponse): ErrorObject[] {
  const errors = (res.body as { errors?: ErrorObject[] } | null)?.errors;
  expect(Array.isArray(errors) && errors.length > 0, `${res.status} is not a JSON:API error document: ${short(res.text)}`).toBe(true);
  for (const e of errors!) {
    expect(e.status, short(res.text)).toBe(String(res.status));
    expect(typeof e.title, short(res.text)).toBe("string");
  }
  return errors!;
}

/** Never a 5xx; a rejection is a JSON:API error document, and a 422 says which member is to blame. */
function checkResponse(what: string, res: ApiResponse): void {
  expect(res.status, `${what} → ${res.status} ${short(res.text)}`).toBeLessThan(500);
  if (res.status < 400) return;
  const errors = errorsOf(res);
  if (res.status === 422) for (const e of errors) expect(e.source?.pointer ?? e.source?.parameter, `${what}: 422 without source: ${short(res.text)}`).toBeDefined();
}

/** Two JSON pointers where one contains the other (a validator may blame the enclosing member). */
function related(a: string, b: string): boolean {
  const [x, y] = [a === "/" ? "" : a, b === "/" ? "" : b];
  return x === y || x.startsWith(`${y}/`) || y.startsWith(`${x}/`);
}

/** Reads the target workspace; a rejected request must leave this text unchanged. */
async function snapshot(): Promise<string> {
  const res = await api("GET", `/workspaces/${ctx.ws.id}`);
  if (res.status === 200) ctx.ws.name = res.body.data.attributes.name;
  return res.text;
}

// ---------------------------------------------------------------------------------------------------
// Schema-driven generators

function typesOf(s: Schema): string[] {
  if (Array.isArray(s.type)) return s.type;
  if (s.type) return [s.type];
  if (s.properties) return ["object"];
  if (s.enum) return [...new Set(s.enum.map((v) => (v === null ? "null" : typeof v)))];
  return ["string", "number", "boolean", "object", "array", "null"];
}

/** Values the schema accepts (as far as JSON Schema can say; zod refinements may still refuse some). */
function validOf(s: Schema, depth = 0): fc.Arbitrary<unknown> {
  if (s.const !== undefined) return fc.constant(s.const);
  if (s.enum) return fc.constantFrom(...s.enum);
  const alternatives = s.anyOf ?? s.oneOf;
  if (alternatives) return fc.oneof(...alternatives.map((a) => validOf(a, depth + 1)));
  return fc.oneof(
    ...typesOf(s).map((t): fc.Arbitrary<unknown> => {
      switch (t) {
        case "null":
          return fc.constant(null);
        case "boolean":
          return fc.boolean();
        case "integer":
          return fc.integer({ min: s.minimum ?? -1000, max: s.maximum ?? 1000 });
        case "number":
          return fc.double({ min: s.minimum ?? -1000, max: s.maximum ?? 1000, noNaN: true, noDefaultInfinity: true });
        case "string": {
          if (s.pattern) return fc.stringMatching(new RegExp(s.pattern));
          const min = s.minLength ?? 0;
          return fc.string({ minLength: min, maxLength: Math.min(s.maxLength ?? min + 12, min + 12), unit: "grapheme-ascii" });
        }
        case "array": {
          const min = s.minItems ?? 0;
          if (depth > 6 || !s.items) return fc.constant([]);
          return fc.array(validOf(s.items, depth + 1), { minLength: min, maxLength: Math.min(s.maxItems ?? min + 3, min + 3) });
        }
        default: {
          if (depth > 6) return fc.constant({});
          const props = Object.entries(s.properties ?? {}).map(([k, v]) => [k, validOf(v, depth + 1)] as const);
          return fc.record(Object.fromEntries(props) as Record<string, fc.Arbitrary<unknown>>, { requiredKeys: s.required ?? [] });
        }
      }
    }),
  );
}

/** The smallest value a schema accepts, used to fill arrays past their maximum. */
function minimalOf(s: Schema): unknown {
  if (s.const !== undefined) return s.const;
  if (s.enum) return s.enum[0];
  const t = typesOf(s)[0];
  if (t === "null") return null;
  if (t === "boolean") return false;
  if (t === "integer" || t === "number") return s.minimum ?? 0;
  if (t === "string") return s.pattern ? fc.sample(fc.stringMatching(new RegExp(s.pattern)), { numRuns: 1, seed: 1 })[0] : "a".repeat(s.minLength ?? 1);
  if (t === "array") return Array.from({ length: s.minItems ?? 0 }, () => minimalOf(s.items ?? {}));
  return Object.fromEntries((s.required ?? []).map((k) => [k, minimalOf(s.properties?.[k] ?? {})]));
}

interface Location {
  path: Array<string | number>;
  schema: Schema;
  required: boolean;
  present: boolean;
}
/** Every member of `value` the schema describes (present or not): where a mutation may land. */
function locations(s: Schema, value: unknown, path: Array<string | number> = [], out: Location[] = []): Location[] {
  if (path.length === 0) out.push({ path, schema: s, required: true, present: true });
  if (s.properties && value && typeof value === "object" && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    for (const [k, sub] of Object.entries(s.properties)) {
      const present = k in obj;
      out.push({ path: [...path, k], schema: sub, required: (s.required ?? []).includes(k), present });
      if (present) locations(sub, obj[k], [...path, k], out);
    }
  }
  if (s.items && Array.isArray(value)) {
    value.forEach((v, i) => {
      out.push({ path: [...path, i], schema: s.items!, required: true, present: true });
      locations(s.items!, v, [...path, i], out);
    });
  }
  return out;
}

const KINDS = ["wrong-type", "null", "too-long", "too-short", "out-of-range", "not-integer", "huge-number", "enum-miss", "too-many", "too-few", "missing", "deep", "pattern-miss"] as const;
type Kind = (typeof KINDS)[number];
const HUGE = "__fuzz_huge_number__";

/** A replacement for the member at `loc` meant to break its schema (or its removal). */
function mutation(loc: Location, kind: Kind, n: number): { value: unknown; remove?: boolean } {
  const s = loc.schema;
  const types = typesOf(s);
  switch (kind) {
    case "null":
      if (!types.includes("null")) return { value: null };
      break;
    case "too-long":
      // One past the bound (from the limits table), sometimes far past it.
      if (s.maxLength !== undefined) return { value: "x".repeat(s.maxLength + 1 + (n % 3 === 0 ? n % 5000 : 0)) };
      break;
    case "too-short":
      if (s.minLength) return { value: "" };
      break;
    case "out-of-range":
      if (s.maximum !== undefined) return { value: s.maximum + 1 + (n % 1000) };
      if (s.minimum !== undefined) return { value: s.minimum - 1 - (n % 1000) };
      break;
    case "not-integer":
      if (types.includes("integer")) return { value: (s.minimum ?? 0) + 0.5 };
      break;
    case "huge-number":
      if (types.includes("integer") || types.includes("number")) return { value: HUGE };
      break;
    case "enum-miss":
      if (s.enum) return { value: [`${String(s.enum[0])}x`, "", `${String(s.enum[0]).toUpperCase()}_`, "unknown-type", " "][n % 5] };
      break;
    case "too-many":
      if (s.maxItems !== undefined) return { value: Array.from({ length: s.maxItems + 1 }, () => minimalOf(s.items ?? {})) };
      break;
    case "too-few":
      if (s.minItems) return { value: [] };
      break;
    case "missing":
      if (loc.required && loc.present && loc.path.length > 0) return { value: undefined, remove: true };
      break;
    case "deep": {
      const depth = 20 + (n % 3000);
      return { value: JSON.parse(n % 2 === 0 ? "[".repeat(depth) + "]".repeat(depth) : '{"a":'.repeat(depth) + "1" + "}".repeat(depth)) };
    }
    case "pattern-miss":
      if (s.pattern) return { value: "zz-not-matching" };
      break;
    default:
      break;
  }
  // wrong-type (and the fallback): a value of a JSON type the schema does not allow.
  const candidates: Array<[string[], unknown]> = [
    [["integer", "number"], 42],
    [["number"], -1.5],
    [["boolean"], true],
    [["string"], "fuzz"],
    [["array"], [1, "two", null]],
    [["object"], { fuzz: true }],
    [["null"], null],
  ];
  const wrong = candidates.filter(([ts]) => !ts.some((t) => types.includes(t)));
  return { value: wrong.length ? wrong[n % wrong.length][1] : { fuzz: [] } };
}

function setAt(root: unknown, path: Array<string | number>, value: unknown, remove: boolean): unknown {
  if (path.length === 0) return value;
  const copy = structuredClone(root) as Record<string | number, unknown>;
  let cur = copy;
  for (const key of path.slice(0, -1)) cur = cur[key] as Record<string | number, unknown>;
  const last = path[path.length - 1];
  if (remove) delete cur[last];
  else cur[last] = value;
  return copy;
}

interface BodyCase {
  raw: string;
  kind: string;
  /** The member to blame when the document breaks its schema in one place. */
  pointer?: string;
}
/** Counterexamples print short (a too-long string would flood the report). */
const bodyCase = (c: BodyCase): BodyCase => Object.assign(c, { [fc.toStringMethod]: () => `[${c.kind}${c.pointer !== undefined ? ` at ${c.pointer}` : ""}] ${short(c.raw)}` });

/** Bodies that are not JSON, or not the document any endpoint expects. */
const garbage: fc.Arbitrary<BodyCase> = fc
  .oneof(
    fc.string({ maxLength: 40 }).map((s) => `{${s}`),
    fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
    fc.record({ data: fc.record({ type: fc.string({ maxLength: 20 }), attributes: fc.dictionary(fc.string({ maxLength: 30 }), fc.jsonValue({ maxDepth: 2 })) }) }).map((v) => JSON.stringify(v)),
    fc.integer({ min: 50, max: 100_000 }).map((d) => "[".repeat(d) + "]".repeat(d)),
    fc.integer({ min: 50, max: 50_000 }).map((d) => '{"data":'.repeat(d) + "null" + "}".repeat(d)),
    fc.constantFrom("", " ", "null", "[]", "{}", '{"data":null}', '{"data":[]}', "\u0000", '{"data":{"type":"workspaces"}}garbage', '{"data":1e400}', '{"__proto__":{"admin":true},"data":{}}', "\uFEFF{}", '{"data":"\\ud800"}'),
  )
  .map((raw) => bodyCase({ raw, kind: "garbage" }));

/** A valid document with one member broken, plus (sometimes) an unknown member the API must ignore. */
function mutatedBody(schema: Schema): fc.Arbitrary<BodyCase> {
  return fc.tuple(validOf(schema), fc.nat(), fc.constantFrom(...KINDS), fc.nat({ max: 1_000_000 }), fc.boolean()).map(([valid, at, kind, n, extra]) => {
    const locs = locations(schema, valid);
    const loc = locs[at % locs.length];
    const m = mutation(loc, kind, n);
    let body = setAt(valid, loc.path, m.value, m.remove ?? false);
    // go-tfe sends members the API ignores: they must never be blamed.
    if (extra && body && typeof body === "object" && !Array.isArray(body) && loc.path.length > 0 && schema.additionalProperties !== false) {
      body = { ...(body as object), "fuzz-unknown-member": { relationships: [1, { x: null }] } };
    }
    const raw = JSON.stringify(body).replaceAll(`"${HUGE}"`, "1e400");
    return bodyCase({ raw, kind, pointer: "/" + loc.path.map((p) => String(p).replace(/~/g, "~0").replace(/\//g, "~1")).join("/") });
  });
}

const validators = new Map<Schema, Validator>();
function breaksSchema(schema: Schema, raw: string): boolean {
  let v = validators.get(schema);
  if (!v) validators.set(schema, (v = new Validator(schema as object, "2020-12", true)));
  try {
    return !v.validate(JSON.parse(raw)).valid;
  } catch {
    return true;
  }
}

// ---------------------------------------------------------------------------------------------------

describe("fuzz: coverage", () => {
  it("every route under /api/v2 is in the OpenAPI document (so the fuzzer sees it)", () => {
    const documented = new Set(OPS.map((o) => `${o.method} ${o.path}`));
    const missing = app.routes
      .filter((r) => r.method !== "ALL" && r.path.startsWith("/api/v2/"))
      .map((r) => `${r.method} ${r.path.replace(/:(\w+)(\{[^}]*\})?/g, "{$1}")}`)
      .filter((k) => !documented.has(k) && !UNDOCUMENTED.has(k));
    expect([...new Set(missing)]).toEqual([]);
    expect(OPS.filter((o) => o.body).length).toBeGreaterThan(30);
  });
});

describe("fuzz: bodies", () => {
  for (const op of OPS.filter((o) => o.body || o.handlerBody)) {
    it(label(op), async () => {
      let before = await snapshot();
      const send = async (raw: string, contentType?: string) => {
        const res = await api(op.method, concrete(op), { raw, contentType });
        const after = await snapshot();
        if (res.status >= 400) expect(after, `${label(op)} ${res.status} changed the workspace`).toBe(before);
        before = after;
        return res;
      };

      // The fixed limits first: too large (413 before parsing) and not JSON:API (415).
      const big = await send(`{"data":{"type":"x","attributes":{"description":"${"x".repeat(LIMITS.apiBodyBytes)}"}}}`);
      expect(big.status).toBe(413);
      errorsOf(big);
      const form = await send("data=1", "application/x-www-form-urlencoded");
      expect(form.status).toBe(415);
      expect(errorsOf(form)[0]).toMatchObject({ title: "invalid content type", detail: "content-type must be application/vnd.api+json" });

      const cases = op.body ? fc.oneof({ arbitrary: mutatedBody(op.body), weight: 4 }, { arbitrary: garbage, weight: 1 }) : garbage;
      await fc.assert(
        fc.asyncProperty(cases, async (c) => {
          const res = await send(c.raw);
          checkResponse(`${label(op)} ${String(c)}`, res);
          if (!op.body || c.pointer === undefined || !breaksSchema(op.body, c.raw)) return;
          // A document the schema rejects is refused: 413 if the body limit saw it first, else a 422
          // that blames the broken member (or its container).
          if (c.raw.length > LIMITS.apiBodyBytes) {
            expect(res.status).toBe(413);
            return;
          }
          expect(res.status, `${label(op)} ${String(c)}: a document its schema rejects`).toBe(422);
          const pointers = errorsOf(res).map((e) => String(e.source?.pointer ?? ""));
          expect(pointers.some((p) => related(p, c.pointer!)), `${label(op)} ${String(c)}: blamed ${pointers.join(", ")}`).toBe(true);
        }),
        OPTIONS,
      );
    }, TIMEOUT);
  }
});

/** Percent-encoding oddities, sent raw in keys and values. */
const ODD_RAW = ["%", "%2", "%zz", "%00", "%C3%28", "%E2%82", "%ED%A0%80", "%F0%9F%98", "+", "%2B", "%5B%5D", "[", "]", "[]", "%25", "%%", "=", "%3D", "%26", "%0A", "%EF%BF%BF", "%C0%AF", "..%2F", "\u00e9"];
const oddRaw = fc.array(fc.oneof(fc.constantFrom(...ODD_RAW), fc.stringMatching(/^[a-z0-9._~-]{0,4}$/)), { minLength: 1, maxLength: 4 }).map((parts) => parts.join(""));

/** Hostile but valid search strings: SQL and glob metacharacters, unicode. */
const hostile = fc.oneof(
  fc.constantFrom("%", "_", "\\", "'", '"', "' OR 1=1 --", "*", "**", "*%*", "a*b", "%25", "%%", "[", "]", "[a-z]*", "?", "\u2603", "ℵ", "\u0000x", "😀", "\u212A", ";DROP TABLE workspaces;", "fz-a_b", "*_b*", "*-fz", "fz*", "a,b", " , "),
  fc.string({ maxLength: 12, unit: fc.constantFrom("%", "_", "*", "\\", "'", "a", "A", "b", "X", "-", "z", "f", "1", "é", "\u0000", "[", "?", ",") }),
  fc.string({ maxLength: 20, unit: "grapheme" }),
);

interface QueryCase {
  qs: string;
  kind: string;
  /** The parameter a 400 must name. */
  blame?: string;
  /** Only unknown parameters were added: the answer must not change. */
  ignored?: boolean;
}
const queryCase = (c: QueryCase): QueryCase => Object.assign(c, { [fc.toStringMethod]: () => `[${c.kind}] ?${short(c.qs)}` });

describe("fuzz: queries", () => {
  for (const op of OPS.filter((o) => o.query.length > 0)) {
    it(label(op), async () => {
      const base = baselineQuery(op);
      const get = (qs: string) => api(op.method, `${concrete(op)}${qs ? `?${qs}` : ""}`);
      const baseline = await get(encodeQuery(base));
      checkResponse(`${label(op)} baseline`, baseline);

      const invalid = fc.tuple(fc.constantFrom(...op.query), fc.constantFrom("too-long", "enum-miss", "missing", "repeated", "too-short"), fc.nat({ max: 3000 })).map(([p, kind, n]) => {
        const s = p.schema ?? {};
        const others = base.filter(([k]) => k !== p.name);
        if (kind === "missing" && p.required) return queryCase({ qs: encodeQuery(others), blame: p.name, kind });
        if (kind === "enum-miss" && s.enum) return queryCase({ qs: encodeQuery([...others, [p.name, `${String(s.enum[0])}-x`]]), blame: p.name, kind });
        if (kind === "too-short" && s.minLength) return queryCase({ qs: encodeQuery([...others, [p.name, ""]]), blame: p.name, kind });
        if (kind === "repeated") return queryCase({ qs: encodeQuery([...others, [p.name, "1"], [p.name, "2"]]), blame: p.name, kind });
        if (s.maxLength !== undefined) return queryCase({ qs: encodeQuery([...others, [p.name, "a".repeat(s.maxLength + 1 + (n % 7 === 0 ? n : 0))]]), blame: p.name, kind: "too-long" });
        return queryCase({ qs: encodeQuery([...others, [p.name, "a".repeat(n)]]), kind: "long" });
      });
      // Raw oddities in a documented parameter's value, or in a junk parameter (which is ignored).
      const odd = fc.tuple(fc.constantFrom(...op.query.map((p) => p.name)), oddRaw, oddRaw, fc.boolean()).map(([name, k, v, junk]) =>
        junk
          ? queryCase({ qs: [encodeQuery(base), `x${k}=${v}`].filter(Boolean).join("&"), kind: "odd junk", ignored: true })
          : queryCase({ qs: [encodeQuery(base.filter(([b]) => b !== name)), `${encodeURIComponent(name)}=${v}`].filter(Boolean).join("&"), kind: "odd value" }),
      );
      // go-tfe sends parameters the API does not know (e.g. `TagBindings=...`): they are not errors.
      const ignoredParams = fc
        .array(fc.tuple(fc.constantFrom("TagBindings", "x", "fields[workspaces]", "filter[unknown]", "search", "page", "Include", "page[limit]"), fc.string({ maxLength: 20, unit: "grapheme" })), { minLength: 1, maxLength: 3 })
        .map((junk) => queryCase({ qs: encodeQuery([...base, ...junk]), kind: "unknown parameters", ignored: true }));

      await fc.assert(
        fc.asyncProperty(fc.oneof(invalid, odd, ignoredParams), async (c) => {
          const res = await get(c.qs);
          checkResponse(`${label(op)} ${String(c)}`, res);
          if (c.ignored) expect(res.status, `${label(op)} ${String(c)}: unknown parameters must be ignored`).toBe(baseline.status);
          if (res.status === 400) for (const e of errorsOf(res)) expect(e.source?.parameter, `${label(op)} ${String(c)}: 400 without source.parameter`).toBeDefined();
          if (c.blame) {
            expect(res.status, `${label(op)} ${String(c)}`).toBe(400);
            const params = errorsOf(res).map((e) => e.source?.parameter);
            expect(params, `${label(op)} ${String(c)}`).toContain(c.blame);
          }
        }),
        OPTIONS,
      );
    }, TIMEOUT);
  }
});

/** Free-text parameters of lists: searches and name filters (not enums, ids or required filters). */
const isSearch = (p: Parameter) => !p.required && !p.schema?.enum && /^(q|name|search\[[^\]]+\]|filter\[(names|email)\]|filter\[[^\]]+\]\[name\])$/.test(p.name);

describe("fuzz: hostile search strings", () => {
  for (const op of OPS.filter((o) => o.method === "GET" && o.query.some(isSearch))) {
    it(`${label(op)} answers 200 with a (possibly empty) list`, async () => {
      const base = baselineQuery(op);
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...op.query.filter(isSearch).map((p) => p.name)), hostile, async (param, value) => {
          const res = await api(op.method, `${concrete(op)}?${encodeQuery([...base, [param, value]])}`);
          checkResponse(`${label(op)} ?${param}=${JSON.stringify(value)}`, res);
          expect(res.status, `${label(op)} ?${param}=${JSON.stringify(value)}: ${short(res.text)}`).toBe(200);
          expect(Array.isArray(res.body.data)).toBe(true);
        }),
        OPTIONS,
      );
    }, TIMEOUT);
  }

  it("the workspace list's name searches match literally (SQL and glob metacharacters are plain characters)", async () => {
    // ASCII-only case folding, as SQLite's LIKE does.
    const fold = (s: string) => s.replace(/[A-Z]/g, (ch) => ch.toLowerCase());
    const expected = (param: string, v: string): string[] => {
      if (v === "") return ORACLE_NAMES;
      if (v.includes("\u0000")) return [];
      if (param === "search[name]") return ORACLE_NAMES.filter((n) => fold(n).includes(fold(v)));
      // `*` is a wildcard only as the first and/or last character.
      const lead = v.startsWith("*");
      const trail = v.length > 1 && v.endsWith("*");
      const core = fold(v.slice(lead ? 1 : 0, trail ? -1 : undefined));
      return ORACLE_NAMES.filter((n) => {
        const f = fold(n);
        if (lead && trail) return f.includes(core);
        if (lead) return f.endsWith(core);
        if (trail) return f.startsWith(core);
        return f === core;
      });
    };
    await fc.assert(
      fc.asyncProperty(fc.constantFrom("search[name]", "search[wildcard-name]"), hostile, async (param, value) => {
        const res = await api("GET", `/organizations/${ctx.oracleOrg}/workspaces?${encodeQuery([[param, value], ["page[size]", "100"]])}`);
        expect(res.status).toBe(200);
        const names = (res.body.data as Array<{ attributes: { name: string } }>).map((w) => w.attributes.name).sort();
        expect(names, `${param}=${JSON.stringify(value)}`).toEqual(expected(param, value).sort());
      }),
      OPTIONS,
    );
  }, TIMEOUT);
});

describe("limits: page sizes", () => {
  it("every list clamps page[size] to the table's maximum", async () => {
    const lists = OPS.filter((o) => o.method === "GET" && o.query.some((p) => p.name === "page[size]"));
    expect(lists.length).toBeGreaterThan(5);
    let checked = 0;
    for (const op of lists) {
      const res = await api("GET", `${concrete(op)}?${encodeQuery([...baselineQuery(op), ["page[size]", String(LIMITS.pageSizeMax * 10)]])}`);
      checkResponse(label(op), res);
      const pagination = res.body?.meta?.pagination;
      if (res.status !== 200 || !pagination) continue;
      expect(pagination["page-size"], label(op)).toBe(LIMITS.pageSizeMax);
      checked++;
    }
    expect(checked).toBeGreaterThan(5);
  });
});
