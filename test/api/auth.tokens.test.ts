// The token lifecycle — team, organisation and user tokens, expiry, deletion, who-am-I.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createOrg, createWorkspace, makeUser } from "../fixtures";
import { api, sha256 } from "../helpers";

async function team(org: string, attrs: Record<string, unknown> = {}) {
  const res = await api("POST", `/organizations/${org}/teams`, {
    body: { data: { type: "teams", attributes: { name: `t${crypto.randomUUID().slice(0, 8)}`, ...attrs } } },
  });
  return res.body.data as { id: string; attributes: { name: string } };
}
const tokenBody = (attributes: Record<string, unknown>) => ({ data: { type: "authentication-tokens", attributes } });
const twoYearsAfter = (iso: string) => {
  const d = new Date(iso);
  d.setUTCFullYear(d.getUTCFullYear() + 2);
  return d.toISOString();
};

describe("team tokens", () => {
  it("legacy token: secret only at creation, replaced by the next one, 401 once deleted", async () => {
    const org = await createOrg();
    const t = await team(org, { "organization-access": { "read-workspaces": true } });
    const first = await api("POST", `/teams/${t.id}/authentication-token`);
    expect(first.status).toBe(201);
    const secret = first.body.data.attributes.token;
    expect(secret).toMatch(/^[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9]{67}$/);
    expect(first.body.data.relationships.team.data).toEqual({ id: t.id, type: "teams" });
    expect((await api("GET", `/organizations/${org}/workspaces`, { token: secret })).status).toBe(200);
    const shown = await api("GET", `/teams/${t.id}/authentication-token`);
    expect(shown.body.data.attributes.token).toBeNull();
    expect(shown.body.data.id).toBe(first.body.data.id);
    const second = await api("POST", `/teams/${t.id}/authentication-token`);
    expect((await api("GET", `/organizations/${org}/workspaces`, { token: secret })).status).toBe(401);
    const me = await api("GET", "/account/details", { token: second.body.data.attributes.token });
    expect(me.body.data.attributes["is-service-account"]).toBe(true);
    expect(me.body.data.relationships["authenticated-resource"].data).toEqual({ id: t.id, type: "teams" });
    expect(me.body.data.id).toMatch(/^user-/);
    expect((await api("DELETE", `/teams/${t.id}/authentication-token`)).status).toBe(204);
    expect((await api("GET", "/account/details", { token: second.body.data.attributes.token })).status).toBe(401);
    expect((await api("GET", `/teams/${t.id}/authentication-token`)).status).toBe(404);
  });

  it("only the hash is stored", async () => {
    const org = await createOrg();
    const t = await team(org);
    const created = await api("POST", `/teams/${t.id}/authentication-token`);
    const secret: string = created.body.data.attributes.token;
    const row = await env.DB.prepare("SELECT * FROM tokens WHERE id = ?").bind(created.body.data.id).first<Record<string, unknown>>();
    expect(Object.values(row!).some((v) => typeof v === "string" && v.includes(secret.split(".")[2]))).toBe(false);
    expect(row!.token_hash).toBe(await sha256(secret));
  });

  it("described tokens: unique description per team, even under concurrent creates", async () => {
    const org = await createOrg();
    const t = await team(org);
    const other = await team(org);
    const body = tokenBody({ description: "ci" });
    const results = await Promise.all(Array.from({ length: 6 }, () => api("POST", `/teams/${t.id}/authentication-tokens`, { body })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 422, 422, 422, 422, 422]);
    const dup = results.find((r) => r.status === 422)!;
    expect(dup.body.errors[0]).toMatchObject({ status: "422", title: "invalid attributes", detail: "Validation failed: Description has already been taken" });
    // Another team may use the same description; the legacy token coexists with described ones.
    expect((await api("POST", `/teams/${other.id}/authentication-tokens`, { body })).status).toBe(201);
    await api("POST", `/teams/${t.id}/authentication-token`);
    const listed = await api("GET", `/teams/${t.id}/authentication-tokens`);
    expect(listed.body.data).toHaveLength(2);
    expect(listed.body.data.every((r: { attributes: { token: unknown } }) => r.attributes.token === null)).toBe(true);
  });

  it("lists the organisation's team tokens, filtered by team name and sorted", async () => {
    const org = await createOrg();
    const a = await team(org, { name: `alpha-${crypto.randomUUID().slice(0, 6)}` });
    const b = await team(org, { name: `beta-${crypto.randomUUID().slice(0, 6)}` });
    const soon = new Date(Date.now() + 86_400_000).toISOString();
    const later = new Date(Date.now() + 2 * 86_400_000).toISOString();
    const ta = await api("POST", `/teams/${a.id}/authentication-token`, { body: tokenBody({ "expired-at": later }) });
    const tb = await api("POST", `/teams/${b.id}/authentication-token`, { body: tokenBody({ "expired-at": soon }) });
    const all = await api("GET", `/organizations/${org}/team-tokens`);
    expect(all.body.meta.pagination["total-count"]).toBe(2);
    const byName = await api("GET", `/organizations/${org}/team-tokens?q=alpha`);
    expect(byName.body.data.map((r: { id: string }) => r.id)).toEqual([ta.body.data.id]);
    const asc = await api("GET", `/organizations/${org}/team-tokens?sort=expired-at`);
    expect(asc.body.data.map((r: { id: string }) => r.id)).toEqual([tb.body.data.id, ta.body.data.id]);
    const desc = await api("GET", `/organizations/${org}/team-tokens?sort=-expired-at`);
    expect(desc.body.data.map((r: { id: string }) => r.id)).toEqual([ta.body.data.id, tb.body.data.id]);
    expect((await api("GET", `/organizations/${org}/team-tokens?sort=secret`)).status).toBe(400);
  });

  it("deleting the team ends its tokens at once", async () => {
    const org = await createOrg();
    const t = await team(org, { "organization-access": { "read-workspaces": true } });
    const secret = (await api("POST", `/teams/${t.id}/authentication-token`)).body.data.attributes.token;
    expect((await api("GET", "/account/details", { token: secret })).status).toBe(200);
    expect((await api("DELETE", `/teams/${t.id}`)).status).toBe(204);
    expect((await api("GET", "/account/details", { token: secret })).status).toBe(401);
  });
});

describe("expiry", () => {
  it("defaults to two years; explicit null never expires; a past or malformed expiry is 422", async () => {
    const org = await createOrg();
    const t = await team(org);
    const dflt = await api("POST", `/teams/${t.id}/authentication-token`);
    expect(dflt.body.data.attributes["expired-at"]).toBe(twoYearsAfter(dflt.body.data.attributes["created-at"]));
    const never = await api("POST", `/teams/${t.id}/authentication-token`, { body: tokenBody({ "expired-at": null }) });
    expect(never.body.data.attributes["expired-at"]).toBeNull();
    const at = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d{3}Z$/, ".000Z");
    const explicit = await api("POST", `/teams/${t.id}/authentication-tokens`, { body: tokenBody({ description: "x", "expired-at": at }) });
    expect(explicit.body.data.attributes["expired-at"]).toBe(at);
    const past = await api("POST", `/teams/${t.id}/authentication-tokens`, { body: tokenBody({ description: "y", "expired-at": "2001-01-01T00:00:00Z" }) });
    expect(past.status).toBe(422);
    expect(past.body.errors[0].source.pointer).toBe("/data/attributes/expired-at");
    expect((await api("POST", `/teams/${t.id}/authentication-tokens`, { body: tokenBody({ description: "z", "expired-at": "soon" }) })).status).toBe(422);
    const orgToken = await api("POST", `/organizations/${org}/authentication-token`);
    expect(orgToken.body.data.attributes["expired-at"]).toBe(twoYearsAfter(orgToken.body.data.attributes["created-at"]));
  });

  it("a token that has expired gets 401 on its next request", async () => {
    const org = await createOrg();
    const t = await team(org, { "organization-access": { "read-workspaces": true } });
    const created = await api("POST", `/teams/${t.id}/authentication-token`);
    const secret = created.body.data.attributes.token;
    expect((await api("GET", `/organizations/${org}`, { token: secret })).status).toBe(200);
    // Time passes: the stored expiry is now in the past.
    await env.DB.prepare("UPDATE tokens SET expired_at = ? WHERE id = ?")
      .bind(new Date(Date.now() - 1000).toISOString(), created.body.data.id)
      .run();
    const res = await api("GET", `/organizations/${org}`, { token: secret });
    expect(res.status).toBe(401);
    expect(res.body.errors[0]).toMatchObject({ status: "401", title: "unauthorized" });
    const expiredUser = await makeUser({ ownerOf: org, expiredAt: new Date(Date.now() - 1000).toISOString() });
    expect((await api("GET", `/organizations/${org}`, { token: expiredUser.token })).status).toBe(401);
  });
});

describe("organisation token", () => {
  it("is one per organisation, replaced on POST, acts as a service user, and cannot upload state", async () => {
    const org = await createOrg();
    const results = await Promise.all([1, 2, 3].map(() => api("POST", `/organizations/${org}/authentication-token`)));
    expect(results.every((r) => r.status === 201)).toBe(true);
    const working = [];
    for (const r of results) if ((await api("GET", "/account/details", { token: r.body.data.attributes.token })).status === 200) working.push(r);
    expect(working).toHaveLength(1);
    const token = working[0].body.data.attributes.token;
    const me = await api("GET", "/account/details", { token });
    expect(me.body.data.attributes["is-service-account"]).toBe(true);
    expect(me.body.data.relationships["authenticated-resource"].data).toEqual({ id: org, type: "organizations" });
    // The service user is stable across replacements.
    const next = await api("POST", `/organizations/${org}/authentication-token`);
    expect((await api("GET", "/account/details", { token: next.body.data.attributes.token })).body.data.id).toBe(me.body.data.id);
    const ws = await createWorkspace(org, {}, next.body.data.attributes.token);
    expect(ws.attributes.permissions["can-create-state-versions"]).toBe(false);
    expect(ws.attributes.permissions["can-update"]).toBe(true);
    expect((await api("GET", `/organizations/${org}/authentication-token`)).body.data.attributes.token).toBeNull();
    expect((await api("DELETE", `/organizations/${org}/authentication-token`)).status).toBe(204);
    expect((await api("GET", "/account/details", { token: next.body.data.attributes.token })).status).toBe(401);
    expect((await api("DELETE", `/organizations/${org}/authentication-token`)).status).toBe(404);
  });

  it("coexists with the audit-trails token: each type is created, read and deleted on its own", async () => {
    const org = await createOrg();
    const path = `/organizations/${org}/authentication-token`;
    const plain = await api("POST", path);
    expect(plain.status).toBe(201);
    const audit = await api("POST", `${path}?token=audit-trails`);
    expect(audit.status).toBe(201);
    const rows = await env.DB.prepare("SELECT id, kind FROM tokens WHERE id IN (?, ?) ORDER BY kind").bind(plain.body.data.id, audit.body.data.id).all();
    expect(rows.results).toEqual([
      { id: audit.body.data.id, kind: "audit-trails" },
      { id: plain.body.data.id, kind: "organization" },
    ]);
    // The audit-trails token did not revoke the ordinary one.
    expect((await api("GET", "/account/details", { token: plain.body.data.attributes.token })).status).toBe(200);
    expect((await api("GET", path)).body.data.id).toBe(plain.body.data.id);
    expect((await api("GET", `${path}?token=audit-trails`)).body.data.id).toBe(audit.body.data.id);
    // The audit-trails token reads audit trails only, which this service does not serve.
    expect((await api("GET", `/organizations/${org}/workspaces`, { token: audit.body.data.attributes.token })).status).toBe(401);
    // Replacing the ordinary token leaves the audit-trails token in place.
    const next = await api("POST", path);
    expect((await api("GET", `${path}?token=audit-trails`)).body.data.id).toBe(audit.body.data.id);
    // Deleting one type leaves the other.
    expect((await api("DELETE", `${path}?token=audit-trails`)).status).toBe(204);
    expect((await api("GET", `${path}?token=audit-trails`)).status).toBe(404);
    expect((await api("GET", "/account/details", { token: next.body.data.attributes.token })).status).toBe(200);
    expect((await api("POST", `${path}?token=audit-trails`)).status).toBe(201);
    expect((await api("DELETE", path)).status).toBe(204);
    expect((await api("GET", `${path}?token=audit-trails`)).status).toBe(200);
    expect((await api("GET", `${path}?token=bogus`)).status).toBe(400);
  });

  it("is managed only by owners (a member of another team gets 404)", async () => {
    const org = await createOrg();
    const t = await team(org, { "organization-access": { "manage-workspaces": true } });
    const member = await makeUser({ teams: [t.id] });
    expect((await api("POST", `/organizations/${org}/authentication-token`, { token: member.token })).status).toBe(404);
    const owner = await makeUser({ ownerOf: org });
    expect((await api("POST", `/organizations/${org}/authentication-token`, { token: owner.token })).status).toBe(201);
  });
});

describe("user tokens and users", () => {
  it("are only for yourself; a deleted token gets 401 at once", async () => {
    const user = await makeUser();
    const created = await api("POST", `/users/${user.id}/authentication-tokens`, { token: user.token, body: tokenBody({ description: "laptop" }) });
    expect(created.status).toBe(201);
    expect(created.body.data.attributes).toMatchObject({ description: "laptop", token: expect.stringMatching(/\.atlasv1\./) });
    expect((await api("GET", "/account/details", { token: created.body.data.attributes.token })).body.data.id).toBe(user.id);
    // Someone else may not (the site admin may: it issues first tokens, see test/api/security.access.test.ts).
    expect((await api("POST", `/users/${user.id}/authentication-tokens`, { token: (await makeUser()).token })).status).toBe(404);
    expect((await api("GET", `/authentication-tokens/${created.body.data.id}`)).status).toBe(404);
    const listed = await api("GET", `/users/${user.id}/authentication-tokens`, { token: user.token });
    expect(listed.body.data.map((r: { id: string }) => r.id)).toContain(created.body.data.id);
    expect((await api("GET", `/authentication-tokens/${created.body.data.id}`, { token: user.token })).body.data.attributes.token).toBeNull();
    expect((await api("DELETE", `/authentication-tokens/${created.body.data.id}`, { token: user.token })).status).toBe(204);
    expect((await api("GET", "/account/details", { token: created.body.data.attributes.token })).status).toBe(401);
  });

  it("records when a token was last used", async () => {
    const user = await makeUser();
    const created = await api("POST", `/users/${user.id}/authentication-tokens`, { token: user.token });
    expect(created.body.data.attributes["last-used-at"]).toBeNull();
    await api("GET", "/account/details", { token: created.body.data.attributes.token });
    let shown = null;
    for (let i = 0; i < 50 && !shown; i++) {
      const r = await api("GET", `/authentication-tokens/${created.body.data.id}`, { token: user.token });
      shown = r.body.data.attributes["last-used-at"];
      if (!shown) await new Promise((res) => setTimeout(res, 20));
    }
    expect(shown).toMatch(/Z$/);
  });

  it("site admins create users; a user changes its own username and email", async () => {
    const name = `u${crypto.randomUUID().slice(0, 8)}`;
    const res = await api("POST", "/admin/users", { body: { data: { type: "users", attributes: { username: name, email: `${name}@x.test` } } } });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ type: "users", attributes: { username: name, email: `${name}@x.test`, "is-site-admin": false } });
    expect((await api("POST", "/admin/users", { body: { data: { type: "users", attributes: { username: name, email: `b${name}@x.test` } } } })).status).toBe(
      422,
    );
    const user = await makeUser();
    expect(
      (await api("POST", "/admin/users", { token: user.token, body: { data: { type: "users", attributes: { username: "x1", email: "x1@x.test" } } } })).status,
    ).toBe(404);
    const renamed = `r${crypto.randomUUID().slice(0, 8)}`;
    const upd = await api("PATCH", "/account/update", {
      token: user.token,
      body: { data: { type: "users", attributes: { username: renamed, email: `${renamed}@x.test` } } },
    });
    expect(upd.status).toBe(200);
    const me = await api("GET", "/account/details", { token: user.token });
    // A new email waits for confirmation; the site admin confirms it.
    expect(me.body.data.attributes).toMatchObject({
      username: renamed,
      email: `${user.id}@example.com`,
      "unconfirmed-email": `${renamed}@x.test`,
      "two-factor": { enabled: false, verified: false },
    });
    expect((await api("POST", `/admin/users/${user.id}/actions/confirm-email`)).status).toBe(200);
    expect((await api("GET", "/account/details", { token: user.token })).body.data.attributes).toMatchObject({
      email: `${renamed}@x.test`,
      "unconfirmed-email": null,
    });
    expect(me.body.data.attributes["avatar-url"]).toMatch(/^https:\/\//);
    expect(
      (await api("PATCH", "/account/update", { token: user.token, body: { data: { type: "users", attributes: { email: "not-an-email" } } } })).status,
    ).toBe(422);
    expect((await api("PATCH", "/account/update", { token: user.token, body: { data: { type: "users", attributes: { username: name } } } })).status).toBe(422);
  });

  it("the site admin keeps its identity after renaming itself", async () => {
    const before = await api("GET", "/account/details");
    const name = `admin${crypto.randomUUID().slice(0, 6)}`;
    expect((await api("PATCH", "/account/update", { body: { data: { type: "users", attributes: { username: name } } } })).status).toBe(200);
    const after = await api("GET", "/account/details");
    expect(after.body.data).toMatchObject({ id: before.body.data.id, attributes: { username: name, "is-site-admin": true } });
    await api("PATCH", "/account/update", { body: { data: { type: "users", attributes: { username: before.body.data.attributes.username } } } });
  });
});
