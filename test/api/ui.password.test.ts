// People sign in as themselves: password sign-in, the lock-out, the links that set a password (an invitation's and a
// site admin's reset link), and password sessions, through the Worker as a browser would.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { hashPassword } from "../../src/auth/password";
import { recordFailure } from "../../src/passwords/passwords.d1";
import { createOrg, makeTeam, makeUser, organizationId } from "../fixtures";
import { ADMIN, api, uniqueName } from "../helpers";

// Not localhost: there every client shares one address key; here each test names its own client address.
const ORIGIN = "https://pw.example.com";
let addresses = 0;
const newAddress = () => `198.51.100.${++addresses}`;

async function ui(
  method: string,
  path: string,
  opts: { cookie?: string; form?: Record<string, string>; ip?: string; origin?: string } = {},
): Promise<{ status: number; headers: Headers; text: string }> {
  const headers: Record<string, string> = { "CF-Connecting-IP": opts.ip ?? "203.0.113.1" };
  if (opts.cookie) headers.Cookie = opts.cookie;
  let body: string | undefined;
  if (opts.form) {
    body = new URLSearchParams(opts.form).toString();
    headers["Content-Type"] = "application/x-www-form-urlencoded";
  }
  if (method !== "GET") headers.Origin = opts.origin ?? ORIGIN;
  const res = await exports.default.fetch(new Request(`${ORIGIN}${path}`, { method, headers, body, redirect: "manual" }));
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const cookieOf = (res: { headers: Headers }): string | null => {
  const m = /ws_session=([A-Za-z0-9]+)/.exec(res.headers.get("Set-Cookie") ?? "");
  return m ? `ws_session=${m[1]}` : null;
};

async function tokenSession(token: string): Promise<string> {
  const res = await ui("POST", "/app/session", { form: { token } });
  expect(res.status).toBe(303);
  return cookieOf(res)!;
}

function passwordSignIn(login: string, password: string, ip = newAddress(), next?: string) {
  return ui("POST", "/app/session/password", { form: { username: login, password, ...(next ? { next } : {}) }, ip });
}

/** The link a page just showed (`#new-link`), as a path. */
function linkIn(html: string): string {
  const m = /<code id="new-link">https:\/\/pw\.example\.com(\/app\/password\/[A-Za-z0-9]+)<\/code>/.exec(html);
  if (!m) throw new Error(`no link shown: ${html.slice(0, 2000)}`);
  return m[1];
}

let adminCookie: string | null = null;
const admin = async () => (adminCookie ??= await tokenSession(ADMIN));

/** A reset link of `userId`, made by the site admin through its page. */
async function resetLinkOf(userId: string): Promise<string> {
  const res = await ui("POST", `/app/admin/users/${userId}/reset-link`, { cookie: await admin() });
  expect(res.status).toBe(200);
  return linkIn(res.text);
}

/** A user with a password set through a reset link; its username and e-mail. */
async function personWithPassword(password: string, opts: { ownerOf?: string } = {}) {
  const user = await makeUser(opts);
  const link = await resetLinkOf(user.id);
  const set = await ui("POST", link, { form: { password, password_confirmation: password } });
  expect(set.status).toBe(303);
  const me = await api("GET", "/account/details", { token: user.token });
  return { ...user, username: me.body.data.attributes.username as string, email: me.body.data.attributes.email as string };
}

const storedHash = async (userId: string) =>
  (await env.DB.prepare("SELECT password_hash FROM users WHERE id = ?").bind(userId).first<{ password_hash: string | null }>())?.password_hash ?? null;

/** `count` failed sign-ins of `key` (`user:<id>` or `ip:<address>`) recorded `minutes` ago. */
const failedAgo = (key: string, count: number, minutes: number) =>
  recordFailure(env.DB, Array(count).fill(key), new Date(Date.now() - minutes * 60_000).toISOString(), "2000-01-01T00:00:00.000Z");

describe("password sign-in", () => {
  it("signs in by username and by e-mail in any case, as the user itself", async () => {
    const org = await createOrg();
    const p = await personWithPassword("first password!", { ownerOf: org });
    for (const login of [p.username, p.email.toUpperCase(), ` ${p.username.toUpperCase()} `]) {
      const res = await passwordSignIn(login, "first password!");
      expect(res.status).toBe(303);
      expect(res.headers.get("Location")).toBe("/app");
      const cookie = cookieOf(res)!;
      expect(res.headers.get("Set-Cookie")).toMatch(/HttpOnly.*|SameSite=Strict/);
      // The session acts as that user: its organisations, and an owner's page of workspaces.
      const home = await ui("GET", "/app", { cookie });
      expect(home.status).toBe(200);
      expect(home.text).toContain(p.username);
      expect(home.text).toContain(`/app/${org}/workspaces`);
      expect((await ui("GET", `/app/${org}/workspaces`, { cookie })).status).toBe(200);
    }
  });

  it("gives an unknown login, a user without a password and a wrong password the same answer", async () => {
    const p = await personWithPassword("right password");
    const bare = await makeUser();
    const bareName = (await api("GET", "/account/details", { token: bare.token })).body.data.attributes.username;
    const answers = [];
    for (const [login, password] of [
      [p.username, "wrong password"],
      [`nobody-${uniqueName("x")}`, "right password"],
      [bareName, "right password"],
    ]) {
      const res = await passwordSignIn(login, password);
      expect(cookieOf(res)).toBeNull();
      answers.push({ status: res.status, text: res.text.replace(`value="${login}"`, 'value="…"') });
    }
    expect(answers[0].status).toBe(401);
    expect(answers[0].text).toContain("Incorrect username, e-mail or password.");
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
  });

  it("replaces a hash made with fewer iterations at the next sign-in", async () => {
    const user = await makeUser();
    const username = (await api("GET", "/account/details", { token: user.token })).body.data.attributes.username;
    await env.DB.prepare("UPDATE users SET password_hash = ? WHERE id = ?")
      .bind(await hashPassword("an old password", 5_000), user.id)
      .run();
    expect(await storedHash(user.id)).toMatch(/^pbkdf2-sha256\$5000\$/);
    expect((await passwordSignIn(username, "an old password")).status).toBe(303);
    expect(await storedHash(user.id)).toMatch(/^pbkdf2-sha256\$100000\$/);
    expect((await passwordSignIn(username, "an old password")).status).toBe(303);
  });

  it("returns to the UI page named by next, and to /app for anything else", async () => {
    const p = await personWithPassword("next password");
    expect((await passwordSignIn(p.username, "next password", newAddress(), "/app/some-org/workspaces?x=1")).headers.get("Location")).toBe(
      "/app/some-org/workspaces?x=1",
    );
    for (const next of ["https://evil.example/app", "//evil.example/app", "/api/v2/account/details", "/app/session/delete"]) {
      expect((await passwordSignIn(p.username, "next password", newAddress(), next)).headers.get("Location")).toBe("/app");
    }
  });

  it("ends a password session at once when its user is deleted", async () => {
    const p = await personWithPassword("doomed password");
    const cookie = cookieOf(await passwordSignIn(p.username, "doomed password"))!;
    // Twice: the second page rides on the isolate's cached principal, which its recheck must undo.
    expect((await ui("GET", "/app", { cookie })).status).toBe(200);
    expect((await ui("GET", "/app", { cookie })).status).toBe(200);
    await env.DB.prepare("DELETE FROM users WHERE id = ?").bind(p.id).run();
    const after = await ui("GET", "/app", { cookie });
    expect(after.status).toBe(303);
    expect(after.headers.get("Location")).toBe("/app/session/new");
    expect((await ui("GET", "/app", { cookie })).status).toBe(303);
  });
});

describe("failed sign-ins", () => {
  it("locks an account's password sign-in after five failures, the same for an unknown login", async () => {
    const p = await personWithPassword("locked password");
    const unknown = `ghost-${uniqueName("x")}`;
    for (const login of [p.username, unknown]) {
      for (let i = 0; i < 5; i++) expect((await passwordSignIn(login, `wrong ${i}`)).status).toBe(401);
      // Even the right password waits now, from any address.
      const refused = await passwordSignIn(login, "locked password");
      expect(refused.status).toBe(429);
      expect(refused.text).toContain("Too many failed sign-ins. Try again after");
      expect(Number(refused.headers.get("Retry-After"))).toBeGreaterThan(0);
      expect(Number(refused.headers.get("Retry-After"))).toBeLessThanOrEqual(30);
      expect(cookieOf(refused)).toBeNull();
    }
    // The e-mail names the same account: it waits too.
    expect((await passwordSignIn(p.email, "locked password")).status).toBe(429);
  });

  it("lets an account in again once the wait has passed, and a success forgets its failures", async () => {
    const p = await personWithPassword("patient password");
    await failedAgo(`user:${p.id}`, 5, 10);
    expect((await passwordSignIn(p.username, "patient password")).status).toBe(303);
    // Forgotten: the next failures count from zero (four more do not lock it).
    for (let i = 0; i < 4; i++) expect((await passwordSignIn(p.username, "wrong")).status).toBe(401);
    expect((await passwordSignIn(p.username, "patient password")).status).toBe(303);
  });

  it("lets failures older than the window go", async () => {
    const p = await personWithPassword("ancient password");
    await failedAgo(`user:${p.id}`, 12, 16);
    expect((await passwordSignIn(p.username, "ancient password")).status).toBe(303);
  });

  it("makes an address wait after twenty failures, whichever accounts they named", async () => {
    const p = await personWithPassword("crowded password");
    const ip = newAddress();
    await failedAgo(`ip:${ip}`, 19, 1);
    expect((await passwordSignIn(`someone-${uniqueName("x")}`, "wrong", ip)).status).toBe(401);
    const refused = await passwordSignIn(p.username, "crowded password", ip);
    expect(refused.status).toBe(429);
    expect(refused.text).toContain("Too many failed sign-ins");
    // Another address is not held back, and neither is the account.
    expect((await passwordSignIn(p.username, "crowded password", newAddress())).status).toBe(303);
  });
});

describe("invitation links", () => {
  async function invite(org: string, ownerToken: string) {
    const email = `${uniqueName("inv")}@example.com`;
    const res = await api("POST", `/organizations/${org}/organization-memberships`, {
      token: ownerToken,
      body: { data: { type: "organization-memberships", attributes: { email } } },
    });
    expect(res.status).toBe(201);
    return { id: res.body.data.id as string, email };
  }

  it("sets the password, signs in and accepts the invitation, once", async () => {
    const org = await createOrg();
    const owner = await makeUser({ ownerOf: org });
    const ownerCookie = await tokenSession(owner.token);
    const inv = await invite(org, owner.token);
    const page = await ui("GET", `/app/${org}/invitations/${inv.id}`, { cookie: ownerCookie });
    expect(page.status).toBe(200);
    expect(page.text).toContain(inv.email);
    expect(page.text).toContain('id="create-link"');

    const made = await ui("POST", `/app/${org}/invitations/${inv.id}/link`, { cookie: ownerCookie });
    expect(made.status).toBe(200);
    const link = linkIn(made.text);
    const form = await ui("GET", link);
    expect(form.status).toBe(200);
    expect(form.text).toContain("Accept your invitation");

    // Refused passwords leave the link as it was, with the reasons next to the form.
    const short = await ui("POST", link, { form: { password: "short", password_confirmation: "short" } });
    expect(short.status).toBe(422);
    expect(short.text).toContain("Password is too short (minimum is 10 characters)");
    const mismatch = await ui("POST", link, { form: { password: "long enough one", password_confirmation: "long enough two" } });
    expect(mismatch.status).toBe(422);
    expect(mismatch.text).toContain("Password confirmation doesn&#39;t match Password");
    expect((await api("GET", `/organization-memberships/${inv.id}`)).body.data.attributes.status).toBe("invited");

    const set = await ui("POST", link, { form: { password: "invited password", password_confirmation: "invited password" } });
    expect(set.status).toBe(303);
    expect(set.headers.get("Location")).toBe("/app");
    const cookie = cookieOf(set)!;
    const home = await ui("GET", "/app", { cookie });
    expect(home.status).toBe(200);
    const username = (await api("GET", `/organization-memberships/${inv.id}?include=user`)).body.included[0].attributes.username;
    expect(home.text).toContain(username);
    expect((await api("GET", `/organization-memberships/${inv.id}`)).body.data.attributes.status).toBe("active");

    // Once: a second use is told the link was used, and changes nothing.
    const again = await ui("GET", link);
    expect(again.status).toBe(410);
    expect(again.text).toContain("This link has already been used.");
    const reuse = await ui("POST", link, { form: { password: "hijacked password", password_confirmation: "hijacked password" } });
    expect(reuse.status).toBe(410);
    expect(cookieOf(reuse)).toBeNull();
    expect((await passwordSignIn(username, "hijacked password")).status).toBe(401);
    expect((await passwordSignIn(inv.email, "invited password")).status).toBe(303);
    // The owner's page now shows the invitation accepted, with no link to make.
    const after = await ui("GET", `/app/${org}/invitations/${inv.id}`, { cookie: ownerCookie });
    expect(after.text).toContain("active");
    expect(after.text).not.toContain('id="create-link"');
    expect((await ui("POST", `/app/${org}/invitations/${inv.id}/link`, { cookie: ownerCookie })).status).toBe(422);
  });

  it("voids the earlier link when a new one is made, and refuses an expired one", async () => {
    const org = await createOrg();
    const owner = await makeUser({ ownerOf: org });
    const ownerCookie = await tokenSession(owner.token);
    const inv = await invite(org, owner.token);
    const first = linkIn((await ui("POST", `/app/${org}/invitations/${inv.id}/link`, { cookie: ownerCookie })).text);
    const second = linkIn((await ui("POST", `/app/${org}/invitations/${inv.id}/link`, { cookie: ownerCookie })).text);
    expect((await ui("GET", first)).status).toBe(404);
    expect((await ui("GET", second)).status).toBe(200);
    // Seven days later (the row's expiry moved into the past): expired, and setting a password through it is refused.
    await env.DB.prepare("UPDATE password_links SET expires_at = ? WHERE membership_id = ?")
      .bind(new Date(Date.now() - 1000).toISOString(), inv.id)
      .run();
    const expired = await ui("GET", second);
    expect(expired.status).toBe(410);
    expect(expired.text).toContain("This link has expired.");
    expect((await ui("POST", second, { form: { password: "too late password", password_confirmation: "too late password" } })).status).toBe(410);
    expect((await api("GET", `/organization-memberships/${inv.id}`)).body.data.attributes.status).toBe("invited");
    expect((await ui("GET", "/app/password/notalinkatall")).status).toBe(404);
  });

  it("is made only by whoever may invite: no page, and a forged POST is refused", async () => {
    const org = await createOrg();
    const owner = await makeUser({ ownerOf: org });
    const inv = await invite(org, owner.token);
    const team = await makeTeam(org, {});
    const member = await makeUser({ teams: [team.id] });
    const memberCookie = await tokenSession(member.token);
    expect((await ui("GET", `/app/${org}/invitations/${inv.id}`, { cookie: memberCookie })).status).toBe(404);
    const forged = await ui("POST", `/app/${org}/invitations/${inv.id}/link`, { cookie: memberCookie });
    expect(forged.status).toBe(404);
    expect(forged.text).not.toContain("new-link");
    // A cross-site POST is refused before anything, even from the owner's session.
    const crossSite = await ui("POST", `/app/${org}/invitations/${inv.id}/link`, { cookie: await tokenSession(owner.token), origin: "https://evil.example" });
    expect(crossSite.status).toBe(403);
    // Nothing was made: the owner's page shows no link out.
    const page = await ui("GET", `/app/${org}/invitations/${inv.id}`, { cookie: await tokenSession(owner.token) });
    expect(page.text).toContain("<dd>none</dd>");
    // A team with manage-membership may invite, so it may make the link.
    const managers = await makeTeam(org, { "manage-membership": true });
    const manager = await makeUser({ teams: [managers.id] });
    expect((await ui("POST", `/app/${org}/invitations/${inv.id}/link`, { cookie: await tokenSession(manager.token) })).status).toBe(200);
    // An invitation of another organisation is not found under this one's name.
    expect((await ui("GET", `/app/${await createOrg()}/invitations/${inv.id}`, { cookie: await admin() })).status).toBe(404);
    expect(await organizationId(org)).toBeTruthy();
  });

  it("offers no link to a user who has a password already", async () => {
    const org = await createOrg();
    const owner = await makeUser({ ownerOf: org });
    const p = await personWithPassword("existing password");
    const inv = await invite(org, owner.token);
    await env.DB.prepare("UPDATE organization_memberships SET user_id = ? WHERE id = ?").bind(p.id, inv.id).run();
    const cookie = await tokenSession(owner.token);
    const page = await ui("GET", `/app/${org}/invitations/${inv.id}`, { cookie });
    expect(page.text).not.toContain('id="create-link"');
    const refused = await ui("POST", `/app/${org}/invitations/${inv.id}/link`, { cookie });
    expect(refused.status).toBe(422);
    expect(refused.text).toContain("already has a password");
  });
});

describe("invitation links of accounts in use", () => {
  it("are refused, so an inviter cannot take over an existing account (the site admin's included)", async () => {
    // Made by a user, so the site admin is no member of it and can be invited.
    const owner = await makeUser();
    const org = await createOrg(owner.token);
    const cookie = await tokenSession(owner.token);
    const withToken = await makeUser();
    const email = (await api("GET", "/account/details", { token: withToken.token })).body.data.attributes.email;
    for (const address of [email, "admin@localhost"]) {
      const inv = await api("POST", `/organizations/${org}/organization-memberships`, {
        token: owner.token,
        body: { data: { type: "organization-memberships", attributes: { email: address } } },
      });
      expect(inv.status).toBe(201);
      const id = inv.body.data.id;
      const page = await ui("GET", `/app/${org}/invitations/${id}`, { cookie });
      expect(page.status).toBe(200);
      expect(page.text).not.toContain('id="create-link"');
      const refused = await ui("POST", `/app/${org}/invitations/${id}/link`, { cookie });
      expect(refused.status).toBe(422);
      expect(refused.text).toContain("already has an account");
      expect(refused.text).not.toContain("new-link");
      expect(await env.DB.prepare("SELECT count(*) AS n FROM password_links WHERE membership_id = ?").bind(id).first("n")).toBe(0);
    }
  });
});

describe("reset links", () => {
  it("a site admin lists users and makes a reset link, which sets a new password", async () => {
    const p = await personWithPassword("forgotten password");
    const list = await ui("GET", "/app/admin/users?page[size]=100", { cookie: await admin() });
    expect(list.status).toBe(200);
    expect(list.text).toContain("users</p>");
    const link = await resetLinkOf(p.id);
    expect((await ui("GET", link)).text).toContain("Set your password");
    const set = await ui("POST", link, { form: { password: "remembered password", password_confirmation: "remembered password" } });
    expect(set.status).toBe(303);
    expect(set.headers.get("Location")).toBe("/app");
    expect((await ui("GET", "/app", { cookie: cookieOf(set)! })).status).toBe(200);
    expect((await passwordSignIn(p.username, "forgotten password")).status).toBe(401);
    expect((await passwordSignIn(p.username, "remembered password")).status).toBe(303);
    expect((await ui("GET", link)).status).toBe(410);
  });

  it("lets a reset link in past a lock-out, and forgets the failures", async () => {
    const p = await personWithPassword("locked out password");
    for (let i = 0; i < 5; i++) await passwordSignIn(p.username, "wrong");
    expect((await passwordSignIn(p.username, "locked out password")).status).toBe(429);
    const link = await resetLinkOf(p.id);
    expect((await ui("POST", link, { form: { password: "fresh start password", password_confirmation: "fresh start password" } })).status).toBe(303);
    expect((await passwordSignIn(p.username, "fresh start password")).status).toBe(303);
  });

  it("is the site admin's only: others get no page, and a forged POST is refused", async () => {
    const org = await createOrg();
    const owner = await makeUser({ ownerOf: org });
    const victim = await makeUser();
    const cookie = await tokenSession(owner.token);
    expect((await ui("GET", "/app/admin/users", { cookie })).status).toBe(404);
    const forged = await ui("POST", `/app/admin/users/${victim.id}/reset-link`, { cookie });
    expect(forged.status).toBe(404);
    expect(forged.text).not.toContain("new-link");
    expect(await env.DB.prepare("SELECT count(*) AS n FROM password_links WHERE user_id = ?").bind(victim.id).first("n")).toBe(0);
    // Only the site admin's organisations page links the users page.
    expect((await ui("GET", "/app", { cookie })).text).not.toContain("/app/admin/users");
    expect((await ui("GET", "/app", { cookie: await admin() })).text).toContain("/app/admin/users");
  });
});

describe("a link is checked again when used", () => {
  async function inviteAddress(org: string, ownerToken: string, email = `${uniqueName("inv")}@example.com`) {
    const res = await api("POST", `/organizations/${org}/organization-memberships`, {
      token: ownerToken,
      body: { data: { type: "organization-memberships", attributes: { email } } },
    });
    expect(res.status).toBe(201);
    return { id: res.body.data.id as string, userId: res.body.data.relationships.user.data.id as string, email };
  }
  const linkOf = async (org: string, membershipId: string, cookie: string) => {
    const made = await ui("POST", `/app/${org}/invitations/${membershipId}/link`, { cookie });
    expect(made.status).toBe(200);
    return linkIn(made.text);
  };
  const setWith = (link: string, password: string) => ui("POST", link, { form: { password, password_confirmation: password } });

  it("refuses an invitation's link once its account is in use: a token, another organisation", async () => {
    // The owner makes the link while the invited account is unused...
    const org = await createOrg();
    const owner = await makeUser({ ownerOf: org });
    const ownerCookie = await tokenSession(owner.token);
    const inv = await inviteAddress(org, owner.token);
    const link = await linkOf(org, inv.id, ownerCookie);
    expect((await ui("GET", link)).status).toBe(200);
    // ... then the user gets a token (the site admin issues its first) and joins another organisation.
    const minted = await api("POST", `/users/${inv.userId}/authentication-tokens`, {
      body: { data: { type: "authentication-tokens", attributes: { description: "mine" } } },
    });
    expect(minted.status).toBe(201);
    const token = minted.body.data.attributes.token as string;
    const elsewhere = await createOrg();
    const team = await makeTeam(elsewhere, { "read-workspaces": true });
    expect((await api("POST", `/teams/${team.id}/relationships/users`, { body: { data: [{ type: "users", id: inv.userId }] } })).status).toBe(204);
    expect((await api("GET", `/organizations/${elsewhere}`, { token })).status).toBe(200);

    // The owner's old link is refused, and changes nothing.
    const opened = await ui("GET", link);
    expect([404, 410]).toContain(opened.status);
    expect(opened.text).not.toContain('id="set-password"');
    const used = await setWith(link, "takeover password");
    expect([404, 410]).toContain(used.status);
    expect(cookieOf(used)).toBeNull();
    expect(await storedHash(inv.userId)).toBeNull();
    const username = (await api("GET", "/account/details", { token })).body.data.attributes.username;
    expect((await passwordSignIn(username, "takeover password")).status).toBe(401);
    expect((await passwordSignIn(inv.email, "takeover password")).status).toBe(401);
    expect((await api("GET", `/organizations/${elsewhere}`, { token })).status).toBe(200);
    expect((await api("GET", `/organization-memberships/${inv.id}`)).body.data.attributes.status).toBe("invited");
    // And no new link is made for it.
    expect((await ui("POST", `/app/${org}/invitations/${inv.id}/link`, { cookie: ownerCookie })).status).toBe(422);
  });

  it("refuses an invitation's link whose maker may no longer invite, or whose invitation is gone", async () => {
    const org = await createOrg();
    const owner = await makeUser({ ownerOf: org });
    const managers = await makeTeam(org, { "manage-membership": true });
    const manager = await makeUser({ teams: [managers.id] });
    const inv = await inviteAddress(org, owner.token);
    const link = await linkOf(org, inv.id, await tokenSession(manager.token));
    expect((await ui("GET", link)).status).toBe(200);
    // The team loses manage-membership: the link it made is void.
    expect(
      (
        await api("PATCH", `/teams/${managers.id}`, {
          body: { data: { type: "teams", attributes: { "organization-access": { "manage-membership": false } } } },
        })
      ).status,
    ).toBe(200);
    const opened = await ui("GET", link);
    expect(opened.status).toBe(410);
    expect(opened.text).toContain("This link no longer works");
    expect((await setWith(link, "stale maker password")).status).toBe(410);
    expect(await storedHash(inv.userId)).toBeNull();
    // A link made with a team token dies with the token.
    expect(
      (
        await api("PATCH", `/teams/${managers.id}`, {
          body: { data: { type: "teams", attributes: { "organization-access": { "manage-membership": true } } } },
        })
      ).status,
    ).toBe(200);
    const teamLink = await linkOf(org, inv.id, await tokenSession(managers.token));
    expect((await ui("GET", teamLink)).status).toBe(200);
    expect((await api("DELETE", `/teams/${managers.id}/authentication-tokens`, { token: owner.token })).status).toBe(204);
    expect((await ui("GET", teamLink)).status).toBe(410);
    expect((await setWith(teamLink, "revoked token password")).status).toBe(410);
    // The owner's own link works until the invitation is cancelled.
    const ownerLink = await linkOf(org, inv.id, await tokenSession(owner.token));
    expect((await ui("GET", ownerLink)).status).toBe(200);
    expect((await api("DELETE", `/organization-memberships/${inv.id}`, { token: owner.token })).status).toBe(204);
    expect([404, 410]).toContain((await setWith(ownerLink, "cancelled password")).status);
    expect(await storedHash(inv.userId)).toBeNull();
  });

  it("refuses a reset link whose maker is no longer a site admin", async () => {
    const p = await personWithPassword("kept password");
    const created = await api("POST", "/admin/users", {
      body: { data: { type: "users", attributes: { username: uniqueName("sa"), email: `${uniqueName("sa")}@example.com`, "is-site-admin": true } } },
    });
    const adminId = created.body.data.id;
    const adminToken = (await api("POST", `/users/${adminId}/authentication-tokens`)).body.data.attributes.token;
    const made = await ui("POST", `/app/admin/users/${p.id}/reset-link`, { cookie: await tokenSession(adminToken) });
    expect(made.status).toBe(200);
    const link = linkIn(made.text);
    expect((await ui("GET", link)).status).toBe(200);
    await env.DB.prepare("UPDATE users SET is_site_admin = 0 WHERE id = ?").bind(adminId).run();
    expect((await ui("GET", link)).status).toBe(410);
    expect((await setWith(link, "demoted admin password")).status).toBe(410);
    expect((await passwordSignIn(p.username, "kept password")).status).toBe(303);
  });
});

describe("an invitation does not pre-claim an address for another organisation", () => {
  it("names the account whose holder proved the address, never one an inviter's link made", async () => {
    const address = `${uniqueName("claimed")}@example.com`;
    // The owner of O invites an address nobody has, makes the link and sets the password: that account is theirs.
    const o = await createOrg();
    const oOwner = await makeUser({ ownerOf: o });
    const oInv = await api("POST", `/organizations/${o}/organization-memberships`, {
      token: oOwner.token,
      body: { data: { type: "organization-memberships", attributes: { email: address } } },
    });
    const squatter = oInv.body.data.relationships.user.data.id;
    const made = await ui("POST", `/app/${o}/invitations/${oInv.body.data.id}/link`, { cookie: await tokenSession(oOwner.token) });
    const set = await ui("POST", linkIn(made.text), { form: { password: "squatter password", password_confirmation: "squatter password" } });
    expect(set.status).toBe(303);
    const squatterCookie = cookieOf(set)!;

    // Organisation V later invites the same address: its invitation does not name that account.
    const v = await createOrg();
    const vOwner = await makeUser({ ownerOf: v });
    const ws = await api("POST", `/organizations/${v}/workspaces`, {
      token: vOwner.token,
      body: { data: { type: "workspaces", attributes: { name: uniqueName("ws") } } },
    });
    expect(ws.status).toBe(201);
    const vTeam = await makeTeam(v, { "read-workspaces": true });
    const vInv = await api("POST", `/organizations/${v}/organization-memberships`, {
      token: vOwner.token,
      body: {
        data: { type: "organization-memberships", attributes: { email: address }, relationships: { teams: { data: [{ type: "teams", id: vTeam.id }] } } },
      },
    });
    expect(vInv.status).toBe(201);
    expect(vInv.body.data.attributes).toMatchObject({ status: "invited", email: address });
    expect(vInv.body.data.relationships.user.data.id).not.toBe(squatter);

    // The squatter's account cannot accept it, nor read V's workspaces, by API or page.
    const squatterToken = (await api("POST", `/users/${squatter}/authentication-tokens`)).body.data.attributes.token;
    expect((await api("POST", `/organization-memberships/${vInv.body.data.id}/actions/accept`, { token: squatterToken })).status).toBe(404);
    expect((await api("GET", `/organizations/${v}/workspaces`, { token: squatterToken })).status).toBe(404);
    expect((await api("GET", `/workspaces/${ws.body.data.id}`, { token: squatterToken })).status).toBe(404);
    expect((await ui("GET", `/app/${v}/workspaces`, { cookie: squatterCookie })).status).toBe(404);
    expect((await api("GET", `/organization-memberships/${vInv.body.data.id}`)).body.data.attributes.status).toBe("invited");

    // The invitation stays pending; accepting it needs V's own link, which is for V's invitation's account alone.
    const vCookie = await tokenSession(vOwner.token);
    const vPage = await ui("GET", `/app/${v}/invitations/${vInv.body.data.id}`, { cookie: vCookie });
    expect(vPage.text).toContain('id="create-link"');
    const vLink = linkIn((await ui("POST", `/app/${v}/invitations/${vInv.body.data.id}/link`, { cookie: vCookie })).text);
    const accepted = await ui("POST", vLink, { form: { password: "rightful password", password_confirmation: "rightful password" } });
    expect(accepted.status).toBe(303);
    expect((await api("GET", `/organization-memberships/${vInv.body.data.id}`)).body.data.attributes.status).toBe("active");
    expect((await ui("GET", `/app/${v}/workspaces`, { cookie: cookieOf(accepted)! })).status).toBe(200);
    expect((await ui("GET", `/app/${v}/workspaces`, { cookie: squatterCookie })).status).toBe(404);
  });

  it("makes no link for an address a site admin vouched for: its user signs in and accepts", async () => {
    const org = await createOrg();
    const owner = await makeUser({ ownerOf: org });
    const email = `${uniqueName("vouched")}@example.com`;
    const created = await api("POST", "/admin/users", { body: { data: { type: "users", attributes: { username: uniqueName("v"), email } } } });
    const inv = await api("POST", `/organizations/${org}/organization-memberships`, {
      token: owner.token,
      body: { data: { type: "organization-memberships", attributes: { email } } },
    });
    expect(inv.body.data.relationships.user.data.id).toBe(created.body.data.id);
    // Unused (no password, no token), yet the site admin's: no inviter's link may hand it over.
    const cookie = await tokenSession(owner.token);
    expect((await ui("GET", `/app/${org}/invitations/${inv.body.data.id}`, { cookie })).text).not.toContain('id="create-link"');
    const refused = await ui("POST", `/app/${org}/invitations/${inv.body.data.id}/link`, { cookie });
    expect(refused.status).toBe(422);
    expect(refused.text).toContain("not this invitation&#39;s own");
    const token = (await api("POST", `/users/${created.body.data.id}/authentication-tokens`)).body.data.attributes.token;
    expect((await api("POST", `/organization-memberships/${inv.body.data.id}/actions/accept`, { token })).status).toBe(200);
  });
});

describe("setting a password through a link", () => {
  it("ends every UI session of the user; its API tokens stay", async () => {
    const p = await personWithPassword("before reset");
    const passwordCookie = cookieOf(await passwordSignIn(p.username, "before reset"))!;
    const tokenCookie = await tokenSession(p.token);
    for (const cookie of [passwordCookie, tokenCookie]) {
      // Twice: the second page rides on the isolate's cached principal, which its recheck must undo.
      expect((await ui("GET", "/app", { cookie })).status).toBe(200);
      expect((await ui("GET", "/app", { cookie })).status).toBe(200);
    }
    const other = await personWithPassword("someone else");
    const otherCookie = cookieOf(await passwordSignIn(other.username, "someone else"))!;

    const set = await ui("POST", await resetLinkOf(p.id), { form: { password: "after reset!", password_confirmation: "after reset!" } });
    expect(set.status).toBe(303);
    for (const cookie of [passwordCookie, tokenCookie]) {
      const after = await ui("GET", "/app", { cookie });
      expect(after.status).toBe(303);
      expect(after.headers.get("Location")).toBe("/app/session/new");
    }
    expect((await ui("GET", "/app", { cookie: cookieOf(set)! })).status).toBe(200);
    expect((await ui("GET", "/app", { cookie: otherCookie })).status).toBe(200);
    // As on the real service, a new password leaves API tokens alone (their page revokes them).
    expect((await api("GET", "/account/details", { token: p.token })).status).toBe(200);
    expect((await passwordSignIn(p.username, "after reset!")).status).toBe(303);
  });
});
