// Safe delete and force delete, with the texts go-tfe keys on.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createOrg, createWorkspace, grantWorkspace, makeTeam } from "../fixtures";
import { api } from "../helpers";

async function setResourceCount(id: string, n: number) {
  // Stands in for a state version that manages resources (the state-version endpoints set this for real).
  await runInDurableObject(env.WORKSPACES.getByName(id), async (_instance, state) => {
    const row = state.storage.sql.exec<{ record: string }>("SELECT record FROM workspace WHERE singleton = 1").one();
    const record = JSON.parse(row.record);
    record.resourceCount = n;
    state.storage.sql.exec("UPDATE workspace SET record = ? WHERE singleton = 1", JSON.stringify(record));
  });
}

describe("safe delete", () => {
  it("deletes an unlocked workspace that manages nothing, by id and by name; the name is free again", async () => {
    const org = await createOrg();
    const a = await createWorkspace(org);
    const b = await createWorkspace(org);
    expect((await api("POST", `/workspaces/${a.id}/actions/safe-delete`)).status).toBe(204);
    expect((await api("POST", `/organizations/${org}/workspaces/${b.attributes.name}/actions/safe-delete`)).status).toBe(204);
    expect((await api("GET", `/workspaces/${a.id}`)).status).toBe(404);
    expect((await api("GET", `/organizations/${org}/workspaces/${b.attributes.name}`)).status).toBe(404);
    const again = await api("POST", `/organizations/${org}/workspaces`, { body: { data: { type: "workspaces", attributes: { name: b.attributes.name } } } });
    expect(again.status).toBe(201);
    expect((await api("POST", `/workspaces/${a.id}/actions/safe-delete`)).status).toBe(404);
  });

  it("refuses a locked workspace with go-tfe's text", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    await api("POST", `/workspaces/${ws.id}/actions/lock`);
    const res = await api("POST", `/workspaces/${ws.id}/actions/safe-delete`);
    expect(res.status).toBe(409);
    expect(res.body.errors[0]).toMatchObject({
      status: "409",
      title: "conflict",
      detail: "Workspace is currently locked. Workspace must be unlocked before it can be safely deleted",
    });
    const byName = await api("POST", `/organizations/${org}/workspaces/${ws.attributes.name}/actions/safe-delete`);
    expect(byName.status).toBe(409);
    expect(byName.body.errors[0].detail).toBe(res.body.errors[0].detail);
    expect((await api("GET", `/workspaces/${ws.id}`)).status).toBe(200);
  });

  it("refuses a workspace that manages resources", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    await setResourceCount(ws.id, 3);
    const res = await api("POST", `/workspaces/${ws.id}/actions/safe-delete`);
    expect(res.status).toBe(409);
    expect(res.body.errors[0].detail).toBe("workspace cannot be safely deleted because it is still managing resources");
  });

  it("is 404 for a reader without delete permission", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const reader = await makeTeam(org);
    await grantWorkspace(reader.id, ws.id, "write");
    expect((await api("POST", `/workspaces/${ws.id}/actions/safe-delete`, { token: reader.token })).status).toBe(404);
    const admin = await makeTeam(org);
    await grantWorkspace(admin.id, ws.id, "admin");
    expect((await api("POST", `/workspaces/${ws.id}/actions/safe-delete`, { token: admin.token })).status).toBe(204);
  });

  it("racing a lock: ends as one serial order (deleted, or locked and kept)", async () => {
    const org = await createOrg();
    for (let i = 0; i < 5; i++) {
      const ws = await createWorkspace(org);
      const [del, lk] = await Promise.all([api("POST", `/workspaces/${ws.id}/actions/safe-delete`), api("POST", `/workspaces/${ws.id}/actions/lock`)]);
      const shown = await api("GET", `/workspaces/${ws.id}`);
      if (del.status === 204) {
        // Deleted first: the lock then finds no workspace (a lock first would have refused the delete).
        expect(shown.status).toBe(404);
        expect(lk.status).toBe(404);
      } else {
        expect(del.status).toBe(409);
        expect(lk.status).toBe(200);
        expect(shown.body.data.attributes.locked).toBe(true);
      }
    }
  });
});

describe("force delete", () => {
  it("lets owners delete even a locked workspace that manages resources", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    await setResourceCount(ws.id, 2);
    await api("POST", `/workspaces/${ws.id}/actions/lock`);
    expect((await api("DELETE", `/workspaces/${ws.id}`)).status).toBe(204);
    expect((await api("GET", `/workspaces/${ws.id}`)).status).toBe(404);
  });

  it("refuses workspace admins with 403 unless the organisation allows it", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const admin = await makeTeam(org);
    await grantWorkspace(admin.id, ws.id, "admin");
    const res = await api("DELETE", `/workspaces/${ws.id}`, { token: admin.token });
    expect(res.status).toBe(403);
    expect(res.body.errors[0].detail).toBe("Not authorized to perform a force delete on the workspace");
    expect((await api("DELETE", `/organizations/${org}/workspaces/${ws.attributes.name}`, { token: admin.token })).status).toBe(403);
    const shown = await api("GET", `/workspaces/${ws.id}`, { token: admin.token });
    expect(shown.body.data.attributes.permissions["can-force-delete"]).toBe(false);
    await api("PATCH", `/organizations/${org}`, { body: { data: { type: "organizations", attributes: { "allow-force-delete-workspaces": true } } } });
    const allowed = await api("GET", `/workspaces/${ws.id}`, { token: admin.token });
    expect(allowed.body.data.attributes.permissions["can-force-delete"]).toBe(true);
    expect((await api("DELETE", `/workspaces/${ws.id}`, { token: admin.token })).status).toBe(204);
  });

  it("is 404 for a caller who cannot read the workspace", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const outsider = await makeTeam(org);
    expect((await api("DELETE", `/workspaces/${ws.id}`, { token: outsider.token })).status).toBe(404);
  });

  it("a delete racing tag writes and updates leaves no half-deleted workspace", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const writes = Array.from({ length: 10 }, (_, i) =>
      i % 2 === 0
        ? api("PATCH", `/workspaces/${ws.id}/tag-bindings`, { body: { data: [{ type: "tag-bindings", attributes: { key: `k${i}`, value: "v" } }] } })
        : api("PATCH", `/workspaces/${ws.id}`, { body: { data: { type: "workspaces", attributes: { description: `d${i}` } } } }),
    );
    const [del] = await Promise.all([api("DELETE", `/workspaces/${ws.id}`), ...writes]);
    expect(del.status).toBe(204);
    expect((await api("GET", `/workspaces/${ws.id}`)).status).toBe(404);
    const rows = await env.DB.batch([
      env.DB.prepare("SELECT count(*) AS n FROM workspaces WHERE id = ?").bind(ws.id),
      env.DB.prepare("SELECT count(*) AS n FROM workspace_tags WHERE workspace_id = ?").bind(ws.id),
      env.DB.prepare("SELECT count(*) AS n FROM workspace_names WHERE workspace_id = ?").bind(ws.id),
    ]);
    expect(rows.map((r) => (r.results[0] as { n: number }).n)).toEqual([0, 0, 0]);
  });

  it("by name frees the name at once; the old id stays 404 for good", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const name = ws.attributes.name;
    expect((await api("DELETE", `/organizations/${org}/workspaces/${name}`)).status).toBe(204);
    const again = await api("POST", `/organizations/${org}/workspaces`, { body: { data: { type: "workspaces", attributes: { name } } } });
    expect(again.status).toBe(201);
    expect((await api("GET", `/workspaces/${again.body.data.id}`)).status).toBe(200);
    expect((await api("GET", `/organizations/${org}/workspaces/${name}`)).body.data.id).toBe(again.body.data.id);
    for (const [method, path] of [
      ["GET", `/workspaces/${ws.id}`],
      ["DELETE", `/workspaces/${ws.id}`],
      ["POST", `/workspaces/${ws.id}/actions/lock`],
      ["POST", `/workspaces/${ws.id}/actions/safe-delete`],
    ] as const) {
      expect((await api(method, path)).status).toBe(404);
    }
  });

  it("racing locks, unlocks and a force delete: deleted, with no write landing after it", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const ops = Array.from({ length: 12 }, (_, i) => api("POST", `/workspaces/${ws.id}/actions/${i % 2 === 0 ? "lock" : "unlock"}`));
    const [del, ...rest] = await Promise.all([api("DELETE", `/workspaces/${ws.id}`), ...ops]);
    expect(del.status).toBe(204);
    expect(rest.every((r) => [200, 404, 409].includes(r.status))).toBe(true);
    expect((await api("GET", `/workspaces/${ws.id}`)).status).toBe(404);
    expect((await env.DB.prepare("SELECT count(*) AS n FROM workspaces WHERE id = ?").bind(ws.id).first<{ n: number }>())?.n).toBe(0);
  });
});
