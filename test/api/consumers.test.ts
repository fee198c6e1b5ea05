// Remote-state consumers, SSH key assignment, data retention policies.
import { describe, expect, it } from "vitest";
import { createOrg, createWorkspace, grantWorkspace, makeTeam } from "../fixtures";
import { api } from "../helpers";

const path = (id: string) => `/workspaces/${id}/relationships/remote-state-consumers`;
const refs = (...ids: string[]) => ({
  data: ids.map((id) => ({ type: "workspaces", id, attributes: { name: "", "auto-apply": false }, relationships: { tags: { data: [] } } })),
});
const consumerIds = async (id: string, token?: string) => ((await api("GET", path(id), { token })).body.data as Array<{ id: string }>).map((w) => w.id).sort();

describe("remote-state consumers", () => {
  it("adds (ignoring duplicates), removes (ignoring absent ones) and replaces; lists full workspace documents", async () => {
    const org = await createOrg();
    const [w, a, b, c] = await Promise.all([1, 2, 3, 4].map(() => createWorkspace(org)));
    expect((await api("POST", path(w.id), { body: refs(a.id, b.id, a.id) })).status).toBe(204);
    expect((await api("POST", path(w.id), { body: refs(a.id) })).status).toBe(204);
    expect(await consumerIds(w.id)).toEqual([a.id, b.id].sort());
    const listed = await api("GET", path(w.id));
    expect(listed.body.data.find((x: { id: string }) => x.id === a.id)).toEqual(a);
    expect(listed.body.meta.pagination["total-count"]).toBe(2);
    expect((await api("DELETE", path(w.id), { body: refs(a.id, c.id) })).status).toBe(204);
    expect(await consumerIds(w.id)).toEqual([b.id]);
    expect((await api("PATCH", path(w.id), { body: refs(c.id) })).status).toBe(204);
    expect(await consumerIds(w.id)).toEqual([c.id]);
  });

  it("refuses the workspace itself (422 with a pointer) and unknown or foreign workspaces (404)", async () => {
    const org = await createOrg();
    const [w, a] = await Promise.all([createWorkspace(org), createWorkspace(org)]);
    const self = await api("POST", path(w.id), { body: refs(a.id, w.id) });
    expect(self.status).toBe(422);
    expect(self.body.errors[0].source.pointer).toBe("/data/1/id");
    const foreign = await createWorkspace(await createOrg());
    expect((await api("POST", path(w.id), { body: refs(foreign.id) })).status).toBe(404);
    expect((await api("POST", path(w.id), { body: refs("ws-doesnotexist00001") })).status).toBe(404);
    expect(await consumerIds(w.id)).toEqual([]);
  });

  it("global sharing lists every other workspace and refuses changes; the explicit list survives toggling", async () => {
    const org = await createOrg();
    const [w, a, b] = await Promise.all([1, 2, 3].map(() => createWorkspace(org)));
    await api("POST", path(w.id), { body: refs(a.id) });
    await api("PATCH", `/workspaces/${w.id}`, { body: { data: { type: "workspaces", attributes: { "global-remote-state": true } } } });
    expect(await consumerIds(w.id)).toEqual([a.id, b.id].sort());
    const refused = await api("POST", path(w.id), { body: refs(b.id) });
    expect(refused.status).toBe(422);
    await api("PATCH", `/workspaces/${w.id}`, { body: { data: { type: "workspaces", attributes: { "global-remote-state": false } } } });
    expect(await consumerIds(w.id)).toEqual([a.id]);
  });

  it("project sharing lists the other workspaces of the project and excludes global sharing", async () => {
    const org = await createOrg();
    const [w, a] = await Promise.all([createWorkspace(org), createWorkspace(org)]);
    const both = await api("PATCH", `/workspaces/${w.id}`, {
      body: { data: { type: "workspaces", attributes: { "global-remote-state": true, "project-remote-state": true } } },
    });
    expect(both.status).toBe(422);
    expect(both.body.errors[0].detail).toBe("Project remote state cannot be enabled when global remote state sharing is enabled");
    await api("PATCH", `/workspaces/${w.id}`, { body: { data: { type: "workspaces", attributes: { "project-remote-state": true } } } });
    expect(await consumerIds(w.id)).toEqual([a.id]);
    expect((await api("DELETE", path(w.id), { body: refs(a.id) })).status).toBe(422);
  });

  it("PATCH is for organisation-wide managers; a workspace admin may POST and DELETE", async () => {
    const org = await createOrg();
    const [w, a] = await Promise.all([createWorkspace(org), createWorkspace(org)]);
    const admin = await makeTeam(org);
    await grantWorkspace(admin.id, w.id, "admin");
    await grantWorkspace(admin.id, a.id, "read");
    expect((await api("PATCH", path(w.id), { token: admin.token, body: refs(a.id) })).status).toBe(404);
    expect((await api("POST", path(w.id), { token: admin.token, body: refs(a.id) })).status).toBe(204);
    const manager = await makeTeam(org, { "manage-workspaces": true });
    expect((await api("PATCH", path(w.id), { token: manager.token, body: refs(a.id) })).status).toBe(204);
  });

  it("a deleted workspace disappears from consumer lists; only readable consumers are listed", async () => {
    const org = await createOrg();
    const [w, a, b] = await Promise.all([1, 2, 3].map(() => createWorkspace(org)));
    await api("POST", path(w.id), { body: refs(a.id, b.id) });
    await api("DELETE", `/workspaces/${a.id}`);
    expect(await consumerIds(w.id)).toEqual([b.id]);
    const reader = await makeTeam(org);
    await grantWorkspace(reader.id, w.id, "read");
    expect(await consumerIds(w.id, reader.token)).toEqual([]);
  });
});

describe("SSH key assignment", () => {
  it("assigns a key of the workspace's organisation, unassigns with null, and forgets deleted keys", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const key = await api("POST", `/organizations/${org}/ssh-keys`, {
      body: { data: { type: "ssh-keys", attributes: { name: "deploy", value: "-----BEGIN KEY-----x" } } },
    });
    expect(key.status).toBe(201);
    expect(key.body.data.attributes.value).toBeUndefined();
    const body = (id: string | null) => ({ data: { type: "workspaces", attributes: { id } } });
    const assigned = await api("PATCH", `/workspaces/${ws.id}/relationships/ssh-key`, { body: body(key.body.data.id) });
    expect(assigned.status).toBe(200);
    expect(assigned.body.data.relationships["ssh-key"]).toEqual({
      data: { id: key.body.data.id, type: "ssh-keys" },
      links: { related: `/api/v2/ssh-keys/${key.body.data.id}` },
    });
    expect((await api("PATCH", `/workspaces/${ws.id}/relationships/ssh-key`, { body: body(null) })).body.data.relationships["ssh-key"]).toEqual({ data: null });
    await api("PATCH", `/workspaces/${ws.id}/relationships/ssh-key`, { body: body(key.body.data.id) });
    expect((await api("DELETE", `/ssh-keys/${key.body.data.id}`)).status).toBe(204);
    expect((await api("GET", `/workspaces/${ws.id}`)).body.data.relationships["ssh-key"]).toEqual({ data: null });
    const foreign = await api("POST", `/organizations/${await createOrg()}/ssh-keys`, {
      body: { data: { type: "ssh-keys", attributes: { name: "x", value: "y" } } },
    });
    expect((await api("PATCH", `/workspaces/${ws.id}/relationships/ssh-key`, { body: body(foreign.body.data.id) })).status).toBe(404);
  });
});

describe("data retention policies (self-hosted edition)", () => {
  it("sets, replaces and removes a workspace policy; falls back to the organisation default", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const p = `/workspaces/${ws.id}/relationships/data-retention-policy`;
    expect((await api("GET", p)).status).toBe(404);
    const created = await api("POST", p, { body: { data: { type: "data-retention-policy-delete-olders", attributes: { "delete-older-than-n-days": 33 } } } });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({
      type: "data-retention-policy-delete-olders",
      attributes: { "delete-older-than-n-days": 33 },
      relationships: { target: { data: { id: ws.id, type: "workspaces" } } },
    });
    expect(created.body.data.id).toMatch(/^drp-/);
    const updated = await api("POST", p, { body: { data: { type: "data-retention-policy-delete-olders", attributes: { deleteOlderThanNDays: 5 } } } });
    expect(updated.status).toBe(200);
    expect(updated.body.data.id).toBe(created.body.data.id);
    const shown = await api("GET", `/workspaces/${ws.id}`);
    expect(shown.body.data.relationships["data-retention-policy"].data).toEqual({ id: created.body.data.id, type: "data-retention-policy-delete-olders" });
    const dont = await api("POST", p, { body: { data: { type: "data-retention-policy-dont-deletes" } } });
    expect(dont.status).toBe(200);
    expect(dont.body.data.attributes).toEqual({});
    // A policy of another type is a new policy (its own id), and it is the workspace's now.
    const ids = [created.body.data.id, dont.body.data.id];
    expect(ids).toEqual([expect.stringMatching(/^drp-/), expect.stringMatching(/^drp-/)]);
    expect(new Set(ids).size).toBe(2);
    expect((await api("GET", p)).body.data).toEqual(dont.body.data);
    expect(
      (await api("POST", p, { body: { data: { type: "data-retention-policy-delete-olders", attributes: { "delete-older-than-n-days": 0 } } } })).status,
    ).toBe(422);
    expect((await api("DELETE", p)).status).toBe(204);
    expect((await api("GET", `/workspaces/${ws.id}`)).body.data.relationships["data-retention-policy"].data).toBeNull();
    await api("POST", `/organizations/${org}/relationships/data-retention-policy`, {
      body: { data: { type: "data-retention-policy-delete-olders", attributes: { "delete-older-than-n-days": 90 } } },
    });
    const inherited = await api("GET", p);
    expect(inherited.body.data.relationships.target.data).toEqual({ id: org, type: "organizations" });
  });

  it("shows the organisation's policy in its data-retention-policy relationship", async () => {
    const org = await createOrg();
    const rel = async () => (await api("GET", `/organizations/${org}`)).body.data.relationships["data-retention-policy"];
    expect((await rel()).data).toBeNull();
    const p = `/organizations/${org}/relationships/data-retention-policy`;
    const older = await api("POST", p, { body: { data: { type: "data-retention-policy-delete-olders", attributes: { "delete-older-than-n-days": 33 } } } });
    expect(older.status).toBe(201);
    expect((await rel()).data).toEqual({ id: older.body.data.id, type: "data-retention-policy-delete-olders" });
    const dont = await api("POST", p, { body: { data: { type: "data-retention-policy-dont-deletes" } } });
    expect((await rel()).data).toEqual({ id: dont.body.data.id, type: "data-retention-policy-dont-deletes" });
    const patched = await api("PATCH", `/organizations/${org}`, { body: { data: { type: "organizations", attributes: { "cost-estimation-enabled": true } } } });
    expect(patched.body.data.relationships["data-retention-policy"].data).toEqual({ id: dont.body.data.id, type: "data-retention-policy-dont-deletes" });
    expect((await api("DELETE", p)).status).toBe(204);
    expect((await rel()).data).toBeNull();
  });
});
