// The organisation audit trail (HCP Terraform's GET /organization/audit-trail): what a client observes after each kind
// of change, paging and `since`, which tokens may read it, and that no secret or sensitive value is ever in an event.
import { describe, expect, it } from "vitest";
import { api, indexSettled } from "../helpers";
import { createOrg, createWorkspace, makeOrgToken, makeTeam, makeUser, organizationId } from "../fixtures";

type Event = {
  id: string;
  version: string;
  type: string;
  timestamp: string;
  auth: { accessor_id: string; description: string; type: string; impersonator_id: string | null; organization_id: string };
  request: { id: string };
  resource: { id: string; type: string; action: string; meta: Record<string, unknown> | null };
};

async function trail(token: string, query = ""): Promise<{ status: number; data: Event[]; pagination: Record<string, number | null>; text: string }> {
  const res = await api("GET", `/organization/audit-trail${query}`, { token });
  return { status: res.status, data: res.body?.data ?? [], pagination: res.body?.pagination, text: res.text };
}

const actions = (events: Event[]) => events.map((e) => `${e.resource.type}.${e.resource.action}`);

async function auditTrailsToken(org: string, owner = makeUser({ ownerOf: org })): Promise<{ token: string; id: string }> {
  const res = await api("POST", `/organizations/${org}/authentication-token?token=audit-trails`, { token: (await owner).token });
  expect(res.status).toBe(201);
  return { token: res.body.data.attributes.token, id: res.body.data.id };
}

describe("audit trail", () => {
  it("records workspace changes and locks with actor, time and resource, in HCP's shape", async () => {
    const org = await createOrg();
    const owner = await makeUser({ ownerOf: org });
    const orgToken = await makeOrgToken(org);
    const ws = await createWorkspace(org, {}, owner.token);
    expect((await api("POST", `/workspaces/${ws.id}/actions/lock`, { token: owner.token, body: { reason: "x" } })).status).toBe(200);
    expect((await api("POST", `/workspaces/${ws.id}/actions/unlock`, { token: owner.token })).status).toBe(200);
    // A refused change records nothing: the lock is not held any more.
    expect((await api("POST", `/workspaces/${ws.id}/actions/unlock`, { token: owner.token })).status).toBe(409);
    const renamed = await api("PATCH", `/workspaces/${ws.id}`, {
      token: owner.token,
      body: { data: { type: "workspaces", attributes: { name: "renamed-ws" } } },
    });
    expect(renamed.status).toBe(200);
    await indexSettled(ws.id);

    const res = await api("GET", "/organization/audit-trail", { token: orgToken.token });
    expect(res.status).toBe(200);
    // Not JSON:API, as in HCP.
    expect(res.headers.get("Content-Type")).toMatch(/^application\/json/);
    const events = res.body.data as Event[];
    expect(actions(events)).toEqual(["workspace.create", "workspace.lock", "workspace.unlock", "workspace.update"]);
    const orgId = await organizationId(org);
    for (const e of events) {
      expect(e).toMatchObject({ version: "0", type: "Resource", request: { id: expect.any(String) } });
      expect(e.auth).toEqual({ accessor_id: owner.id, description: expect.any(String), type: "Client", impersonator_id: null, organization_id: orgId });
      expect(e.resource.id).toBe(ws.id);
      expect(Date.parse(e.timestamp)).not.toBeNaN();
    }
    expect(events[3].resource.meta).toMatchObject({ name: "renamed-ws", previous_name: ws.attributes.name });
    expect(res.body.pagination).toEqual({ current_page: 1, prev_page: null, next_page: null, total_pages: 1, total_count: 4 });

    expect((await api("DELETE", `/workspaces/${ws.id}`, { token: owner.token })).status).toBe(204);
    await indexSettled(ws.id);
    const after = await trail(orgToken.token);
    expect(actions(after.data).at(-1)).toBe("workspace.destroy");
  });

  it("records variables by key and category, never their values", async () => {
    const org = await createOrg();
    const owner = await makeUser({ ownerOf: org });
    const orgToken = await makeOrgToken(org);
    const ws = await createWorkspace(org, {}, owner.token);
    const created = await api("POST", `/workspaces/${ws.id}/vars`, {
      token: owner.token,
      body: { data: { type: "vars", attributes: { key: "db_password", value: "s3cr3t-value-1", category: "terraform", sensitive: true } } },
    });
    expect(created.status).toBe(201);
    const varId = created.body.data.id;
    const patched = await api("PATCH", `/workspaces/${ws.id}/vars/${varId}`, {
      token: owner.token,
      body: { data: { type: "vars", id: varId, attributes: { value: "s3cr3t-value-2" } } },
    });
    expect(patched.status).toBe(200);
    expect((await api("DELETE", `/workspaces/${ws.id}/vars/${varId}`, { token: owner.token })).status).toBe(204);
    await indexSettled(ws.id);
    const t = await trail(orgToken.token);
    const vars = t.data.filter((e) => e.resource.type === "variable");
    expect(vars.map((e) => e.resource.action)).toEqual(["create", "update", "destroy"]);
    expect(vars.every((e) => e.resource.id === varId)).toBe(true);
    expect(vars[0].resource.meta).toMatchObject({ key: "db_password", category: "terraform", sensitive: true });
    expect(vars[1].resource.meta).toMatchObject({ changed: "value" });
    expect(t.text).not.toContain("s3cr3t");
  });

  it("pages and filters by since", async () => {
    const org = await createOrg();
    const owner = await makeUser({ ownerOf: org });
    const orgToken = await makeOrgToken(org);
    const ws = await createWorkspace(org, {}, owner.token);
    for (let i = 0; i < 3; i++) {
      await api("POST", `/workspaces/${ws.id}/actions/lock`, { token: owner.token });
      await api("POST", `/workspaces/${ws.id}/actions/unlock`, { token: owner.token });
    }
    await indexSettled(ws.id);
    const all = await trail(orgToken.token);
    expect(all.data).toHaveLength(7);
    const p1 = await trail(orgToken.token, "?page%5Bnumber%5D=1&page%5Bsize%5D=4");
    expect(p1.data.map((e) => e.id)).toEqual(all.data.slice(0, 4).map((e) => e.id));
    expect(p1.pagination).toEqual({ current_page: 1, prev_page: null, next_page: 2, total_pages: 2, total_count: 7 });
    const p2 = await trail(orgToken.token, "?page%5Bnumber%5D=2&page%5Bsize%5D=4");
    expect(p2.data.map((e) => e.id)).toEqual(all.data.slice(4).map((e) => e.id));
    expect(p2.pagination).toEqual({ current_page: 2, prev_page: 1, next_page: null, total_pages: 2, total_count: 7 });

    const since = all.data[3].timestamp;
    const later = await trail(orgToken.token, `?since=${encodeURIComponent(since)}`);
    expect(later.data.length).toBeGreaterThan(0);
    expect(later.data.every((e) => e.timestamp > since)).toBe(true);
    expect((await trail(orgToken.token, "?since=yesterday")).status).toBe(400);
  });

  it("answers the organisation token and the audit-trails token only; the audit-trails token works nowhere else", async () => {
    const org = await createOrg();
    const owner = await makeUser({ ownerOf: org });
    const team = await makeTeam(org);
    const audit = await auditTrailsToken(org, Promise.resolve(owner));
    const ws = await createWorkspace(org, {}, owner.token);
    await indexSettled(ws.id);

    const read = await trail(audit.token);
    expect(read.status).toBe(200);
    expect(actions(read.data)).toContain("workspace.create");
    // User and team tokens are refused, as in HCP; so is another organisation's token for this one's events.
    expect((await trail(owner.token)).status).toBe(404);
    expect((await trail(team.token)).status).toBe(404);
    const other = await makeOrgToken(await createOrg());
    expect((await trail(other.token)).data).toEqual([]);
    // Elsewhere the audit-trails token is no token at all.
    expect((await api("GET", `/organizations/${org}`, { token: audit.token })).status).toBe(401);
    expect((await api("GET", `/workspaces/${ws.id}`, { token: audit.token })).status).toBe(401);
    expect(
      (await api("POST", `/organizations/${org}/workspaces`, { token: audit.token, body: { data: { type: "workspaces", attributes: { name: "x" } } } })).status,
    ).toBe(401);
    // It is listed, and deleting it stops it at once.
    expect((await api("GET", `/organizations/${org}/authentication-token?token=audit-trails`, { token: owner.token })).body.data.id).toBe(audit.id);
    expect((await api("DELETE", `/organizations/${org}/authentication-token?token=audit-trails`, { token: owner.token })).status).toBe(204);
    expect((await trail(audit.token)).status).toBe(401);
  });
});
