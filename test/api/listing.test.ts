// GET /organizations/:org/workspaces: list parameters, pagination, permission-filtered totals, include.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createOrg, createWorkspace, grantProject, grantWorkspace, makeOrgToken, makeProject, makeTeam, makeUser, teamToken } from "../fixtures";
import { ADMIN, api, type ApiResponse, uniqueName, indexSettled } from "../helpers";
import { authenticate } from "../../src/auth/auth.middleware";
import type { Bindings } from "../../src/env";
import { INCLUDE_VALUES } from "../../src/workspaces/workspaces.include";
import { parseListQuery } from "../../src/workspaces/workspaces.filters";
import { loadListPage } from "../../src/workspaces/workspaces.list.service";
import type { Strategy } from "../../src/workspaces/workspaces.list.d1";

type Doc = { id: string; type: string; attributes: Record<string, any>; relationships: Record<string, any>; links?: Record<string, unknown> };

const list = (org: string, query = "", token?: string) => api("GET", `/organizations/${org}/workspaces${query ? `?${query}` : ""}`, { token });
const names = (res: ApiResponse) => (res.body.data as Doc[]).map((w) => w.attributes.name);
const sorted = (xs: string[]) => [...xs].sort();
const kv = (pairs: Array<[string, string]>) => pairs.map(([key, value]) => ({ type: "tag-bindings", attributes: { key, value } }));
/** The same query with every `[` and `]` percent-encoded (clients send either). */
const encoded = (q: string) => q.replace(/\[/g, "%5B").replace(/\]/g, "%5D");

interface Spec {
  name: string;
  tags?: string[];
  bindings?: Record<string, string>;
  project?: string;
}

async function seed(org: string, specs: Spec[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const s of specs) {
    const rel: Record<string, unknown> = {};
    if (s.tags) rel.tags = { data: s.tags.map((name) => ({ type: "tags", attributes: { name } })) };
    if (s.bindings) rel["tag-bindings"] = { data: kv(Object.entries(s.bindings)) };
    if (s.project) rel.project = { data: { type: "projects", id: s.project } };
    out[s.name] = (await createWorkspace(org, { name: s.name }, undefined, Object.keys(rel).length ? rel : undefined)).id;
  }
  return out;
}

/** Every page of a query (page size 2), in order. */
async function allPages(org: string, query: string, token?: string): Promise<{ names: string[]; total: number }> {
  const out: string[] = [];
  let total = -1;
  for (let p = 1; p <= 100; p++) {
    const res = await list(org, `${query}${query ? "&" : ""}page[number]=${p}&page[size]=2`, token);
    expect(res.status).toBe(200);
    total = res.body.meta.pagination["total-count"];
    out.push(...names(res));
    if (res.body.meta.pagination["next-page"] === null) break;
  }
  return { names: out, total };
}

/**
 * The page plans side by side, below HTTP: walking the sort's index and sorting the id set must give
 * the same pages, and the total must count exactly what the pages hold.
 */
async function plansAgree(org: string, query: string, token: string = ADMIN): Promise<string[]> {
  const principal = (await authenticate(env as unknown as Bindings, token))!;
  const db = env.DB.withSession("first-primary");
  const runs: string[][] = [];
  for (const strategy of ["scan", "sort", "auto"] as Strategy[]) {
    const ids: string[] = [];
    let total = 0;
    for (let n = 1; n <= 50; n++) {
      const { spec } = parseListQuery({ ...Object.fromEntries(new URLSearchParams(query)), "page[number]": String(n), "page[size]": "2" });
      const page = (await loadListPage(db, principal, org, spec, strategy))!;
      total = page.total;
      const got = page.workspaces.map((w) => w.record.name);
      ids.push(...got);
      if (got.length < 2) break;
    }
    expect(ids.length, `${strategy}: ${query}`).toBe(total);
    expect(new Set(ids).size, `${strategy}: ${query}`).toBe(ids.length);
    runs.push(ids);
  }
  expect(runs[1], `sort plan vs scan plan: ${query}`).toEqual(runs[0]);
  expect(runs[2], `auto plan vs scan plan: ${query}`).toEqual(runs[0]);
  return runs[0];
}

/** The query through HTTP (brackets raw and percent-encoded) and through both page plans: one answer. */
async function expectMatches(org: string, query: string, expected: string[], token?: string): Promise<void> {
  for (const q of [query, encoded(query)]) {
    const { names: got, total } = await allPages(org, q, token);
    expect(sorted(got), q).toEqual(sorted(expected));
    expect(total, q).toBe(expected.length);
  }
  expect(sorted(await plansAgree(org, query, token)), query).toEqual(sorted(expected));
}

/** expectMatches for each query, in order (query → the names it matches). */
async function expectEachMatches(org: string, cases: Record<string, string[]>): Promise<void> {
  for (const [query, expected] of Object.entries(cases)) await expectMatches(org, query, expected);
}

describe("pagination", () => {
  it("pages with absolute links, a last page, a page beyond the end echoing its number, and clamped sizes", async () => {
    const org = await createOrg();
    await seed(
      org,
      Array.from({ length: 5 }, (_, i) => ({ name: `p${i}` })),
    );
    const first = await list(org, "page[size]=2&search[name]=p");
    expect(first.body.data).toHaveLength(2);
    expect(first.body.meta.pagination).toEqual({ "current-page": 1, "page-size": 2, "prev-page": null, "next-page": 2, "total-pages": 3, "total-count": 5 });
    for (const k of ["self", "first", "next", "last"]) {
      expect(first.body.links[k]).toMatch(new RegExp(`^http://localhost/api/v2/organizations/${org}/workspaces\\?`));
      // Other parameters survive in the links.
      expect(new URL(first.body.links[k]).searchParams.get("search[name]")).toBe("p");
    }
    expect(new URL(first.body.links.next).searchParams.get("page[number]")).toBe("2");
    expect(new URL(first.body.links.last).searchParams.get("page[number]")).toBe("3");
    expect(first.body.links.prev).toBeNull();

    const last = await list(org, "page[number]=3&page[size]=2");
    expect(last.body.data).toHaveLength(1);
    expect(last.body.links.next).toBeNull();
    expect(new URL(last.body.links.prev).searchParams.get("page[number]")).toBe("2");
    expect(last.body.meta.pagination["next-page"]).toBeNull();
    expect(last.body.meta.pagination["prev-page"]).toBe(2);

    // go-tfe: page 999 answers 200, no data, current-page 999 and the real total.
    const beyond = await list(org, "page%5Bnumber%5D=999&page%5Bsize%5D=100");
    expect(beyond.status).toBe(200);
    expect(beyond.body.data).toEqual([]);
    expect(beyond.body.meta.pagination).toMatchObject({ "current-page": 999, "total-count": 5, "total-pages": 1, "next-page": null });
    expect(beyond.body.links.next).toBeNull();

    // page[size] above 100 clamps to 100, below 1 to 1; page[number] below 1 or not a number is page 1.
    expect((await list(org, "page[size]=1000")).body.meta.pagination["page-size"]).toBe(100);
    expect((await list(org, "page[size]=101")).body.meta.pagination["page-size"]).toBe(100);
    expect((await list(org, "page[size]=0")).body.meta.pagination["page-size"]).toBe(1);
    expect((await list(org, "page[size]=-5")).body.data).toHaveLength(1);
    for (const n of ["0", "-3", "abc"]) expect((await list(org, `page[number]=${n}&page[size]=2`)).body.meta.pagination["current-page"]).toBe(1);
  });

  it("an organisation without workspaces is one empty page", async () => {
    const org = await createOrg();
    const res = await list(org);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
    expect(res.body.meta.pagination).toEqual({ "current-page": 1, "page-size": 20, "prev-page": null, "next-page": null, "total-pages": 1, "total-count": 0 });
    expect(res.body.links.prev).toBeNull();
    expect(res.body.links.next).toBeNull();
    expect(res.body.links.last).toMatch(/^http:\/\/localhost\//);
  });

  it("keeps a stable order across pages without sort: the union of pages is every workspace once, the same on every call", async () => {
    const org = await createOrg();
    const ids = Object.values(
      await seed(
        org,
        Array.from({ length: 7 }, (_, i) => ({ name: `s${(i * 3) % 7}` })),
      ),
    );
    const pages = async () => {
      const seen: string[] = [];
      for (let p = 1; p <= 3; p++) seen.push(...(await list(org, `page[number]=${p}&page[size]=3`)).body.data.map((w: Doc) => w.id));
      return seen;
    };
    const order = await pages();
    expect(sorted(order)).toEqual(sorted(ids));
    expect(new Set(order).size).toBe(7);
    expect(await pages()).toEqual(order);
    // Creation order.
    expect(order).toEqual(ids);
  });

  it("unknown organisations are 404", async () => {
    expect((await list(uniqueName("nope"))).status).toBe(404);
  });
});

describe("search[name] and search[wildcard-name]", () => {
  it("search[name] is a case-insensitive substring, short or long, with every SQL metacharacter literal", async () => {
    const org = await createOrg();
    await seed(org, [{ name: "app-prod" }, { name: "APP-dev" }, { name: "db_prod" }, { name: "dbxprod" }, { name: "a_b" }, { name: "100pct" }]);
    await expectMatches(org, "search[name]=app", ["app-prod", "APP-dev"]);
    await expectMatches(org, "search[name]=PROD", ["app-prod", "db_prod", "dbxprod"]);
    // `_` is literal both through the trigram index (3+ characters) and the short-search scan.
    await expectMatches(org, "search[name]=b_p", ["db_prod"]);
    await expectMatches(org, "search[name]=_", ["db_prod", "a_b"]);
    await expectMatches(org, "search[name]=a_", ["a_b"]);
    // `%`, quotes, backslashes, FTS syntax and unicode match nothing (no name contains them).
    for (const q of [
      "%25",
      "%25%25",
      "'",
      "' OR '1'='1",
      "%5C",
      "%5C%25",
      "%22",
      "a%22b",
      "app*",
      "NEAR(app)",
      "%E2%98%83",
      "%C3%A9t%C3%A9",
      "%F0%9F%92%A5x",
    ]) {
      const res = await list(org, `search[name]=${q}`);
      expect(res.status, q).toBe(200);
      expect(names(res), q).toEqual([]);
      expect(res.body.meta.pagination["total-count"], q).toBe(0);
    }
    // A NUL byte cannot be in a name: nothing, not everything.
    expect(names(await list(org, "search[name]=%00"))).toEqual([]);
    // An empty search is no filter.
    expect(names(await list(org, "search[name]="))).toHaveLength(6);
  });

  it("search[wildcard-name] takes * only as prefix, suffix or both; every other character is literal", async () => {
    const org = await createOrg();
    await seed(org, [{ name: "x-prod" }, { name: "prod-x" }, { name: "a-prod-b" }, { name: "prod" }, { name: "p_d" }, { name: "PROD-Y" }]);
    await expectMatches(org, "search[wildcard-name]=*-prod", ["x-prod"]);
    await expectMatches(org, "search[wildcard-name]=prod-*", ["prod-x", "PROD-Y"]);
    await expectMatches(org, "search[wildcard-name]=*-prod-*", ["a-prod-b"]);
    await expectMatches(org, "search[wildcard-name]=*rod*", ["x-prod", "prod-x", "a-prod-b", "prod", "PROD-Y"]);
    await expectMatches(org, "search[wildcard-name]=prod", ["prod"]);
    await expectMatches(org, "search[wildcard-name]=p*", ["prod-x", "prod", "p_d", "PROD-Y"]);
    await expectMatches(org, "search[wildcard-name]=*_d", ["p_d"]);
    for (const q of ["*-dev", "p*d", "p%25d", "*%25*", "*_prod", "pr*d-x", "*'*", "*%5C*"]) {
      expect(names(await list(org, `search[wildcard-name]=${q}`)), q).toEqual([]);
    }
    // `*` alone is every workspace; combined with search[name] both apply.
    expect(names(await list(org, "search[wildcard-name]=*"))).toHaveLength(6);
    await expectMatches(org, "search[wildcard-name]=prod*&search[name]=x", ["prod-x"]);
  });

  it("follows renames and deletes (the trigram index is kept by the index rows)", async () => {
    const org = await createOrg();
    const ids = await seed(org, [{ name: "alpha-one" }, { name: "beta-two" }]);
    expect((await api("PATCH", `/workspaces/${ids["alpha-one"]}`, { body: { data: { type: "workspaces", attributes: { name: "gamma-one" } } } })).status).toBe(
      200,
    );
    await expectMatches(org, "search[name]=alpha", []);
    await expectMatches(org, "search[name]=gamma", ["gamma-one"]);
    expect((await api("DELETE", `/workspaces/${ids["beta-two"]}`)).status).toBe(204);
    await expectMatches(org, "search[name]=two", []);
    const all = await list(org);
    expect(all.body.meta.pagination["total-count"]).toBe(1);
  });

  it("counts each organisation's matches alone, its search rows in a range of their own", async () => {
    const [a, b] = [await createOrg(), await createOrg()];
    // Created interleaved, so the organisations' rows would interleave in one sequence of row ids.
    for (const i of [1, 2, 3]) {
      await seed(a, [{ name: `shared-a${i}` }]);
      await seed(b, [{ name: `shared-b${i}` }, { name: `SHARED-bb${i}` }]);
    }
    await expectMatches(a, "search[name]=shared", ["shared-a1", "shared-a2", "shared-a3"]);
    await expectMatches(b, "search[name]=hAred", ["shared-b1", "shared-b2", "shared-b3", "SHARED-bb1", "SHARED-bb2", "SHARED-bb3"]);
    await expectMatches(b, "search[name]=red-bb", ["SHARED-bb1", "SHARED-bb2", "SHARED-bb3"]);
    const ranges = await env.DB.prepare(
      `SELECT o.name AS org, min(s.rid) - r.base AS low, max(s.rid) - r.base AS high FROM workspace_search s
       JOIN organizations o ON o.external_id = s.organization_id JOIN workspace_search_orgs r ON r.organization_id = s.organization_id
       WHERE o.name IN (?, ?) GROUP BY o.name ORDER BY o.name = ? DESC`,
    )
      .bind(a, b, a)
      .all<{ org: string; low: number; high: number }>();
    expect(ranges.results).toEqual([
      { org: a, low: 1, high: 3 },
      { org: b, low: 1, high: 6 },
    ]);
  });
});

describe("tags: search[tags], search[exclude-tags], filter[tagged]", () => {
  it("search[tags] needs every tag, search[exclude-tags] drops any, combined with other filters", async () => {
    const org = await createOrg();
    await seed(org, [{ name: "a", tags: ["red", "blue"] }, { name: "b", tags: ["red"] }, { name: "c", tags: ["blue"] }, { name: "d" }]);
    await expectEachMatches(org, {
      "search[tags]=red": ["a", "b"],
      "search[tags]=red,blue": ["a"],
      "search[tags]=red, blue,red": ["a"],
      "search[exclude-tags]=red": ["c", "d"],
      "search[exclude-tags]=red,blue": ["d"],
      "search[tags]=blue&search[exclude-tags]=red": ["c"],
      "search[tags]=red&search[name]=b": ["b"],
      "search[tags]=green": [],
      "search[exclude-tags]=green": ["a", "b", "c", "d"],
      // No tag contains NUL: such an exclusion excludes nothing (it used to exclude everything).
      "search[exclude-tags]=%00": ["a", "b", "c", "d"],
      "search[exclude-tags]=red%00": ["a", "b", "c", "d"],
      "search[exclude-tags]=red,x%00y": ["c", "d"],
      // A NUL in search[tags] still matches nothing.
      "search[tags]=red%00": [],
    });
  });

  it("filter[tagged] matches direct and project-inherited bindings (the workspace's own wins); AND across indices", async () => {
    const org = await createOrg();
    const prj = await makeProject(org);
    const ids = await seed(org, [
      { name: "w1", bindings: { key1: "value1", key2: "value2a" } },
      { name: "w2", bindings: { key2: "value2b", key3: "value3" } },
      { name: "w3", tags: ["flat"], project: prj },
      { name: "w4", bindings: { env: "dev" }, project: prj },
      { name: "w5" },
    ]);
    await expectMatches(org, "filter[tagged][0][key]=key1&filter[tagged][0][value]=", ["w1"]);
    await expectMatches(org, "filter[tagged][0][key]=key2", ["w1", "w2"]);
    await expectMatches(org, "filter[tagged][0][key]=key2&filter[tagged][0][value]=value2b", ["w2"]);
    await expectMatches(org, "filter[tagged][0][key]=key2&filter[tagged][0][value]=&filter[tagged][1][key]=key3&filter[tagged][1][value]=value3", ["w2"]);
    // A flat tag is not a binding: filter[tagged] never matches it, search[tags] does.
    await expectMatches(org, "filter[tagged][0][key]=flat&filter[tagged][0][value]=", []);
    await expectMatches(org, "filter[tagged][0][key]=flat&filter[tagged][0][value]=x", []);
    await expectMatches(org, "search[tags]=flat", ["w3"]);
    await expectMatches(org, "filter[tagged][0][key]=key2&filter[tagged][0][value]=nope", []);

    // The project's binding env=prod reaches w3; w4's own env=dev wins over it.
    expect((await api("PATCH", `/projects/${prj}/tag-bindings`, { body: { data: kv([["env", "prod"]]) } })).status).toBe(200);
    await expectMatches(org, "filter[tagged][0][key]=env&filter[tagged][0][value]=prod", ["w3"]);
    await expectMatches(org, "filter[tagged][0][key]=env&filter[tagged][0][value]=dev", ["w4"]);
    await expectMatches(org, "filter[tagged][0][key]=env&filter[tagged][0][value]=", ["w3", "w4"]);
    // Terraform's key-value strategy sends filter[tagged] and search[tags]=keys together: one answer.
    await expectMatches(org, "filter[tagged][0][key]=env&filter[tagged][0][value]=prod&search[tags]=env", ["w3"]);
    await expectMatches(org, "search[tags]=key2,key3", ["w2"]);
    await expectMatches(org, "search[tags]=env,flat", ["w3"]);
    await expectMatches(org, "search[exclude-tags]=env,key1", ["w2", "w5"]);
    await expectMatches(org, `filter[tagged][0][key]=env&filter[project][id]=${prj}&search[exclude-tags]=flat`, ["w4"]);

    // A deleted organisation tag matches nothing at once.
    const flatId = (await api("GET", `/organizations/${org}/tags?q=flat`)).body.data[0].id;
    expect((await api("DELETE", `/organizations/${org}/tags`, { body: { data: [{ type: "tags", id: flatId }] } })).status).toBe(204);
    await expectMatches(org, "filter[tagged][0][key]=flat", []);
    await expectMatches(org, "search[tags]=flat", []);
    await expectMatches(org, "search[exclude-tags]=flat,key1", ["w2", "w3", "w4", "w5"]);
    expect(ids.w5).toMatch(/^ws-/);
  });

  it("search[tags] with one key counts each workspace once, whether it carries the key as a flat tag, a binding or both", async () => {
    // The organisation has no deleted tag and no project binding of the key: the count comes from the index ranges.
    const org = await createOrg();
    await seed(org, [
      { name: "both", tags: ["k"], bindings: { k: "v" } },
      { name: "flat", tags: ["k"] },
      { name: "bound", bindings: { k: "" } },
      { name: "other", tags: ["j"], bindings: { j: "k" } },
    ]);
    await expectMatches(org, "search[tags]=k", ["both", "flat", "bound"]);
    await expectMatches(org, "search[tags]=j", ["other"]);
  });

  it("a value without its key is a 400 naming the key parameter; too many tag conditions are a 400", async () => {
    const org = await createOrg();
    const bad = await list(org, "filter[tagged][0][value]=prod");
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].source.parameter).toBe("filter[tagged][0][key]");
    const many = await list(org, `search[tags]=${Array.from({ length: 21 }, (_, i) => `t${i}`).join(",")}`);
    expect(many.status).toBe(400);
    expect(many.body.errors[0].source.parameter).toBe("search[tags]");
  });
});

describe("filter[project][id], filter[current-run][status], sort", () => {
  it("filters by project and follows workspaces moving between projects", async () => {
    const org = await createOrg();
    const prj = await makeProject(org);
    const ids = await seed(org, [{ name: "a" }, { name: "b", project: prj }, { name: "c", project: prj }]);
    await expectMatches(org, `filter[project][id]=${prj}`, ["b", "c"]);
    await expectMatches(org, "filter[project][id]=prj-nothere", []);
    const moved = await api("PATCH", `/workspaces/${ids.a}`, {
      body: { data: { type: "workspaces", relationships: { project: { data: { type: "projects", id: prj } } } } },
    });
    expect(moved.status).toBe(200);
    await expectMatches(org, `filter[project][id]=${prj}`, ["a", "b", "c"]);
    await expectMatches(org, `filter[project][id]=${prj}&search[name]=c`, ["c"]);
  });

  it("filter[current-run][status] never matches a workspace without a run; sorts by the current run (none last)", async () => {
    const org = await createOrg();
    const ids = await seed(org, [{ name: "a" }, { name: "b" }, { name: "c" }, { name: "d" }]);
    await expectMatches(org, "filter[current-run][status]=applied,planned", []);
    // This service has no runs; give two index rows a current run the way a run-holding writer would.
    const run = (id: string, status: string, at: string) =>
      env.DB.prepare("UPDATE workspaces SET current_run_status = ?, current_run_created_at = ? WHERE id = ?").bind(status, at, id).run();
    await run(ids.c, "applied", "2026-01-01T00:00:00Z");
    await run(ids.b, "planned", "2026-02-01T00:00:00Z");
    await expectMatches(org, "filter[current-run][status]=applied", ["c"]);
    await expectMatches(org, "filter[current-run][status]=applied,planned", ["b", "c"]);
    await expectMatches(org, "filter[current-run][status]=applied, errored", ["c"]);
    expect(names(await list(org, "sort=current-run.created-at"))).toEqual(["c", "b", "a", "d"]);
    expect(names(await list(org, "sort=-current-run.created-at"))).toEqual(["d", "a", "b", "c"]);
    expect(await plansAgree(org, "sort=-current-run.created-at&search[name]=a,b")).toEqual([]);
  });

  it("sorts by name (case-insensitively), latest-change-at and the creation order, both ways, stable across pages", async () => {
    const org = await createOrg();
    await seed(org, [{ name: "b" }, { name: "C" }, { name: "a" }, { name: "d-x" }, { name: "e-x" }]);
    expect(names(await list(org, "sort=name"))).toEqual(["a", "b", "C", "d-x", "e-x"]);
    expect(names(await list(org, "sort=-name"))).toEqual(["e-x", "d-x", "C", "b", "a"]);
    expect(names(await list(org, "sort=latest-change-at"))).toEqual(["b", "C", "a", "d-x", "e-x"]);
    expect(names(await list(org, "sort=-latest-change-at"))).toEqual(["e-x", "d-x", "a", "C", "b"]);
    expect(names(await list(org, "sort=current-run.created-at"))).toEqual(["b", "C", "a", "d-x", "e-x"]);
    expect((await allPages(org, "sort=-name")).names).toEqual(["e-x", "d-x", "C", "b", "a"]);
    // Every plan pages the same way under every sort, also filtered.
    for (const sort of ["name", "-name", "latest-change-at", "-latest-change-at", "current-run.created-at", "-current-run.created-at"]) {
      expect(await plansAgree(org, `sort=${sort}`), sort).toHaveLength(5);
      expect(await plansAgree(org, `sort=${sort}&search[name]=-x`), sort).toHaveLength(2);
    }
    expect(await plansAgree(org, "sort=-name&search[name]=-x")).toEqual(["e-x", "d-x"]);
    const bad = await list(org, "sort=size");
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].source.parameter).toBe("sort");
    expect((await list(org, "sort=-")).status).toBe(400);
  });

  it("combines every parameter at once and ignores parameters it does not know (go-tfe sends some)", async () => {
    const org = await createOrg();
    const prj = await makeProject(org);
    await seed(org, [
      { name: "svc-a-prod", tags: ["web"], bindings: { tier: "1" }, project: prj },
      { name: "svc-b-prod", tags: ["web", "legacy"], bindings: { tier: "1" }, project: prj },
      { name: "svc-c-dev", tags: ["web"], bindings: { tier: "1" }, project: prj },
      { name: "svc-d-prod", tags: ["web"], bindings: { tier: "2" }, project: prj },
      { name: "svc-e-prod", tags: ["web"], bindings: { tier: "1" } },
    ]);
    const q = `search[name]=svc&search[wildcard-name]=*-prod&search[tags]=web&search[exclude-tags]=legacy&filter[project][id]=${prj}&filter[tagged][0][key]=tier&filter[tagged][0][value]=1&sort=-name&include=organization&TagBindings=%7B+k1+v1%7D&foo=bar`;
    await expectMatches(org, q, ["svc-a-prod"]);
    const res = await list(org, q);
    expect(res.body.included.map((r: Doc) => r.type)).toEqual(["organizations"]);
  });
});

describe("permissions: a caller sees only what it may read, and total-count counts only that", () => {
  it("teams with workspace and project grants, users in several teams, organisation-wide readers", async () => {
    const org = await createOrg();
    const prj = await makeProject(org);
    const ids = await seed(org, [{ name: "a" }, { name: "b" }, { name: "c", project: prj }, { name: "d", project: prj }, { name: "e-x" }]);

    const readerOfB = await makeTeam(org);
    await grantWorkspace(readerOfB.id, ids.b, "read");
    await expectMatches(org, "", ["b"], readerOfB.token);
    // Listed workspaces carry the caller's permissions from its grant.
    const asReader = await list(org, "", readerOfB.token);
    expect(asReader.body.data[0].attributes.permissions["can-update"]).toBe(false);
    expect(asReader.body.data[0].attributes.permissions["can-read-run"]).toBe(true);

    // A project grant covers the project's workspaces; an extra workspace grant inside it is not counted twice.
    const projectTeam = await makeTeam(org);
    await grantProject(projectTeam.id, prj, "read");
    await grantWorkspace(projectTeam.id, ids.c, "admin");
    await grantWorkspace(projectTeam.id, ids["e-x"], "write");
    await expectMatches(org, "", ["c", "d", "e-x"], projectTeam.token);
    await expectMatches(org, "search[name]=x", ["e-x"], projectTeam.token);
    await expectMatches(org, `filter[project][id]=${prj}&sort=-name`, ["c", "d"], projectTeam.token);
    const perms = Object.fromEntries(
      (await list(org, "", projectTeam.token)).body.data.map((w: Doc) => [w.attributes.name, w.attributes.permissions["can-update"]]),
    );
    expect(perms).toEqual({ c: true, d: false, "e-x": false });

    // A user in both teams sees the union.
    const user = await makeUser({ teams: [readerOfB.id, projectTeam.id] });
    await expectMatches(org, "", ["b", "c", "d", "e-x"], user.token);
    await expectMatches(org, "search[exclude-tags]=none&sort=name", ["b", "c", "d", "e-x"], user.token);

    // Organisation-wide readers see everything.
    const everyone = ["a", "b", "c", "d", "e-x"];
    await expectMatches(org, "", everyone, (await makeTeam(org, { "read-workspaces": true })).token);
    await expectMatches(org, "", everyone, (await makeTeam(org, { "manage-workspaces": true })).token);
    await expectMatches(org, "", everyone, (await makeUser({ ownerOf: org })).token);
    await expectMatches(org, "", everyone, (await makeOrgToken(org)).token);

    // A team without grants sees an empty list; outsiders see no organisation.
    const idle = await makeTeam(org);
    const none = await list(org, "", idle.token);
    expect(none.status).toBe(200);
    expect(none.body.meta.pagination["total-count"]).toBe(0);
    expect((await list(org, "", (await makeTeam(await createOrg())).token)).status).toBe(404);
    expect((await list(org, "", (await makeUser()).token)).status).toBe(404);
  });
});

describe("include", () => {
  it("resolves organization, project, locked_by and agent_pool once each, on list and show", async () => {
    const org = await createOrg();
    const pool = await api("POST", `/organizations/${org}/agent-pools`, { body: { data: { type: "agent-pools", attributes: { name: uniqueName("pool") } } } });
    expect(pool.status).toBe(201);
    const ids = await seed(org, [{ name: "a" }, { name: "b" }, { name: "c" }]);
    await createWorkspace(org, { name: "d", "execution-mode": "agent", "agent-pool-id": pool.body.data.id });
    await createWorkspace(org, { name: "e", "execution-mode": "agent", "agent-pool-id": pool.body.data.id });
    expect((await api("POST", `/workspaces/${ids.a}/actions/lock`)).status).toBe(200);
    const lockers = await makeTeam(org);
    await grantWorkspace(lockers.id, ids.b, "write");
    expect((await api("POST", `/workspaces/${ids.b}/actions/lock`, { token: lockers.token })).status).toBe(200);
    // A lock answers before its index write, which the list reads (docs/consistency.md).
    await indexSettled(ids.a!, ids.b!);

    const res = await list(org, "include=organization,project,locked_by,agent_pool,organization");
    const keys = (res.body.included as Doc[]).map((r) => `${r.type}/${r.id}`);
    expect(new Set(keys).size).toBe(keys.length);
    const byType = (t: string) => (res.body.included as Doc[]).filter((r) => r.type === t);
    expect(byType("organizations").map((o) => o.id)).toEqual([org]);
    expect(byType("organizations")[0].attributes.email).toBe("owner@example.com");
    expect(byType("projects")).toHaveLength(1);
    expect(byType("projects")[0].attributes.name).toBe("Default Project");
    expect(byType("projects")[0].attributes["workspace-count"]).toBe(5);
    expect(byType("users").map((u) => u.attributes.username)).toEqual(["admin"]);
    expect(byType("teams").map((t) => t.id)).toEqual([lockers.id]);
    expect(byType("agent-pools").map((p) => p.id)).toEqual([pool.body.data.id]);
    const wsB = (res.body.data as Doc[]).find((w) => w.id === ids.b)!;
    expect(wsB.relationships["locked-by"].data).toEqual({ id: lockers.id, type: "teams" });

    const show = await api("GET", `/workspaces/${ids.a}?include=locked_by,organization,project`);
    expect((show.body.included as Doc[]).map((r) => r.type).sort()).toEqual(["organizations", "projects", "users"]);
    const byName = await api("GET", `/organizations/${org}/workspaces/a?include=locked_by`);
    expect((byName.body.included as Doc[]).map((r) => r.type)).toEqual(["users"]);
  });

  it("effective_tag_bindings: own bindings without links, inherited ones pointing at their project", async () => {
    const org = await createOrg();
    const prj = await makeProject(org);
    expect(
      (
        await api("PATCH", `/projects/${prj}/tag-bindings`, {
          body: {
            data: kv([
              ["team", "core"],
              ["env", "prod"],
            ]),
          },
        })
      ).status,
    ).toBe(200);
    const ids = await seed(org, [
      { name: "a", bindings: { env: "dev", app: "x" }, project: prj },
      { name: "b", project: prj },
    ]);
    const res = await list(org, "include=effective_tag_bindings");
    const eff = (res.body.included as Doc[]).filter((r) => r.type === "effective-tag-bindings");
    const keys = eff.map((r) => `${r.type}/${r.id}`);
    expect(new Set(keys).size).toBe(keys.length);
    const relOf = (id: string) =>
      ((res.body.data as Doc[]).find((w) => w.id === id)!.relationships["effective-tag-bindings"].data as Array<{ id: string }>).map(
        (d) => eff.find((e) => e.id === d.id)!,
      );
    const a = relOf(ids.a);
    // a: env=dev and app=x of its own (no links member), team=core from the project; env=prod is overridden.
    expect(a.map((b) => [b.attributes.key, b.attributes.value]).sort()).toEqual([
      ["app", "x"],
      ["env", "dev"],
      ["team", "core"],
    ]);
    for (const own of a.filter((b) => b.attributes.key !== "team")) expect("links" in own).toBe(false);
    const inherited = a.find((b) => b.attributes.key === "team")!;
    expect(inherited.links!["inherited-from"]).toBe(`/api/v2/projects/${prj}`);
    expect(inherited.relationships["inherited-from"].links.related).toBe(`/api/v2/projects/${prj}`);
    // b inherits both; the shared inherited binding appears once in `included`.
    expect(
      relOf(ids.b)
        .map((b) => b.attributes.key)
        .sort(),
    ).toEqual(["env", "team"]);
    const show = await api("GET", `/workspaces/${ids.a}?include=effective_tag_bindings`);
    expect((show.body.included as Doc[]).filter((r) => r.links?.["inherited-from"])).toHaveLength(1);
    expect(show.body.included).toHaveLength(3);
  });

  it("accepts every documented value (resources this service does not hold resolve to nothing); unknown values are a 400", async () => {
    const org = await createOrg();
    const ids = await seed(org, [{ name: uniqueName("w") }]);
    const id = Object.values(ids)[0];
    for (const v of INCLUDE_VALUES) {
      expect((await api("GET", `/workspaces/${id}?include=${v}`)).status, v).toBe(200);
      expect((await list(org, `include=${v}`)).status, v).toBe(200);
    }
    const none = await api("GET", `/workspaces/${id}?include=current_run,readme,current_configuration_version,vars,current-state-version`);
    expect(none.status).toBe(200);
    expect(none.body.included).toBeUndefined();
    for (const bad of ["bogus", "organization,bogus", "workspaces"]) {
      for (const res of [await list(org, `include=${bad}`), await api("GET", `/workspaces/${id}?include=${bad}`)]) {
        expect(res.status).toBe(400);
        expect(res.body.errors[0].detail).toContain("include parameter");
        expect(res.body.errors[0].source.parameter).toBe("include");
      }
    }
  });
});

// Up to LIMITS.listTagFiltersMax tag conditions in one list (Terraform's cloud block sends one filter[tagged] pair per tag).
describe("many tag conditions at once", () => {
  const keys = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
  const pairs = (b: Record<string, string>) => kv(Object.entries(b));
  const tagged = (conds: Array<[string, string?]>) =>
    conds.map(([k, v], i) => `filter[tagged][${i}][key]=${k}${v === undefined ? "" : `&filter[tagged][${i}][value]=${v}`}`).join("&");
  const setProjectBindings = async (prj: string, b: Record<string, string>) =>
    expect((await api("PATCH", `/projects/${prj}/tag-bindings`, { body: { data: pairs(b) } })).status).toBe(200);

  it("20 search[tags] keys need every key (flat, own binding or the project's); 20 search[exclude-tags] drop any", async () => {
    const org = await createOrg();
    const prj = await makeProject(org);
    const other = await makeProject(org);
    // k0..k9 flat, k10..k14 own bindings, k15..k19 the project's bindings.
    const all = keys("k", 20);
    await setProjectBindings(prj, Object.fromEntries(all.slice(15).map((k) => [k, "p"])));
    const own = Object.fromEntries(all.slice(10, 15).map((k) => [k, ""]));
    const ids = await seed(org, [
      { name: "all", tags: all.slice(0, 10), bindings: own, project: prj },
      { name: "all-but-k7", tags: all.slice(0, 10).filter((k) => k !== "k7"), bindings: own, project: prj },
      { name: "not-inheriting", tags: all.slice(0, 10), bindings: own, project: other },
      { name: "only-inherited", project: prj },
      { name: "one-flat", tags: ["k3", "unrelated"] },
      { name: "none", tags: ["unrelated"], bindings: { x: "y" } },
    ]);
    await expectMatches(org, `search[tags]=${all.join(",")}`, ["all"]);
    await expectMatches(org, `search[tags]=${all.slice(0, 19).join(",")}`, ["all"]);
    await expectMatches(org, `search[tags]=${all.join(",")}`, ["all"], await teamToken(org, { projects: { [prj]: "read" } }));
    await expectMatches(org, `search[exclude-tags]=${all.join(",")}`, ["none"]);
    await expectMatches(org, `search[exclude-tags]=${all.slice(1).join(",")}`, ["none"]);
    await expectMatches(org, `search[exclude-tags]=${[...keys("k", 4), ...keys("zz", 16)].join(",")}`, ["only-inherited", "none"]);
    // The grants variant: the caller reads two of them.
    const token = await teamToken(org, { workspaces: { [ids.none]: "read", [ids["one-flat"]]: "read" } });
    await expectMatches(org, `search[exclude-tags]=${all.join(",")}`, ["none"], token);
  });

  // The project binds e0..e9 = p0..p9; each workspace's own binding for a key wins over the project's.
  async function taggedOrg() {
    const org = await createOrg();
    const prj = await makeProject(org);
    await setProjectBindings(prj, Object.fromEntries(keys("e", 10).map((k, i) => [k, `p${i}`])));
    const f = Object.fromEntries(keys("f", 8).map((k) => [k, "a"]));
    const ids = await seed(org, [
      { name: "A", bindings: { ...f, e0: "mine", e6: "own6" }, project: prj },
      // e1's own value hides the project's p1.
      { name: "B", bindings: { ...f, e0: "mine", e1: "x" }, project: prj },
      // e0 is the project's p0.
      { name: "C", bindings: { ...f, e6: "z", e7: "zz" }, project: prj },
      { name: "D", bindings: { ...f, e0: "mine" } },
      { name: "E", project: prj },
      // Flat tags are not bindings.
      { name: "F", tags: keys("f", 8), bindings: { e0: "mine" }, project: prj },
    ]);
    return { org, prj, ids };
  }

  it("10 filter[tagged] pairs, with values and key-only, inherited and overridden", async () => {
    const { org, ids } = await taggedOrg();
    const keyOnly = tagged([...keys("f", 8), "e6", "e9"].map((k) => [k]));
    await expectMatches(org, keyOnly, ["A", "B", "C"]);
    await expectMatches(org, keyOnly.replace(/\[key\]=f(\d)/g, "[key]=f$1&filter[tagged][$1][value]="), ["A", "B", "C"]);
    const valued: Array<[string, string?]> = [...keys("f", 8).map((k): [string, string] => [k, "a"]), ["e0", "mine"], ["e2", "p2"]];
    await expectMatches(org, tagged(valued), ["A", "B"]);
    await expectMatches(org, tagged([...valued.slice(0, 9), ["e1", "p1"]]), ["A"]);
    await expectMatches(org, tagged([...valued.slice(0, 8), ["e0", "p0"], ["e1", "p1"]]), ["C"]);
    await expectMatches(org, tagged([...valued.slice(0, 8), ["e0", "p0"], ["e0", "mine"]]), []);
    await expectMatches(org, tagged([...valued.slice(0, 9), ["e3"]]), ["A", "B"], await teamToken(org, { workspaces: { [ids.A]: "read", [ids.B]: "read" } }));
  });

  it("20 filter[tagged] pairs, with values and key-only, inherited and overridden", async () => {
    const { org, prj, ids } = await taggedOrg();
    const conds: Array<[string, string?]> = [
      ...keys("f", 8).map((k): [string, string] => [k, "a"]),
      ["e0", "mine"],
      ...[1, 2, 3, 4, 5].map((i): [string, string] => [`e${i}`, `p${i}`]),
      ...["e6", "e7", "e8", "e9", "f0", "e1"].map((k): [string] => [k]),
    ];
    expect(conds).toHaveLength(20);
    await expectMatches(org, tagged(conds), ["A"]);
    // B misses only e1=p1, C only e0=mine, D every inherited one.
    await expectMatches(org, tagged(conds.map(([k, v]) => (k === "e1" && v ? [k] : [k, v]))), ["A", "B"]);
    await expectMatches(org, tagged(conds.map(([k, v]) => (k === "e0" ? [k] : [k, v]))), ["A", "C"]);
    const grants = await teamToken(org, { workspaces: { [ids.D]: "read" }, projects: { [prj]: "read" } });
    await expectMatches(org, tagged(conds), ["A"], grants);
  });

  it("the maximum mix of tag conditions with search[name], filter[project][id] and filter[current-run][status]", async () => {
    const org = await createOrg();
    const prj = await makeProject(org);
    await setProjectBindings(prj, Object.fromEntries(keys("e", 10).map((k, i) => [k, `p${i}`])));
    const own = { b0: "v0", b1: "v1", b2: "v2", e0: "mine" };
    const tags = ["t0", "t1", "t2"];
    const ids = await seed(org, [
      { name: "svc-all", tags, bindings: own, project: prj },
      { name: "svc-not-running", tags, bindings: own, project: prj },
      { name: "svc-excluded", tags: [...tags, "x3"], bindings: own, project: prj },
      { name: "svc-other-project", tags, bindings: own },
      { name: "svc-b2-differs", tags, bindings: { ...own, b2: "other" }, project: prj },
      { name: "svc-no-t2", tags: tags.slice(0, 2), bindings: own, project: prj },
      { name: "web-all", tags, bindings: own, project: prj },
      { name: "svc-none", project: prj },
    ]);
    for (const [name, id] of Object.entries(ids)) {
      if (name === "svc-not-running") continue;
      await env.DB.prepare("UPDATE workspaces SET current_run_status = 'applied', current_run_created_at = ? WHERE id = ?")
        .bind("2026-01-01T00:00:00Z", id)
        .run();
    }
    // 5 search[tags] (flat, own binding key, the project's key), 5 exclusions, 10 filter[tagged].
    const q = [
      "search[tags]=t0,t1,t2,b0,e9",
      "search[exclude-tags]=x0,x1,x2,x3,x4",
      tagged([["b0", "v0"], ["b1", "v1"], ["b2", "v2"], ["b0"], ["e0", "mine"], ["e1", "p1"], ["e2", "p2"], ["e3"], ["e4", ""], ["e5", "p5"]]),
      "search[name]=svc",
      `filter[project][id]=${prj}`,
      "filter[current-run][status]=applied,planned",
    ].join("&");
    await expectMatches(org, q, ["svc-all"]);
    for (const sort of ["name", "-current-run.created-at"]) await expectMatches(org, `${q}&sort=${sort}`, ["svc-all"]);
    const grants = await teamToken(org, { projects: { [prj]: "read" } });
    await expectMatches(org, q, ["svc-all"], grants);
    // One condition over the maximum is a 400, not a 500.
    const over = await list(org, `${q}&filter[tagged][10][key]=e6`);
    expect(over.status).toBe(400);
  });
});
