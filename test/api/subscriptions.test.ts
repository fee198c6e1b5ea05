// HCP Terraform's plans: the hosted edition's admin API lists feature sets and assigns one to an
// organisation, whose entitlement set and plan-gated permissions then follow it. The self-hosted edition has
// no plans: the endpoints answer 404 and entitlements are the installation's.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createOrg, makeTeam, makeUser } from "../fixtures";
import { api } from "../helpers";

const hosted = { edition: "hosted" } as const;

async function planId(name: string): Promise<string> {
  const res = await api("GET", `/admin/feature-sets?q=${encodeURIComponent(name)}`, hosted);
  const plan = res.body.data.find((f: { attributes: { name: string } }) => f.attributes.name === name);
  if (!plan) throw new Error(`no plan named ${name}`);
  return plan.id;
}

/** The request go-tfe's subscription updater sends (type "subscription", iso8601 times, the feature set as a relationship). */
function assignment(featureSet: string, attributes: Record<string, unknown> = {}) {
  return { data: { type: "subscription", attributes, relationships: { "feature-set": { data: { type: "feature-sets", id: featureSet } } } } };
}

async function entitlements(org: string, opts: { token?: string; edition?: "hosted" | "self-hosted" } = hosted) {
  const res = await api("GET", `/organizations/${org}/entitlement-set`, opts);
  expect(res.status).toBe(200);
  expect(res.body.data.type).toBe("entitlement-sets");
  return res.body.data.attributes as Record<string, boolean | number | null>;
}

describe("feature sets (hosted edition)", () => {
  it("lists the plans, paged, each with its features and limits", async () => {
    const res = await api("GET", "/admin/feature-sets", hosted);
    expect(res.status).toBe(200);
    const names = res.body.data.map((f: { attributes: { name: string } }) => f.attributes.name);
    expect(names).toEqual(["Free", "Essentials", "Standard", "Premium", "Standard (entitlement)", "Business"]);
    expect(res.body.meta.pagination["total-count"]).toBe(6);
    const free = res.body.data[0];
    expect(free.id).toMatch(/^fs-[A-Za-z0-9]{16}$/);
    expect(free.type).toBe("feature-sets");
    expect(free.attributes).toMatchObject({
      identifier: "free_standard",
      "is-free-tier": true,
      "default-runs-ceiling": 1,
      "policy-set-limit": 1,
      "run-tasks": true,
      teams: false,
      "audit-logging": false,
    });
    const page2 = await api("GET", "/admin/feature-sets?page%5Bnumber%5D=2&page%5Bsize%5D=4", hosted);
    expect(page2.body.data.map((f: { attributes: { name: string } }) => f.attributes.name)).toEqual(["Standard (entitlement)", "Business"]);
    expect(page2.body.meta.pagination).toMatchObject({ "current-page": 2, "total-pages": 2, "total-count": 6 });
  });

  it("finds plans by name, case-insensitively (go-tfe takes the first match)", async () => {
    const names = async (q: string) =>
      (await api("GET", `/admin/feature-sets?q=${encodeURIComponent(q)}`, hosted)).body.data.map((f: { attributes: { name: string } }) => f.attributes.name);
    expect(await names("Business")).toEqual(["Business"]);
    expect(await names("Free")).toEqual(["Free"]);
    expect(await names("Standard (entitlement)")).toEqual(["Standard (entitlement)"]);
    expect(await names("standard")).toEqual(["Standard", "Standard (entitlement)"]);
    expect(await names("Platinum")).toEqual([]);
  });

  it("is for the site admin only", async () => {
    const org = await createOrg();
    const owner = await makeUser({ ownerOf: org });
    expect((await api("GET", "/admin/feature-sets", { ...hosted, token: owner.token })).status).toBe(404);
    const res = await api("POST", `/admin/organizations/${org}/subscription`, { ...hosted, token: owner.token, body: assignment(await planId("Business")) });
    expect(res.status).toBe(404);
    expect((await entitlements(org))["audit-logging"]).toBe(false);
  });
});

describe("subscriptions (hosted edition)", () => {
  it("puts a new organisation on the Free plan, whose entitlements it shows", async () => {
    const org = await createOrg();
    const e = await entitlements(org);
    expect(e).toMatchObject({
      "state-storage": true,
      "run-tasks": true,
      "policy-enforcement": true,
      sso: true,
      teams: false,
      agents: false,
      "audit-logging": false,
      operations: true,
      "user-limit": null,
    });
  });

  it("assigns a plan: the subscription answers 201 and the organisation's entitlements follow it", async () => {
    const org = await createOrg();
    const business = await planId("Business");
    const start = "2026-01-01T00:00:00Z";
    const res = await api("POST", `/admin/organizations/${org}/subscription`, {
      ...hosted,
      body: assignment(business, {
        "runs-ceiling": 10,
        "agents-ceiling": 10,
        "contract-start-at": start,
        "end-at": "2027-01-01T00:00:00Z",
        "contract-user-limit": 1000,
        "contract-apply-limit": 5000,
      }),
    });
    expect(res.status).toBe(201);
    expect(res.body.data.id).toMatch(/^sub-/);
    expect(res.body.data.type).toBe("subscriptions");
    expect(res.body.data.attributes).toMatchObject({
      "runs-ceiling": 10,
      "agents-ceiling": 10,
      "contract-start-at": "2026-01-01T00:00:00.000Z",
      "end-at": "2027-01-01T00:00:00.000Z",
      "contract-user-limit": 1000,
      "contract-apply-limit": 5000,
      "contract-managed-resources-limit": null,
      "is-active": true,
    });
    expect(res.body.data.relationships["feature-set"].data).toEqual({ id: business, type: "feature-sets" });
    expect(res.body.data.relationships.organization.data).toEqual({ id: org, type: "organizations" });
    expect(res.body.included).toEqual([expect.objectContaining({ id: business, type: "feature-sets" })]);

    const e = await entitlements(org);
    expect(e).toMatchObject({ teams: true, agents: true, "audit-logging": true, "private-run-tasks": true, sentinel: true, "user-limit": 1000 });
    // Remote operations follow the operator's agents (AGENT_TOKEN, set in the tests' Worker), whatever the plan.
    expect(e.operations).toBe(true);
  });

  it("gives the contract plan go-tfe's Standard (entitlement) set", async () => {
    const org = await createOrg();
    const res = await api("POST", `/admin/organizations/${org}/subscription`, {
      ...hosted,
      body: assignment(await planId("Standard (entitlement)"), { "runs-ceiling": 1, "contract-managed-resources-limit": 1000 }),
    });
    expect(res.status).toBe(201);
    expect(res.body.data.attributes["contract-managed-resources-limit"]).toBe(1000);
    expect(await entitlements(org)).toMatchObject({
      agents: true,
      "audit-logging": true,
      "cost-estimation": true,
      "private-module-registry": true,
      sso: true,
      sentinel: true,
      "state-storage": true,
      teams: true,
      "vcs-integrations": true,
      "waypoint-actions": false,
      "waypoint-templates-and-addons": true,
      infragraph: true,
      "infragraph-with-nrtu": false,
    });
  });

  it("gates the no-code and auditing permissions by plan, for owners only, in every representation", async () => {
    const org = await createOrg();
    const team = await makeTeam(org);
    const member = await makeUser({ teams: [team.id] });
    const perms = async (token?: string) => (await api("GET", `/organizations/${org}`, { ...hosted, token })).body.data.attributes.permissions;
    expect((await perms())["can-manage-no-code-modules"]).toBe(false);
    await api("POST", `/admin/organizations/${org}/subscription`, { ...hosted, body: assignment(await planId("Business")) });
    expect(await perms()).toMatchObject({
      "can-deploy-no-code-modules": true,
      "can-manage-no-code-modules": true,
      "can-manage-auditing": true,
      "can-destroy": true,
    });
    expect(await perms(member.token)).toMatchObject({ "can-manage-no-code-modules": false, "can-manage-auditing": false });
    // The list shows the same permissions as the read.
    const listed = await api("GET", `/organizations?q=${org}`, hosted);
    expect(listed.body.data[0].attributes.permissions).toEqual(await perms());
  });

  it("replaces the subscription on a new assignment", async () => {
    const org = await createOrg();
    const first = await api("POST", `/admin/organizations/${org}/subscription`, { ...hosted, body: assignment(await planId("Business")) });
    const second = await api("POST", `/admin/organizations/${org}/subscription`, { ...hosted, body: assignment(await planId("Free"), { "runs-ceiling": 1 }) });
    expect(second.status).toBe(201);
    // A new subscription (its own id) takes the old one's place.
    const ids = [first.body.data.id, second.body.data.id];
    expect(ids).toEqual([expect.stringMatching(/^sub-/), expect.stringMatching(/^sub-/)]);
    expect(new Set(ids).size).toBe(2);
    const stored = await env.DB.prepare("SELECT json_extract(subscription, '$.id') AS id FROM organizations WHERE name = ?").bind(org).first<{ id: string }>();
    expect(stored?.id).toBe(second.body.data.id);
    expect(second.body.data.attributes["agents-ceiling"]).toBe(0);
    expect(await entitlements(org)).toMatchObject({ teams: false, "audit-logging": false, "user-limit": null });
  });

  it("forgets the plan with the organisation", async () => {
    const org = await createOrg();
    await api("POST", `/admin/organizations/${org}/subscription`, { ...hosted, body: assignment(await planId("Business")) });
    expect((await api("DELETE", `/organizations/${org}`, hosted)).status).toBe(204);
    await createOrg(undefined, org);
    expect((await entitlements(org))["audit-logging"]).toBe(false);
  });

  it("validates the assignment", async () => {
    const org = await createOrg();
    const post = (body: unknown, name = org) => api("POST", `/admin/organizations/${name}/subscription`, { ...hosted, body });
    const unknown = await post(assignment("fs-NoSuchPlan00000"));
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors[0]).toMatchObject({ detail: "Feature set not found", source: { pointer: "/data/relationships/feature-set/data/id" } });
    const missing = await post({ data: { type: "subscription", attributes: { "runs-ceiling": 1 } } });
    expect(missing.status).toBe(422);
    expect(missing.body.errors[0].source.pointer).toBe("/data/relationships");
    const business = await planId("Business");
    const negative = await post(assignment(business, { "runs-ceiling": -1 }));
    expect(negative.status).toBe(422);
    expect(negative.body.errors[0].source.pointer).toBe("/data/attributes/runs-ceiling");
    const backwards = await post(assignment(business, { "contract-start-at": "2026-02-01T00:00:00Z", "end-at": "2026-01-01T00:00:00Z" }));
    expect(backwards.status).toBe(422);
    expect(backwards.body.errors[0].source.pointer).toBe("/data/attributes/end-at");
    expect((await post({ data: { type: "organizations", relationships: assignment(business).data.relationships } })).status).toBe(422);
    expect((await post(assignment(business), "no-such-org-here")).status).toBe(404);
    // None of these changed the plan.
    expect((await entitlements(org))["audit-logging"]).toBe(false);
  });
});

describe("the self-hosted edition has no plans", () => {
  it("answers 404 to the admin plan endpoints, even for the site admin", async () => {
    const org = await createOrg();
    expect((await api("GET", "/admin/feature-sets")).status).toBe(404);
    const business = await planId("Business");
    expect((await api("POST", `/admin/organizations/${org}/subscription`, { body: assignment(business) })).status).toBe(404);
  });

  it("shows the installation's entitlements, whatever plan the hosted edition recorded", async () => {
    const org = await createOrg();
    await api("POST", `/admin/organizations/${org}/subscription`, { ...hosted, body: assignment(await planId("Business")) });
    const e = await entitlements(org, {});
    expect(e).toMatchObject({
      "state-storage": true,
      teams: true,
      agents: true,
      operations: true,
      "audit-logging": false,
      sentinel: false,
      "user-limit": null,
    });
    const perms = (await api("GET", `/organizations/${org}`)).body.data.attributes.permissions;
    expect(perms).toMatchObject({ "can-destroy": true, "can-manage-no-code-modules": false, "can-manage-auditing": false });
  });
});
