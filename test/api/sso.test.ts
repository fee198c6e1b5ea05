// Single sign-on through the operator's OpenID Connect provider, as a browser meets it: /app/sso/start, the provider's
// answer at /app/sso/callback (state, code, PKCE, the ID token's signature, issuer, audience, expiry and nonce),
// users made at their first sign-in, teams following groups, and the organisations' `sso-required`. The provider is a
// stand-in (test/sso/fake-idp.ts) reached through the Worker's own fetch; test/node/sso.oidc-provider.test.ts runs the
// same flow against a real one.
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import app from "../../src/index";
import { forgetProviders } from "../../src/sso/sso.service";
import { createOrg, makeTeam, makeUser, organizationId } from "../fixtures";
import { ADMIN, api, uniqueName } from "../helpers";
import { fakeIdp, type Grant } from "../sso/fake-idp";
import { installFakeFetch } from "../vcs/outbound";

const ORIGIN = "https://sso.example.com";
const CLIENT_ID = "workspace-service";
const SECRET = "client-secret-1";

type Idp = Awaited<ReturnType<typeof fakeIdp>>;

let restore: (() => void) | null = null;
afterEach(() => {
  restore?.();
  restore = null;
  forgetProviders();
});

async function provider(): Promise<Idp> {
  const idp = await fakeIdp(CLIENT_ID, SECRET);
  restore = installFakeFetch({ [idp.host]: idp.handler });
  return idp;
}

const envOf = (idp: Idp | null, extra: Record<string, string> = {}) =>
  ({
    ...env,
    OIDC_ISSUER: idp?.issuer ?? "",
    OIDC_CLIENT_ID: CLIENT_ID,
    OIDC_CLIENT_SECRET: SECRET,
    OIDC_GROUPS_CLAIM: "groups",
    OIDC_OWNERS_GROUP: "",
    ...extra,
  }) as typeof env;

async function ui(e: typeof env, path: string, cookie?: string, form?: Record<string, string>): Promise<{ status: number; headers: Headers; text: string }> {
  const headers: Record<string, string> = { "CF-Connecting-IP": "203.0.113.9" };
  if (cookie) headers.Cookie = cookie;
  if (form) Object.assign(headers, { "Content-Type": "application/x-www-form-urlencoded", Origin: ORIGIN });
  const pending: Promise<unknown>[] = [];
  const ctx = { waitUntil: (p: Promise<unknown>) => pending.push(p), passThroughOnException() {}, props: {} } as unknown as ExecutionContext;
  const init = { method: form ? "POST" : "GET", headers, body: form ? new URLSearchParams(form).toString() : undefined, redirect: "manual" } as const;
  const res = await app.fetch(new Request(new URL(path, ORIGIN), init), e, ctx);
  const text = await res.text();
  await Promise.allSettled(pending);
  return { status: res.status, headers: res.headers, text };
}

const cookieOf = (res: { headers: Headers }, name: string): string | null => {
  const m = new RegExp(`${name}=([A-Za-z0-9]+)`).exec(res.headers.get("Set-Cookie") ?? "");
  return m ? `${name}=${m[1]}` : null;
};

const pathOf = (url: string) => {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
};

/** Starts a sign-in, lets the provider answer with `grant`, and returns to the callback with the start's cookie. */
async function ssoSignIn(idp: Idp, grant: Grant = {}, opts: { env?: typeof env; next?: string; state?: string } = {}) {
  const e = opts.env ?? envOf(idp);
  const start = await ui(e, `/app/sso/start${opts.next ? `?next=${encodeURIComponent(opts.next)}` : ""}`);
  expect(start.status).toBe(303);
  const location = start.headers.get("Location") ?? "";
  const ssoCookie = cookieOf(start, "ws_sso") ?? "";
  const { code, callback } = idp.authorize(location, grant, { state: opts.state });
  const back = await ui(e, pathOf(callback), ssoCookie);
  return { back, session: cookieOf(back, "ws_session"), location, ssoCookie, code, callback };
}

const userOfSubject = (issuer: string, subject: string) =>
  env.DB.prepare("SELECT u.id, u.username, u.email FROM sso_identities i JOIN users u ON u.id = i.user_id WHERE i.issuer = ? AND i.subject = ?")
    .bind(issuer, subject)
    .first<{ id: string; username: string; email: string | null }>();

async function membersOf(teamId: string): Promise<string[]> {
  const res = await api("GET", `/teams/${teamId}`);
  expect(res.status).toBe(200);
  return (res.body.data.relationships.users.data as Array<{ id: string }>).map((u) => u.id);
}

describe("SSO sign-in", () => {
  it("sends the browser to the provider with PKCE (S256), state and nonce, and tells the callback apart by a Lax cookie", async () => {
    const idp = await provider();
    const start = await ui(envOf(idp), "/app/sso/start?next=%2Fapp%2Fsome%2Fpage");
    expect(start.status).toBe(303);
    const to = new URL(start.headers.get("Location") ?? "");
    expect(`${to.origin}${to.pathname}`).toBe(`${idp.issuer}/auth`);
    const p = to.searchParams;
    expect(p.get("client_id")).toBe(CLIENT_ID);
    expect(p.get("redirect_uri")).toBe(`${ORIGIN}/app/sso/callback`);
    expect(p.get("response_type")).toBe("code");
    expect(p.get("scope")?.split(" ")).toEqual(expect.arrayContaining(["openid", "email", "profile", "groups"]));
    expect(p.get("code_challenge_method")).toBe("S256");
    expect(p.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(p.get("state")?.length).toBeGreaterThan(20);
    expect(p.get("nonce")?.length).toBeGreaterThan(20);
    const setCookie = start.headers.get("Set-Cookie") ?? "";
    expect(setCookie).toMatch(/ws_sso=[A-Za-z0-9]+/);
    expect(setCookie).toMatch(/SameSite=Lax/i);
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/Path=\/app\/sso/);
  });

  it("makes a user at the first sign-in (named after preferred_username, else the e-mail, made unique) and signs the same one in again", async () => {
    const idp = await provider();
    const name = uniqueName("alice");
    const first = await ssoSignIn(
      idp,
      { claims: { sub: "alice-sub", preferred_username: name, email: `${name}@corp.example` } },
      { next: "/app/settings/tokens" },
    );
    expect(first.back.status).toBe(200);
    expect(first.back.text).toContain('content="0;url=/app/settings/tokens"');
    expect(first.session).not.toBeNull();
    const alice = await userOfSubject(idp.issuer, "alice-sub");
    expect(alice).toMatchObject({ username: name, email: `${name}@corp.example` });
    // The session is that user's: a signed-in page answers.
    const page = await ui(envOf(idp), "/app/settings/tokens", first.session!);
    expect(page.status).toBe(200);
    expect(page.text).toContain(name);

    const again = await ssoSignIn(idp, { claims: { sub: "alice-sub", preferred_username: "renamed-at-idp" } });
    expect(again.back.status).toBe(200);
    expect((await userOfSubject(idp.issuer, "alice-sub"))?.id).toBe(alice!.id);

    // Another identity asking for the same name gets it made unique; one without preferred_username, the e-mail's local part.
    await ssoSignIn(idp, { claims: { sub: "other-sub", preferred_username: name } });
    expect((await userOfSubject(idp.issuer, "other-sub"))?.username).toBe(`${name}-2`);
    const local = uniqueName("bob");
    await ssoSignIn(idp, { claims: { sub: "bob-sub", email: `${local}@corp.example` } });
    expect((await userOfSubject(idp.issuer, "bob-sub"))?.username).toBe(local);
    // The identity is (issuer, subject): the same e-mail under another subject is another user.
    await ssoSignIn(idp, { claims: { sub: "bob-sub-2", email: `${local}@corp.example` } });
    const bob2 = await userOfSubject(idp.issuer, "bob-sub-2");
    expect(bob2?.username).toBe(`${local}-2`);
  });

  it("offers SSO on the sign-in page only when the operator configured it", async () => {
    const idp = await provider();
    const on = await ui(envOf(idp), "/app/session/new?next=%2Fapp%2Foauth%2Fauthorize%3Fx%3D1");
    expect(on.status).toBe(200);
    expect(on.text).toContain('id="sso-sign-in"');
    expect(on.text).toContain(`href="/app/sso/start?next=%2Fapp%2Foauth%2Fauthorize%3Fx%3D1"`);
    const off = await ui(envOf(null), "/app/session/new");
    expect(off.text).not.toContain("sso-sign-in");
    expect((await ui(envOf(null), "/app/sso/start")).status).toBe(404);
  });
});

describe("SSO callback checks", () => {
  /** A refused callback: 401, no session, and the check that failed named on the page (`why`). */
  const refused = async (idp: Idp, grant: Grant, why: string, opts: { state?: string } = {}) => {
    const r = await ssoSignIn(idp, { ...grant, claims: { sub: uniqueName("sub"), ...grant.claims } }, opts);
    expect(r.back.status).toBe(401);
    expect(r.session).toBeNull();
    expect(r.back.text).toContain("Sign-in refused");
    expect(r.back.text).toContain(why);
    return r;
  };

  it("refuses a callback with another state, and the sign-in is used up", async () => {
    const idp = await provider();
    const r = await refused(idp, {}, "state", { state: "forged-state" });
    // The right state afterwards finds nothing under way.
    const again = await ui(envOf(idp), pathOf(idp.callbackFor(r.location, r.code)), r.ssoCookie);
    expect(again.status).toBe(400);
    expect(again.text).toContain("Sign-in expired");
    expect(cookieOf(again, "ws_session")).toBeNull();
  });

  it("refuses a callback without the start's cookie", async () => {
    const idp = await provider();
    const start = await ui(envOf(idp), "/app/sso/start");
    const { callback } = idp.authorize(start.headers.get("Location") ?? "", { claims: { sub: "nocookie" } });
    const back = await ui(envOf(idp), pathOf(callback));
    expect(back.status).toBe(400);
    expect(cookieOf(back, "ws_session")).toBeNull();
  });

  it("refuses a replayed code (the provider refuses its second use)", async () => {
    const idp = await provider();
    const first = await ssoSignIn(idp, { claims: { sub: "replay-sub" } });
    expect(first.back.status).toBe(200);
    // A new sign-in under way, answered with the code already used.
    const start = await ui(envOf(idp), "/app/sso/start");
    const location = start.headers.get("Location") ?? "";
    const back = await ui(envOf(idp), pathOf(idp.callbackFor(location, first.code)), cookieOf(start, "ws_sso") ?? "");
    expect(back.status).toBe(401);
    expect(back.text).toContain("error in the response body");
    expect(cookieOf(back, "ws_session")).toBeNull();
    expect(idp.tokenRequests.at(-1)?.get("code")).toBe(first.code);
  });

  it("sends the PKCE verifier and the client's credentials with the code", async () => {
    const idp = await provider();
    const r = await ssoSignIn(idp, { claims: { sub: "pkce-sub" } });
    expect(r.back.status).toBe(200);
    const sent = idp.tokenRequests.at(-1)!;
    expect(sent.get("grant_type")).toBe("authorization_code");
    expect(sent.get("code_verifier")).toMatch(/^[A-Za-z0-9_-]{43,128}$/);
    expect(sent.get("redirect_uri")).toBe(`${ORIGIN}/app/sso/callback`);
  });

  it("refuses an ID token for another audience", async () => {
    await refused(await provider(), { claims: { aud: "another-client" } }, "(audience) claim value");
  });

  it("refuses an expired ID token", async () => {
    const now = Math.floor(Date.now() / 1000);
    await refused(await provider(), { claims: { iat: now - 7200, exp: now - 3600 } }, "expiration is past");
  });

  it("refuses an unsigned ID token (alg none)", async () => {
    await refused(await provider(), { signing: "none" }, "alg");
  });

  it("refuses an ID token signed with a key the provider does not publish", async () => {
    await refused(await provider(), { signing: "unknown-key" }, "signature verification failed");
  });

  it("refuses an ID token from another issuer", async () => {
    await refused(await provider(), { claims: { iss: "https://elsewhere.example.net" } }, "(issuer) claim value");
  });

  it("refuses an ID token with another nonce", async () => {
    await refused(await provider(), { claims: { nonce: "not-the-one-sent" } }, "nonce");
  });

  it("makes no user and no identity when refused", async () => {
    const idp = await provider();
    await refused(idp, { claims: { sub: "never-made", aud: "x" } }, "(audience) claim value");
    expect(await userOfSubject(idp.issuer, "never-made")).toBeNull();
  });
});

describe("SSO team mapping", () => {
  it("makes the user's memberships exactly the teams its groups name (sso-team-id or name), and ignores unknown groups", async () => {
    const idp = await provider();
    const org = await createOrg();
    const byName = await makeTeam(org);
    const byId = await makeTeam(org);
    const manual = await makeTeam(org);
    const nameOf = async (id: string) => (await api("GET", `/teams/${id}`)).body.data.attributes.name as string;
    const patched = await api("PATCH", `/teams/${byId.id}`, { body: { data: { type: "teams", attributes: { "sso-team-id": "00000000-guid-devs" } } } });
    expect(patched.status).toBe(200);
    expect(patched.body.data.attributes["sso-team-id"]).toBe("00000000-guid-devs");
    const teamsBefore = (await api("GET", `/organizations/${org}/teams`)).body.data.length;

    const sub = uniqueName("carol");
    await ssoSignIn(idp, { claims: { sub, groups: [await nameOf(byName.id), "00000000-guid-devs", "no-such-team"] } });
    const carol = (await userOfSubject(idp.issuer, sub))!;
    expect(await membersOf(byName.id)).toContain(carol.id);
    expect(await membersOf(byId.id)).toContain(carol.id);
    // No team was made for the unknown group.
    expect((await api("GET", `/organizations/${org}/teams`)).body.data.length).toBe(teamsBefore);

    // Added by hand; then the groups change: memberships follow them, the manual one included.
    await api("POST", `/teams/${manual.id}/relationships/users`, { body: { data: [{ type: "users", id: carol.username }] } });
    expect(await membersOf(manual.id)).toContain(carol.id);
    await ssoSignIn(idp, { claims: { sub, groups: ["00000000-guid-devs"] } });
    expect(await membersOf(byName.id)).not.toContain(carol.id);
    expect(await membersOf(byId.id)).toContain(carol.id);
    expect(await membersOf(manual.id)).not.toContain(carol.id);

    // Names match exactly: another case is another group.
    await ssoSignIn(idp, { claims: { sub, groups: [(await nameOf(byName.id)).toUpperCase()] } });
    expect(await membersOf(byName.id)).not.toContain(carol.id);
    expect(await membersOf(byId.id)).not.toContain(carol.id);

    // No groups claim at all: memberships stay as they are.
    await ssoSignIn(idp, { claims: { sub, groups: [await nameOf(byName.id)] } });
    await ssoSignIn(idp, { claims: { sub } });
    expect(await membersOf(byName.id)).toContain(carol.id);
  });

  it("sets a team's SSO team id on its page, and clears it with an empty field", async () => {
    const org = await createOrg();
    const team = await makeTeam(org);
    const owner = await makeUser({ ownerOf: org });
    const { signInAsUser } = await import("../../src/ui/sessions/sessions.service");
    const session = `ws_session=${await signInAsUser(env, owner.id, "password")}`;
    const name = (await api("GET", `/teams/${team.id}`)).body.data.attributes.name as string;
    const saved = await ui(envOf(null), `/app/${org}/teams/${team.id}`, session, { name, visibility: "secret", "sso-team-id": "grp-1234" });
    expect(saved.status).toBe(303);
    expect((await api("GET", `/teams/${team.id}`)).body.data.attributes["sso-team-id"]).toBe("grp-1234");
    expect((await ui(envOf(null), `/app/${org}/teams/${team.id}`, session)).text).toContain('<dd id="sso-team-id">grp-1234</dd>');
    await ui(envOf(null), `/app/${org}/teams/${team.id}`, session, { name, visibility: "secret", "sso-team-id": "" });
    expect((await api("GET", `/teams/${team.id}`)).body.data.attributes["sso-team-id"]).toBeNull();
  });

  it("reads the groups claim the operator names", async () => {
    const idp = await provider();
    const org = await createOrg();
    const team = await makeTeam(org);
    const name = (await api("GET", `/teams/${team.id}`)).body.data.attributes.name as string;
    const sub = uniqueName("dave");
    await ssoSignIn(idp, { claims: { sub, roles: [name], groups: [] } }, { env: envOf(idp, { OIDC_GROUPS_CLAIM: "roles" }) });
    expect(await membersOf(team.id)).toContain((await userOfSubject(idp.issuer, sub))!.id);
  });

  it("never assigns or removes owners by the mapping unless the operator names an owners group", async () => {
    const idp = await provider();
    const org = await createOrg();
    const owners = ((await api("GET", `/organizations/${org}/teams`)).body.data as Array<{ id: string; attributes: { name: string } }>).find(
      (t) => t.attributes.name === "owners",
    )!;
    const sub = uniqueName("erin");
    await ssoSignIn(idp, { claims: { sub, groups: ["owners"] } });
    const erin = (await userOfSubject(idp.issuer, sub))!;
    expect(await membersOf(owners.id)).not.toContain(erin.id);

    // The operator names its owners group, and the owners team carries it as its SSO team id.
    expect((await api("PATCH", `/teams/${owners.id}`, { body: { data: { type: "teams", attributes: { "sso-team-id": "tf-owners" } } } })).status).toBe(200);
    const withOwners = envOf(idp, { OIDC_OWNERS_GROUP: "tf-owners" });
    await ssoSignIn(idp, { claims: { sub, groups: ["tf-owners"] } }, { env: withOwners });
    expect(await membersOf(owners.id)).toContain(erin.id);
    const page = await api("GET", `/organizations/${org}`, { token: (await makeUser()).token });
    expect(page.status).toBe(404);
    // Without the owners group configured, an owner stays one whatever its groups say.
    await ssoSignIn(idp, { claims: { sub, groups: [] } });
    expect(await membersOf(owners.id)).toContain(erin.id);
    // With it, leaving the group leaves the team (the team keeps its other owner).
    await ssoSignIn(idp, { claims: { sub, groups: [] } }, { env: withOwners });
    expect(await membersOf(owners.id)).not.toContain(erin.id);
    expect((await membersOf(owners.id)).length).toBeGreaterThan(0);
  });
});

describe("an organisation requiring SSO", () => {
  async function passwordSessionOf(userId: string): Promise<string> {
    const { signInAsUser } = await import("../../src/ui/sessions/sessions.service");
    return `ws_session=${await signInAsUser(env, userId, "password")}`;
  }
  async function ssoSessionOf(userId: string): Promise<string> {
    const { signInAsUser } = await import("../../src/ui/sessions/sessions.service");
    return `ws_session=${await signInAsUser(env, userId, "sso")}`;
  }

  it("is refused while single sign-on is not configured (422), and taken once it is", async () => {
    const org = await createOrg();
    const res = await api("PATCH", `/organizations/${org}`, { body: { data: { type: "organizations", attributes: { "sso-required": true } } } });
    expect(res.status).toBe(422);
    expect(res.body.errors[0].source.pointer).toBe("/data/attributes/sso-required");
    expect((await api("GET", `/organizations/${org}`)).body.data.attributes["sso-required"]).toBe(false);

    const idp = await provider();
    const on = await app.fetch(
      new Request(`${ORIGIN}/api/v2/organizations/${org}`, {
        method: "PATCH",
        headers: { Authorization: `Bearer ${ADMIN}`, "Content-Type": "application/vnd.api+json" },
        body: JSON.stringify({ data: { type: "organizations", attributes: { "sso-required": true } } }),
      }),
      envOf(idp),
    );
    expect(on.status).toBe(200);
    expect((await api("GET", `/organizations/${org}`)).body.data.attributes["sso-required"]).toBe(true);
  });

  it("refuses its members' password sessions there (with the way to SSO), not their SSO sessions, tokens, or owners", async () => {
    const org = await createOrg();
    const team = await makeTeam(org, { "read-workspaces": true });
    const member = await makeUser({ teams: [team.id] });
    const owner = await makeUser({ ownerOf: org });
    await env.DB.prepare(`UPDATE organizations SET attrs = json_set(attrs, '$."sso-required"', json('true')) WHERE external_id = ?`)
      .bind(await organizationId(org))
      .run();
    const e = envOf(null);

    const byPassword = await ui(e, `/app/${org}/workspaces`, await passwordSessionOf(member.id));
    expect(byPassword.status).toBe(403);
    expect(byPassword.text).toContain("Single sign-on required");
    expect(byPassword.text).toContain(`href="/app/sso/start?next=%2Fapp%2F${org}%2Fworkspaces"`);
    expect((await ui(e, `/app/${org}/workspaces`, await ssoSessionOf(member.id))).status).toBe(200);
    expect((await ui(e, `/app/${org}/workspaces`, await passwordSessionOf(owner.id))).status).toBe(200);
    // A token keeps working, in the API and pasted into a session.
    expect((await api("GET", `/organizations/${org}/workspaces`, { token: member.token })).status).toBe(200);
    // Another organisation of the same member is not concerned.
    const other = await createOrg();
    const otherTeam = await makeTeam(other, { "read-workspaces": true });
    await api("POST", `/teams/${otherTeam.id}/relationships/users`, { body: { data: [{ type: "users", id: `u-${member.id}` }] } });
    expect((await ui(e, `/app/${other}/workspaces`, await passwordSessionOf(member.id))).status).toBe(200);
  });
});
