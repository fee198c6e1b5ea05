// Two-factor authentication (TOTP): enrolment at /app/settings/two-factor, the second step of a password sign-in,
// recovery codes, disabling, the failure budget it shares with passwords, and an organisation's
// `collaborator-auth-policy: two_factor_mandatory`. Codes are computed here from the secret the page shows.
import { env } from "cloudflare:workers";
import { Secret, TOTP } from "otpauth";
import { describe, expect, it } from "vitest";
import { createOrg, makeTeam, makeUser } from "../fixtures";
import { ADMIN, api } from "../helpers";
import { signIn as signInWithToken, ui } from "../ui-client";

const cookiesOf = (res: { headers: Headers }) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");

const codeAt = (secret: string, ms: number) => new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: ms });
/** The current step's code and the next one's: each is accepted once, and both within the window whatever the clock does meanwhile. */
const codes = (secret: string) => {
  const now = Date.now();
  return { now: codeAt(secret, now), next: codeAt(secret, now + 30_000) };
};

const passwordSignIn = (login: string, password: string, cookie?: string) =>
  ui("POST", "/app/session/password", { form: { username: login, password }, cookie });

async function personWithPassword(password = "correct horse battery") {
  const user = await makeUser();
  const admin = await signInWithToken(ADMIN);
  const made = await ui("POST", `/app/admin/users/${user.id}/reset-link`, { cookie: admin });
  const link = /<code id="new-link">http:\/\/localhost(\/app\/password\/[A-Za-z0-9]+)<\/code>/.exec(made.text)![1];
  const set = await ui("POST", link!, { form: { password, password_confirmation: password } });
  expect(set.status).toBe(303);
  const username = (await api("GET", "/account/details", { token: user.token })).body.data.attributes.username as string;
  return { ...user, username, password, session: cookiesOf(set) };
}

/** Enrols an authenticator through the pages; the secret, the recovery codes, and the code steps left unused. */
async function enrol(session: string) {
  expect((await ui("POST", "/app/settings/two-factor/enrol", { cookie: session })).status).toBe(303);
  const pending = await ui("GET", "/app/settings/two-factor", { cookie: session });
  const secret = /<code id="totp-secret">([A-Z2-7]+)<\/code>/.exec(pending.text)![1]!;
  const uri = /<code id="totp-uri">([^<]+)<\/code>/.exec(pending.text)![1]!;
  const c = codes(secret);
  const confirmed = await ui("POST", "/app/settings/two-factor/confirm", { cookie: session, form: { code: c.now } });
  expect(confirmed.status).toBe(200);
  const recovery = [...confirmed.text.matchAll(/<li><code>([a-z0-9]{5}-[a-z0-9]{5})<\/code><\/li>/g)].map((m) => m[1]!);
  return { secret, uri, recovery, next: c.next, confirmed };
}

describe("two-factor enrolment", () => {
  it("shows the secret until confirmed by one code, then never again; recovery codes once, stored hashed; the API attributes follow", async () => {
    const p = await personWithPassword();
    const before = (await api("GET", `/users/${p.id}`, { token: p.token })).body.data.attributes["two-factor"];
    expect(before).toEqual({ enabled: false, verified: false });
    expect((await ui("POST", "/app/settings/two-factor/enrol", { cookie: p.session })).status).toBe(303);
    const pending = await ui("GET", "/app/settings/two-factor", { cookie: p.session });
    const secret = /<code id="totp-secret">([A-Z2-7]+)<\/code>/.exec(pending.text)![1]!;
    expect(pending.text).toContain(`otpauth://totp/`);
    expect(pending.text).toContain(`secret=${secret}`);
    expect((await api("GET", "/account/details", { token: p.token })).body.data.attributes["two-factor"]).toEqual({ enabled: true, verified: false });
    // A wrong code confirms nothing.
    const wrong = await ui("POST", "/app/settings/two-factor/confirm", {
      cookie: p.session,
      form: { code: "000000" === codeAt(secret, Date.now()) ? "111111" : "000000" },
    });
    expect(wrong.status).toBe(422);
    expect(wrong.text).toContain("That code is not valid");
    const confirmed = await ui("POST", "/app/settings/two-factor/confirm", { cookie: p.session, form: { code: codeAt(secret, Date.now()) } });
    expect(confirmed.status).toBe(200);
    const recovery = [...confirmed.text.matchAll(/<li><code>([a-z0-9]{5}-[a-z0-9]{5})<\/code><\/li>/g)].map((m) => m[1]!);
    expect(recovery).toHaveLength(10);
    // After enrolment the secret appears on no page and in no API answer; the codes only as hashes in storage.
    const after = await ui("GET", "/app/settings/two-factor", { cookie: p.session });
    expect(after.text).not.toContain(secret);
    expect(after.text).toContain("10 recovery codes left");
    for (const u of [await api("GET", `/users/${p.id}`, { token: p.token }), await api("GET", "/account/details", { token: p.token })]) {
      expect(u.text).not.toContain(secret);
      expect(u.body.data.attributes["two-factor"]).toEqual({ enabled: true, verified: true });
    }
    const stored = await env.DB.prepare("SELECT secret_sealed FROM two_factor WHERE user_id = ?").bind(p.id).first<{ secret_sealed: string }>();
    expect(stored!.secret_sealed).not.toContain(secret);
    const hashes = await env.DB.prepare("SELECT code_hash FROM two_factor_recovery_codes WHERE user_id = ?").bind(p.id).all<{ code_hash: string }>();
    expect(hashes.results).toHaveLength(10);
    for (const r of recovery) expect(JSON.stringify(hashes.results)).not.toContain(r.replace("-", ""));
    // Enrolling again while on is refused.
    expect((await ui("POST", "/app/settings/two-factor/enrol", { cookie: p.session })).status).toBe(422);
  });

  it("is for people: a team token's session is refused", async () => {
    const org = await createOrg();
    const team = await api("POST", `/organizations/${org}/teams`, { body: { data: { type: "teams", attributes: { name: "t2fa" } } } });
    const token = await api("POST", `/teams/${team.body.data.id}/authentication-token`, {});
    const session = await signInWithToken(token.body.data.attributes.token);
    expect((await ui("GET", "/app/settings/two-factor", { cookie: session })).status).toBe(404);
    expect((await ui("POST", "/app/settings/two-factor/enrol", { cookie: session })).status).toBe(404);
  });
});

describe("signing in with two-factor authentication", () => {
  it("asks for a code after the password, which alone makes no session; a wrong code is refused, a right one signs in", async () => {
    const p = await personWithPassword();
    const { next } = await enrol(p.session);
    const first = await passwordSignIn(p.username, p.password);
    expect(first.status).toBe(303);
    expect(first.headers.get("Location")).toBe("/app/session/two-factor");
    const setCookies = first.headers.getSetCookie().join("\n");
    expect(setCookies).not.toContain("ws_session=");
    expect(setCookies).toMatch(/ws_challenge=[A-Za-z0-9]+;.*HttpOnly/);
    const challenge = cookiesOf(first);
    // The challenge cookie is no session.
    expect((await ui("GET", "/app", { cookie: challenge })).status).toBe(303);
    expect((await ui("GET", "/app/session/two-factor", { cookie: challenge })).text).toContain('id="code"');
    const wrong = await ui("POST", "/app/session/two-factor", { cookie: challenge, form: { code: next === "123456" ? "654321" : "123456" } });
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain("That code is not valid");
    expect(wrong.headers.getSetCookie().join()).not.toContain("ws_session=");
    const ok = await ui("POST", "/app/session/two-factor", { cookie: challenge, form: { code: next } });
    expect(ok.status).toBe(303);
    expect(ok.headers.get("Location")).toBe("/app");
    const session = cookiesOf(ok)
      .split("; ")
      .find((c) => c.startsWith("ws_session="))!;
    expect((await ui("GET", "/app", { cookie: session })).status).toBe(200);
    // The same code again (another sign-in) is refused: each code works once.
    const again = cookiesOf(await passwordSignIn(p.username, p.password));
    expect((await ui("POST", "/app/session/two-factor", { cookie: again, form: { code: next } })).status).toBe(401);
    // Without a challenge there is nothing to answer.
    expect((await ui("POST", "/app/session/two-factor", { form: { code: next } })).status).toBe(401);
    expect((await ui("GET", "/app/session/two-factor")).status).toBe(303);
  });

  it("takes a recovery code once", async () => {
    const p = await personWithPassword();
    const { recovery } = await enrol(p.session);
    const challenge = cookiesOf(await passwordSignIn(p.username, p.password));
    const ok = await ui("POST", "/app/session/two-factor", { cookie: challenge, form: { code: recovery[0]!.toUpperCase() } });
    expect(ok.status).toBe(303);
    const session = cookiesOf(ok)
      .split("; ")
      .find((c) => c.startsWith("ws_session="))!;
    expect((await ui("GET", "/app/settings/two-factor", { cookie: session })).text).toContain("9 recovery codes left");
    const second = cookiesOf(await passwordSignIn(p.username, p.password));
    expect((await ui("POST", "/app/session/two-factor", { cookie: second, form: { code: recovery[0]! } })).status).toBe(401);
    expect((await ui("POST", "/app/session/two-factor", { cookie: second, form: { code: recovery[1]! } })).status).toBe(303);
  });

  it("spends the password's failure budget: five wrong codes and even a right one waits", async () => {
    const p = await personWithPassword();
    const { next } = await enrol(p.session);
    const challenge = cookiesOf(await passwordSignIn(p.username, p.password));
    const wrong = next === "999999" ? "888888" : "999999";
    for (let i = 0; i < 5; i++) expect((await ui("POST", "/app/session/two-factor", { cookie: challenge, form: { code: wrong } })).status).toBe(401);
    const limited = await ui("POST", "/app/session/two-factor", { cookie: challenge, form: { code: next } });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("Retry-After")).toMatch(/^\d+$/);
    expect(limited.text).toContain("Too many failed sign-ins");
    // The password step is held back too: the account's budget is one.
    expect((await passwordSignIn(p.username, p.password)).status).toBe(429);
  });

  it("turns off with a code, after which the password alone signs in again", async () => {
    const p = await personWithPassword();
    const { next } = await enrol(p.session);
    expect((await ui("POST", "/app/settings/two-factor/disable", { cookie: p.session, form: { code: "12345" } })).status).toBe(422);
    const off = await ui("POST", "/app/settings/two-factor/disable", { cookie: p.session, form: { code: next } });
    expect(off.status).toBe(303);
    expect((await ui("GET", "/app/settings/two-factor", { cookie: p.session })).text).toContain('id="enrol"');
    expect((await api("GET", "/account/details", { token: p.token })).body.data.attributes["two-factor"]).toEqual({ enabled: false, verified: false });
    const signedIn = await passwordSignIn(p.username, p.password);
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get("Location")).toBe("/app");
  });

  it("refuses a forged (cross-origin) form", async () => {
    const p = await personWithPassword();
    expect((await ui("POST", "/app/settings/two-factor/enrol", { cookie: p.session, origin: "https://evil.example" })).status).toBe(403);
    expect((await api("GET", "/account/details", { token: p.token })).body.data.attributes["two-factor"]).toEqual({ enabled: false, verified: false });
  });
});

describe("collaborator-auth-policy: two_factor_mandatory", () => {
  const policy = (value: string) => ({ body: { data: { type: "organizations", attributes: { "collaborator-auth-policy": value } } } });

  it("refuses members without two-factor authentication in the API and the UI, saying how to enrol; enrolling lets them in", async () => {
    const org = await createOrg();
    const team = await makeTeam(org, { "read-workspaces": true });
    const member = await makeUser({ teams: [team.id] });
    const session = await signInWithToken(member.token);
    expect((await api("GET", `/organizations/${org}`, { token: member.token })).status).toBe(200);
    expect((await api("PATCH", `/organizations/${org}`, policy("two_factor_mandatory"))).status).toBe(200);

    for (const path of [`/organizations/${org}`, `/organizations/${org}/workspaces`]) {
      const refused = await api("GET", path, { token: member.token });
      expect(refused.status, path).toBe(403);
      expect(refused.body.errors[0].detail).toContain("requires two-factor authentication");
      expect(refused.body.errors[0].detail).toContain("/app/settings/two-factor");
    }
    const page = await ui("GET", `/app/${org}/workspaces`, { cookie: session });
    expect(page.status).toBe(403);
    expect(page.text).toContain("requires two-factor authentication");
    expect(page.text).toContain('<a id="error-next" href="/app/settings/two-factor">');
    // Tokens that are no person's are not members: the team's token keeps working.
    expect((await api("GET", `/organizations/${org}/workspaces`, { token: team.token })).status).toBe(200);

    const { recovery } = await enrol(session);
    expect(recovery).toHaveLength(10);
    expect((await api("GET", `/organizations/${org}/workspaces`, { token: member.token })).status).toBe(200);
    expect((await ui("GET", `/app/${org}/workspaces`, { cookie: session })).status).toBe(200);

    // Back to password: everyone in again (the member's two-factor authentication stays, and is no longer needed).
    expect((await api("PATCH", `/organizations/${org}`, policy("password"))).status).toBe(200);
    const other = await makeUser({ teams: [team.id] });
    expect((await api("GET", `/organizations/${org}`, { token: other.token })).status).toBe(200);
  });

  it("is required only by someone who has it; an owner without it keeps the settings, to switch it back", async () => {
    const owner = await makeUser();
    const org = await createOrg(owner.token);
    const refused = await api("PATCH", `/organizations/${org}`, { token: owner.token, ...policy("two_factor_mandatory") });
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0].source.pointer).toBe("/data/attributes/collaborator-auth-policy");
    expect((await api("GET", `/organizations/${org}`)).body.data.attributes["collaborator-auth-policy"]).toBe("password");
    const created = await api("POST", "/organizations", {
      token: owner.token,
      body: { data: { type: "organizations", attributes: { name: `${org}-2`, email: "o@example.com", "collaborator-auth-policy": "two_factor_mandatory" } } },
    });
    expect(created.status).toBe(422);

    // The site admin requires it: the owner, without two-factor authentication, reaches only the settings.
    expect((await api("PATCH", `/organizations/${org}`, policy("two_factor_mandatory"))).status).toBe(200);
    expect((await api("GET", `/organizations/${org}/workspaces`, { token: owner.token })).status).toBe(403);
    const session = await signInWithToken(owner.token);
    const settings = await ui("GET", `/app/${org}/settings`, { cookie: session });
    expect(settings.status).toBe(200);
    expect(settings.text).toMatch(/name="require-two-factor"[^>]*checked/);
    const back = await api("PATCH", `/organizations/${org}`, { token: owner.token, ...policy("password") });
    expect(back.status).toBe(200);
    expect((await api("GET", `/organizations/${org}/workspaces`, { token: owner.token })).status).toBe(200);
  });

  it("is offered by the settings page to an owner with two-factor authentication", async () => {
    const owner = await makeUser();
    const org = await createOrg(owner.token);
    const session = await signInWithToken(owner.token);
    const form = { email: "ops@example.com", name: org, "default-execution-mode": "remote", "session-timeout": "", "session-remember": "" };
    const refused = await ui("POST", `/app/${org}/settings`, { cookie: session, form: { ...form, "require-two-factor": "on" } });
    expect(refused.status).toBe(422);
    expect(refused.text).toContain("Enable two-factor authentication for your own account");
    await enrol(session);
    const saved = await ui("POST", `/app/${org}/settings`, { cookie: session, form: { ...form, "require-two-factor": "on" } });
    expect(saved.status).toBe(303);
    expect((await api("GET", `/organizations/${org}`)).body.data.attributes["collaborator-auth-policy"]).toBe("two_factor_mandatory");
    expect((await ui("GET", `/app/${org}/workspaces`, { cookie: session })).status).toBe(200);
    expect((await ui("POST", `/app/${org}/settings`, { cookie: session, form })).status).toBe(303);
    expect((await api("GET", `/organizations/${org}`)).body.data.attributes["collaborator-auth-policy"]).toBe("password");
  });
});

describe("an invitation link under two_factor_mandatory", () => {
  it("stops working when its maker no longer reaches the organisation", async () => {
    const owner = await makeUser();
    const org = await createOrg(owner.token);
    const invited = await api("POST", `/organizations/${org}/organization-memberships`, {
      token: owner.token,
      body: { data: { type: "organization-memberships", attributes: { email: `inv-${Date.now()}@example.com` } } },
    });
    expect(invited.status).toBe(201);
    const session = await signInWithToken(owner.token);
    const made = await ui("POST", `/app/${org}/invitations/${invited.body.data.id}/link`, { cookie: session });
    const link = /<code id="new-link">http:\/\/localhost(\/app\/password\/[A-Za-z0-9]+)<\/code>/.exec(made.text)![1]!;
    expect((await ui("GET", link)).status).toBe(200);
    expect(
      (
        await api("PATCH", `/organizations/${org}`, {
          body: { data: { type: "organizations", attributes: { "collaborator-auth-policy": "two_factor_mandatory" } } },
        })
      ).status,
    ).toBe(200);
    expect((await ui("GET", link)).status).toBe(410);
  });
});
