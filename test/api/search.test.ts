// Free-text query parameters match literally (every character, `%` `_` `\` `*` included, is itself; ASCII letters
// fold case) at any length their route accepts. D1 refuses a LIKE pattern over 50 bytes, so a long term must never
// become one whole LIKE pattern.
import { exports } from "cloudflare:workers";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { ADMIN, api, uniqueName } from "../helpers";
import { createOrg, createWorkspace } from "../fixtures";
import { makeUser } from "../fixtures";
import { LIMITS } from "../../src/limits";

const ORIGIN = "http://localhost";

/** Folds ASCII letters only, as SQLite's lower() and LIKE do. */
const fold = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
const contains = (haystack: string, needle: string) => fold(haystack).includes(fold(needle));
const qs = (params: Record<string, string>) =>
  Object.entries(params)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join("&");

async function signIn(token: string): Promise<string> {
  const res = await exports.default.fetch(
    new Request(`${ORIGIN}/app/session`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: ORIGIN },
      body: new URLSearchParams({ token }).toString(),
      redirect: "manual",
    }),
  );
  const m = /ws_session=([^;]+)/.exec(res.headers.get("Set-Cookie") ?? "");
  if (!m) throw new Error(`no session cookie (${res.status})`);
  return `ws_session=${m[1]}`;
}

async function uiPage(path: string, cookie: string): Promise<{ status: number; text: string }> {
  const res = await exports.default.fetch(new Request(`${ORIGIN}${path}`, { headers: { Cookie: cookie }, redirect: "manual" }));
  return { status: res.status, text: await res.text() };
}

const names = (res: { body: { data: Array<{ attributes: { name: string } }> } }) => res.body.data.map((d) => d.attributes.name).sort();

describe("long search terms", () => {
  const sixty = "abcdefghij_klmnopqrst-uvwxyz0123_456789ABCD-EFGHIJKLMN_OPQRS"; // 60 characters
  const percents = "%".repeat(30);
  const unders = "_".repeat(30);
  let org: string;
  let user: { token: string; id: string };
  let cookie: string;
  const made = { ws: [] as string[], orgs: {} as Record<string, string> };

  beforeAll(async () => {
    expect(sixty.length).toBe(60);
    user = await makeUser();
    // The user's own organisations, so the organisation list holds only these.
    for (const [key, email] of [
      ["plain", "plain@example.com"],
      ["long", `x${sixty}y@example.com`],
      ["percent", `${percents}@example.com`],
    ] as const) {
      const name = await createOrg(user.token, uniqueName("srch").slice(0, 40));
      const set = await api("PATCH", `/organizations/${name}`, { token: user.token, body: { data: { type: "organizations", attributes: { email } } } });
      expect(set.status).toBe(200);
      made.orgs[key] = name;
    }
    org = await createOrg();
    const long = (await createWorkspace(org, { name: `w${sixty}z` })).attributes.name;
    const underscored = (await createWorkspace(org, { name: `${unders}u` })).attributes.name;
    const other = (await createWorkspace(org, { name: "other-workspace" })).attributes.name;
    made.ws = [long, underscored, other];
    const tagged = await api("POST", `/workspaces/${(await createWorkspace(org)).id}/relationships/tags`, {
      body: {
        data: [
          { type: "tags", attributes: { name: `t${sixty}` } },
          { type: "tags", attributes: { name: `${unders}` } },
        ],
      },
    });
    expect(tagged.status).toBe(204);
    for (const name of [unders.slice(0, 28), "P1 project"]) {
      const p = await api("POST", `/organizations/${org}/projects`, { body: { data: { type: "projects", attributes: { name } } } });
      expect(p.status).toBe(201);
    }
    cookie = await signIn(ADMIN);
  });

  it("GET /organizations?q= with a 60-character term and 30 `%` matches the email literally", async () => {
    const long = await api("GET", `/organizations?${qs({ q: sixty })}`, { token: user.token });
    expect(long.status).toBe(200);
    expect(names(long)).toEqual([made.orgs.long]);
    const pct = await api("GET", `/organizations?${qs({ q: percents })}`, { token: user.token });
    expect(pct.status).toBe(200);
    expect(names(pct)).toEqual([made.orgs.percent]);
    expect((await api("GET", `/organizations?${qs({ q: "%".repeat(31) })}`, { token: user.token })).body.data).toEqual([]);
  });

  const projectCases = () =>
    [
      [sixty, []],
      [percents, []],
      [unders.slice(0, 26), [unders.slice(0, 28)]],
      ["p1 PROJECT", ["P1 project"]],
    ] as const;

  it("GET /organizations/:org/projects?q= with long terms", async () => {
    for (const [q, expected] of projectCases()) {
      const res = await api("GET", `/organizations/${org}/projects?${qs({ q })}`);
      expect(res.status, q).toBe(200);
      expect(names(res), q).toEqual(expected);
    }
  });

  it("the UI projects page with long terms", async () => {
    for (const [q, expected] of projectCases()) {
      const page = await uiPage(`/app/${org}/projects?${qs({ q })}`, cookie);
      expect(page.status, q).toBe(200);
      const shown = [...page.text.matchAll(/<tr data-project="[^"]+"[^>]*>([\s\S]*?)<\/tr>/g)].map((m) => m[1]);
      expect(shown.length, q).toBe(expected.length);
      for (const name of expected) expect(page.text, q).toContain(name);
    }
  });

  it("GET /organizations/:org/tags?q= with long terms", async () => {
    for (const [q, expected] of [
      [sixty, [`t${sixty}`]],
      [percents, []],
      [unders, [unders]],
    ] as const) {
      const res = await api("GET", `/organizations/${org}/tags?${qs({ q })}`);
      expect(res.status, q).toBe(200);
      expect(names(res), q).toEqual(expected);
    }
  });

  it("the workspace list's search[name] and search[wildcard-name] with long terms that match", async () => {
    const [long, underscored] = made.ws;
    for (const [param, q, expected] of [
      ["search[name]", sixty, [long]],
      ["search[name]", sixty.toLowerCase(), [long]],
      ["search[name]", unders, [underscored]],
      ["search[name]", percents, []],
      ["search[wildcard-name]", `*${sixty}*`, [long]],
      ["search[wildcard-name]", `w${sixty}*`, [long]],
      ["search[wildcard-name]", `*${sixty}z`, [long]],
      ["search[wildcard-name]", `W${sixty}Z`, [long]],
      ["search[wildcard-name]", `*${sixty}`, []],
      ["search[wildcard-name]", `${sixty}*`, []],
      ["search[wildcard-name]", `${unders}*`, [underscored]],
      ["search[wildcard-name]", `*${percents}*`, []],
    ] as const) {
      const res = await api("GET", `/organizations/${org}/workspaces?${qs({ [param]: q })}`);
      expect(res.status, `${param}=${q}`).toBe(200);
      expect(names(res), `${param}=${q}`).toEqual([...expected].sort());
      const page = await uiPage(`/app/${org}/workspaces?${qs({ [param]: q })}`, cookie);
      expect(page.status, `UI ${param}=${q}`).toBe(200);
      expect([...page.text.matchAll(/<tr data-workspace="([^"]+)"/g)].map((m) => m[1]).sort()).toEqual([...expected].sort());
    }
  });
});

describe("case folding", () => {
  // SQLite's lower() and LIKE fold ASCII letters only; the filters done in code must agree with those done in SQL.
  it("folds ASCII letters only, in code as in SQL: the Kelvin sign is not `k`", async () => {
    const org = await createOrg();
    const kelvin = encodeURIComponent("\u212A");
    const team = await api("POST", `/organizations/${org}/teams`, { body: { data: { type: "teams", attributes: { name: "kilo" } } } });
    expect(team.status).toBe(200);
    const pool = await api("POST", `/organizations/${org}/agent-pools`, { body: { data: { type: "agent-pools", attributes: { name: "kilo-pool" } } } });
    expect(pool.status).toBe(201);
    const ws = await createWorkspace(org);
    const tagged = await api("POST", `/workspaces/${ws.id}/relationships/tags`, { body: { data: [{ type: "tags", attributes: { name: "kilo" } }] } });
    expect(tagged.status).toBe(204);
    for (const path of [
      `/organizations/${org}/teams?q=${kelvin}`,
      `/organizations/${org}/teams?filter%5Bnames%5D=${kelvin}ilo`,
      `/organizations/${org}/agent-pools?q=${kelvin}`,
      `/workspaces/${ws.id}/relationships/tags?name=${kelvin}`,
      `/organizations/${org}/tags?q=${kelvin}`,
      `/organizations/${org}/workspaces?search%5Bname%5D=${kelvin}`,
    ]) {
      const res = await api("GET", path);
      expect(res.status, path).toBe(200);
      expect(res.body.data, path).toEqual([]);
    }
    expect(names(await api("GET", `/organizations/${org}/teams?q=KIL`))).toEqual(["kilo"]);
    expect(names(await api("GET", `/organizations/${org}/agent-pools?q=KIL`))).toEqual(["kilo-pool"]);
    expect(names(await api("GET", `/workspaces/${ws.id}/relationships/tags?name=KIL`))).toEqual(["kilo"]);
  });

  it("filter[email] folds ASCII letters only, as the SQL it is compared in", async () => {
    const org = await createOrg();
    const email = `ÜBER-${uniqueName("m")}@Example.test`;
    const invited = await api("POST", `/organizations/${org}/organization-memberships`, {
      body: { data: { type: "organization-memberships", attributes: { email } } },
    });
    expect(invited.status).toBe(201);
    const emailsOf = async (filter: string) =>
      (await api("GET", `/organizations/${org}/organization-memberships?filter%5Bemail%5D=${encodeURIComponent(filter)}`)).body.data.map(
        (m: { attributes: { email: string } }) => m.attributes.email,
      );
    expect(await emailsOf(email)).toEqual([email]);
    expect(await emailsOf(email.replace("Example", "EXAMPLE"))).toEqual([email]);
    expect(await emailsOf(email.replace("Ü", "ü"))).toEqual([]);
  });
});

// ---- property: every free-text query parameter of every route that takes one ----

declare const __FUZZ_RUNS__: string;
declare const __FUZZ_SEED__: string;
const FUZZ_RUNS = Number(typeof __FUZZ_RUNS__ === "string" ? __FUZZ_RUNS__ : "100") || 100;
// Each run sends one request per target; a tenth of the fuzz budget keeps the default run to a few seconds.
const RUNS = Math.max(10, Math.ceil(FUZZ_RUNS / 10));
const SEED = Number(typeof __FUZZ_SEED__ === "string" && __FUZZ_SEED__ ? __FUZZ_SEED__ : Date.now() % 2_147_483_647);

/** Characters that are special somewhere (LIKE, GLOB, FTS5, URLs, JSON, csv lists) or fold oddly (Kelvin sign, dotted I). */
const ALPHABET = [..."aBz0_%\\*'\"- ,:.&+=#?/éÉß漢😀\u212Aİ\u0000"];
const SPECIAL = "%_\\*'\"é漢😀"; // in the values whose rules allow them

const swapCase = (s: string) => s.replace(/[A-Za-z]/g, (c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()));
/** At most `max` UTF-16 units (as the routes' zod limits count), never splitting a character. */
function clip(s: string, max: number): string {
  if (s.length <= max) return s;
  let out = "";
  for (const ch of s) {
    if (out.length + ch.length > max) break;
    out += ch;
  }
  return out;
}

/** Terms up to `max`: slices of seeded values (which match, in either case), random text, and long runs of one metacharacter. */
/**
 * Lists of up to six terms for `param`, comma-joined: each one of `known` (its case swapped when `swap`) or a term
 * of up to `max` characters near them.
 */
function listOf(param: string, known: string[], max: number, swap: boolean): fc.Arbitrary<Record<string, string>> {
  const exact = fc.constantFrom(...known);
  return fc.array(fc.oneof(swap ? exact.map(swapCase) : exact, termOf(known, max)), { maxLength: 6 }).map((terms) => ({ [param]: terms.join(",") }));
}

function termOf(seeded: string[], max: number): fc.Arbitrary<string> {
  const pool = seeded.length > 0 ? seeded : ["x"];
  return fc.oneof(
    fc.record({ i: fc.nat(), from: fc.nat(), len: fc.nat(), flip: fc.boolean() }).map(({ i, from, len, flip }) => {
      const chars = [...pool[i % pool.length]];
      const start = from % (chars.length + 1);
      const slice = chars.slice(start, start + (len % (chars.length - start + 1))).join("");
      return clip(flip ? swapCase(slice) : slice, max);
    }),
    fc.array(fc.constantFrom(...ALPHABET), { maxLength: max }).map((a) => clip(a.join(""), max)),
    fc.record({ ch: fc.constantFrom("%", "_", "\\", "*", "é", "'"), n: fc.integer({ min: 20, max }) }).map(({ ch, n }) => clip(ch.repeat(n), max)),
    fc
      .integer({ min: Math.min(49, max), max })
      .chain((n) => fc.array(fc.constantFrom(...ALPHABET), { minLength: n, maxLength: n }).map((a) => clip(a.join(""), max))),
  );
}

/** Fixed terms every target also runs: the lengths around D1's 50-byte pattern limit and the longest accepted. */
const edgeTerms = (seeded: string[], max: number) =>
  [
    "%".repeat(25),
    "%".repeat(30),
    "_".repeat(30),
    "\\".repeat(30),
    "x".repeat(49),
    "x".repeat(60),
    "%".repeat(max),
    ...seeded.filter((s) => s.length >= 49).map((s) => swapCase(s)),
    ...seeded.map((s) => [...s].slice(1, -1).join("")).filter((s) => s.length >= 49),
  ].map((t) => clip(t, max));

interface Expectation {
  status: number;
  /** The expected ids (or names), in any order. */
  items?: string[];
}

interface Target {
  label: string;
  /** The query parameters of one request. */
  arb: fc.Arbitrary<Record<string, string>>;
  examples: Array<Record<string, string>>;
  path: string;
  token?: string;
  edition?: "hosted";
  /** An HTML page of the web UI (signed in as the site admin). */
  ui?: RegExp;
  actual?: (body: any) => string[];
  expected: (params: Record<string, string>) => Expectation;
}

async function everything(path: string, opts: { token?: string; edition?: "hosted" } = {}): Promise<any> {
  const sep = path.includes("?") ? "&" : "?";
  const res = await api("GET", `${path}${sep}page%5Bsize%5D=100`, opts);
  expect(res.status, path).toBe(200);
  expect(res.body.data.length, `${path}: the universe fits one page`).toBeLessThan(100);
  return res.body;
}

const ids = (body: any) => (body.data as Array<{ id: string }>).map((d) => d.id);
const hasNul = (s: string) => s.includes("\u0000");

describe("property: free-text query parameters", () => {
  const targets: Target[] = [];
  let cookie: string;

  beforeAll(async () => {
    cookie = await signIn(ADMIN);
    const longSpecial = (n: number) => clip(`L${SPECIAL}Mixed_Case-`.repeat(Math.ceil(n / 16)), n);

    // Organisations of one user, so that its list holds only these; emails carry what names may not.
    const user = await makeUser();
    for (const email of [`a${SPECIAL}-1@ex.test`, `${"%".repeat(40)}@ex.test`, `${longSpecial(200)}@ex.test`, "Plain.User@Example.COM"]) {
      const name = await createOrg(user.token, `o_${uniqueName("").slice(1, 30)}`);
      expect(
        (await api("PATCH", `/organizations/${name}`, { token: user.token, body: { data: { type: "organizations", attributes: { email } } } })).status,
      ).toBe(200);
    }

    const org = await createOrg();
    const wsNames = ["ws_a", `${"_".repeat(40)}x`, clip("Ab_Cd-".repeat(20), 90), "prod-API_1", "a-b-c", `q${"9".repeat(60)}`];
    const ws: Array<{ id: string; name: string }> = [];
    for (const name of wsNames) ws.push({ id: (await createWorkspace(org, { name })).id, name });
    const flat = ["env:prod", clip("T_ag-".repeat(50), 240), "__x__", "Tag_A"];
    const bindings = [
      { key: "env", value: "prod" },
      { key: "team.name+x@y", value: "a=b" },
      { key: clip("K_ey.".repeat(30), 128), value: clip("V=al+".repeat(60), 256) },
    ];
    for (const [i, w] of ws.entries()) {
      const tags = flat.filter((_, j) => (i + j) % 2 === 0);
      if (tags.length) {
        const r = await api("POST", `/workspaces/${w.id}/relationships/tags`, { body: { data: tags.map((name) => ({ type: "tags", attributes: { name } })) } });
        expect(r.status).toBe(204);
      }
      const bs = bindings.filter((_, j) => (i + j) % 3 !== 0);
      const r = await api("PATCH", `/workspaces/${w.id}/tag-bindings`, { body: { data: bs.map((b) => ({ type: "tag-bindings", attributes: b })) } });
      expect(r.status).toBe(200);
    }
    for (const name of ["p_1 Alpha", "_".repeat(38), clip("Big Project ".repeat(4), 40).trim()]) {
      expect(
        (await api("POST", `/organizations/${org}/projects`, { body: { data: { type: "projects", attributes: { name } } } })).status,
        `project ${name}`,
      ).toBe(201);
    }
    const teamIds: string[] = [];
    for (const name of ["team_a B", clip("Long_Team ".repeat(30), 250).trim(), "_".repeat(60)]) {
      const r = await api("POST", `/organizations/${org}/teams`, { body: { data: { type: "teams", attributes: { name } } } });
      expect(r.status, `team ${name}`).toBe(200);
      teamIds.push(r.body.data.id);
    }
    for (const id of teamIds.slice(0, 2)) expect((await api("POST", `/teams/${id}/authentication-token`)).status).toBe(201);
    for (const email of [`m${SPECIAL}-1@ex.test`, `${clip(longSpecial(64), 64)}@${"d".repeat(186)}.com`, "Someone@Example.org", "ÜBER.member@Example.ORG"]) {
      const r = await api("POST", `/organizations/${org}/organization-memberships`, {
        body: { data: { type: "organization-memberships", attributes: { email } } },
      });
      expect(r.status, email).toBe(201);
    }
    for (const name of [`v${SPECIAL} set`, "%".repeat(60), longSpecial(128)]) {
      expect((await api("POST", `/organizations/${org}/varsets`, { body: { data: { type: "varsets", attributes: { name } } } })).status, name).toBe(201);
    }
    for (const [name, scoped] of [
      ["pool_a", true],
      [clip("Pool-".repeat(60), 255), true],
      ["Narrow_pool", false],
    ] as const) {
      const r = await api("POST", `/organizations/${org}/agent-pools`, {
        body: {
          data: {
            type: "agent-pools",
            attributes: { name, "organization-scoped": scoped },
            relationships: scoped ? undefined : { "allowed-workspaces": { data: [{ type: "workspaces", id: ws[0].id }] } },
          },
        },
      });
      expect(r.status, name).toBe(201);
    }

    // What every filter reads, as the API shows it unfiltered.
    const orgs: Array<{ name: string; email: string }> = (await everything("/organizations", { token: user.token })).data.map((o: any) => ({
      name: o.attributes.name,
      email: o.attributes.email,
    }));
    const wsAll: string[] = (await everything(`/organizations/${org}/workspaces`)).data.map((w: any) => w.attributes.name as string);
    const keysOf = new Map<string, { flat: string[]; bindings: Array<{ key: string; value: string }> }>();
    for (const w of ws) {
      const f = (await everything(`/workspaces/${w.id}/relationships/tags`)).data.map((t: any) => t.attributes.name as string);
      const b = (await api("GET", `/workspaces/${w.id}/tag-bindings`)).body.data.map((t: any) => ({ key: t.attributes.key, value: t.attributes.value ?? "" }));
      keysOf.set(w.name, { flat: f, bindings: b });
    }
    const projects: Array<{ id: string; name: string }> = (await everything(`/organizations/${org}/projects`)).data.map((p: any) => ({
      id: p.id as string,
      name: p.attributes.name as string,
    }));
    const orgTags: string[] = (await everything(`/organizations/${org}/tags`)).data.map((t: any) => t.attributes.name as string);
    const teams: Array<{ id: string; name: string }> = (await everything(`/organizations/${org}/teams`)).data.map((t: any) => ({
      id: t.id as string,
      name: t.attributes.name as string,
    }));
    const teamName = new Map(teams.map((t) => [t.id, t.name]));
    const tokens: Array<{ id: string; team: string }> = (await everything(`/organizations/${org}/team-tokens`)).data.map((k: any) => ({
      id: k.id as string,
      team: teamName.get(k.relationships.team.data.id) ?? "",
    }));
    const mBody = await everything(`/organizations/${org}/organization-memberships?include=user`);
    const usernames = new Map((mBody.included ?? []).map((u: any) => [u.id, u.attributes.username as string]));
    const members: Array<{ id: string; email: string; username: string }> = mBody.data.map((m: any) => ({
      id: m.id as string,
      email: (m.attributes.email ?? "") as string,
      username: (usernames.get(m.relationships.user.data.id) ?? "") as string,
    }));
    const varsets: string[] = (await everything(`/organizations/${org}/varsets`)).data.map((v: any) => v.attributes.name as string);
    const pools: Array<{ name: string; scoped: boolean; allowed: string[] }> = (await everything(`/organizations/${org}/agent-pools`)).data.map((p: any) => ({
      name: p.attributes.name as string,
      scoped: p.attributes["organization-scoped"] as boolean,
      allowed: p.relationships["allowed-workspaces"].data.map((r: { id: string }) => r.id) as string[],
    }));
    const plans: string[] = (await everything("/admin/feature-sets", { edition: "hosted" })).data.map((f: any) => f.attributes.name as string);
    const flatOfFirst = keysOf.get(ws[0].name)?.flat ?? [];
    expect(wsAll.sort()).toEqual([...wsNames].sort());
    expect(orgs.length).toBe(4);

    const nameList = (body: any) => (body.data as Array<{ attributes: { name: string } }>).map((d) => d.attributes.name);
    /** What a substring filter reads from each item (`fields`), and which items (by `id`) a term matches. */
    const corpus = <T>(items: T[], fields: (t: T) => string[], id: (t: T) => string) => ({
      seeded: items.flatMap(fields),
      matching: (term: string) => items.filter((t) => term === "" || fields(t).some((f) => contains(f, term))).map(id),
    });
    type Corpus = ReturnType<typeof corpus>;
    /** A corpus of records: the string fields a filter reads, and the field that identifies one. */
    const corpusOf = <T, K extends keyof T>(items: T[], fields: K[], id: K) =>
      corpus(
        items,
        (t) => fields.map((f) => String(t[f])),
        (t) => String(t[id]),
      );
    /** One free-text parameter, matched as a substring (`trim`: of the trimmed term). */
    const substring = (
      label: string,
      path: string,
      param: string,
      max: number,
      c: Corpus,
      opts: { trim?: boolean; actual?: (body: any) => string[]; token?: string; edition?: "hosted"; ui?: RegExp } = {},
    ) =>
      targets.push({
        label,
        path,
        token: opts.token,
        edition: opts.edition,
        ui: opts.ui,
        actual: opts.actual ?? nameList,
        arb: termOf(c.seeded, max).map((t) => ({ [param]: t })),
        examples: edgeTerms(c.seeded, max).map((t) => ({ [param]: t })),
        expected: (p) => ({ status: 200, items: c.matching(opts.trim ? p[param].trim() : p[param]) }),
      });

    const self = (n: string) => [n];
    const byName = (n: string) => n;
    const orgC = corpusOf(orgs, ["name", "email"], "name");
    const wsC = corpus(wsAll, self, byName);
    const projectC = corpusOf(projects, ["name"], "id");
    const teamC = corpusOf(teams, ["name"], "id");
    const memberC = corpusOf(members, ["email", "username"], "id");
    const UI_WS = /<tr data-workspace="([^"]+)"/g;
    const o = `/organizations/${org}`;
    const wsPath = `${o}/workspaces`;
    substring("GET /organizations q", "/organizations", "q", 255, orgC, { token: user.token });
    substring("GET /organizations q[name]", "/organizations", "q[name]", 255, orgC, { token: user.token });
    substring("workspaces search[name]", wsPath, "search[name]", 1000, wsC);
    substring("UI workspaces search[name]", `/app/${org}/workspaces`, "search[name]", 1000, wsC, { ui: UI_WS });
    substring("projects q", `${o}/projects`, "q", 255, projectC, { actual: ids });
    substring("UI projects q", `/app/${org}/projects`, "q", 255, projectC, { ui: /<tr data-project="([^"]+)"/g });
    substring("organization tags q", `${o}/tags`, "q", 255, corpus(orgTags, self, byName));
    substring("workspace flat tags name", `/workspaces/${ws[0].id}/relationships/tags`, "name", 255, corpus(flatOfFirst, self, byName));
    substring("teams q", `${o}/teams`, "q", 255, teamC, { actual: ids });
    substring("team-tokens q", `${o}/team-tokens`, "q", 255, corpusOf(tokens, ["team"], "id"), { actual: ids });
    substring("memberships q", `${o}/organization-memberships`, "q", 255, memberC, { trim: true, actual: ids });
    substring("varsets q", `${o}/varsets`, "q", 255, corpus(varsets, self, byName));
    substring("agent-pools q", `${o}/agent-pools`, "q", 255, corpusOf(pools, ["name"], "name"));
    substring("feature-sets q", "/admin/feature-sets", "q", 255, corpus(plans, self, byName), { trim: true, edition: "hosted" });

    // search[wildcard-name]: `*` at either end (ends with, starts with, contains), else the exact name; literal otherwise.
    const wildcard = (raw: string): string[] => {
      if (hasNul(raw)) return [];
      const lead = raw.startsWith("*");
      const trail = raw.length > 1 && raw.endsWith("*");
      const core = fold(raw.slice(lead ? 1 : 0, trail ? -1 : undefined));
      if (raw === "" || (core === "" && (lead || trail))) return wsAll;
      return wsAll.filter((n) => {
        const name = fold(n);
        return lead && trail ? name.includes(core) : lead ? name.endsWith(core) : trail ? name.startsWith(core) : name === core;
      });
    };
    const wildArb = fc
      .tuple(termOf(wsAll, 998), fc.boolean(), fc.boolean())
      .map(([t, lead, trail]) => ({ "search[wildcard-name]": `${lead ? "*" : ""}${t}${trail ? "*" : ""}` }));
    const wildExamples = edgeTerms(wsAll, 998).flatMap((t) => [`*${t}*`, `*${t}`, `${t}*`, t].map((w) => ({ "search[wildcard-name]": w })));
    for (const [label, path, ui] of [
      ["workspaces search[wildcard-name]", wsPath, undefined],
      ["UI workspaces search[wildcard-name]", `/app/${org}/workspaces`, UI_WS],
    ] as const) {
      targets.push({
        label,
        path,
        ui,
        actual: nameList,
        arb: wildArb,
        examples: wildExamples,
        expected: (p) => ({ status: 200, items: wildcard(p["search[wildcard-name]"]) }),
      });
    }

    // search[tags] / search[exclude-tags]: comma-separated keys, each an exact flat tag name or binding key.
    const allKeys = [...new Set([...keysOf.values()].flatMap((k) => [...k.flat, ...k.bindings.map((b) => b.key)]))];
    // Lists of long keys, up to the route's maximum number of tag conditions (one list's terms are one SQL term).
    const keyList = fc
      .array(
        fc.oneof(
          fc.constantFrom(...allKeys),
          fc.constantFrom(...allKeys).map(swapCase),
          termOf(allKeys, 300).map((k) => k.replace(/,/g, "")),
        ),
        { maxLength: LIMITS.listTagFiltersMax },
      )
      .map((ks) => clip(ks.join(","), 1000));
    const fullList = [...allKeys, ...Array.from({ length: LIMITS.listTagFiltersMax - allKeys.length }, (_, i) => `absent-${i}`)].join(",");
    const csv = (raw: string) => [...new Set(raw.split(",").map((s) => s.trim()))].filter((s) => s.length > 0);
    const carries = (w: string, key: string) => {
      const k = keysOf.get(w);
      return !!k && (k.flat.includes(key) || k.bindings.some((b) => b.key === key));
    };
    for (const param of ["search[tags]", "search[exclude-tags]"]) {
      targets.push({
        label: `workspaces ${param}`,
        path: wsPath,
        actual: nameList,
        arb: keyList.map((v) => ({ [param]: v })),
        examples: [allKeys.join(","), fullList, ...edgeTerms(allKeys, 1000)].map((v) => ({ [param]: v })),
        expected: (p) => {
          const keys = csv(p[param]);
          if (param === "search[tags]") return { status: 200, items: hasNul(p[param]) ? [] : wsAll.filter((w) => keys.every((k) => carries(w, k))) };
          return { status: 200, items: wsAll.filter((w) => !keys.some((k) => carries(w, k))) };
        },
      });
    }
    // filter[tagged][0][key] (+ [value]): a binding with that key (and value), exact.
    const bindingKeys = bindings.map((b) => b.key);
    const bindingValues = bindings.map((b) => b.value);
    targets.push({
      label: "workspaces filter[tagged]",
      path: wsPath,
      actual: nameList,
      arb: fc
        .tuple(
          fc.oneof(fc.constantFrom(...bindingKeys), termOf(bindingKeys, 1000)),
          fc.oneof(fc.constant(""), fc.constantFrom(...bindingValues), termOf(bindingValues, 1000)),
        )
        .map(([key, value]) => ({ "filter[tagged][0][key]": key, "filter[tagged][0][value]": value })),
      examples: bindings.map((b) => ({ "filter[tagged][0][key]": b.key, "filter[tagged][0][value]": b.value })),
      expected: (p) => {
        const key = p["filter[tagged][0][key]"];
        const value = p["filter[tagged][0][value]"];
        if (!key) return value ? { status: 400 } : { status: 200, items: wsAll };
        if (hasNul(key) || hasNul(value)) return { status: 200, items: [] };
        return { status: 200, items: wsAll.filter((w) => keysOf.get(w)?.bindings.some((b) => b.key === key && (!value || b.value === value))) };
      },
    });
    // Several filter[tagged] pairs (AND across indices), up to the route's maximum, alone and with the other tag
    // conditions (at most that maximum in all).
    const pair = fc.tuple(
      fc.oneof(fc.constantFrom(...bindingKeys), fc.constantFrom(...bindingKeys).map(swapCase), termOf(bindingKeys, 200)),
      fc.oneof(fc.constant(""), fc.constantFrom(...bindingValues), termOf(bindingValues, 200)),
    );
    const taggedParams = (pairs: Array<[string, string]>) =>
      Object.fromEntries(
        pairs.flatMap(([key, value], i) => [
          [`filter[tagged][${i}][key]`, key],
          [`filter[tagged][${i}][value]`, value],
        ]),
      );
    const taggedPairs = (p: Record<string, string>) => {
      const out: Array<[string, string]> = [];
      for (let i = 0; `filter[tagged][${i}][key]` in p; i++) out.push([p[`filter[tagged][${i}][key]`], p[`filter[tagged][${i}][value]`]]);
      return out;
    };
    /** What every tag condition of `p` together gives (search[tags] and search[exclude-tags] when present). */
    const tagConditions = (p: Record<string, string>): Expectation => {
      const pairs = taggedPairs(p);
      if (pairs.some(([key, value]) => !key && value)) return { status: 400 };
      const all = csv(p["search[tags]"] ?? "");
      const none = csv(p["search[exclude-tags]"] ?? "");
      if (pairs.some(([key, value]) => hasNul(key) || hasNul(value)) || hasNul(p["search[tags]"] ?? "")) return { status: 200, items: [] };
      const meets = (w: string, [key, value]: [string, string]) =>
        !key || !!keysOf.get(w)?.bindings.some((b) => b.key === key && (!value || b.value === value));
      return {
        status: 200,
        items: wsAll.filter((w) => pairs.every((t) => meets(w, t)) && all.every((k) => carries(w, k)) && !none.some((k) => carries(w, k))),
      };
    };
    const everyBinding = bindings.map((b): [string, string] => [b.key, b.value]);
    const maxPairs = Array.from({ length: LIMITS.listTagFiltersMax }, (_, i) => everyBinding[i % everyBinding.length]);
    targets.push({
      label: "workspaces filter[tagged] (several)",
      path: wsPath,
      actual: nameList,
      arb: fc.array(pair, { maxLength: LIMITS.listTagFiltersMax }).map(taggedParams),
      examples: [taggedParams(maxPairs), taggedParams(maxPairs.map(([key]) => [key, ""])), taggedParams([...maxPairs.slice(1), ["absent", ""]])],
      expected: tagConditions,
    });
    const third = Math.floor(LIMITS.listTagFiltersMax / 3);
    const someKeys = (n: number) =>
      fc
        .array(
          fc.oneof(
            fc.constantFrom(...allKeys),
            termOf(allKeys, 100).map((k) => k.replace(/,/g, "")),
          ),
          { maxLength: n },
        )
        .map((ks) => ks.join(","));
    targets.push({
      label: "workspaces search[tags] + search[exclude-tags] + filter[tagged]",
      path: wsPath,
      actual: nameList,
      arb: fc
        .tuple(someKeys(third), someKeys(third), fc.array(pair, { maxLength: LIMITS.listTagFiltersMax - 2 * third }))
        .map(([all, none, pairs]) => ({ "search[tags]": all, "search[exclude-tags]": none, ...taggedParams(pairs) })),
      examples: [
        {
          "search[tags]": allKeys.slice(0, third).join(","),
          "search[exclude-tags]": "absent",
          ...taggedParams(maxPairs.slice(0, LIMITS.listTagFiltersMax - third - 1)),
        },
      ],
      expected: tagConditions,
    });
    // Exact-name lists.
    targets.push({
      label: "projects filter[names]",
      path: `/organizations/${org}/projects`,
      actual: ids,
      arb: listOf(
        "filter[names]",
        projects.map((p) => p.name),
        200,
        false,
      ),
      examples: [{ "filter[names]": projects.map((p) => p.name).join(",") }],
      expected: (p) => {
        const wanted = csv(p["filter[names]"]);
        return { status: 200, items: projects.filter((x) => wanted.includes(x.name)).map((x) => x.id) };
      },
    });
    // Lists of exact values that ignore ASCII case: the items whose value is one of the terms (all when none).
    const foldedList = <T extends { id: string }>(label: string, path: string, param: string, items: T[], value: (t: T) => string): Target => ({
      label,
      path,
      actual: ids,
      arb: listOf(param, items.map(value), 300, true),
      examples: [{ [param]: items.map((t) => swapCase(value(t))).join(",") }],
      expected: (p) => {
        const wanted = p[param] ? csv(p[param]).map(fold) : null;
        return { status: 200, items: items.filter((t) => !wanted || wanted.includes(fold(value(t)))).map((t) => t.id) };
      },
    });
    targets.push(foldedList("teams filter[names]", `/organizations/${org}/teams`, "filter[names]", teams, (t) => t.name));
    targets.push(foldedList("memberships filter[email]", `/organizations/${org}/organization-memberships`, "filter[email]", members, (m) => m.email));
    // Agent pools a named workspace may use: the organisation-scoped ones, and those that allow that (exactly named) workspace.
    targets.push({
      label: "agent-pools filter[allowed_workspaces][name]",
      path: `/organizations/${org}/agent-pools`,
      actual: nameList,
      arb: fc.oneof(fc.constantFrom(...wsAll), termOf(wsAll, 255)).map((n) => ({ "filter[allowed_workspaces][name]": n })),
      examples: [{ "filter[allowed_workspaces][name]": ws[0].name }, { "filter[allowed_workspaces][name]": swapCase(ws[0].name) }],
      expected: (p) => {
        const n = p["filter[allowed_workspaces][name]"];
        // Workspace names are unique and looked up ignoring ASCII case.
        const id = n ? (ws.find((w) => fold(w.name) === fold(n))?.id ?? "") : null;
        return { status: 200, items: pools.filter((x) => id === null || x.scoped || x.allowed.includes(id)).map((x) => x.name) };
      },
    });
  }, 120_000);

  it("never answers 5xx, and answers what a literal match gives, up to each route's longest term", async () => {
    const found: string[] = [];
    for (const t of targets) {
      const check = async (params: Record<string, string>) => {
        const url = `${t.path}?${qs({ ...params, "page[size]": "100" })}`;
        const what = `${t.label} ${JSON.stringify(params).slice(0, 300)}`;
        const want = t.expected(params);
        if (t.ui) {
          const page = await uiPage(url, cookie);
          if (page.status >= 500) found.push(`${what}: ${page.status}`);
          expect(page.status, what).toBe(want.status);
          if (want.items) expect([...page.text.matchAll(t.ui)].map((m) => m[1]).sort(), what).toEqual([...want.items].sort());
          return;
        }
        const res = await api("GET", url, { token: t.token, edition: t.edition });
        if (res.status >= 500) found.push(`${what}: ${res.status}`);
        expect(res.status, `${what}: ${res.text.slice(0, 300)}`).toBe(want.status);
        if (want.items) expect((t.actual ?? ids)(res.body).sort(), what).toEqual([...want.items].sort());
        else expect(res.body.errors?.[0]?.status, what).toBe(String(want.status));
      };
      await fc.assert(
        fc.asyncProperty(t.arb, async (params) => check(params)),
        { numRuns: RUNS, seed: SEED, examples: t.examples.map((e) => [e]) },
      );
    }
    expect(found).toEqual([]);
    expect(targets.length).toBeGreaterThanOrEqual(23);
  }, 600_000);
});
