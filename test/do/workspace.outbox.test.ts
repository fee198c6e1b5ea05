// The consistency rule: the DO commits with an outbox entry and arms its alarm in the same section; the D1 index
// follows (alarm retries); name leases decided by D1 never leak and never let two workspaces share a name; a deleted
// workspace's object keeps only a tombstone once the index has the delete.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import SparkMD5 from "spark-md5";
import { describe, expect, it } from "vitest";
import type { WorkspaceRecord } from "../../src/workspaces/workspace.types";
import { claimWorkspaceName, createOrg, createWorkspace } from "../fixtures";
import { api, uniqueName, indexSettled } from "../helpers";

const indexRow = (id: string) =>
  env.DB.prepare("SELECT name, version, doc FROM workspaces WHERE id = ?").bind(id).first<{ name: string; version: number; doc: string }>();

describe("index consistency", () => {
  it("a rename whose index write fails is acknowledged and repaired by the alarm", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const next = uniqueName("renamed");
    const res = await api("PATCH", `/workspaces/${ws.id}`, {
      body: { data: { type: "workspaces", attributes: { name: next } } },
      headers: { "X-Fault-Fail-Index-Writes": "1" },
    });
    expect(res.status).toBe(200);
    expect(res.body.data.attributes.name).toBe(next);
    // A show by id reads the record from its object, so the client's own read-back sees the rename at once; the index
    // row (lists, search, names) lags until the retry.
    expect((await api("GET", `/workspaces/${ws.id}`)).body.data.attributes.name).toBe(next);
    expect((await indexRow(ws.id))?.name).toBe(ws.attributes.name);
    // The new name is leased to this workspace meanwhile: nobody else can take it.
    const clash = await api("POST", `/organizations/${org}/workspaces`, { body: { data: { type: "workspaces", attributes: { name: next } } } });
    expect(clash.status).toBe(422);
    expect(await runDurableObjectAlarm(env.WORKSPACES.getByName(ws.id))).toBe(true);
    const row = await indexRow(ws.id);
    expect(row?.name).toBe(next);
    expect(JSON.parse(row!.doc)).toEqual(JSON.parse(JSON.stringify(((await env.WORKSPACES.getByName(ws.id).get()) as { value: unknown }).value)));
    expect((await api("GET", `/organizations/${org}/workspaces/${next}`)).body.data).toEqual(res.body.data);
    expect((await api("GET", `/workspaces/${ws.id}`)).body.data.attributes.name).toBe(next);
    // The old name was released by the repaired write.
    expect(
      (await api("POST", `/organizations/${org}/workspaces`, { body: { data: { type: "workspaces", attributes: { name: ws.attributes.name } } } })).status,
    ).toBe(201);
  });

  it("a delete whose index write fails disappears from the index after the alarm, and the id stays gone", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const del = await api("DELETE", `/workspaces/${ws.id}`, { headers: { "X-Fault-Fail-Index-Writes": "1" } });
    expect(del.status).toBe(204);
    // The DO refuses every change at once; reads follow the index until the alarm repairs it.
    expect((await api("PATCH", `/workspaces/${ws.id}`, { body: { data: { type: "workspaces", attributes: { description: "x" } } } })).status).toBe(404);
    expect(await indexRow(ws.id)).not.toBeNull();
    expect(await runDurableObjectAlarm(env.WORKSPACES.getByName(ws.id))).toBe(true);
    expect(await indexRow(ws.id)).toBeNull();
    expect((await api("GET", `/workspaces/${ws.id}`)).status).toBe(404);
    expect((await api("GET", `/organizations/${org}/workspaces/${ws.attributes.name}`)).status).toBe(404);
    expect((await api("PATCH", `/workspaces/${ws.id}`, { body: { data: { type: "workspaces", attributes: { description: "x" } } } })).status).toBe(404);
  });

  it("a name claim whose workspace never committed is reclaimed after its lease, and the dead create can never land", async () => {
    const org = await createOrg();
    const name = uniqueName("leased");
    const ghost = "ws-GhostGhostGhost01";
    await claimWorkspaceName(org, name, ghost, Date.now() - 5 * 60_000);
    const res = await api("POST", `/organizations/${org}/workspaces`, { body: { data: { type: "workspaces", attributes: { name } } } });
    expect(res.status).toBe(201);
    // The Worker that died between claim and commit could still call the DO: it must refuse.
    const late = await env.WORKSPACES.getByName(ghost).create({
      id: ghost,
      organizationId: "x",
      projectId: "prj-x",
      name,
      settings: res.body.data.attributes,
      tags: [],
      now: new Date().toISOString(),
    } as never);
    expect(late.ok).toBe(false);
  });

  it("a fresh claim (lease not expired) is respected", async () => {
    const org = await createOrg();
    const name = uniqueName("fresh");
    await claimWorkspaceName(org, name, "ws-InFlightInFlight1", Date.now());
    const res = await api("POST", `/organizations/${org}/workspaces`, { body: { data: { type: "workspaces", attributes: { name } } } });
    expect(res.status).toBe(422);
    // The in-flight request of this scenario never existed: drop its lease so later checks stay meaningful.
    await env.DB.prepare("DELETE FROM workspace_names WHERE workspace_id = 'ws-InFlightInFlight1'").run();
  });

  it("a stale rename claim held by a live workspace under another name is released to the next claimant", async () => {
    const org = await createOrg();
    const holder = await createWorkspace(org);
    const name = uniqueName("stale-rename");
    await claimWorkspaceName(org, name, holder.id, Date.now() - 5 * 60_000);
    const res = await api("POST", `/organizations/${org}/workspaces`, { body: { data: { type: "workspaces", attributes: { name } } } });
    expect(res.status).toBe(201);
    // The holder's stale rename (claimed before the release) can no longer take the name.
    const stale = await env.WORKSPACES.getByName(holder.id).update({
      name,
      nameClaimedAt: Date.now() - 5 * 60_000,
      attributes: { settings: {} },
      now: new Date().toISOString(),
    });
    expect(stale.ok).toBe(false);
    expect((await api("GET", `/workspaces/${holder.id}`)).body.data.attributes.name).toBe(holder.attributes.name);
  });

  it("20 concurrent renames of different workspaces to one name: exactly one wins", async () => {
    const org = await createOrg();
    const wss = await Promise.all(Array.from({ length: 20 }, () => createWorkspace(org)));
    const name = uniqueName("target");
    const results = await Promise.all(wss.map((w) => api("PATCH", `/workspaces/${w.id}`, { body: { data: { type: "workspaces", attributes: { name } } } })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 422)).toHaveLength(19);
    const rows = await env.DB.prepare("SELECT id FROM workspaces WHERE organization_id = (SELECT external_id FROM organizations WHERE name = ?) AND name = ?")
      .bind(org, name)
      .all();
    expect(rows.results).toHaveLength(1);
  });
});

describe("read-your-writes", () => {
  it("returns the index write's D1 bookmark, which list reads accept", async () => {
    const org = await createOrg();
    const res = await api("POST", `/organizations/${org}/workspaces`, { body: { data: { type: "workspaces", attributes: { name: uniqueName() } } } });
    const bookmark = res.headers.get("X-D1-Bookmark");
    expect(bookmark).toBeTruthy();
    const list = await api("GET", `/organizations/${org}/workspaces`, { headers: { "X-D1-Bookmark": bookmark! } });
    expect(list.status).toBe(200);
    expect(list.body.data.map((w: { id: string }) => w.id)).toContain(res.body.data.id);
  });
});

describe("the consistency checker", () => {
  it("finds a lagging index row, and none once the alarms ran after concurrent creates, renames, tag writes, deletes and failed writes", async () => {
    const { expectConsistent } = await import("../helpers");
    const org = await createOrg();
    const wss = await Promise.all(Array.from({ length: 12 }, () => createWorkspace(org)));
    // A failed index write is reported while it waits for its retry.
    await api("PATCH", `/workspaces/${wss[0].id}`, {
      body: { data: { type: "workspaces", attributes: { description: "x" } } },
      headers: { "X-Fault-Fail-Index-Writes": "1" },
    });
    const lagging = await api("GET", "/admin/consistency?page%5Bsize%5D=100");
    expect(
      lagging.body.data.map((d: { attributes: { "workspace-id": string; kind: string } }) => [d.attributes["workspace-id"], d.attributes.kind]),
    ).toContainEqual([wss[0].id, "write-pending"]);
    await Promise.all([
      ...wss.slice(1, 4).map((w) => api("PATCH", `/workspaces/${w.id}`, { body: { data: { type: "workspaces", attributes: { name: uniqueName("r") } } } })),
      ...wss
        .slice(4, 7)
        .map((w) => api("PATCH", `/workspaces/${w.id}/tag-bindings`, { body: { data: [{ type: "tag-bindings", attributes: { key: "k", value: "v" } }] } })),
      ...wss.slice(7, 9).map((w) => api("DELETE", `/workspaces/${w.id}`, { headers: { "X-Fault-Fail-Index-Writes": "1" } })),
      ...wss.slice(9).map((w) => api("POST", `/workspaces/${w.id}/actions/lock`, { headers: { "X-Fault-Fail-Index-Writes": "1" } })),
    ]);
    expect(await expectConsistent()).toBeGreaterThanOrEqual(10);
  });
});

// The DO leaves a workspace's tag rows and name claim out of its index write while they equal what it last wrote
// (a lock rewrites the one row): whatever changes between locks still reaches the index, failed writes included.
describe("index writes that leave unchanged tags and names out", () => {
  const tagRows = (id: string) =>
    env.DB.prepare("SELECT kind, key, value FROM workspace_tags WHERE workspace_id = ? ORDER BY kind, key")
      .bind(id)
      .all<{ kind: string; key: string; value: string | null }>()
      .then((r) => r.results.map((t) => `${t.kind}:${t.key}=${t.value ?? ""}`));
  const claims = (id: string) =>
    env.DB.prepare("SELECT name, committed FROM workspace_names WHERE workspace_id = ? ORDER BY name")
      .bind(id)
      .all<{ name: string; committed: number }>()
      .then((r) => r.results.map((c) => `${c.name}:${c.committed}`));
  const lockUnlock = async (id: string) => {
    expect((await api("POST", `/workspaces/${id}/actions/lock`)).status).toBe(200);
    expect((await api("POST", `/workspaces/${id}/actions/unlock`)).status).toBe(200);
    // Both answer before their index write (docs/consistency.md): wait for it.
    await indexSettled(id);
  };

  it("tags, bindings and renames between locks reach the index, also after a failed index write", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org, { name: uniqueName("keep") }, undefined, {
      tags: { data: [{ type: "tags", attributes: { name: "alpha" } }] },
    });
    await lockUnlock(ws.id);
    expect(await tagRows(ws.id)).toEqual(["flat:alpha="]);

    expect((await api("POST", `/workspaces/${ws.id}/relationships/tags`, { body: { data: [{ type: "tags", attributes: { name: "beta" } }] } })).status).toBe(
      204,
    );
    await lockUnlock(ws.id);
    expect(await tagRows(ws.id)).toEqual(["flat:alpha=", "flat:beta="]);

    // A binding whose index write fails: the next lock's write (the latest record) must still carry it.
    const patch = await api("PATCH", `/workspaces/${ws.id}/tag-bindings`, {
      body: { data: [{ type: "tag-bindings", attributes: { key: "env", value: "prod" } }] },
      headers: { "X-Fault-Fail-Index-Writes": "1" },
    });
    expect(patch.status).toBe(200);
    expect(await tagRows(ws.id)).toEqual(["flat:alpha=", "flat:beta="]);
    await lockUnlock(ws.id);
    expect(await tagRows(ws.id)).toEqual(["binding:env=prod", "flat:alpha=", "flat:beta="]);
    const found = await api("GET", `/organizations/${org}/workspaces?filter%5Btagged%5D%5B0%5D%5Bkey%5D=env&filter%5Btagged%5D%5B0%5D%5Bvalue%5D=prod`);
    expect(found.body.data.map((w: { id: string }) => w.id)).toEqual([ws.id]);

    // A rename between locks: the new name's claim is committed and the old one released (another may take it).
    const old = ws.attributes.name;
    const next = uniqueName("renamed");
    expect((await api("PATCH", `/workspaces/${ws.id}`, { body: { data: { type: "workspaces", attributes: { name: next } } } })).status).toBe(200);
    await lockUnlock(ws.id);
    expect(await claims(ws.id)).toEqual([`${next}:1`]);
    expect((await api("GET", `/organizations/${org}/workspaces/${next}`)).status).toBe(200);
    expect((await createWorkspace(org, { name: old })).attributes.name).toBe(old);
  });
});

describe("item 9: the outbox alarm is committed with the write", () => {
  it("a commit left without its flush has an alarm, and the alarm writes the index", async () => {
    const ws = await createWorkspace(await createOrg());
    const stub = env.WORKSPACES.getByName(ws.id);
    await runDurableObjectAlarm(stub); // whatever the create armed
    // A commit whose flush never ran (the process died right after it).
    const alarm = await runInDurableObject(stub, async (instance, state) => {
      const w = (await instance.get()) as { ok: true; value: WorkspaceRecord };
      const next = { ...w.value, version: w.value.version + 1, settings: { ...w.value.settings, description: "crashed" } };
      (instance as unknown as { commit(k: string, r: WorkspaceRecord): void }).commit("live", next);
      return state.storage.getAlarm();
    });
    expect(alarm).not.toBeNull();
    const before = await env.DB.prepare("SELECT version FROM workspaces WHERE id = ?").bind(ws.id).first<{ version: number }>();
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const after = await env.DB.prepare("SELECT version, doc FROM workspaces WHERE id = ?").bind(ws.id).first<{ version: number; doc: string }>();
    expect(after!.version).toBe(before!.version + 1);
    expect(JSON.parse(after!.doc).settings.description).toBe("crashed");
    const pending = await runInDurableObject(
      stub,
      async (_i, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM workspace WHERE outbox IS NOT NULL").one().n,
    );
    expect(pending).toBe(0);
  });
});

describe("a deleted workspace's storage", () => {
  it("keeps the data until D1 has the delete, then erases it and keeps only a tombstone", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const state = JSON.stringify({ version: 4, serial: 1, lineage: "l", outputs: {}, resources: [] });
    await api("POST", `/workspaces/${ws.id}/actions/lock`);
    const sv = await api("POST", `/workspaces/${ws.id}/state-versions`, {
      body: { data: { type: "state-versions", attributes: { serial: 1, md5: SparkMD5.hash(state), state: btoa(state) } } },
    });
    expect(sv.status).toBe(201);
    const del = await api("DELETE", `/workspaces/${ws.id}`, { headers: { "X-Fault-Fail-Index-Writes": "1" } });
    expect(del.status).toBe(204);
    // The DO holds only a tombstone at once: its state is gone for clients although the index write
    // failed; the workspace itself leaves reads when the alarm repairs the index.
    expect((await api("GET", `/state-versions/${sv.body.data.id}`)).status).toBe(404);
    expect((await api("POST", `/workspaces/${ws.id}/actions/lock`)).status).toBe(404);
    const stub = env.WORKSPACES.getByName(ws.id);
    const inside = () =>
      runInDurableObject(stub, async (_i, st) => ({
        kind: st.storage.sql.exec<{ kind: string }>("SELECT kind FROM workspace").one().kind,
        versions: st.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM state_versions").one().n,
        outbox: st.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM workspace WHERE outbox IS NOT NULL").one().n,
      }));
    expect(await inside()).toEqual({ kind: "deleted", versions: 1, outbox: 1 });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await inside()).toEqual({ kind: "deleted", versions: 0, outbox: 0 });
    const row = await env.DB.prepare("SELECT count(*) AS n FROM workspaces WHERE id = ?").bind(ws.id).first<{ n: number }>();
    expect(row?.n).toBe(0);
    expect((await api("GET", `/workspaces/${ws.id}`)).status).toBe(404);
    // A later request to the id cannot bring the workspace back.
    expect((await api("POST", `/workspaces/${ws.id}/actions/lock`)).status).toBe(404);
    expect((await inside()).kind).toBe("deleted");
  });
});
