// Organisation token TTL policies (GET/PATCH /organizations/:org/token-ttl-policies) and how they limit
// the organisation's tokens while its `max-ttl-enabled` is on.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createOrg, createWorkspace, makeOrgToken, makeOwner, makeTeam, makeUser } from "../fixtures";
import { api } from "../helpers";

const DEFAULT_MS = 63_113_904_000;
const DAY_MS = 86_400_000;
const TYPES = ["organization", "team", "user", "audit_trails"];

const path = (org: string) => `/organizations/${org}/token-ttl-policies`;
const update = (policies: { "token-type": string; "max-ttl-ms": unknown }[]) => ({
  data: { type: "organization-token-ttl-policies", attributes: { "token-ttl-policies": policies } },
});
const byType = (data: { attributes: { "token-type": string; "max-ttl-ms": number } }[]) =>
  Object.fromEntries(data.map((p) => [p.attributes["token-type"], p.attributes["max-ttl-ms"]]));

async function enforce(org: string, on: boolean): Promise<void> {
  const res = await api("PATCH", `/organizations/${org}`, { body: { data: { type: "organizations", attributes: { "max-ttl-enabled": on } } } });
  expect(res.status).toBe(200);
  expect(res.body.data.attributes["max-ttl-enabled"]).toBe(on);
}

async function team(org: string): Promise<string> {
  const res = await api("POST", `/organizations/${org}/teams`, {
    body: { data: { type: "teams", attributes: { name: `t${crypto.randomUUID().slice(0, 8)}` } } },
  });
  return res.body.data.id;
}

describe("token TTL policies: list and update", () => {
  it("lists the four token types with the two-year default, stable across reads", async () => {
    const org = await createOrg();
    const first = await api("GET", path(org));
    expect(first.status).toBe(200);
    expect(first.body.data.map((p: { attributes: { "token-type": string } }) => p.attributes["token-type"])).toEqual(TYPES);
    for (const p of first.body.data) {
      expect(p.type).toBe("organization-token-ttl-policies");
      expect(p.id).toMatch(/^ottp-/);
      expect(p.attributes["max-ttl-ms"]).toBe(DEFAULT_MS);
      expect(Date.parse(p.attributes["created-at"])).not.toBeNaN();
      expect(Date.parse(p.attributes["updated-at"])).not.toBeNaN();
    }
    expect(first.body.meta.pagination["total-count"]).toBe(4);
    const again = await api("GET", path(org));
    expect(again.body.data.map((p: { id: string }) => p.id)).toEqual(first.body.data.map((p: { id: string }) => p.id));
    // A new organisation shows max-ttl-enabled off.
    expect((await api("GET", `/organizations/${org}`)).body.data.attributes["max-ttl-enabled"]).toBe(false);
  });

  it("updates one type and answers all four; the others keep their values", async () => {
    const org = await createOrg();
    const res = await api("PATCH", path(org), { body: update([{ "token-type": "organization", "max-ttl-ms": DAY_MS }]) });
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(4);
    expect(byType(res.body.data)).toEqual({ organization: DAY_MS, team: DEFAULT_MS, user: DEFAULT_MS, audit_trails: DEFAULT_MS });
    expect(byType((await api("GET", path(org))).body.data)).toEqual(byType(res.body.data));
  });

  it("updates several types in one request (bulk), and again later", async () => {
    const org = await createOrg();
    const bulk = await api("PATCH", path(org), {
      body: update([
        { "token-type": "organization", "max-ttl-ms": 31_536_000_000 },
        { "token-type": "team", "max-ttl-ms": 15_768_000_000 },
        { "token-type": "user", "max-ttl-ms": 2_592_000_000 },
      ]),
    });
    expect(bulk.status).toBe(200);
    expect(byType(bulk.body.data)).toEqual({ organization: 31_536_000_000, team: 15_768_000_000, user: 2_592_000_000, audit_trails: DEFAULT_MS });
    const all = await api("PATCH", path(org), { body: update(TYPES.map((t) => ({ "token-type": t, "max-ttl-ms": 3_600_000 }))) });
    expect(byType(all.body.data)).toEqual(Object.fromEntries(TYPES.map((t) => [t, 3_600_000])));
    expect(byType((await api("GET", path(org))).body.data)).toEqual(byType(all.body.data));
  });

  it("rejects bad bodies with 422 and a pointer, changing nothing", async () => {
    const org = await createOrg();
    const cases: [unknown, string][] = [
      [update([]), "/data/attributes/token-ttl-policies"],
      [{ data: { type: "organization-token-ttl-policies", attributes: {} } }, "/data/attributes/token-ttl-policies"],
      [update([{ "token-type": "audit-trails", "max-ttl-ms": DAY_MS }]), "/data/attributes/token-ttl-policies/0/token-type"],
      [update([{ "token-type": "agent", "max-ttl-ms": DAY_MS }]), "/data/attributes/token-ttl-policies/0/token-type"],
      [update([{ "token-type": "team", "max-ttl-ms": 0 }]), "/data/attributes/token-ttl-policies/0/max-ttl-ms"],
      [update([{ "token-type": "team", "max-ttl-ms": 1.5 }]), "/data/attributes/token-ttl-policies/0/max-ttl-ms"],
      [update([{ "token-type": "team", "max-ttl-ms": "86400000" }]), "/data/attributes/token-ttl-policies/0/max-ttl-ms"],
      [
        update([
          { "token-type": "team", "max-ttl-ms": DAY_MS },
          { "token-type": "team", "max-ttl-ms": 2 * DAY_MS },
        ]),
        "/data/attributes/token-ttl-policies/1/token-type",
      ],
      [{ data: { type: "organizations", attributes: { "token-ttl-policies": [] } } }, "/data/type"],
    ];
    for (const [body, pointer] of cases) {
      const res = await api("PATCH", path(org), { body });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.errors[0].source.pointer).toBe(pointer);
    }
    expect(byType((await api("GET", path(org))).body.data)).toEqual(Object.fromEntries(TYPES.map((t) => [t, DEFAULT_MS])));
  });

  it("the organisation token reads the policies but may not widen what bounds its own lifetime", async () => {
    const org = await createOrg();
    const orgToken = await makeOrgToken(org);
    const owner = await makeUser({ ownerOf: org });
    expect((await api("PATCH", path(org), { token: owner.token, body: update([{ "token-type": "organization", "max-ttl-ms": DAY_MS }]) })).status).toBe(200);
    await enforce(org, true);
    const widen = await api("PATCH", path(org), { token: orgToken.token, body: update([{ "token-type": "organization", "max-ttl-ms": DEFAULT_MS }]) });
    expect(widen.status).toBe(403);
    expect(byType((await api("GET", path(org), { token: orgToken.token })).body.data).organization).toBe(DAY_MS);
    // Nor may it turn enforcement off; any other setting it may change.
    const off = await api("PATCH", `/organizations/${org}`, {
      token: orgToken.token,
      body: { data: { type: "organizations", attributes: { "max-ttl-enabled": false } } },
    });
    expect(off.status).toBe(403);
    expect((await api("GET", `/organizations/${org}`)).body.data.attributes["max-ttl-enabled"]).toBe(true);
    const same = await api("PATCH", `/organizations/${org}`, {
      token: orgToken.token,
      body: { data: { type: "organizations", attributes: { "max-ttl-enabled": true, email: "ops@example.com" } } },
    });
    expect(same.status).toBe(200);
    expect(same.body.data.attributes.email).toBe("ops@example.com");
    expect((await api("PATCH", path(org), { token: owner.token, body: update([{ "token-type": "organization", "max-ttl-ms": DEFAULT_MS }]) })).status).toBe(
      200,
    );
  });

  it("is for owners (the organisation token reads); members and outsiders get 404; an unknown organisation 404", async () => {
    const org = await createOrg();
    const owner = await makeUser({ ownerOf: org });
    const orgToken = await makeOrgToken(org);
    const manager = await makeTeam(org, { "manage-teams": true, "manage-organization-access": true, "manage-workspaces": true });
    const member = await makeUser({ teams: [manager.id] });
    const outsider = await makeUser({ ownerOf: await createOrg() });
    const body = update([{ "token-type": "team", "max-ttl-ms": DAY_MS }]);
    for (const token of [owner.token, orgToken.token]) expect((await api("GET", path(org), { token })).status).toBe(200);
    expect((await api("PATCH", path(org), { token: owner.token, body })).status).toBe(200);
    expect((await api("PATCH", path(org), { token: orgToken.token, body })).status).toBe(403);
    for (const token of [manager.token, member.token, outsider.token]) {
      expect((await api("GET", path(org), { token })).status).toBe(404);
      expect((await api("PATCH", path(org), { token, body })).status).toBe(404);
    }
    expect((await api("GET", path(org), { token: null })).status).toBe(401);
    expect((await api("GET", path("no-such-org-ttl"))).status).toBe(404);
    expect((await api("PATCH", path("no-such-org-ttl"), { body })).status).toBe(404);
  });

  it("follows an organisation rename and goes with the organisation's delete", async () => {
    const org = await createOrg();
    await api("PATCH", path(org), { body: update([{ "token-type": "user", "max-ttl-ms": DAY_MS }]) });
    const renamed = `${org}-r`;
    expect((await api("PATCH", `/organizations/${org}`, { body: { data: { type: "organizations", attributes: { name: renamed } } } })).status).toBe(200);
    expect(byType((await api("GET", path(renamed))).body.data).user).toBe(DAY_MS);
    const id = (await env.DB.prepare("SELECT external_id FROM organizations WHERE name = ?").bind(renamed).first<{ external_id: string }>())!.external_id;
    expect((await env.DB.prepare("SELECT count(*) AS n FROM token_ttl_policies WHERE organization_id = ?").bind(id).first<{ n: number }>())!.n).toBe(4);
    expect((await api("DELETE", `/organizations/${renamed}`)).status).toBe(204);
    expect((await env.DB.prepare("SELECT count(*) AS n FROM token_ttl_policies WHERE organization_id = ?").bind(id).first<{ n: number }>())!.n).toBe(0);
    // A new organisation of the same name starts from the defaults.
    await createOrg(undefined, renamed);
    expect(byType((await api("GET", path(renamed))).body.data).user).toBe(DEFAULT_MS);
  });
});

describe("token TTL policies: enforcement", () => {
  const expiry = (res: { body: { data: { attributes: { "created-at": string; "expired-at": string | null } } } }) => {
    const a = res.body.data.attributes;
    return a["expired-at"] === null ? null : Date.parse(a["expired-at"]) - Date.parse(a["created-at"]);
  };

  it("off (the default): policies do not limit new tokens", async () => {
    const org = await createOrg();
    const t = await team(org);
    await api("PATCH", path(org), { body: update(TYPES.map((type) => ({ "token-type": type, "max-ttl-ms": DAY_MS }))) });
    expect(expiry(await api("POST", `/organizations/${org}/authentication-token`, { body: { data: { attributes: { "expired-at": null } } } }))).toBeNull();
    expect(expiry(await api("POST", `/teams/${t}/authentication-token`))).toBeGreaterThan(700 * DAY_MS);
  });

  it("on: caps new organisation, audit-trails and team tokens at creation + the type's maximum", async () => {
    const org = await createOrg();
    const t = await team(org);
    await api("PATCH", path(org), {
      body: update([
        { "token-type": "organization", "max-ttl-ms": DAY_MS },
        { "token-type": "audit_trails", "max-ttl-ms": 2 * DAY_MS },
        { "token-type": "team", "max-ttl-ms": 3 * DAY_MS },
      ]),
    });
    await enforce(org, true);
    const never = { body: { data: { type: "authentication-tokens", attributes: { "expired-at": null } } } };
    const late = { body: { data: { type: "authentication-tokens", attributes: { "expired-at": new Date(Date.now() + 30 * DAY_MS).toISOString() } } } };
    const soon = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d{3}Z$/, ".000Z");

    // Omitted, null and later expiries become the cap; an earlier one stays as given.
    const orgToken = await api("POST", `/organizations/${org}/authentication-token`);
    expect(orgToken.status).toBe(201);
    expect(expiry(orgToken)).toBe(DAY_MS);
    expect(expiry(await api("POST", `/organizations/${org}/authentication-token`, never))).toBe(DAY_MS);
    expect(expiry(await api("POST", `/organizations/${org}/authentication-token`, late))).toBe(DAY_MS);
    const early = await api("POST", `/organizations/${org}/authentication-token`, { body: { data: { attributes: { "expired-at": soon } } } });
    expect(early.body.data.attributes["expired-at"]).toBe(soon);
    expect(expiry(await api("POST", `/organizations/${org}/authentication-token?token=audit-trails`, never))).toBe(2 * DAY_MS);
    expect(expiry(await api("POST", `/teams/${t}/authentication-token`, late))).toBe(3 * DAY_MS);
    expect(expiry(await api("POST", `/teams/${t}/authentication-tokens`, { body: { data: { attributes: { description: "ci" } } } }))).toBe(3 * DAY_MS);
    // What is stored is what is shown.
    const shown = await api("GET", `/organizations/${org}/authentication-token`);
    expect(shown.body.data.attributes["expired-at"]).toBe(early.body.data.attributes["expired-at"]);
    // A past expiry is still refused.
    const past = await api("POST", `/teams/${t}/authentication-token`, { body: { data: { attributes: { "expired-at": "2000-01-01T00:00:00Z" } } } });
    expect(past.status).toBe(422);

    // User tokens belong to no organisation: not capped at creation (the policy limits their use, below).
    const user = await makeUser({ ownerOf: org });
    const mine = await api("POST", `/users/${user.id}/authentication-tokens`, { token: user.token, body: never.body });
    expect(mine.status).toBe(201);
    expect(mine.body.data.attributes["expired-at"]).toBeNull();
  });

  it("on: an existing team or organisation token older than its maximum gets 401; off again, it works", async () => {
    const org = await createOrg();
    const t = await makeTeam(org, { "manage-workspaces": true });
    const o = await makeOrgToken(org);
    const twoDaysAgo = new Date(Date.now() - 2 * DAY_MS).toISOString();
    await env.DB.prepare("UPDATE tokens SET created_at = ? WHERE team_id = ? OR organization_id = (SELECT external_id FROM organizations WHERE name = ?)")
      .bind(twoDaysAgo, t.id, org)
      .run();
    await api("PATCH", path(org), { body: update([{ "token-type": "team", "max-ttl-ms": DAY_MS }]) });
    // Off: the policy does not apply yet.
    expect((await api("GET", `/organizations/${org}/workspaces`, { token: t.token })).status).toBe(200);
    await enforce(org, true);
    // The team token (two days old, maximum one day) stops working; the organisation token (default maximum) does not.
    expect((await api("GET", `/organizations/${org}/workspaces`, { token: t.token })).status).toBe(401);
    expect((await api("GET", "/account/details", { token: t.token })).status).toBe(401);
    expect((await api("GET", `/organizations/${org}/workspaces`, { token: o.token })).status).toBe(200);
    await api("PATCH", path(org), { body: update([{ "token-type": "organization", "max-ttl-ms": DAY_MS }]) });
    expect((await api("GET", `/organizations/${org}/workspaces`, { token: o.token })).status).toBe(401);
    // Raising the maximum, or switching enforcement off, lets them work again.
    await api("PATCH", path(org), { body: update([{ "token-type": "team", "max-ttl-ms": 3 * DAY_MS }]) });
    expect((await api("GET", `/organizations/${org}/workspaces`, { token: t.token })).status).toBe(200);
    await enforce(org, false);
    expect((await api("GET", `/organizations/${org}/workspaces`, { token: o.token })).status).toBe(200);
  });

  it("on: a user token older than the user maximum no longer reaches the organisation (other organisations unaffected)", async () => {
    const org = await createOrg();
    const other = await createOrg();
    const ws = await createWorkspace(org);
    const user = await makeUser({ ownerOf: org });
    await makeOwner(user.id, other);
    await env.DB.prepare("UPDATE tokens SET created_at = ? WHERE user_id = ? AND kind = 'user'")
      .bind(new Date(Date.now() - 2 * DAY_MS).toISOString(), user.id)
      .run();
    await api("PATCH", path(org), { body: update([{ "token-type": "user", "max-ttl-ms": DAY_MS }]) });
    await api("PATCH", path(other), { body: update([{ "token-type": "user", "max-ttl-ms": DAY_MS }]) });
    await enforce(org, true);
    for (const p of [`/organizations/${org}`, `/organizations/${org}/workspaces`, `/workspaces/${ws.id}`, path(org)]) {
      expect((await api("GET", p, { token: user.token })).status, p).toBe(401);
    }
    // Not an organisation's resource, and an organisation that does not enforce its policies.
    expect((await api("GET", "/account/details", { token: user.token })).status).toBe(200);
    expect((await api("GET", `/organizations/${other}`, { token: user.token })).status).toBe(200);
    // A new user token works again.
    const fresh = await api("POST", `/users/${user.id}/authentication-tokens`, { token: user.token });
    expect(fresh.status).toBe(201);
    expect((await api("GET", `/workspaces/${ws.id}`, { token: fresh.body.data.attributes.token })).status).toBe(200);
    await api("PATCH", path(org), { body: update([{ "token-type": "user", "max-ttl-ms": 3 * DAY_MS }]) });
    expect((await api("GET", `/organizations/${org}`, { token: user.token })).status).toBe(200);
  });
});
