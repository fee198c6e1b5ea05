// The organisation audit trail (HCP Terraform's GET /organization/audit-trail): what a client observes after each kind
// of change, paging and `since`, which tokens may read it, and that no secret or sensitive value is ever in an event.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, indexSettled } from "../helpers";
import { createOrg, createWorkspace, makeOrgToken, makeTeam, makeUser, organizationId } from "../fixtures";
import { signIn, ui } from "../ui-client";

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
/** The organisation's trail as `token` reads it, its actions other than the workspaces' own exactly `expected`. */
async function expectTrail(token: string, expected: string[]) {
  const t = await trail(token);
  expect(actions(t.data).filter((a) => !a.startsWith("workspace."))).toEqual(expected);
  return t;
}

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
    // A time to the second (as go-tfe sends it) names that whole second: nothing from within it comes back.
    const second = `${since.slice(0, 19)}Z`;
    const afterSecond = await trail(orgToken.token, `?since=${encodeURIComponent(second)}`);
    expect(afterSecond.data.every((e) => Date.parse(e.timestamp) >= Date.parse(second) + 1000)).toBe(true);
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
    // Nor does it open a web session.
    expect((await ui("POST", "/app/session", { form: { token: audit.token } })).headers.get("Set-Cookie") ?? "").not.toContain("ws_session=");
    // It is listed, and deleting it stops it at once.
    expect((await api("GET", `/organizations/${org}/authentication-token?token=audit-trails`, { token: owner.token })).body.data.id).toBe(audit.id);
    expect((await api("DELETE", `/organizations/${org}/authentication-token?token=audit-trails`, { token: owner.token })).status).toBe(204);
    expect((await trail(audit.token)).status).toBe(401);
  });

  it("records teams, memberships, team access and tokens in the batch of their change", async () => {
    const org = await createOrg();
    const owner = await makeUser({ ownerOf: org });
    const member = await makeUser();
    const orgToken = await makeOrgToken(org);
    const ws = await createWorkspace(org, {}, owner.token);
    const team = await api("POST", `/organizations/${org}/teams`, { token: owner.token, body: { data: { type: "teams", attributes: { name: "devs" } } } });
    expect(team.status).toBeLessThan(300);
    const teamId = team.body.data.id;
    // A refused create (the name is taken) records nothing.
    expect(
      (await api("POST", `/organizations/${org}/teams`, { token: owner.token, body: { data: { type: "teams", attributes: { name: "devs" } } } })).status,
    ).toBe(422);
    expect((await api("PATCH", `/teams/${teamId}`, { token: owner.token, body: { data: { type: "teams", attributes: { name: "devs2" } } } })).status).toBe(200);
    const users = { data: [{ type: "users", id: member.id }] };
    expect((await api("POST", `/teams/${teamId}/relationships/users`, { token: owner.token, body: users })).status).toBe(204);
    expect((await api("DELETE", `/teams/${teamId}/relationships/users`, { token: owner.token, body: users })).status).toBe(204);
    const tws = await api("POST", "/team-workspaces", {
      token: owner.token,
      body: {
        data: {
          type: "team-workspaces",
          attributes: { access: "read" },
          relationships: { team: { data: { type: "teams", id: teamId } }, workspace: { data: { type: "workspaces", id: ws.id } } },
        },
      },
    });
    expect(tws.status).toBe(201);
    expect(
      (
        await api("PATCH", `/team-workspaces/${tws.body.data.id}`, {
          token: owner.token,
          body: { data: { type: "team-workspaces", attributes: { access: "write" } } },
        })
      ).status,
    ).toBe(200);
    expect((await api("DELETE", `/team-workspaces/${tws.body.data.id}`, { token: owner.token })).status).toBe(204);
    const tt = await api("POST", `/teams/${teamId}/authentication-token`, { token: owner.token });
    expect(tt.status).toBe(201);
    expect((await api("DELETE", `/teams/${teamId}/authentication-token`, { token: owner.token })).status).toBe(204);
    // Deleting what is already gone records nothing.
    expect((await api("DELETE", `/teams/${teamId}/authentication-token`, { token: owner.token })).status).toBe(404);
    expect((await api("DELETE", `/teams/${teamId}`, { token: owner.token })).status).toBe(204);
    await indexSettled(ws.id);

    const t = await expectTrail(orgToken.token, [
      "team.create",
      "team.update",
      "team_membership.add",
      "team_membership.remove",
      "team_access.create",
      "team_access.update",
      "team_access.destroy",
      "authentication_token.create",
      "authentication_token.destroy",
      "team.destroy",
    ]);
    const tokenEvents = t.data.filter((e) => e.resource.type === "authentication_token");
    expect(tokenEvents.map((e) => e.resource.id)).toEqual([tt.body.data.id, tt.body.data.id]);
    expect(t.text).not.toContain(tt.body.data.attributes.token);
    expect(t.data.find((e) => e.resource.type === "team_membership")?.resource).toMatchObject({ id: member.id, meta: { team_id: teamId } });
  });

  it("records variable sets and their variables, never the values", async () => {
    const org = await createOrg();
    const owner = await makeUser({ ownerOf: org });
    const orgToken = await makeOrgToken(org);
    const ws = await createWorkspace(org, {}, owner.token);
    const set = await api("POST", `/organizations/${org}/varsets`, { token: owner.token, body: { data: { type: "varsets", attributes: { name: "shared" } } } });
    expect(set.status).toBe(201);
    const id = set.body.data.id;
    expect((await api("PATCH", `/varsets/${id}`, { token: owner.token, body: { data: { type: "varsets", attributes: { description: "d" } } } })).status).toBe(
      200,
    );
    const wsRel = { data: [{ type: "workspaces", id: ws.id }] };
    expect((await api("POST", `/varsets/${id}/relationships/workspaces`, { token: owner.token, body: wsRel })).status).toBe(204);
    const v = await api("POST", `/varsets/${id}/relationships/vars`, {
      token: owner.token,
      body: { data: { type: "vars", attributes: { key: "API_KEY", value: "varset-secret-9", category: "env", sensitive: true } } },
    });
    expect(v.status).toBe(201);
    expect(
      (
        await api("PATCH", `/varsets/${id}/relationships/vars/${v.body.data.id}`, {
          token: owner.token,
          body: { data: { type: "vars", attributes: { value: "varset-secret-10" } } },
        })
      ).status,
    ).toBe(200);
    expect((await api("DELETE", `/varsets/${id}/relationships/vars/${v.body.data.id}`, { token: owner.token })).status).toBe(204);
    expect((await api("DELETE", `/varsets/${id}/relationships/workspaces`, { token: owner.token, body: wsRel })).status).toBe(204);
    expect((await api("DELETE", `/varsets/${id}`, { token: owner.token })).status).toBe(204);
    const t = await expectTrail(orgToken.token, [
      "varset.create",
      "varset.update",
      "varset.apply_workspaces",
      "variable.create",
      "variable.update",
      "variable.destroy",
      "varset.remove_workspaces",
      "varset.destroy",
    ]);
    expect(t.data.find((e) => e.resource.action === "create" && e.resource.type === "variable")?.resource.meta).toMatchObject({
      varset_id: id,
      key: "API_KEY",
      category: "env",
    });
    expect(t.text).not.toContain("varset-secret");
  });

  it("records sign-ins in each organisation of the user", async () => {
    const org = await createOrg();
    const owner = await makeUser({ ownerOf: org });
    const orgToken = await makeOrgToken(org);
    await signIn(owner.token);
    const t = await trail(orgToken.token);
    expect(t.data.filter((e) => e.resource.type === "user_session")).toEqual([
      expect.objectContaining({
        auth: expect.objectContaining({ accessor_id: owner.id }),
        resource: { id: owner.id, type: "user_session", action: "create", meta: { method: "token" } },
      }),
    ]);
    // Not in an organisation the user has no part in.
    const other = await makeOrgToken(await createOrg());
    expect((await trail(other.token)).data).toEqual([]);
  });

  it("records state versions and runs", async () => {
    const org = await createOrg();
    const owner = await makeUser({ ownerOf: org });
    const orgToken = await makeOrgToken(org);
    const ws = await createWorkspace(org, {}, owner.token);
    await api("POST", `/workspaces/${ws.id}/actions/lock`, { token: owner.token });
    const state = JSON.stringify({ version: 4, terraform_version: "1.11.4", serial: 1, lineage: "l-1", outputs: {}, resources: [] });
    const bytes = new TextEncoder().encode(state);
    const md5 = [...new Uint8Array(await crypto.subtle.digest("MD5", bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
    const sv = await api("POST", `/workspaces/${ws.id}/state-versions`, {
      token: owner.token,
      body: { data: { type: "state-versions", attributes: { serial: 1, md5, lineage: "l-1", state: btoa(state) } } },
    });
    expect(sv.status).toBe(201);
    await indexSettled(ws.id);
    const t = await trail(orgToken.token);
    expect(t.data.find((e) => e.resource.type === "state_version")?.resource).toMatchObject({ id: sv.body.data.id, action: "create", meta: { serial: 1 } });
    expect(t.text).not.toContain(btoa(state));
  });

  it("is pruned by the organisation's data retention policy, and no route edits or deletes it", async () => {
    const org = await createOrg();
    const owner = await makeUser({ ownerOf: org });
    const orgToken = await makeOrgToken(org);
    const orgId = await organizationId(org);
    const old = new Date(Date.now() - 3 * 86_400_000).toISOString();
    await env.DB.prepare(
      `INSERT INTO audit_events (id, organization_id, timestamp, type, accessor_id, description, auth_type, request_id, resource_id, resource_type, action)
       VALUES ('old-event', ?, ?, 'Resource', 'user-x', 'x', 'Client', 'r', 'ws-x', 'workspace', 'create')`,
    )
      .bind(orgId, old)
      .run();
    await createWorkspace(org, {}, owner.token);
    expect((await trail(orgToken.token)).data.map((e) => e.id)).toContain("old-event");
    const policy = { data: { type: "data-retention-policy-delete-olders", attributes: { "delete-older-than-n-days": 2 } } };
    expect((await api("POST", `/organizations/${org}/relationships/data-retention-policy`, { token: owner.token, body: policy })).status).toBe(201);
    // The next event's batch prunes what the policy no longer keeps.
    await createWorkspace(org, {}, owner.token);
    const after = await trail(orgToken.token);
    expect(after.data.map((e) => e.id)).not.toContain("old-event");
    expect(after.data.length).toBeGreaterThan(0);
    for (const method of ["POST", "PATCH", "DELETE"]) {
      expect((await api(method, "/organization/audit-trail", { token: orgToken.token })).status).toBe(404);
    }
  });

  it("shows owners the trail on a settings page, paged, and refuses everyone else", async () => {
    const org = await createOrg();
    const owner = await makeUser({ ownerOf: org });
    const ws = await createWorkspace(org, {}, owner.token);
    const v = await api("POST", `/workspaces/${ws.id}/vars`, {
      token: owner.token,
      body: { data: { type: "vars", attributes: { key: "ui_secret", value: "never-on-the-page", category: "env", sensitive: true } } },
    });
    expect(v.status).toBe(201);
    await indexSettled(ws.id);
    const cookie = await signIn(owner.token);
    const settings = await ui("GET", `/app/${org}/settings`, { cookie });
    expect(settings.text).toContain(`/app/${org}/settings/audit-trail`);
    const page = await ui("GET", `/app/${org}/settings/audit-trail`, { cookie });
    expect(page.status).toBe(200);
    expect(page.text).toContain("variable create");
    expect(page.text).toContain("key: ui_secret");
    expect(page.text).toContain("workspace create");
    expect(page.text).not.toContain("never-on-the-page");
    // Newest first: the sign-in that opened this page comes before the workspace's creation.
    expect(page.text.indexOf("user_session create")).toBeLessThan(page.text.indexOf("workspace create"));
    const paged = await ui("GET", `/app/${org}/settings/audit-trail?page%5Bsize%5D=1&page%5Bnumber%5D=2`, { cookie });
    expect(paged.text).toContain("Page 2 of");
    expect((paged.text.match(/<li>/g) ?? []).length).toBe(1);

    const member = await makeUser({ teams: [(await makeTeam(org, { "manage-workspaces": true })).id] });
    const memberCookie = await signIn(member.token);
    expect((await ui("GET", `/app/${org}/settings/audit-trail`, { cookie: memberCookie })).status).toBe(404);
  });
});
