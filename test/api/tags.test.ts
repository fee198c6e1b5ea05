// Flat tags and the organisation tag endpoints go-tfe uses, including the
// race rules: one tag id per name, exact instance-count, and a tag that leaves the
// organisation exactly when its last workspace drops it.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createOrg, createWorkspace, teamToken } from "../fixtures";
import { api, uniqueName } from "../helpers";
import type { WorkspaceRecord } from "../../src/workspaces/workspace.types";
import { indexUpsertStatements } from "../../src/workspaces/workspaces.d1";

const tagsOf = (ws: string, query = "") => api("GET", `/workspaces/${ws}/relationships/tags${query}`);
const addTags = (ws: string, data: unknown[], token?: string) => api("POST", `/workspaces/${ws}/relationships/tags`, { body: { data }, token });
const removeTags = (ws: string, data: unknown[], token?: string) => api("DELETE", `/workspaces/${ws}/relationships/tags`, { body: { data }, token });
const byName = (...names: string[]) => names.map((name) => ({ type: "tags", attributes: { name } }));
const orgTags = (org: string, query = "") => api("GET", `/organizations/${org}/tags${query}`);
const tagNames = async (ws: string) => (await api("GET", `/workspaces/${ws}`)).body.data.attributes["tag-names"] as string[];

async function orgTag(org: string, name: string): Promise<{ id: string; attributes: { name: string; "instance-count": number } } | undefined> {
  const res = await orgTags(org, `?q=${encodeURIComponent(name)}&page[size]=100`);
  expect(res.status).toBe(200);
  return res.body.data.find((t: { attributes: { name: string } }) => t.attributes.name === name);
}

/** A relationship body naming these workspaces. */
const workspacesRef = (...ids: string[]) => ({ data: ids.map((id) => ({ type: "workspaces", id })) });

describe("flat tags on a workspace", () => {
  it("adds by name in insertion order and lists tags resources", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    expect((await addTags(ws.id, byName("tag1", "tag2", "tag3"))).status).toBe(204);
    expect(await tagNames(ws.id)).toEqual(["tag1", "tag2", "tag3"]);
    const add4 = await addTags(ws.id, byName("tag4"));
    expect(add4.status).toBe(204);
    expect(add4.text).toBe("");
    expect(await tagNames(ws.id)).toEqual(["tag1", "tag2", "tag3", "tag4"]);
    const list = await tagsOf(ws.id);
    expect(list.status).toBe(200);
    expect(list.body.data.map((t: { attributes: { name: string } }) => t.attributes.name)).toEqual(["tag1", "tag2", "tag3", "tag4"]);
    const t = list.body.data[3];
    expect(t.id).toMatch(/^tag-/);
    expect(t.type).toBe("tags");
    expect(t.attributes["created-at"]).toMatch(/Z$/);
    expect(t.attributes["instance-count"]).toBe(1);
    expect(t.relationships.organization.data).toEqual({ id: org, type: "organizations" });
    expect(list.body.meta.pagination["total-count"]).toBe(4);
    // Adding again changes nothing (and keeps the order).
    expect((await addTags(ws.id, byName("tag1"))).status).toBe(204);
    expect(await tagNames(ws.id)).toEqual(["tag1", "tag2", "tag3", "tag4"]);
  });

  it("paginates with a default of 20 and filters by name substring (go-tfe's `name`)", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const names = Array.from({ length: 25 }, (_, i) => `t${String(i).padStart(2, "0")}`);
    expect((await addTags(ws.id, byName(...names, "other-Thing"))).status).toBe(204);
    const first = await tagsOf(ws.id);
    expect(first.body.data).toHaveLength(20);
    expect(first.body.meta.pagination).toMatchObject({ "current-page": 1, "total-count": 26, "total-pages": 2, "next-page": 2 });
    const second = await tagsOf(ws.id, "?page[number]=2");
    expect(second.body.data.map((t: { attributes: { name: string } }) => t.attributes.name)).toEqual([...names.slice(20), "other-Thing"]);
    const filtered = await tagsOf(ws.id, "?name=THING");
    expect(filtered.body.data.map((t: { attributes: { name: string } }) => t.attributes.name)).toEqual(["other-Thing"]);
    expect((await tagsOf(ws.id, "?name=t1")).body.meta.pagination["total-count"]).toBe(10);
  });

  it("adds by id a tag of the same organisation; unknown ids and other organisations' tags are 404", async () => {
    const org = await createOrg();
    const [a, b] = [await createWorkspace(org), await createWorkspace(org)];
    await addTags(a.id, byName("tagbyid"));
    const tagId = (await tagsOf(a.id)).body.data[0].id;
    expect((await addTags(b.id, [{ type: "tags", id: tagId }])).status).toBe(204);
    const listed = (await tagsOf(b.id)).body.data;
    expect(listed.map((t: { id: string; attributes: { name: string } }) => [t.id, t.attributes.name])).toEqual([[tagId, "tagbyid"]]);
    expect(listed[0].attributes["instance-count"]).toBe(2);

    const unknown = await addTags(b.id, [{ type: "tags", id: "tag-doesnotexist00" }]);
    expect(unknown.status).toBe(404);
    expect(unknown.body.errors[0].source.pointer).toBe("/data/0/id");
    const other = await createOrg();
    const c = await createWorkspace(other);
    expect((await addTags(c.id, [{ type: "tags", id: tagId }])).status).toBe(404);
    expect(await tagNames(c.id)).toEqual([]);
  });

  it("validates names, type and identifiers with 422 and a pointer", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    for (const bad of ["has space", "dot.ted", "x".repeat(256), "é"]) {
      const res = await addTags(ws.id, [...byName("ok"), ...byName(bad)]);
      expect(res.status, bad).toBe(422);
      expect(res.body.errors[0].title).toBe("invalid attribute");
      expect(res.body.errors[0].source.pointer).toBe("/data/1/attributes/name");
    }
    expect((await addTags(ws.id, byName("a:b-c_D9", "x".repeat(255)))).status).toBe(204);
    const noType = await addTags(ws.id, [{ attributes: { name: "x" } }]);
    expect(noType.status).toBe(422);
    expect(noType.body.errors[0].source.pointer).toBe("/data/0/type");
    const wrongType = await addTags(ws.id, [{ type: "tag-bindings", attributes: { name: "x" } }]);
    expect(wrongType.status).toBe(422);
    const neither = await addTags(ws.id, [{ type: "tags" }, { type: "tags", attributes: {} }]);
    expect(neither.status).toBe(422);
    expect(neither.body.errors[0].source.pointer).toBe("/data/0");
    const emptyName = await removeTags(ws.id, [{ type: "tags", attributes: { name: "" } }]);
    expect(emptyName.status).toBe(422);
    // Nothing of the failed requests landed.
    expect(await tagNames(ws.id)).toEqual(["a:b-c_D9", "x".repeat(255)]);
  });

  it("removes by name and id; an unknown name has no effect, an unknown id is 404", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    await addTags(ws.id, byName("tag1", "tag2", "tag3"));
    const tag2 = (await tagsOf(ws.id)).body.data[1].id;
    expect((await removeTags(ws.id, [...byName("tag1"), { type: "tags", id: tag2 }])).status).toBe(204);
    expect(await tagNames(ws.id)).toEqual(["tag3"]);
    expect((await tagsOf(ws.id)).body.data).toHaveLength(1);
    expect((await removeTags(ws.id, byName("nope"))).status).toBe(204);
    expect(await tagNames(ws.id)).toEqual(["tag3"]);
    const unknown = await removeTags(ws.id, [{ type: "tags", id: "tag-unknownunknown1" }]);
    expect(unknown.status).toBe(404);
    expect(unknown.body.errors[0].source.pointer).toBe("/data/0/id");
    // Removing a tag that no longer exists by its old id is idempotent, not an error.
    expect((await removeTags(ws.id, [{ type: "tags", id: tag2 }])).status).toBe(204);
  });

  it("accepts flat tags on create as relationships.tags (go-tfe) and counts them in the organisation", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org, {}, undefined, { tags: { data: byName("tag1", "tag2") } });
    expect(ws.attributes["tag-names"]).toEqual(["tag1", "tag2"]);
    expect((await api("GET", `/workspaces/${ws.id}`)).body.data.attributes["tag-names"]).toEqual(["tag1", "tag2"]);
    const bad = await api("POST", `/organizations/${org}/workspaces`, {
      body: { data: { type: "workspaces", attributes: { name: uniqueName("ws") }, relationships: { tags: { data: byName("ok", "no good") } } } },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].source.pointer).toBe("/data/relationships/tags/data/1/attributes/name");
    expect((await orgTag(org, "tag1"))?.attributes["instance-count"]).toBe(1);
    // Deleting the workspace drops its tags from the organisation.
    expect((await api("DELETE", `/workspaces/${ws.id}`)).status).toBe(204);
    expect(await orgTag(org, "tag1")).toBeUndefined();
  });

  it("needs can-manage-tags to change tags and read access to list them", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    await addTags(ws.id, byName("seen"));
    const reader = await teamToken(org, { workspaces: { [ws.id]: "read" } });
    const admin = await teamToken(org, { workspaces: { [ws.id]: "admin" } });
    const stranger = await teamToken(org);
    expect((await api("GET", `/workspaces/${ws.id}/relationships/tags`, { token: reader })).status).toBe(200);
    expect((await api("GET", `/workspaces/${ws.id}`, { token: reader })).body.data.attributes.permissions["can-manage-tags"]).toBe(false);
    expect((await addTags(ws.id, byName("x"), reader)).status).toBe(404);
    expect((await removeTags(ws.id, byName("seen"), reader)).status).toBe(404);
    expect((await api("GET", `/workspaces/${ws.id}/relationships/tags`, { token: stranger })).status).toBe(404);
    expect((await addTags(ws.id, byName("x"), admin)).status).toBe(204);
    expect((await removeTags(ws.id, byName("seen"), admin)).status).toBe(204);
    expect(await tagNames(ws.id)).toEqual(["x"]);
  });
});

describe("organisation tags", () => {
  it("lists tags with instance-count, `q` search, the exclude filter and pagination", async () => {
    const org = await createOrg();
    const [a, b] = [await createWorkspace(org), await createWorkspace(org)];
    await addTags(a.id, byName(...Array.from({ length: 10 }, (_, i) => `tag${i}`)));
    await addTags(b.id, byName("tag0", "solo"));
    const all = await orgTags(org);
    expect(all.status).toBe(200);
    expect(all.body.data).toHaveLength(11);
    const counts = Object.fromEntries(
      all.body.data.map((t: { attributes: { name: string; "instance-count": number } }) => [t.attributes.name, t.attributes["instance-count"]]),
    );
    expect(counts).toMatchObject({ tag0: 2, tag1: 1, solo: 1 });
    expect(all.body.data[0].relationships.organization.data).toEqual({ id: org, type: "organizations" });
    const q = await orgTags(org, "?q=TAG0&page[size]=5");
    expect(q.body.data.map((t: { attributes: { name: string } }) => t.attributes.name)).toEqual(["tag0"]);
    const paged = await orgTags(org, "?page[number]=1&page[size]=5");
    expect(paged.body.data).toHaveLength(5);
    expect(paged.body.meta.pagination).toMatchObject({ "total-count": 11, "total-pages": 3 });
    // Tags not on workspace a: only "solo".
    const excl = await orgTags(org, `?filter[exclude][taggable][id]=${a.id}`);
    expect(excl.body.data.map((t: { attributes: { name: string } }) => t.attributes.name)).toEqual(["solo"]);
    // `q` wildcards are literal.
    expect((await orgTags(org, "?q=%25")).body.data).toEqual([]);
    const stranger = await createOrg();
    expect((await orgTags(stranger)).body.data).toEqual([]);
    expect((await orgTags(org, "")).status).toBe(200);
  });

  it("deletes tags by id from every workspace; unknown ids are 404; needs organisation-wide rights", async () => {
    const org = await createOrg();
    const [a, b] = [await createWorkspace(org), await createWorkspace(org)];
    await addTags(a.id, byName("gone", "kept"));
    await addTags(b.id, byName("gone"));
    const gone = (await orgTag(org, "gone"))!;
    const reader = await teamToken(org, { orgAccess: { "read-workspaces": true } });
    const asReader = await api("DELETE", `/organizations/${org}/tags`, { body: { data: [{ type: "tags", id: gone.id }] }, token: reader });
    expect(asReader.status).toBe(404);
    expect((await orgTag(org, "gone"))?.attributes["instance-count"]).toBe(2);
    const unknown = await api("DELETE", `/organizations/${org}/tags`, {
      body: {
        data: [
          { type: "tags", id: gone.id },
          { type: "tags", id: "tag-nopenopenope12" },
        ],
      },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.errors[0].source.pointer).toBe("/data/1/id");
    const del = await api("DELETE", `/organizations/${org}/tags`, { body: { data: [{ type: "tags", id: gone.id }] } });
    expect(del.status).toBe(204);
    expect(await orgTag(org, "gone")).toBeUndefined();
    expect(await tagNames(a.id)).toEqual(["kept"]);
    expect(await tagNames(b.id)).toEqual([]);
    // Flat tags are not bindings.
    expect((await api("GET", `/workspaces/${a.id}/tag-bindings`)).body.data).toEqual([]);
    expect((await tagsOf(a.id)).body.data.map((t: { attributes: { name: string } }) => t.attributes.name)).toEqual(["kept"]);
    // Gone means gone: adding or removing it by id fails; adding the name again makes a new tag.
    expect((await addTags(b.id, [{ type: "tags", id: gone.id }])).status).toBe(404);
    expect((await removeTags(b.id, [{ type: "tags", id: gone.id }])).status).toBe(404);
    expect((await addTags(b.id, byName("gone"))).status).toBe(204);
    const again = (await orgTag(org, "gone"))!;
    // A new tag: the deleted one's id stays unknown to the organisation.
    expect((await api("DELETE", `/organizations/${org}/tags`, { body: { data: [{ type: "tags", id: gone.id }] } })).status).toBe(404);
    expect((await tagsOf(b.id)).body.data.map((t: { id: string }) => t.id)).toEqual([again.id]);
    expect(again.attributes["instance-count"]).toBe(1);
    // The next tag change of a workspace purges the dead entry from its record and the index.
    await addTags(a.id, byName("later"));
    expect(await tagNames(a.id)).toEqual(["kept", "later"]);
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM workspace_tags WHERE tag_id = ?").bind(gone.id).first<{ n: number }>();
    expect(rows?.n).toBe(0);
    const record = (await env.WORKSPACES.getByName(a.id).get()) as { ok: true; value: { tags: Array<{ key: string }> } };
    expect(record.value.tags.map((t) => t.key)).toEqual(["kept", "later"]);
  });

  it("attaches one tag to many workspaces (POST /tags/:id/relationships/workspaces)", async () => {
    const org = await createOrg();
    const [a, b, c] = [await createWorkspace(org), await createWorkspace(org), await createWorkspace(org)];
    await addTags(a.id, byName("shared"));
    const tag = (await orgTag(org, "shared"))!;
    const res = await api("POST", `/tags/${tag.id}/relationships/workspaces`, {
      body: workspacesRef(b.id, c.id),
    });
    expect(res.status).toBe(204);
    for (const ws of [b, c]) expect((await tagsOf(ws.id)).body.data[0].id).toBe(tag.id);
    expect((await orgTag(org, "shared"))?.attributes["instance-count"]).toBe(3);
    // A workspace of another organisation, or an unknown one, is 404 and nothing is attached.
    const foreign = await createWorkspace(await createOrg());
    const d = await createWorkspace(org);
    const bad = await api("POST", `/tags/${tag.id}/relationships/workspaces`, {
      body: workspacesRef(d.id, foreign.id),
    });
    expect(bad.status).toBe(404);
    expect(await tagNames(d.id)).toEqual([]);
    expect((await api("POST", "/tags/tag-unknownunknown1/relationships/workspaces", { body: { data: [{ type: "workspaces", id: d.id }] } })).status).toBe(404);
    const reader = await teamToken(org, { workspaces: { [d.id]: "read" } });
    expect((await api("POST", `/tags/${tag.id}/relationships/workspaces`, { body: { data: [{ type: "workspaces", id: d.id }] }, token: reader })).status).toBe(
      404,
    );
  });
});

describe("organisation tags follow the workspace index", () => {
  it("a tag change whose index write fails shows in the organisation once the alarm repairs it, and retries count once", async () => {
    const { runDurableObjectAlarm } = await import("cloudflare:test");
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const res = await api("POST", `/workspaces/${ws.id}/relationships/tags`, { body: { data: byName("late") }, headers: { "X-Fault-Fail-Index-Writes": "1" } });
    expect(res.status).toBe(204);
    // The DO has it; the workspace's own tags are read from it (read-your-writes, docs/consistency.md), while the
    // organisation's list follows the index.
    expect(((await env.WORKSPACES.getByName(ws.id).get()) as { ok: true; value: WorkspaceRecord }).value.tags.map((t) => t.key)).toEqual(["late"]);
    expect(await tagNames(ws.id)).toEqual(["late"]);
    expect(await orgTag(org, "late")).toBeUndefined();
    expect(await runDurableObjectAlarm(env.WORKSPACES.getByName(ws.id))).toBe(true);
    expect(await tagNames(ws.id)).toEqual(["late"]);
    expect((await orgTag(org, "late"))?.attributes["instance-count"]).toBe(1);
    // Re-running the index write (as an outbox retry would) changes nothing: counts are derived, not incremented.
    const got = (await env.WORKSPACES.getByName(ws.id).get()) as { ok: true; value: WorkspaceRecord };
    await env.DB.batch(indexUpsertStatements(env.DB, got.value));
    await env.DB.batch(indexUpsertStatements(env.DB, got.value));
    expect((await orgTag(org, "late"))?.attributes["instance-count"]).toBe(1);
  });
});

describe("organisation tags under concurrency", () => {
  it("50 workspaces adding and removing one tag at once: one id, exact counts, gone exactly with the last", async () => {
    const org = await createOrg();
    const wss = await Promise.all(Array.from({ length: 50 }, () => createWorkspace(org)));
    const name = "hot";
    // Everyone creates the new tag at once: one tag, one id.
    const adds = await Promise.all(wss.map((w) => addTags(w.id, byName(name))));
    expect(adds.map((r) => r.status)).toEqual(Array(50).fill(204));
    const tag = (await orgTag(org, name))!;
    expect(tag.attributes["instance-count"]).toBe(50);
    const ids = await Promise.all(wss.map(async (w) => (await tagsOf(w.id)).body.data[0].id as string));
    expect(new Set(ids)).toEqual(new Set([tag.id]));
    const rows = await env.DB.prepare(
      "SELECT count(*) AS n FROM tags WHERE organization_id = (SELECT external_id FROM organizations WHERE name = ?) AND name = ?",
    )
      .bind(org, name)
      .first<{ n: number }>();
    expect(rows?.n).toBe(1);

    // Half remove while the other half add again (idempotent): exactly 25 remain.
    const mixed = await Promise.all(wss.map((w, i) => (i < 25 ? removeTags(w.id, byName(name)) : addTags(w.id, byName(name)))));
    expect(mixed.every((r) => r.status === 204)).toBe(true);
    expect((await orgTag(org, name))?.attributes["instance-count"]).toBe(25);

    // All but one drop it at once: the tag stays, counted once.
    await Promise.all(wss.slice(25, 49).map((w) => removeTags(w.id, byName(name))));
    const last = (await orgTag(org, name))!;
    expect(last.attributes["instance-count"]).toBe(1);
    expect(last.id).toBe(tag.id);
    // The last one drops it: gone from the organisation, and can no longer be added by id.
    expect((await removeTags(wss[49]!.id, byName(name))).status).toBe(204);
    expect(await orgTag(org, name)).toBeUndefined();
    expect((await addTags(wss[0]!.id, [{ type: "tags", id: tag.id }])).status).toBe(404);
  });

  it("an organisation tag delete racing adds by name and id leaves no workspace showing a deleted tag", async () => {
    const org = await createOrg();
    const wss = await Promise.all(Array.from({ length: 12 }, () => createWorkspace(org)));
    await addTags(wss[0]!.id, byName("doomed"));
    const doomed = (await orgTag(org, "doomed"))!;
    const results = await Promise.all([
      api("DELETE", `/organizations/${org}/tags`, { body: { data: [{ type: "tags", id: doomed.id }] } }),
      ...wss.slice(1, 7).map((w) => addTags(w.id, byName("doomed"))),
      ...wss.slice(7).map((w) => addTags(w.id, [{ type: "tags", id: doomed.id }])),
    ]);
    expect(results[0]!.status).toBe(204);
    for (const r of results.slice(1, 7)) expect(r.status).toBe(204);
    for (const r of results.slice(7)) expect([204, 404]).toContain(r.status);
    const after = await orgTag(org, "doomed");
    // Whatever carries the name now is a new tag: the deleted id stays unknown to the organisation.
    expect((await api("DELETE", `/organizations/${org}/tags`, { body: { data: [{ type: "tags", id: doomed.id }] } })).status).toBe(404);
    let carriers = 0;
    for (const w of wss) {
      const listed = (await tagsOf(w.id)).body.data as Array<{ id: string }>;
      const names = await tagNames(w.id);
      expect(listed.length).toBe(names.length);
      if (listed.length) {
        expect(listed[0]!.id).toBe(after!.id);
        carriers++;
      }
    }
    expect(after?.attributes["instance-count"] ?? 0).toBe(carriers);
  });

  it("an add-by-id racing the last removal never leaves an attachment to a tag the organisation lacks", async () => {
    for (let round = 0; round < 3; round++) {
      const org = await createOrg();
      const [owner, ...others] = await Promise.all(Array.from({ length: 6 }, () => createWorkspace(org)));
      await addTags(owner!.id, byName("race"));
      const tag = (await orgTag(org, "race"))!;
      const [removal, ...adds] = await Promise.all([
        removeTags(owner!.id, byName("race")),
        ...others.map((w) => addTags(w.id, [{ type: "tags", id: tag.id }])),
      ]);
      expect(removal!.status).toBe(204);
      for (const a of adds) expect([204, 404]).toContain(a.status);
      const attached: string[] = [];
      for (const w of others) {
        const listed = (await tagsOf(w.id)).body.data as Array<{ id: string }>;
        if (listed.length) {
          expect(listed[0]!.id).toBe(tag.id);
          attached.push(w.id);
        }
      }
      expect(attached.length).toBe(adds.filter((a) => a.status === 204).length);
      const after = await orgTag(org, "race");
      if (attached.length === 0) expect(after).toBeUndefined();
      else {
        expect(after?.id).toBe(tag.id);
        expect(after?.attributes["instance-count"]).toBe(attached.length);
      }
    }
  });
});
