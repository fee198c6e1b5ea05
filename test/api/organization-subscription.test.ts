// The organisation's `subscription` relationship links to GET /organizations/:name/subscription (HCP Terraform's
// "Show Subscription For Organization"), which answers the organisation's plan; the self-hosted edition has no
// plans, so its organisations carry no such link.
import { describe, expect, it } from "vitest";
import { api } from "../helpers";
import { createOrg } from "../fixtures";
import { makeTeam, makeUser } from "../fixtures";

const follow = (related: string, token: string) => api("GET", `http://localhost${related}`, { token, edition: "hosted" });

describe("organisation subscription link", () => {
  it("leads an owner to the organisation's subscription (Free until a plan is assigned), 200", async () => {
    const org = await createOrg();
    const owner = await makeUser({ ownerOf: org });
    const shown = await api("GET", `/organizations/${org}`, { token: owner.token, edition: "hosted" });
    expect(shown.status).toBe(200);
    const related = shown.body.data.relationships.subscription.links.related as string;
    expect(related).toBe(`/api/v2/organizations/${org}/subscription`);

    const free = await follow(related, owner.token);
    expect(free.status).toBe(200);
    expect(free.body.data).toMatchObject({
      type: "subscriptions",
      attributes: { "is-active": true, "is-public-free-tier": true },
      relationships: { organization: { data: { id: org, type: "organizations" } } },
    });
    const fsId = free.body.data.relationships["feature-set"].data.id;
    expect(free.body.included).toEqual([expect.objectContaining({ id: fsId, type: "feature-sets", attributes: expect.objectContaining({ name: "Free" }) })]);
    // Read twice, the same subscription.
    expect((await follow(related, owner.token)).body.data.id).toBe(free.body.data.id);

    // The site admin assigns a plan: the link now leads to that subscription.
    const business = (await api("GET", "/admin/feature-sets?q=Business", { edition: "hosted" })).body.data[0].id;
    const assigned = await api("POST", `/admin/organizations/${org}/subscription`, {
      edition: "hosted",
      body: {
        data: { type: "subscription", attributes: { "runs-ceiling": 3 }, relationships: { "feature-set": { data: { type: "feature-sets", id: business } } } },
      },
    });
    expect(assigned.status).toBe(201);
    const now = await follow(related, owner.token);
    expect(now.status).toBe(200);
    expect(now.body.data).toMatchObject({
      id: assigned.body.data.id,
      attributes: { "runs-ceiling": 3, "is-public-free-tier": false },
      relationships: { "feature-set": { data: { id: business, type: "feature-sets" } } },
    });
  });

  it("is readable by members, not by outsiders (404)", async () => {
    const org = await createOrg();
    const member = await makeTeam(org);
    const outsider = await makeUser({ ownerOf: await createOrg() });
    const path = `/api/v2/organizations/${org}/subscription`;
    expect((await follow(path, member.token)).status).toBe(200);
    const refused = await follow(path, outsider.token);
    expect(refused.status).toBe(404);
    expect(refused.body.errors[0].status).toBe("404");
    expect((await follow("/api/v2/organizations/no-such-org/subscription", outsider.token)).status).toBe(404);
  });

  it("is absent in the self-hosted edition, which has no plans (the route answers 404)", async () => {
    const org = await createOrg();
    const owner = await makeUser({ ownerOf: org });
    const shown = await api("GET", `/organizations/${org}`, { token: owner.token });
    expect(shown.status).toBe(200);
    expect(shown.body.data.relationships.subscription).toBeUndefined();
    expect((await api("GET", `/organizations/${org}/subscription`, { token: owner.token })).status).toBe(404);
  });
});
