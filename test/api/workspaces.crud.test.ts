import { describe, expect, it } from "vitest";
import { createOrg, createWorkspace } from "../fixtures";
import { api, assertJsonApi, uniqueName, createdResource } from "../helpers";

describe("workspace create/show", () => {
  it("creates a workspace with defaults and shows it by id and by name", async () => {
    const org = await createOrg();
    const name = uniqueName("ws");
    const res = await api("POST", `/organizations/${org}/workspaces`, {
      body: { data: { type: "workspaces", attributes: { name } } },
    });
    assertJsonApi(res);
    const ws = createdResource(res, "workspaces", "ws");
    expect(ws.attributes.name).toBe(name);
    expect(ws.attributes["execution-mode"]).toBe("remote");
    expect(ws.attributes["setting-overwrites"]).toEqual({ "execution-mode": false, "agent-pool": false });
    expect(ws.attributes["created-at"]).toMatch(/Z$/);

    const byId = await api("GET", `/workspaces/${ws.id}`);
    assertJsonApi(byId);
    expect(byId.status).toBe(200);
    expect(byId.body.data).toEqual(ws);
    const byName = await api("GET", `/organizations/${org}/workspaces/${name}`);
    expect(byName.status).toBe(200);
    expect(byName.body.data).toEqual(ws);
  });

  it("gives exactly one 201 for 20 concurrent creates of one name", async () => {
    const org = await createOrg();
    const name = uniqueName("race");
    const results = await Promise.all(
      Array.from({ length: 20 }, () => api("POST", `/organizations/${org}/workspaces`, { body: { data: { type: "workspaces", attributes: { name } } } })),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 422)).toHaveLength(19);
    for (const r of results.filter((r) => r.status === 422)) expect(r.body.errors[0].detail).toBe("Name has already been taken");
    const list = await api("GET", `/organizations/${org}/workspaces`);
    expect(list.body.data).toHaveLength(1);
  });

  it("repairs the index through the alarm when the D1 write fails", async () => {
    const { runDurableObjectAlarm } = await import("cloudflare:test");
    const { env } = await import("cloudflare:workers");
    const org = await createOrg();
    const name = uniqueName("fault");
    const res = await api("POST", `/organizations/${org}/workspaces`, {
      body: { data: { type: "workspaces", attributes: { name } } },
      headers: { "X-Fault-Fail-Index-Writes": "1" },
    });
    expect(res.status).toBe(201);
    const id = res.body.data.id;
    // Every read (show by id too: one D1 batch) follows the index until the alarm repairs it.
    expect((await api("GET", `/organizations/${org}/workspaces/${name}`)).status).toBe(404);
    expect((await api("GET", `/workspaces/${id}`)).status).toBe(404);
    expect(await runDurableObjectAlarm(env.WORKSPACES.getByName(id))).toBe(true);
    const after = await api("GET", `/organizations/${org}/workspaces/${name}`);
    expect(after.status).toBe(200);
    expect(after.body.data).toEqual(res.body.data);
    expect((await api("GET", `/workspaces/${id}`)).body.data).toEqual(res.body.data);
  });

  it("updates, renames and deletes", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const newName = uniqueName("renamed");
    const upd = await api("PATCH", `/workspaces/${ws.id}`, {
      body: { data: { type: "workspaces", attributes: { name: newName, "auto-apply": true, "terraform-version": "1.5.0" } } },
    });
    assertJsonApi(upd);
    expect(upd.status).toBe(200);
    expect(upd.body.data.attributes["auto-apply"]).toBe(true);
    expect(upd.body.data.attributes["terraform-version"]).toBe("1.5.0");
    expect(upd.body.data.attributes["engine-version"]).toBe("1.5.0");
    expect((await api("GET", `/organizations/${org}/workspaces/${ws.attributes.name}`)).status).toBe(404);
    expect((await api("GET", `/organizations/${org}/workspaces/${newName}`)).status).toBe(200);
    const del = await api("DELETE", `/workspaces/${ws.id}`);
    expect(del.status).toBe(204);
    expect((await api("GET", `/workspaces/${ws.id}`)).status).toBe(404);
    expect((await api("GET", `/organizations/${org}/workspaces/${newName}`)).status).toBe(404);
  });

  it("answers 401 without a token and 404 for unknown ids", async () => {
    const r = await api("GET", "/workspaces/ws-doesnotexist1234", { token: null });
    assertJsonApi(r);
    expect(r.status).toBe(401);
    const n = await api("GET", "/workspaces/ws-doesnotexist1234");
    expect(n.status).toBe(404);
    expect(n.body).toEqual({ errors: [{ status: "404", title: "not found" }] });
  });
});
