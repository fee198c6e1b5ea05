// Spec §4.4 / §4.6: list parameters, pagination, permission-filtered totals, include.
import { describe, expect, it } from "vitest";
import { api, createOrg, createWorkspace, uniqueName } from "./helpers";
import { grantWorkspace, makeTeam } from "./principals";

const list = (org: string, query = "", token?: string) => api("GET", `/organizations/${org}/workspaces${query ? `?${query}` : ""}`, { token });
const names = (res: { body: { data: Array<{ attributes: { name: string } }> } }) => res.body.data.map((w) => w.attributes.name);

async function seed(org: string, specs: Array<{ name: string; tags?: string[]; bindings?: Record<string, string> }>) {
  const out: Record<string, string> = {};
  for (const s of specs) {
    const rel: Record<string, unknown> = {};
    if (s.tags) rel.tags = { data: s.tags.map((name) => ({ type: "tags", attributes: { name } })) };
    if (s.bindings) rel["tag-bindings"] = { data: Object.entries(s.bindings).map(([key, value]) => ({ type: "tag-bindings", attributes: { key, value } })) };
    out[s.name] = (await createWorkspace(org, { name: s.name }, undefined, Object.keys(rel).length ? rel : undefined)).id;
  }
  return out;
}

describe("pagination", () => {
  it("pages with absolute links, echoes an out-of-range page and clamps page sizes", async () => {
    const org = await createOrg();
    await seed(org, Array.from({ length: 5 }, (_, i) => ({ name: `p${i}` })));
    const first = await list(org, "page[size]=2");
    expect(first.body.data).toHaveLength(2);
    expect(first.body.meta.pagination).toEqual({ "current-page": 1, "page-size": 2, "prev-page": null, "next-page": 2, "total-pages": 3, "total-count": 5 });
    expect(first.body.links.next).toMatch(/^http:\/\/localhost\/api\/v2\/organizations\/.*page%5Bnumber%5D=2/);
    expect(first.body.links.prev).toBeNull();
    const last = await list(org, "page[number]=3&page[size]=2");
    expect(last.body.data).toHaveLength(1);
    expect(last.body.links.next).toBeNull();
    const beyond = await list(org, "page%5Bnumber%5D=999&page%5Bsize%5D=100");
    expect(beyond.body.data).toEqual([]);
    expect(beyond.body.meta.pagination["current-page"]).toBe(999);
    expect(beyond.body.meta.pagination["total-count"]).toBe(5);
    expect((await list(org, "page[size]=1000")).body.meta.pagination["page-size"]).toBe(100);
    expect((await list(org, "page[size]=0")).body.meta.pagination["page-size"]).toBe(1);
  });

  it("keeps a stable order across pages without sort: the union of pages is every workspace once", async () => {
    const org = await createOrg();
    const ids = Object.values(await seed(org, Array.from({ length: 7 }, (_, i) => ({ name: `s${(i * 3) % 7}` }))));
    const seen: string[] = [];
    for (let p = 1; p <= 3; p++) seen.push(...(await list(org, `page[number]=${p}&page[size]=3`)).body.data.map((w: { id: string }) => w.id));
    const order = [...seen];
    expect(seen.sort()).toEqual([...ids].sort());
    const again: string[] = [];
    for (let p = 1; p <= 3; p++) again.push(...(await list(org, `page[number]=${p}&page[size]=3`)).body.data.map((w: { id: string }) => w.id));
    expect(again).toEqual(order);
  });
});

describe("search and filters", () => {
  it("search[name] is a case-insensitive substring match; SQL metacharacters are literal", async () => {
    const org = await createOrg();
    await seed(org, [{ name: "app-prod" }, { name: "APP-dev" }, { name: "db_prod" }, { name: "dbxprod" }]);
    expect(names(await list(org, "search[name]=app")).sort()).toEqual(["APP-dev", "app-prod"]);
    expect(names(await list(org, "search[name]=b_p"))).toEqual(["db_prod"]);
    expect(names(await list(org, "search[name]=%25"))).toEqual([]);
    expect(names(await list(org, "search[name]=' OR 1=1 --"))).toEqual([]);
    expect(names(await list(org, "search[name]=%E2%98%83"))).toEqual([]);
  });

  it("search[wildcard-name] takes * only as prefix, suffix or both", async () => {
    const org = await createOrg();
    await seed(org, [{ name: "x-prod" }, { name: "prod-x" }, { name: "a-prod-b" }, { name: "prod" }]);
    expect(names(await list(org, "search[wildcard-name]=*-prod")).sort()).toEqual(["x-prod"]);
    expect(names(await list(org, "search[wildcard-name]=prod-*")).sort()).toEqual(["prod-x"]);
    expect(names(await list(org, "search[wildcard-name]=*-prod-*")).sort()).toEqual(["a-prod-b"]);
    expect(names(await list(org, "search[wildcard-name]=*-dev"))).toEqual([]);
    expect(names(await list(org, "search[wildcard-name]=p*d"))).toEqual([]); // a middle * is literal
    expect(names(await list(org, "search[wildcard-name]=*_prod"))).toEqual([]); // _ is literal
  });

  it("search[tags] needs all tags, search[exclude-tags] drops any; combined with other filters", async () => {
    const org = await createOrg();
    await seed(org, [
      { name: "a", tags: ["red", "blue"] },
      { name: "b", tags: ["red"] },
      { name: "c", tags: ["blue"] },
      { name: "d" },
    ]);
    expect(names(await list(org, "search[tags]=red")).sort()).toEqual(["a", "b"]);
    expect(names(await list(org, "search[tags]=red,blue"))).toEqual(["a"]);
    expect(names(await list(org, "search[exclude-tags]=red")).sort()).toEqual(["c", "d"]);
    expect(names(await list(org, "search[exclude-tags]=red,blue"))).toEqual(["d"]);
    expect(names(await list(org, "search[tags]=blue&search[exclude-tags]=red"))).toEqual(["c"]);
    expect(names(await list(org, "search[tags]=red&search[name]=b"))).toEqual(["b"]);
  });

  it("filter[tagged] matches keys and values, AND across indices; an empty value means any", async () => {
    const org = await createOrg();
    await seed(org, [
      { name: "a", bindings: { env: "prod", team: "x" } },
      { name: "b", bindings: { env: "dev" } },
      { name: "c", tags: ["env"] },
    ]);
    expect(names(await list(org, "filter[tagged][0][key]=env&filter[tagged][0][value]=")).sort()).toEqual(["a", "b", "c"]);
    expect(names(await list(org, "filter%5Btagged%5D%5B0%5D%5Bkey%5D=env&filter%5Btagged%5D%5B0%5D%5Bvalue%5D=prod"))).toEqual(["a"]);
    expect(names(await list(org, "filter[tagged][0][key]=env&filter[tagged][1][key]=team&filter[tagged][1][value]=x"))).toEqual(["a"]);
    expect(names(await list(org, "filter[tagged][0][key]=env&filter[tagged][0][value]=none"))).toEqual([]);
    const bad = await list(org, "filter[tagged][0][value]=prod");
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].source.parameter).toBe("filter[tagged][0][key]");
  });

  it("filter[project][id] and filter[current-run][status] (a workspace without a run never matches)", async () => {
    const org = await createOrg();
    const ids = await seed(org, [{ name: "a" }, { name: "b" }]);
    const ws = await api("GET", `/workspaces/${ids.a}`);
    const project = ws.body.data.relationships.project.data.id;
    expect(names(await list(org, `filter[project][id]=${project}`)).sort()).toEqual(["a", "b"]);
    expect(names(await list(org, "filter[project][id]=prj-nothere"))).toEqual([]);
    expect(names(await list(org, "filter[current-run][status]=applied,planned"))).toEqual([]);
  });

  it("ignores parameters it does not know (go-tfe sends some)", async () => {
    const org = await createOrg();
    await seed(org, [{ name: "a" }]);
    const res = await list(org, "TagBindings=%7B+k1+v1%7D&foo=bar");
    expect(res.status).toBe(200);
    expect(names(res)).toEqual(["a"]);
  });
});

describe("sort", () => {
  it("sorts by name (case-insensitively) both ways and by latest-change-at; unknown sort is a 400", async () => {
    const org = await createOrg();
    await seed(org, [{ name: "b" }, { name: "C" }, { name: "a" }]);
    expect(names(await list(org, "sort=name"))).toEqual(["a", "b", "C"]);
    expect(names(await list(org, "sort=-name"))).toEqual(["C", "b", "a"]);
    expect(names(await list(org, "sort=latest-change-at"))).toEqual(["b", "C", "a"]);
    expect(names(await list(org, "sort=-latest-change-at"))).toEqual(["a", "C", "b"]);
    expect(names(await list(org, "sort=current-run.created-at"))).toEqual(["b", "C", "a"]);
    const bad = await list(org, "sort=size");
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].source.parameter).toBe("sort");
  });
});

describe("permissions", () => {
  it("a team sees only the workspaces it was granted, and total-count counts only those", async () => {
    const org = await createOrg();
    const ids = await seed(org, [{ name: "a" }, { name: "b" }, { name: "c" }]);
    const team = await makeTeam(org);
    await grantWorkspace(team.id, ids.b, "read");
    const res = await list(org, "", team.token);
    expect(names(res)).toEqual(["b"]);
    expect(res.body.meta.pagination["total-count"]).toBe(1);
    const reader = await makeTeam(org, { "read-workspaces": true });
    expect((await list(org, "", reader.token)).body.meta.pagination["total-count"]).toBe(3);
    const outsider = await makeTeam(await createOrg());
    expect((await list(org, "", outsider.token)).status).toBe(404);
  });
});

describe("include", () => {
  it("resolves organization, project, locked_by and effective_tag_bindings without duplicates", async () => {
    const org = await createOrg();
    const ids = await seed(org, [{ name: "a", bindings: { env: "prod" } }, { name: "b" }]);
    await api("POST", `/workspaces/${ids.a}/actions/lock`);
    const res = await list(org, "include=organization,project,locked_by,effective_tag_bindings");
    const types = res.body.included.map((r: { type: string; id: string }) => `${r.type}/${r.id}`);
    expect(new Set(types).size).toBe(types.length);
    expect(types.filter((t: string) => t.startsWith("organizations/"))).toEqual([`organizations/${org}`]);
    expect(types.filter((t: string) => t.startsWith("projects/"))).toHaveLength(1);
    expect(types.filter((t: string) => t.startsWith("users/"))).toHaveLength(1);
    const eff = res.body.included.filter((r: { type: string }) => r.type === "effective-tag-bindings");
    expect(eff.map((r: { attributes: { key: string } }) => r.attributes.key)).toEqual(["env"]);
    expect("links" in eff[0]).toBe(false);
    const wsA = res.body.data.find((w: { id: string }) => w.id === ids.a);
    expect(wsA.relationships["effective-tag-bindings"].data).toEqual([{ id: eff[0].id, type: "effective-tag-bindings" }]);
  });

  it("resources this service does not hold resolve to nothing; unknown values are a 400 naming the include parameter", async () => {
    const org = await createOrg();
    const ids = await seed(org, [{ name: uniqueName() }]);
    const ok = await api("GET", `/workspaces/${Object.values(ids)[0]}?include=current_run,readme,current_configuration_version`);
    expect(ok.status).toBe(200);
    expect(ok.body.included).toBeUndefined();
    const bad = await list(org, "include=bogus");
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].detail).toContain("include parameter");
    expect(bad.body.errors[0].source.parameter).toBe("include");
  });
});
