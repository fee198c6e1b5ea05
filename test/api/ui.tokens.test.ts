// The tokens page (/app/settings/tokens): the signed-in user's tokens through the API's own services.
import { describe, expect, it } from "vitest";
import { createOrg, makeOrgToken, makeUser } from "../fixtures";
import { api } from "../helpers";
import { signIn, ui } from "../ui-client";

const tokenIdsIn = (html: string) => [...html.matchAll(/<tr data-token="([^"]+)"/g)].map((m) => m[1]);
const secretIn = (html: string) => /id="secret"[^>]*value="([^"]+)"/.exec(html)?.[1] ?? /value="([^"]+)"[^>]*id="secret"/.exec(html)?.[1];

describe("the tokens page", () => {
  it("creates a token whose secret is shown once, then lists it without the secret", async () => {
    const user = await makeUser();
    const cookie = await signIn(user.token);
    const created = await ui("POST", "/app/settings/tokens", { cookie, form: { description: "laptop", expires: "" } });
    expect(created.status).toBe(201);
    const secret = secretIn(created.text) ?? "";
    expect(secret).toMatch(/^[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9]{67}$/);
    // The secret works as an API token of the user.
    expect((await api("GET", "/account/details", { token: secret })).body.data.id).toBe(user.id);
    const list = await ui("GET", "/app/settings/tokens", { cookie });
    expect(list.status).toBe(200);
    expect(list.text).toContain("laptop");
    expect(list.text).not.toContain(secret);
    // The page lists what the API lists.
    const listed = await api("GET", `/users/${user.id}/authentication-tokens`, { token: user.token });
    expect(tokenIdsIn(list.text).sort()).toEqual(listed.body.data.map((t: { id: string }) => t.id).sort());
    const row = listed.body.data.find((t: { attributes: { description: string } }) => t.attributes.description === "laptop");
    expect(row.attributes["expired-at"]).not.toBeNull();
  });

  it("an expiry date and never-expiring tokens are created as the API creates them", async () => {
    const user = await makeUser();
    const cookie = await signIn(user.token);
    const day = new Date(Date.now() + 10 * 86_400_000).toISOString().slice(0, 10);
    expect((await ui("POST", "/app/settings/tokens", { cookie, form: { description: "dated", expires: day } })).status).toBe(201);
    expect((await ui("POST", "/app/settings/tokens", { cookie, form: { description: "forever", never: "on" } })).status).toBe(201);
    const listed = (await api("GET", `/users/${user.id}/authentication-tokens`, { token: user.token })).body.data as Array<{
      attributes: { description: string; "expired-at": string | null };
    }>;
    expect(listed.find((t) => t.attributes.description === "dated")?.attributes["expired-at"]).toBe(`${day}T00:00:00.000Z`);
    expect(listed.find((t) => t.attributes.description === "forever")?.attributes["expired-at"]).toBeNull();
  });

  it("a past expiry is refused next to the form with the API's reason (422), and nothing is created", async () => {
    const user = await makeUser();
    const cookie = await signIn(user.token);
    const res = await ui("POST", "/app/settings/tokens", { cookie, form: { description: "old", expires: "2001-01-01" } });
    expect(res.status).toBe(422);
    expect(res.text).toContain('id="create-errors"');
    expect(res.text).toContain("Expired at must be a date in the future");
    const long = await ui("POST", "/app/settings/tokens", { cookie, form: { description: "x".repeat(300) } });
    expect(long.status).toBe(422);
    expect(long.text).toContain("description:");
    const listed = await api("GET", `/users/${user.id}/authentication-tokens`, { token: user.token });
    expect(listed.body.data).toHaveLength(1);
  });

  it("revoking ends the token: the API refuses it afterwards", async () => {
    const user = await makeUser();
    const cookie = await signIn(user.token);
    const secret = secretIn((await ui("POST", "/app/settings/tokens", { cookie, form: { description: "to revoke" } })).text) ?? "";
    expect((await api("GET", "/account/details", { token: secret })).status).toBe(200);
    const listed = await api("GET", `/users/${user.id}/authentication-tokens`, { token: user.token });
    const id = listed.body.data.find((t: { attributes: { description: string } }) => t.attributes.description === "to revoke").id;
    const res = await ui("POST", `/app/settings/tokens/${id}/delete`, { cookie });
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe("/app/settings/tokens");
    expect((await api("GET", "/account/details", { token: secret })).status).toBe(401);
    expect(tokenIdsIn((await ui("GET", "/app/settings/tokens", { cookie })).text)).not.toContain(id);
  });

  it("another user's token cannot be revoked by a forged POST, nor one of yours by a cross-site one", async () => {
    const alice = await makeUser();
    const bob = await makeUser();
    const bobs = await api("GET", `/users/${bob.id}/authentication-tokens`, { token: bob.token });
    const bobTokenId = bobs.body.data[0].id;
    const cookie = await signIn(alice.token);
    const forged = await ui("POST", `/app/settings/tokens/${bobTokenId}/delete`, { cookie });
    expect(forged.status).toBe(404);
    expect((await api("GET", "/account/details", { token: bob.token })).status).toBe(200);
    const mine = (await api("GET", `/users/${alice.id}/authentication-tokens`, { token: alice.token })).body.data[0].id;
    const crossSite = await ui("POST", `/app/settings/tokens/${mine}/delete`, { cookie, origin: "https://evil.example" });
    expect(crossSite.status).toBe(403);
    expect((await api("GET", "/account/details", { token: alice.token })).status).toBe(200);
  });

  it("an organisation token's session is told tokens belong to users, and cannot create one", async () => {
    const org = await createOrg();
    const cookie = await signIn((await makeOrgToken(org)).token);
    const page = await ui("GET", "/app/settings/tokens", { cookie });
    expect(page.status).toBe(200);
    expect(page.text).toContain('id="no-user"');
    expect(page.text).not.toContain('id="create-token"');
    const forged = await ui("POST", "/app/settings/tokens", { cookie, form: { description: "sneaky" } });
    expect(forged.status).toBe(404);
  });

  it("is linked from every signed-in page's header", async () => {
    const cookie = await signIn((await makeUser()).token);
    expect((await ui("GET", "/app", { cookie })).text).toContain('href="/app/settings/tokens"');
  });
});
