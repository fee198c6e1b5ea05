// Key-value tag bindings: a set of their own, apart from flat tags,
// the 10-binding limit, project bindings and their inheritance into effective bindings.
import { describe, expect, it } from "vitest";
import { createOrg, createWorkspace, makeProject, teamToken } from "../fixtures";
import { api, uniqueName } from "../helpers";

type Binding = {
  id: string;
  type: string;
  attributes: { key: string; value: string; "created-at"?: string };
  links?: Record<string, string>;
  relationships?: Record<string, any>;
};

const kv = (...pairs: Array<[string, string?]>) =>
  pairs.map(([key, value]) => ({ type: "tag-bindings", attributes: value === undefined ? { key } : { key, value } }));
const patch = (ws: string, data: unknown[], token?: string) => api("PATCH", `/workspaces/${ws}/tag-bindings`, { body: { data }, token });
const bindings = async (ws: string) => (await api("GET", `/workspaces/${ws}/tag-bindings`)).body.data as Binding[];
const effective = async (ws: string) => {
  const res = await api("GET", `/workspaces/${ws}/effective-tag-bindings`);
  expect(res.status).toBe(200);
  return res.body.data as Binding[];
};
const pairsOf = (list: Binding[]) => list.map((b) => [b.attributes.key, b.attributes.value]);
const tagNames = async (ws: string) => (await api("GET", `/workspaces/${ws}`)).body.data.attributes["tag-names"] as string[];
const updateBindings = (ws: string, data: unknown[]) =>
  api("PATCH", `/workspaces/${ws}`, { body: { data: { type: "workspaces", relationships: { "tag-bindings": { data } } } } });

const inProject = (project: string) => ({ project: { data: { type: "projects", id: project } } });
const patchProject = (prj: string, data: unknown[], token?: string) => api("PATCH", `/projects/${prj}/tag-bindings`, { body: { data }, token });

describe("workspace tag bindings", () => {
  it("PATCH adds in the order sent, updates by key and never removes", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const res = await patch(ws.id, kv(["foo", "bar"], ["baz", "qux"]));
    expect(res.status).toBe(200);
    expect(pairsOf(res.body.data)).toEqual([
      ["foo", "bar"],
      ["baz", "qux"],
    ]);
    expect(res.body.data[0].id).toMatch(/^tb-/);
    expect(res.body.data[0].type).toBe("tag-bindings");
    const again = await patch(ws.id, kv(["baz", "new"]));
    expect(pairsOf(again.body.data)).toEqual([["baz", "new"]]);
    expect(again.body.data[0].id).toBe(res.body.data[1].id);
    const list = await api("GET", `/workspaces/${ws.id}/tag-bindings`);
    expect(list.status).toBe(200);
    expect(list.body.links.target).toBe(`/api/v2/workspaces/${ws.id}`);
    expect(pairsOf(list.body.data)).toEqual([
      ["foo", "bar"],
      ["baz", "new"],
    ]);
    expect(list.body.data[0].attributes["created-at"]).toMatch(/Z$/);
    expect(list.body.meta).toBeUndefined(); // not paginated
    // A key sent twice is set once, the later value winning.
    const dup = await patch(ws.id, kv(["d", "1"], ["d", "2"]));
    expect(pairsOf(dup.body.data)).toEqual([["d", "2"]]);
    // Bindings are not flat tags.
    expect(await tagNames(ws.id)).toEqual([]);
  });

  it("keeps flat tags and bindings apart: a key-only binding is no flat tag, a flat tag no binding", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    await api("POST", `/workspaces/${ws.id}/relationships/tags`, { body: { data: [{ type: "tags", attributes: { name: "flat" } }] } });
    await patch(ws.id, kv(["env", "prod"], ["keyonly"], ["empty", ""]));
    expect(await tagNames(ws.id)).toEqual(["flat"]);
    expect(pairsOf(await bindings(ws.id))).toEqual([
      ["env", "prod"],
      ["keyonly", ""],
      ["empty", ""],
    ]);
    const flat = (await api("GET", `/workspaces/${ws.id}/relationships/tags`)).body.data.map((t: { attributes: { name: string } }) => t.attributes.name);
    expect(flat).toEqual(["flat"]);
    const orgTags = (await api("GET", `/organizations/${org}/tags`)).body.data.map((t: { attributes: { name: string } }) => t.attributes.name);
    expect(orgTags).toEqual(["flat"]);
    // One key in both sets: each write changes its own set only.
    await api("POST", `/workspaces/${ws.id}/relationships/tags`, { body: { data: [{ type: "tags", attributes: { name: "env" } }] } });
    await patch(ws.id, kv(["flat", "v"]));
    expect(await tagNames(ws.id)).toEqual(["flat", "env"]);
    expect(pairsOf(await bindings(ws.id))).toEqual([
      ["env", "prod"],
      ["keyonly", ""],
      ["empty", ""],
      ["flat", "v"],
    ]);
    await api("DELETE", `/workspaces/${ws.id}/relationships/tags`, {
      body: {
        data: [
          { type: "tags", attributes: { name: "flat" } },
          { type: "tags", attributes: { name: "keyonly" } },
        ],
      },
    });
    expect(await tagNames(ws.id)).toEqual(["env"]);
    expect(pairsOf(await bindings(ws.id))).toEqual([
      ["env", "prod"],
      ["keyonly", ""],
      ["empty", ""],
      ["flat", "v"],
    ]);
  });

  it("create accepts tag-bindings and flat tags; update replaces the bindings only and [] clears them", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org, {}, undefined, {
      tags: {
        data: [
          { type: "tags", attributes: { name: "f1" } },
          { type: "tags", attributes: { name: "shared" } },
        ],
      },
      "tag-bindings": {
        data: kv(["k1", "v1"], ["shared", "x"]),
      },
    });
    expect(ws.attributes["tag-names"]).toEqual(["f1", "shared"]);
    expect(pairsOf(await bindings(ws.id))).toEqual([
      ["k1", "v1"],
      ["shared", "x"],
    ]);
    const k1Id = (await bindings(ws.id))[0]!.id;

    const upd = await updateBindings(ws.id, kv(["k1", "v2"], ["foo", "bar"]));
    expect(upd.status).toBe(200);
    expect(upd.body.data.attributes["tag-names"]).toEqual(["f1", "shared"]);
    const after = await bindings(ws.id);
    expect(pairsOf(after)).toEqual([
      ["k1", "v2"],
      ["foo", "bar"],
    ]);
    expect(after[0]!.id).toBe(k1Id);
    expect(pairsOf(await effective(ws.id))).toEqual([
      ["k1", "v2"],
      ["foo", "bar"],
    ]);
    // Flat tags are untouched by a binding replace.
    expect((await api("GET", `/organizations/${org}/tags?q=f1`)).body.data).toHaveLength(1);
    // An update without tag-bindings leaves them alone.
    await api("PATCH", `/workspaces/${ws.id}`, { body: { data: { type: "workspaces", attributes: { description: "d" } } } });
    expect(pairsOf(await bindings(ws.id))).toEqual([
      ["k1", "v2"],
      ["foo", "bar"],
    ]);
    // go-tfe's DeleteAllTagBindings.
    expect((await updateBindings(ws.id, [])).status).toBe(200);
    expect(await bindings(ws.id)).toEqual([]);
    expect(await tagNames(ws.id)).toEqual(["f1", "shared"]);
  });

  it("validates every entry with 422 and a pointer to it", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const cases: Array<[unknown[], string]> = [
      [kv(["ok", "1"], ["k".repeat(129), "v"]), "/data/1/attributes/key"],
      [kv(["ok", "v".repeat(257)]), "/data/0/attributes/value"],
      [kv(["has space", "v"]), "/data/0/attributes/key"],
      [kv(["k", "a/b"]), "/data/0/attributes/value"],
      [kv(["hc:thing", "v"]), "/data/0/attributes/key"],
      [kv(["hcp:thing", "v"]), "/data/0/attributes/key"],
      [kv(["HCP:thing", "v"]), "/data/0/attributes/key"],
      [kv(["", "v"]), "/data/0/attributes/key"],
      [[{ type: "tag-bindings", attributes: { value: "v" } }], "/data/0/attributes/key"],
      [[{ attributes: { key: "k" } }], "/data/0/type"],
      [[{ type: "tags", attributes: { key: "k" } }], "/data/0/type"],
    ];
    for (const [data, pointer] of cases) {
      const res = await patch(ws.id, data);
      expect(res.status, pointer).toBe(422);
      expect(res.body.errors[0].title).toBe("invalid attribute");
      expect(res.body.errors[0].source.pointer).toBe(pointer);
    }
    // The edges are allowed: 128/256 characters and every allowed symbol.
    const edge = await patch(ws.id, kv(["k".repeat(128), "v".repeat(256)], ["a_.=+-@:Z9", "b_.=+-@:Z9"], ["hcx:ok", "hc:value-is-fine"]));
    expect(edge.status).toBe(200);
    expect(await bindings(ws.id)).toHaveLength(3);
    // Create and update point into relationships.
    const create = await api("POST", `/organizations/${org}/workspaces`, {
      body: { data: { type: "workspaces", attributes: { name: uniqueName("ws") }, relationships: { "tag-bindings": { data: kv(["hc:x", "1"]) } } } },
    });
    expect(create.status).toBe(422);
    expect(create.body.errors[0].source.pointer).toBe("/data/relationships/tag-bindings/data/0/attributes/key");
    const upd = await updateBindings(ws.id, kv(["ok", "1"], ["bad key", "1"]));
    expect(upd.status).toBe(422);
    expect(upd.body.errors[0].source.pointer).toBe("/data/relationships/tag-bindings/data/1/attributes/key");
    expect(await bindings(ws.id)).toHaveLength(3);
  });

  it("enforces at most 10 direct bindings, key-only ones included; flat tags never count", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const ten = Array.from({ length: 10 }, (_, i) => [`k${i}`, `v${i}`] as [string, string]);
    const eleven = await patch(ws.id, kv(...ten, ["k10", "v10"]));
    expect(eleven.status).toBe(422);
    expect(eleven.body.errors[0].detail).toContain("10");
    expect(eleven.body.errors[0].source.pointer).toBe("/data/10");
    expect(await bindings(ws.id)).toEqual([]);
    expect((await patch(ws.id, kv(...ten.slice(0, 8)))).status).toBe(200);
    const over = await patch(ws.id, kv(["k0", "changed"], ["n1", "1"], ["n2", "2"], ["n3", "3"]));
    expect(over.status).toBe(422);
    expect(over.body.errors[0].source.pointer).toBe("/data/3");
    expect((await patch(ws.id, kv(["k0", "changed"], ["n1", "1"], ["n2", "2"]))).status).toBe(200);
    expect(await bindings(ws.id)).toHaveLength(10);
    // Full: a new key-only binding is refused too...
    const keyOnly = await patch(ws.id, kv(["extra"]));
    expect(keyOnly.status).toBe(422);
    expect(keyOnly.body.errors[0].source.pointer).toBe("/data/0");
    // ...but flat tags are not bindings: the tags endpoint still adds them.
    expect((await api("POST", `/workspaces/${ws.id}/relationships/tags`, { body: { data: [{ type: "tags", attributes: { name: "extra" } }] } })).status).toBe(
      204,
    );
    expect(await bindings(ws.id)).toHaveLength(10);
    expect(await tagNames(ws.id)).toEqual(["extra"]);
    // go-tfe's "adding 26 tags": 26 new key-only bindings in one PATCH are refused.
    const fresh = await createWorkspace(org);
    const nato = [
      "alpha",
      "bravo",
      "charlie",
      "delta",
      "echo",
      "foxtrot",
      "golf",
      "hotel",
      "india",
      "juliet",
      "kilo",
      "lima",
      "mike",
      "november",
      "oscar",
      "papa",
      "quebec",
      "romeo",
      "sierra",
      "tango",
      "uniform",
      "victor",
      "whiskey",
      "xray",
      "yankee",
      "zulu",
    ];
    const many = await patch(fresh.id, kv(...nato.map((k): [string] => [k])));
    expect(many.status).toBe(422);
    expect(many.body.errors[0].source.pointer).toBe("/data/10");
    // Create and update are binding writes too.
    const create = await api("POST", `/organizations/${org}/workspaces`, {
      body: { data: { type: "workspaces", attributes: { name: uniqueName("ws") }, relationships: { "tag-bindings": { data: kv(...ten, ["x", "y"]) } } } },
    });
    expect(create.status).toBe(422);
    expect(create.body.errors[0].source.pointer).toBe("/data/relationships/tag-bindings/data/10");
    const upd = await updateBindings(fresh.id, kv(...ten, ["x", "y"]));
    expect(upd.status).toBe(422);
    expect(upd.body.errors[0].source.pointer).toBe("/data/relationships/tag-bindings/data/10");
    expect((await updateBindings(fresh.id, kv(...ten))).status).toBe(200);
  });

  it("keeps Terraform's set-of-tags strategy working with ten tags (key-only bindings count)", async () => {
    const org = await createOrg();
    const names = Array.from({ length: 10 }, (_, i) => `app-${i}`);
    // terraform init: create with flat tags (relationships.tags)...
    const ws = await createWorkspace(org, {}, undefined, { tags: { data: names.map((name) => ({ type: "tags", attributes: { name } })) } });
    expect(ws.attributes["tag-names"]).toEqual(names);
    // ...the tag check finds no binding keys, so it PATCHes every tag as a key-only binding.
    expect(await bindings(ws.id)).toEqual([]);
    const res = await patch(ws.id, kv(...names.map((k): [string] => [k])));
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(10);
    expect(await tagNames(ws.id)).toEqual(names);
    expect(pairsOf(await bindings(ws.id))).toEqual(names.map((k) => [k, ""]));
    // An eleventh tag would need an eleventh binding: the documented limit (docs/behaviour.md).
    const over = await patch(ws.id, kv(...[...names, "app-10"].map((k): [string] => [k])));
    expect(over.status).toBe(422);
    expect(over.body.errors[0].detail).toBe("Tag bindings cannot exceed 10 per resource");
  });

  it("serialises concurrent PATCHes in the workspace's Durable Object", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    // 20 racing flat-tag adds all land (flat tags have no limit).
    const flat = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api("POST", `/workspaces/${ws.id}/relationships/tags`, { body: { data: [{ type: "tags", attributes: { name: `key${i}` } }] } }),
      ),
    );
    expect(flat.map((r) => r.status)).toEqual(Array(20).fill(204));
    expect((await tagNames(ws.id)).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `key${i}`).sort());
    expect((await api("GET", `/organizations/${org}/tags?page[size]=100`)).body.meta.pagination["total-count"]).toBe(20);

    // 15 racing writers of distinct valued keys: exactly 10 land, the rest get 422.
    const other = await createWorkspace(org);
    const valued = await Promise.all(Array.from({ length: 15 }, (_, i) => patch(other.id, kv([`v${i}`, `x${i}`]))));
    const landed = valued.flatMap((r, i) => (r.status === 200 ? [`v${i}`] : []));
    expect(landed).toHaveLength(10);
    expect(valued.filter((r) => r.status === 422)).toHaveLength(5);
    expect((await bindings(other.id)).map((b) => b.attributes.key).sort()).toEqual(landed.sort());

    // 20 writers of one key: all succeed, one entry remains, holding one of their values.
    const same = await Promise.all(Array.from({ length: 20 }, (_, i) => patch(ws.id, kv(["shared", `w${i}`]))));
    expect(same.map((r) => r.status)).toEqual(Array(20).fill(200));
    const shared = (await bindings(ws.id)).filter((b) => b.attributes.key === "shared");
    expect(shared).toHaveLength(1);
    expect(Array.from({ length: 20 }, (_, i) => `w${i}`)).toContain(shared[0]!.attributes.value);
  });

  it("needs can-manage-tags to PATCH and read access to list", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const reader = await teamToken(org, { workspaces: { [ws.id]: "read" } });
    const admin = await teamToken(org, { workspaces: { [ws.id]: "admin" } });
    expect((await api("GET", `/workspaces/${ws.id}/tag-bindings`, { token: reader })).status).toBe(200);
    expect((await api("GET", `/workspaces/${ws.id}/effective-tag-bindings`, { token: reader })).status).toBe(200);
    expect((await patch(ws.id, kv(["a", "b"]), reader)).status).toBe(404);
    expect((await patch(ws.id, kv(["a", "b"]), admin)).status).toBe(200);
    const stranger = await teamToken(org);
    expect((await api("GET", `/workspaces/${ws.id}/tag-bindings`, { token: stranger })).status).toBe(404);
    // go-tfe's project test sends a project id to the workspace endpoint: 404.
    expect((await patch("prj-notaworkspace1", kv(["a", "b"]))).status).toBe(404);
  });
});

describe("project tag bindings and inheritance", () => {
  it("PATCH /projects/:id/tag-bindings adds and updates; GET and effective list them", async () => {
    const org = await createOrg();
    const prj = await makeProject(org);
    const res = await patchProject(prj, kv(["foo", "bar"], ["baz", "qux"]));
    expect(res.status).toBe(200);
    expect(pairsOf(res.body.data)).toEqual([
      ["foo", "bar"],
      ["baz", "qux"],
    ]);
    expect(pairsOf((await patchProject(prj, kv(["foo", "new"]))).body.data)).toEqual([["foo", "new"]]);
    const list = await api("GET", `/projects/${prj}/tag-bindings`);
    expect(list.status).toBe(200);
    expect(pairsOf(list.body.data)).toEqual([
      ["foo", "new"],
      ["baz", "qux"],
    ]);
    expect(list.body.data[0].type).toBe("tag-bindings");
    const eff = await api("GET", `/projects/${prj}/effective-tag-bindings`);
    expect(pairsOf(eff.body.data)).toEqual([
      ["foo", "new"],
      ["baz", "qux"],
    ]);
    expect(eff.body.data[0].type).toBe("effective-tag-bindings");
    expect("links" in eff.body.data[0]).toBe(false);
    expect((await api("GET", "/projects/prj-doesnotexist123/tag-bindings")).status).toBe(404);
    const bad = await patchProject(prj, kv(["ok", "1"], ["hcp:no", "1"]));
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].source.pointer).toBe("/data/1/attributes/key");
  });

  it("limits a project to 10 bindings, also under concurrent PATCHes", async () => {
    const org = await createOrg();
    const prj = await makeProject(org);
    const eleven = await patchProject(prj, kv(...Array.from({ length: 11 }, (_, i) => [`k${i}`, "v"] as [string, string])));
    expect(eleven.status).toBe(422);
    expect(eleven.body.errors[0].source.pointer).toBe("/data/10");
    expect((await api("GET", `/projects/${prj}/tag-bindings`)).body.data).toEqual([]);
    const racing = await Promise.all(Array.from({ length: 15 }, (_, i) => patchProject(prj, kv([`r${i}`, "v"]))));
    const landed = racing.flatMap((r, i) => (r.status === 200 ? [`r${i}`] : []));
    expect(landed).toHaveLength(10);
    for (const r of racing.filter((r) => r.status !== 200)) {
      expect(r.status).toBe(422);
      expect(r.body.errors[0].source.pointer).toBe("/data/0");
    }
    const keys = (await api("GET", `/projects/${prj}/tag-bindings`)).body.data.map((b: Binding) => b.attributes.key);
    expect(keys.sort()).toEqual(landed.sort());
    // Updating existing keys of a full project is fine.
    expect((await patchProject(prj, kv([landed[0]!, "changed"]))).status).toBe(200);
  });

  it("project bindings show at once in workspace effective bindings, with inherited-from links; direct wins", async () => {
    const org = await createOrg();
    const prj = await makeProject(org);
    const ws = await createWorkspace(org, { name: "mycoolworkspace" }, undefined, inProject(prj));
    await patch(ws.id, kv(["a", "1"], ["b", "2"]));
    for (const b of await effective(ws.id)) expect("links" in b).toBe(false);

    await patchProject(prj, kv(["inherited", "foo"], ["a", "project-a"]));
    const eff = await effective(ws.id);
    expect(pairsOf(eff)).toEqual([
      ["a", "1"],
      ["b", "2"],
      ["inherited", "foo"],
    ]);
    const inherited = eff.find((b) => b.attributes.key === "inherited")!;
    expect(inherited.type).toBe("effective-tag-bindings");
    expect(inherited.links).toEqual({ "inherited-from": `/api/v2/projects/${prj}` });
    expect(inherited.relationships?.["inherited-from"].links.related).toBe(`/api/v2/projects/${prj}`);
    for (const b of eff.filter((b) => b.attributes.key !== "inherited")) expect("links" in b).toBe(false);
    // Direct bindings do not include inherited ones.
    expect(pairsOf(await bindings(ws.id))).toEqual([
      ["a", "1"],
      ["b", "2"],
    ]);

    // Removing the direct "a" uncovers the project's value; a project change is visible at once.
    await updateBindings(ws.id, kv(["b", "2"]));
    await patchProject(prj, kv(["inherited", "bar"]));
    expect(pairsOf(await effective(ws.id))).toEqual([
      ["b", "2"],
      ["inherited", "bar"],
      ["a", "project-a"],
    ]);

    // Moving the workspace to another project changes what it inherits.
    const other = await makeProject(org);
    await patchProject(other, kv(["team", "blue"]));
    const moved = await api("PATCH", `/workspaces/${ws.id}`, { body: { data: { type: "workspaces", relationships: inProject(other) } } });
    expect(moved.status).toBe(200);
    expect(pairsOf(await effective(ws.id))).toEqual([
      ["b", "2"],
      ["team", "blue"],
    ]);
  });

  it("needs project admin to PATCH and project read access to list", async () => {
    const org = await createOrg();
    const prj = await makeProject(org);
    const reader = await teamToken(org, { projects: { [prj]: "read" } });
    const maintainer = await teamToken(org, { projects: { [prj]: "maintain" } });
    const admin = await teamToken(org, { projects: { [prj]: "admin" } });
    const manager = await teamToken(org, { orgAccess: { "manage-projects": true, "manage-workspaces": true } });
    const stranger = await teamToken(org);
    expect((await api("GET", `/projects/${prj}/tag-bindings`, { token: reader })).status).toBe(200);
    expect((await api("GET", `/projects/${prj}/effective-tag-bindings`, { token: reader })).status).toBe(200);
    expect((await api("GET", `/projects/${prj}/tag-bindings`, { token: stranger })).status).toBe(404);
    expect((await patchProject(prj, kv(["a", "1"]), reader)).status).toBe(404);
    expect((await patchProject(prj, kv(["a", "1"]), maintainer)).status).toBe(404);
    expect((await patchProject(prj, kv(["a", "1"]), stranger)).status).toBe(404);
    expect((await patchProject(prj, kv(["a", "1"]), admin)).status).toBe(200);
    expect((await patchProject(prj, kv(["b", "2"]), manager)).status).toBe(200);
    expect(pairsOf((await api("GET", `/projects/${prj}/tag-bindings`)).body.data)).toEqual([
      ["a", "1"],
      ["b", "2"],
    ]);
  });
});

describe("list filters over both tag sets and project inheritance", () => {
  /** The names the list endpoint returns for a query (what a client sees, not a copy of its SQL). */
  async function matching(org: string, query: string): Promise<string[]> {
    const res = await api("GET", `/organizations/${org}/workspaces?page%5Bsize%5D=100&${query}`);
    expect(res.status).toBe(200);
    return res.body.data.map((w: { attributes: { name: string } }) => w.attributes.name).sort();
  }
  const tagged = (...filters: Array<[string, string?]>) =>
    filters.map(([k, v], i) => `filter%5Btagged%5D%5B${i}%5D%5Bkey%5D=${k}${v !== undefined ? `&filter%5Btagged%5D%5B${i}%5D%5Bvalue%5D=${v}` : ""}`).join("&");
  const searchTags = (...keys: string[]) => `search%5Btags%5D=${keys.join(",")}`;
  const excludeTags = (...keys: string[]) => `search%5Bexclude-tags%5D=${keys.join(",")}`;

  it("filter[tagged] matches direct and inherited bindings (direct wins); search[tags] matches the same keys", async () => {
    const org = await createOrg();
    const prj = await makeProject(org);
    await createWorkspace(org, { name: "w1" }, undefined, {
      "tag-bindings": {
        data: kv(["key1", "value1"], ["key2", "value2a"]),
      },
    });
    await createWorkspace(org, { name: "w2" }, undefined, {
      "tag-bindings": {
        data: kv(["key2", "value2b"], ["key3", "value3"]),
      },
    });
    await createWorkspace(org, { name: "w3" }, undefined, { ...inProject(prj), tags: { data: [{ type: "tags", attributes: { name: "flat" } }] } });
    await createWorkspace(org, { name: "w4" }, undefined, { ...inProject(prj), "tag-bindings": { data: kv(["env", "dev"]) } });

    expect(await matching(org, tagged(["key1", ""]))).toEqual(["w1"]);
    expect(await matching(org, tagged(["key2", ""]))).toEqual(["w1", "w2"]);
    expect(await matching(org, tagged(["key2", "value2b"]))).toEqual(["w2"]);
    expect(await matching(org, tagged(["key2"], ["key3", "value3"]))).toEqual(["w2"]);
    // A flat tag is not a binding: filter[tagged] never matches it (search[tags] does).
    expect(await matching(org, tagged(["flat", ""]))).toEqual([]);
    expect(await matching(org, tagged(["flat", "x"]))).toEqual([]);
    expect(await matching(org, tagged(["env", ""]))).toEqual(["w4"]);

    // A project change shows at once: w3 and w4 inherit env=prod, but w4's direct env=dev wins.
    await patchProject(prj, kv(["env", "prod"]));
    expect(await matching(org, tagged(["env", "prod"]))).toEqual(["w3"]);
    expect(await matching(org, tagged(["env", "dev"]))).toEqual(["w4"]);
    expect(await matching(org, tagged(["env", ""]))).toEqual(["w3", "w4"]);
    // Terraform's key-value strategy sends filter[tagged] and search[tags]=keys: same result set.
    expect(await matching(org, `${tagged(["env", "prod"])}&${searchTags("env")}`)).toEqual(["w3"]);
    expect(await matching(org, searchTags("key2", "key3"))).toEqual(["w2"]);
    expect(await matching(org, searchTags("env", "flat"))).toEqual(["w3"]);
    expect(await matching(org, excludeTags("env", "key1"))).toEqual(["w2"]);

    // A deleted organisation tag matches nothing, at once (no workspace was visited).
    const flatId = (await api("GET", `/organizations/${org}/tags?q=flat`)).body.data[0].id;
    expect((await api("DELETE", `/organizations/${org}/tags`, { body: { data: [{ type: "tags", id: flatId }] } })).status).toBe(204);
    expect(await matching(org, searchTags("flat"))).toEqual([]);
    expect(await matching(org, excludeTags("flat", "key1"))).toEqual(["w2", "w3", "w4"]);
  });
});
