// Accounts in the browser: a newcomer creates an organisation at /app (as POST /organizations would), and the site
// admin's user pages at /app/admin/users (list, search, a user's page, and what the admin users API does).
import { Secret, TOTP } from "otpauth";
import { describe, expect, it } from "vitest";
import { createOrg, makeTeam, makeUser } from "../fixtures";
import { ADMIN, api, uniqueName } from "../helpers";
import { signIn, ui } from "../ui-client";

const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");

describe("creating an organisation from the browser", () => {
  it("a newcomer creates one at /app and owns it; the API's rules refuse a bad or taken name", async () => {
    const user = await makeUser();
    const cookie = await signIn(user.token);
    const home = await ui("GET", "/app", { cookie });
    expect(home.text).toContain("You belong to no organisation");
    expect(home.text).toContain('action="/app/organizations"');
    const name = uniqueName("mine");
    const made = await ui("POST", "/app/organizations", { cookie, form: { name, email: "me@example.com" } });
    expect(made.status).toBe(303);
    expect(made.headers.get("Location")).toBe(`/app/${name}/workspaces`);
    const org = await api("GET", `/organizations/${name}`, { token: user.token });
    expect(org.status).toBe(200);
    expect(org.body.data.attributes.email).toBe("me@example.com");
    expect(org.body.data.attributes.permissions["can-destroy"]).toBe(true);
    expect((await ui("GET", "/app", { cookie })).text).toContain(`href="/app/${name}/workspaces"`);

    for (const [form, status] of <Array<[Record<string, string>, number]>>[
      [{ name: "bad name!", email: "me@example.com" }, 422],
      [{ name, email: "me@example.com" }, 422],
      [{ name: uniqueName("x"), email: "nobody" }, 422],
      [{ name: "x".repeat(500), email: "me@example.com" }, 422],
    ]) {
      const apiRefusal = await api("POST", "/organizations", { token: user.token, body: { data: { type: "organizations", attributes: form } } });
      expect(apiRefusal.status).toBe(status);
      const refused = await ui("POST", "/app/organizations", { cookie, form });
      expect(refused.status, JSON.stringify(form)).toBe(status);
      expect(refused.text).toContain('id="new-organization-errors"');
      expect(refused.text).toContain(escapeHtml(apiRefusal.body.errors[0].detail));
    }
  });

  it("is the API's to allow: a team token's session is refused, and a forged form changes nothing", async () => {
    const org = await createOrg();
    const team = await makeTeam(org);
    const cookie = await signIn(team.token);
    expect((await ui("GET", "/app", { cookie })).text).not.toContain('action="/app/organizations"');
    const name = uniqueName("nope");
    expect((await ui("POST", "/app/organizations", { cookie, form: { name, email: "t@example.com" } })).status).toBe(404);
    const user = await makeUser();
    const forged = await ui("POST", "/app/organizations", {
      cookie: await signIn(user.token),
      form: { name, email: "t@example.com" },
      origin: "https://evil.example",
    });
    expect(forged.status).toBe(403);
    expect((await api("GET", `/organizations/${name}`)).status).toBe(404);
  });
});

describe("the site admin's users", () => {
  it("lists, searches and shows users; creates one and confirms an e-mail change as the API does", async () => {
    const cookie = await signIn(ADMIN);
    const someone = await makeUser();
    const list = await ui("GET", "/app/admin/users?page[size]=5", { cookie });
    expect(list.status).toBe(200);
    expect(list.text).toMatch(/<p id="total">\d+ users<\/p>/);
    const found = await ui("GET", `/app/admin/users?q=${encodeURIComponent(someone.id)}`, { cookie });
    expect(found.text).toContain('<p id="total">1 users</p>');
    expect(found.text).toContain(`href="/app/admin/users/${someone.id}"`);
    expect((await ui("GET", "/app/admin/users?q=%25%25nobody%25", { cookie })).text).toContain('<p id="total">0 users</p>');
    const page = await ui("GET", `/app/admin/users/${someone.id}`, { cookie });
    expect(page.status).toBe(200);
    expect(page.text).toContain(`${someone.id}@example.com`);
    expect((await ui("GET", "/app/admin/users/user-nobody", { cookie })).status).toBe(404);

    const username = uniqueName("made");
    const made = await ui("POST", "/app/admin/users", { cookie, form: { username, email: `${username}@example.com` } });
    expect(made.status).toBe(303);
    const id = /\/app\/admin\/users\/(user-[A-Za-z0-9]+)$/.exec(made.headers.get("Location") ?? "")![1]!;
    expect((await api("GET", `/users/${id}`)).body.data.attributes).toMatchObject({ username, email: `${username}@example.com`, "is-site-admin": false });
    const taken = await ui("POST", "/app/admin/users", { cookie, form: { username, email: `${uniqueName("o")}@example.com` } });
    expect(taken.status).toBe(422);
    expect(taken.text).toContain("Username has already been taken");

    const email = `${uniqueName("new")}@example.com`;
    expect((await api("PATCH", "/account/update", { token: someone.token, body: { data: { type: "users", attributes: { email } } } })).status).toBe(200);
    expect((await ui("GET", `/app/admin/users/${someone.id}`, { cookie })).text).toContain(`/app/admin/users/${someone.id}/confirm-email`);
    const confirmed = await ui("POST", `/app/admin/users/${someone.id}/confirm-email`, { cookie });
    expect(confirmed.status).toBe(303);
    expect((await api("GET", `/users/${someone.id}`)).body.data.attributes.email).toBe(email);
    // Nothing left to confirm: the API's refusal, on the user's page.
    const again = await ui("POST", `/app/admin/users/${someone.id}/confirm-email`, { cookie });
    expect(again.status).toBe(422);
    expect(again.text).toContain("The user has no email change to confirm");
  });

  it("grants and revokes site admin (the page and the API); never one's own, never the bootstrap admin's", async () => {
    const cookie = await signIn(ADMIN);
    const user = await makeUser();
    expect((await ui("GET", `/app/admin/users/${user.id}`, { cookie })).text).toContain(`/app/admin/users/${user.id}/grant-admin`);
    expect((await ui("POST", `/app/admin/users/${user.id}/grant-admin`, { cookie })).status).toBe(303);
    expect((await api("GET", `/users/${user.id}`)).body.data.attributes["is-site-admin"]).toBe(true);
    expect((await ui("GET", "/app/admin/users", { cookie: await signIn(user.token) })).status).toBe(200);
    const bootstrap = (await api("GET", "/account/details")).body.data.id as string;
    const own = await api("POST", `/admin/users/${user.id}/actions/revoke_admin`, { token: user.token });
    expect(own.status).toBe(422);
    expect(own.body.errors[0].detail).toBe("You cannot revoke your own site admin rights");
    const operator = await api("POST", `/admin/users/${bootstrap}/actions/revoke_admin`, { token: user.token });
    expect(operator.status).toBe(422);
    expect(operator.body.errors[0].detail).toContain("bootstrap site admin");
    const refusedPage = await ui("POST", `/app/admin/users/${bootstrap}/revoke-admin`, { cookie: await signIn(user.token) });
    expect(refusedPage.status).toBe(422);
    expect(refusedPage.text).toContain("bootstrap site admin");
    const revoked = await api("POST", `/admin/users/${user.id}/actions/revoke_admin`, {});
    expect(revoked.status).toBe(200);
    expect(revoked.body.data.attributes["is-site-admin"]).toBe(false);
    // No longer a site admin: its next request is refused the admin pages.
    expect((await ui("GET", "/app/admin/users", { cookie: await signIn(user.token) })).status).toBe(404);
    expect((await api("POST", `/admin/users/${user.id}/actions/grant_admin`, { token: user.token })).status).toBe(404);
  });

  it("turns off a user's two-factor authentication (the page and the API)", async () => {
    const user = await makeUser();
    const session = await signIn(user.token);
    for (let round = 0; round < 2; round++) {
      await ui("POST", "/app/settings/two-factor/enrol", { cookie: session });
      const secret = /<code id="totp-secret">([A-Z2-7]+)<\/code>/.exec((await ui("GET", "/app/settings/two-factor", { cookie: session })).text)![1]!;
      const code = new TOTP({ secret: Secret.fromBase32(secret) }).generate();
      expect((await ui("POST", "/app/settings/two-factor/confirm", { cookie: session, form: { code } })).status).toBe(200);
      expect((await api("GET", `/users/${user.id}`)).body.data.attributes["two-factor"]).toEqual({ enabled: true, verified: true });
      if (round === 0) {
        const cookie = await signIn(ADMIN);
        expect((await ui("GET", `/app/admin/users/${user.id}`, { cookie })).text).toContain('id="user-two-factor">on<');
        expect((await ui("POST", `/app/admin/users/${user.id}/disable-two-factor`, { cookie })).status).toBe(303);
      } else {
        const off = await api("POST", `/admin/users/${user.id}/actions/disable_two_factor`, {});
        expect(off.status).toBe(200);
        expect(off.body.data.attributes["two-factor"]).toEqual({ enabled: false, verified: false });
      }
      expect((await api("GET", `/users/${user.id}`)).body.data.attributes["two-factor"]).toEqual({ enabled: false, verified: false });
    }
  });

  it("are the site admin's alone (404, as the rest of /app/admin), and a forged form is refused", async () => {
    const plain = await makeUser();
    const cookie = await signIn(plain.token);
    const target = await makeUser();
    for (const path of ["/app/admin/users", `/app/admin/users/${target.id}`]) expect((await ui("GET", path, { cookie })).status, path).toBe(404);
    const username = uniqueName("forged");
    expect((await ui("POST", "/app/admin/users", { cookie, form: { username, email: `${username}@example.com` } })).status).toBe(404);
    expect((await ui("POST", `/app/admin/users/${target.id}/reset-link`, { cookie })).status).toBe(404);
    expect((await ui("POST", `/app/admin/users/${target.id}/disable-two-factor`, { cookie })).status).toBe(404);
    expect((await ui("POST", `/app/admin/users/${target.id}/grant-admin`, { cookie })).status).toBe(404);
    expect((await api("GET", `/users/${target.id}`)).body.data.attributes["is-site-admin"]).toBe(false);
    const admin = await signIn(ADMIN);
    const forged = await ui("POST", "/app/admin/users", {
      cookie: admin,
      form: { username, email: `${username}@example.com` },
      origin: "https://evil.example",
    });
    expect(forged.status).toBe(403);
    expect((await ui("GET", `/app/admin/users?q=${username}`, { cookie: admin })).text).toContain('<p id="total">0 users</p>');
  });
});
