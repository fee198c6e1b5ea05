// `terraform login` (login.v1): discovery, the authorization page's checks, approve and deny, and the token
// endpoint's exchange (one use, expiry, PKCE, redirect URI), as Terraform's login command drives them.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createOrg, makeOrgToken, makeUser } from "../fixtures";
import { api } from "../helpers";
import { signIn, ui } from "../ui-client";

const DAY_MS = 86_400_000;

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

/** A PKCE pair shaped as Terraform makes it: a UUID-like verifier with a numeric suffix, and its S256 challenge. */
async function pkce() {
  const verifier = `${crypto.randomUUID()}.${String(Math.floor(Math.random() * 999_999_999)).padStart(9, "0")}`;
  const challenge = base64url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))));
  return { verifier, challenge };
}

function authorizeQuery(over: Record<string, string | undefined> = {}, challenge = "x".repeat(43)) {
  const q: Record<string, string> = {
    client_id: "terraform-cli",
    redirect_uri: "http://localhost:10005/login",
    response_type: "code",
    state: crypto.randomUUID(),
    code_challenge: challenge,
    code_challenge_method: "S256",
  };
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined) delete q[k];
    else q[k] = v;
  }
  return q;
}

const authorizePath = (q: Record<string, string>) => `/app/oauth/authorize?${new URLSearchParams(q).toString()}`;

async function token(form: Record<string, string>, contentType = "application/x-www-form-urlencoded") {
  const res = await exports.default.fetch(
    new Request("http://localhost/oauth/token", { method: "POST", headers: { "Content-Type": contentType }, body: new URLSearchParams(form).toString() }),
  );
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, string> };
}

/** Approves a login as the session's user: the code and the state the callback carries. */
async function approve(cookie: string, q: Record<string, string>) {
  const res = await ui("POST", "/app/oauth/authorize/approve", { cookie, form: q });
  expect(res.status).toBe(303);
  const to = new URL(res.headers.get("Location") ?? "");
  expect(`${to.origin}${to.pathname}`).toBe(q.redirect_uri);
  expect(to.searchParams.get("state")).toBe(q.state);
  return to.searchParams.get("code") ?? "";
}

async function loginAs(user: { token: string }) {
  const cookie = await signIn(user.token);
  const { verifier, challenge } = await pkce();
  const q = authorizeQuery({}, challenge);
  const code = await approve(cookie, q);
  const exchange = { grant_type: "authorization_code", code, redirect_uri: q.redirect_uri, client_id: "terraform-cli", code_verifier: verifier };
  return { cookie, q, code, verifier, exchange };
}

describe("login.v1 discovery", () => {
  it("advertises the authorization code grant for terraform-cli with its endpoints and callback ports", async () => {
    const res = await exports.default.fetch(new Request("http://localhost/.well-known/terraform.json"));
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body["login.v1"]).toEqual({
      client: "terraform-cli",
      grant_types: ["authz_code"],
      authz: "/app/oauth/authorize",
      token: "/oauth/token",
      ports: [10000, 10010],
    });
    // Terraform resolves them against the discovery URL: both are served there.
    expect((await ui("GET", authorizePath(authorizeQuery()))).status).toBe(303);
    expect((await token({ grant_type: "authorization_code" })).status).toBe(400);
  });
});

describe("the authorization page", () => {
  const refused: Array<[string, Record<string, string | undefined>]> = [
    ["an unknown client", { client_id: "evil-cli" }],
    ["no client", { client_id: undefined }],
    ["port 9999", { redirect_uri: "http://localhost:9999/login" }],
    ["port 10011", { redirect_uri: "http://localhost:10011/login" }],
    ["no port", { redirect_uri: "http://localhost/login" }],
    ["another host", { redirect_uri: "http://evil.example:10005/login" }],
    ["https", { redirect_uri: "https://localhost:10005/login" }],
    ["another path", { redirect_uri: "http://localhost:10005/callback" }],
    ["a query", { redirect_uri: "http://localhost:10005/login?to=evil" }],
    ["credentials", { redirect_uri: "http://user@localhost:10005/login" }],
    ["no PKCE", { code_challenge: undefined, code_challenge_method: undefined }],
    ["plain PKCE", { code_challenge_method: "plain" }],
    ["another response type", { response_type: "token" }],
    ["no state", { state: undefined }],
  ];

  it("refuses a bad request with an error page and never redirects, signed in or not", async () => {
    const user = await makeUser();
    const cookie = await signIn(user.token);
    for (const [what, over] of refused) {
      for (const c of [undefined, cookie]) {
        const res = await ui("GET", authorizePath(authorizeQuery(over)), { cookie: c });
        expect(res.status, what).toBe(400);
        expect(res.headers.get("Location"), what).toBeNull();
        expect(res.text, what).toContain("Login request refused");
        expect(res.text, what).not.toContain('id="approve"');
      }
    }
  });

  it("a good request accepts 127.0.0.1 and every port of the range", async () => {
    const cookie = await signIn((await makeUser()).token);
    for (const uri of ["http://127.0.0.1:10000/login", "http://localhost:10010/login"]) {
      expect((await ui("GET", authorizePath(authorizeQuery({ redirect_uri: uri })), { cookie })).status, uri).toBe(200);
    }
  });

  it("sends a user who is not signed in through sign-in and back", async () => {
    const user = await makeUser();
    const path = authorizePath(authorizeQuery());
    const anon = await ui("GET", path);
    expect(anon.status).toBe(303);
    const signInAt = anon.headers.get("Location") ?? "";
    expect(new URL(signInAt, "http://localhost").searchParams.get("next")).toBe(path);
    const form = await ui("GET", signInAt);
    expect(form.text).toContain('name="next"');
    const back = await ui("POST", "/app/session", { form: { token: user.token, next: path } });
    expect(back.status).toBe(303);
    expect(back.headers.get("Location")).toBe(path);
  });

  it("returns only to this site's /app pages after sign-in", async () => {
    const user = await makeUser();
    for (const next of ["//evil.example/app", "https://evil.example/app", "/\\evil.example/app", "/api/v2/organizations", "/appx", "javascript:alert(1)"]) {
      const res = await ui("POST", "/app/session", { form: { token: user.token, next } });
      expect(res.headers.get("Location"), next).toBe("/app");
    }
  });

  it("shows who asks and where the answer goes; the page's forms may post only here and to that listener", async () => {
    const user = await makeUser();
    const cookie = await signIn(user.token);
    const res = await ui("GET", authorizePath(authorizeQuery()), { cookie });
    expect(res.status).toBe(200);
    expect(res.text).toContain("Terraform CLI");
    expect(res.text).toContain("localhost:10005");
    expect(res.text).toContain(`u-${user.id}`);
    expect(res.text).toContain('id="approve"');
    expect(res.text).toContain('id="deny"');
    expect(res.headers.get("Content-Security-Policy")).toContain("form-action 'self' http://localhost:10005;");
    // Other pages keep their own policy.
    expect((await ui("GET", "/app", { cookie })).headers.get("Content-Security-Policy")).toContain("form-action 'self';");
  });

  it("deny redirects to the listener with access_denied and the state", async () => {
    const cookie = await signIn((await makeUser()).token);
    const q = authorizeQuery();
    const res = await ui("POST", "/app/oauth/authorize/deny", { cookie, form: q });
    expect(res.status).toBe(303);
    const to = new URL(res.headers.get("Location") ?? "");
    expect(`${to.origin}${to.pathname}`).toBe("http://localhost:10005/login");
    expect(to.searchParams.get("error")).toBe("access_denied");
    expect(to.searchParams.get("state")).toBe(q.state);
    expect(to.searchParams.get("code")).toBeNull();
  });

  it("a posted request is checked again: an altered redirect URI gets an error page, no redirect and no code", async () => {
    const cookie = await signIn((await makeUser()).token);
    for (const path of ["/app/oauth/authorize/approve", "/app/oauth/authorize/deny"]) {
      const res = await ui("POST", path, { cookie, form: authorizeQuery({ redirect_uri: "http://evil.example:10005/login" }) });
      expect(res.status, path).toBe(400);
      expect(res.headers.get("Location"), path).toBeNull();
    }
  });

  it("a cross-site approve is refused (CSRF)", async () => {
    const cookie = await signIn((await makeUser()).token);
    const res = await ui("POST", "/app/oauth/authorize/approve", { cookie, form: authorizeQuery(), origin: "https://evil.example" });
    expect(res.status).toBe(403);
    expect(res.headers.get("Location")).toBeNull();
  });

  it("a team or organisation token's session cannot approve: no button, and a forged POST is refused", async () => {
    const org = await createOrg();
    const cookie = await signIn((await makeOrgToken(org)).token);
    const page = await ui("GET", authorizePath(authorizeQuery()), { cookie });
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('id="approve"');
    const forged = await ui("POST", "/app/oauth/authorize/approve", { cookie, form: authorizeQuery() });
    expect(forged.status).toBe(404);
    expect(forged.headers.get("Location")).toBeNull();
  });
});

describe("the token endpoint", () => {
  it("exchanges an approved code for a new user token the API accepts", async () => {
    const user = await makeUser();
    const { exchange } = await loginAs(user);
    const res = await token(exchange);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toMatch(/^application\/json/);
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    expect(res.body.token_type).toBe("bearer");
    expect(res.body.access_token).toMatch(/^[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9]{67}$/);
    const me = await api("GET", "/account/details", { token: res.body.access_token });
    expect(me.status).toBe(200);
    expect(me.body.data.id).toBe(user.id);
  });

  it("a code works once: a replay is invalid_grant", async () => {
    const { exchange } = await loginAs(await makeUser());
    expect((await token(exchange)).status).toBe(200);
    const again = await token(exchange);
    expect(again.status).toBe(400);
    expect(again.body.error).toBe("invalid_grant");
  });

  it("a wrong verifier is invalid_grant, and spends the code", async () => {
    const { exchange } = await loginAs(await makeUser());
    const wrong = await token({ ...exchange, code_verifier: (await pkce()).verifier });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe("invalid_grant");
    // Whoever holds a stolen code gets one try: the right verifier afterwards is refused too.
    expect((await token(exchange)).body.error).toBe("invalid_grant");
  });

  it("a redirect URI other than the authorization request's is invalid_grant", async () => {
    const { exchange } = await loginAs(await makeUser());
    const res = await token({ ...exchange, redirect_uri: "http://localhost:10006/login" });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("invalid_grant");
  });

  it("an expired code is invalid_grant", async () => {
    const { exchange } = await loginAs(await makeUser());
    await env.DB.prepare("UPDATE oauth_login_codes SET expires_at = ?")
      .bind(new Date(Date.now() - 1000).toISOString())
      .run();
    const res = await token(exchange);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("invalid_grant");
  });

  it("of two concurrent exchanges of one code, exactly one gets a token", async () => {
    const { exchange } = await loginAs(await makeUser());
    const results = await Promise.all([token(exchange), token(exchange)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 400]);
    expect(results.find((r) => r.status === 400)?.body.error).toBe("invalid_grant");
  });

  it("answers malformed requests with OAuth errors, leaving the code unspent", async () => {
    const { exchange } = await loginAs(await makeUser());
    const cases: Array<[Record<string, string>, number, string, string?]> = [
      [{ ...exchange, grant_type: "password" }, 400, "unsupported_grant_type"],
      [{ ...exchange, grant_type: "" }, 400, "invalid_request"],
      [{ ...exchange, code_verifier: "" }, 400, "invalid_request"],
      [{ ...exchange, client_id: "evil-cli" }, 401, "invalid_client"],
      [exchange, 400, "invalid_request", "application/json"],
    ];
    for (const [form, status, error, type] of cases) {
      const res = await token(form, type);
      expect(res.status, error).toBe(status);
      expect(res.body.error, error).toBe(error);
    }
    expect((await token(exchange)).status).toBe(200);
  });

  it("an unknown code is invalid_grant", async () => {
    const { verifier } = await pkce();
    const res = await token({
      grant_type: "authorization_code",
      code: "nope",
      redirect_uri: "http://localhost:10005/login",
      client_id: "terraform-cli",
      code_verifier: verifier,
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("invalid_grant");
  });

  it("the minted token is listed with a description naming it, and the user token TTL policy limits it", async () => {
    const org = await createOrg();
    const ws = await api("POST", `/organizations/${org}/workspaces`, { body: { data: { type: "workspaces", attributes: { name: "login-ws" } } } });
    expect(ws.status).toBe(201);
    const user = await makeUser({ ownerOf: org });
    const { exchange } = await loginAs(user);
    const minted = (await token(exchange)).body.access_token;
    const list = await api("GET", `/users/${user.id}/authentication-tokens`, { token: user.token });
    const row = list.body.data.find((t: { attributes: { description: string | null } }) =>
      /^terraform login on \d{4}-\d\d-\d\d \d\d:\d\d UTC$/.test(t.attributes.description ?? ""),
    );
    expect(row).toBeDefined();
    expect(row.attributes.token).toBeNull();
    expect(row.attributes["expired-at"]).not.toBeNull();
    // The organisation's user token policy (1 day), enforced, counts from the token's creation: two days old, it no
    // longer reaches the organisation, as any user token created through the API.
    await env.DB.prepare("UPDATE tokens SET created_at = ? WHERE id = ?")
      .bind(new Date(Date.now() - 2 * DAY_MS).toISOString(), row.id)
      .run();
    const policy = {
      data: { type: "organization-token-ttl-policies", attributes: { "token-ttl-policies": [{ "token-type": "user", "max-ttl-ms": DAY_MS }] } },
    };
    expect((await api("PATCH", `/organizations/${org}/token-ttl-policies`, { body: policy })).status).toBe(200);
    expect((await api("PATCH", `/organizations/${org}`, { body: { data: { type: "organizations", attributes: { "max-ttl-enabled": true } } } })).status).toBe(
      200,
    );
    expect((await api("GET", `/organizations/${org}/workspaces/login-ws`, { token: minted })).status).toBe(401);
    // The user's other (fresh) token still reaches it.
    expect((await api("GET", `/organizations/${org}/workspaces/login-ws`, { token: user.token })).status).toBe(200);
  });

  it("a code whose approving session has ended since is invalid_grant", async () => {
    // Signed out.
    const signedOut = await loginAs(await makeUser());
    expect((await ui("POST", "/app/session/delete", { cookie: signedOut.cookie })).status).toBe(303);
    const res = await token(signedOut.exchange);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: "invalid_grant", error_description: "the session that approved the code has ended" });
    // The token the session stood on revoked.
    const user = await makeUser();
    const revoked = await loginAs(user);
    const list = await api("GET", `/users/${user.id}/authentication-tokens`, { token: user.token });
    expect(list.body.data).toHaveLength(1);
    expect((await api("DELETE", `/authentication-tokens/${list.body.data[0].id}`, { token: user.token })).status).toBe(204);
    expect((await token(revoked.exchange)).body.error).toBe("invalid_grant");
    // A session still standing exchanges as before.
    expect((await token((await loginAs(await makeUser())).exchange)).status).toBe(200);
  });

  it("a code of a user deleted since is invalid_grant", async () => {
    const user = await makeUser();
    const { exchange } = await loginAs(user);
    await env.DB.prepare("DELETE FROM users WHERE id = ?").bind(user.id).run();
    const res = await token(exchange);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("invalid_grant");
  });
});
