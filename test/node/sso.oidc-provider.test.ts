// Single sign-on against a real OpenID Connect provider: panva's `oidc-provider` on a free port, with people in
// groups, and the service as `npm start` runs it, configured with OIDC_ISSUER and the rest. A browser is played with
// fetch and one cookie jar per sign-in: the provider's login and consent forms, the callback, memberships following
// the groups, and `terraform login`'s approval page reached through SSO.
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startService } from "../../scripts/lib/service.mjs";
import { startIdp } from "../../scripts/lib/oidc-idp.mjs";

type Service = { base: string; port: number; token: string; stop: () => Promise<void> };
const root = join(import.meta.dirname, "..", "..");
const CLIENT_ID = "workspace-service";
const CLIENT_SECRET = randomBytes(16).toString("hex");

/** The provider's people: their groups may change between sign-ins. */
let people: Record<string, { email: string; preferred_username?: string; groups?: string[] }> = {};

let work: string;
let service: Service;
let idp: { close: () => Promise<void> };
let issuer: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "sso-test-"));
  const idpPort = (await freePort()) as number;
  issuer = `http://127.0.0.1:${idpPort}`;
  service = (await startService({
    root,
    logFile: join(work, "service.log"),
    env: {
      NO_AGENT: "1",
      OIDC_ISSUER: issuer,
      OIDC_CLIENT_ID: CLIENT_ID,
      OIDC_CLIENT_SECRET: CLIENT_SECRET,
      OIDC_GROUPS_CLAIM: "groups",
      // The provider is on loopback, over http: allowed for this run only.
      OUTBOUND_ALLOW_PRIVATE: "1",
    },
  })) as Service;
  const started = await startIdp({ port: idpPort, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, redirectUri: `${service.base}/app/sso/callback` });
  idp = started;
  people = started.people;
}, 300_000);

afterAll(async () => {
  await idp?.close();
  await service?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
}, 60_000);

/** A browser: cookies per origin, redirects followed by hand (each answer is returned to the caller at the service). */
function browser() {
  const jar = new Map<string, Map<string, string>>();
  async function go(url: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<Response> {
    const u = new URL(url);
    const cookies = jar.get(u.host) ?? new Map<string, string>();
    jar.set(u.host, cookies);
    const headers: Record<string, string> = {};
    if (cookies.size) headers.Cookie = [...cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    let body: string | undefined;
    if (init.form) {
      body = new URLSearchParams(init.form).toString();
      headers["Content-Type"] = "application/x-www-form-urlencoded";
      headers.Origin = u.origin;
    }
    const res = await fetch(url, { method: init.method ?? (init.form ? "POST" : "GET"), headers, body, redirect: "manual" });
    for (const c of res.headers.getSetCookie()) {
      const [pair, ...attrs] = c.split(";");
      const i = pair!.indexOf("=");
      const name = pair!.slice(0, i).trim();
      const value = pair!.slice(i + 1).trim();
      if (!value || attrs.some((a) => /max-age=0\b/i.test(a.trim()) || /expires=thu, 01 jan 1970/i.test(a.trim()))) cookies.delete(name);
      else cookies.set(name, value);
    }
    return res;
  }
  return { go, jar };
}

/**
 * Signs `who` in from `startUrl` (a service page): through the provider's login and consent forms, back to the
 * callback. Resolves the callback's answer and the browser.
 */
async function signInThroughProvider(who: string, startUrl: string, b = browser()) {
  let res = await b.go(startUrl);
  for (let step = 0; step < 20; step++) {
    const location = res.headers.get("location");
    if (res.status >= 300 && res.status < 400 && location) {
      const next = new URL(location, res.url || startUrl).toString();
      // The callback is the service's: hand it back.
      if (next.startsWith(`${service.base}/app/sso/callback`)) return { callback: await b.go(next), b };
      res = await b.go(next);
      continue;
    }
    const html = await res.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    const prompt = /name="prompt" value="(login|consent)"/.exec(html)?.[1];
    if (!action || !prompt) throw new Error(`unexpected page (${res.status}) at ${res.url}: ${html.slice(0, 500)}`);
    const target = new URL(action, issuer).toString();
    res = await b.go(target, { form: prompt === "login" ? { prompt, login: who, password: "any" } : { prompt } });
  }
  throw new Error("too many steps");
}

const admin = (path: string, init: { method?: string; body?: unknown } = {}) =>
  fetch(`${service.base}/api/v2${path}`, {
    method: init.method ?? "GET",
    headers: { Authorization: `Bearer ${service.token}`, "Content-Type": "application/vnd.api+json" },
    body: init.body ? JSON.stringify(init.body) : undefined,
  }).then(async (r) => ({ status: r.status, body: (await r.json().catch(() => null)) as any }));

async function usernamesIn(teamId: string): Promise<string[]> {
  const r = await admin(`/teams/${teamId}?include=users`);
  expect(r.status).toBe(200);
  return (r.body.included ?? []).filter((x: any) => x.type === "users").map((x: any) => x.attributes.username);
}

describe("SSO with oidc-provider", () => {
  let org: string;
  let devs: string;
  let ops: string;

  beforeAll(async () => {
    org = `sso-${randomBytes(3).toString("hex")}`;
    expect(
      (await admin("/organizations", { method: "POST", body: { data: { type: "organizations", attributes: { name: org, email: "o@example.com" } } } })).status,
    ).toBe(201);
    const team = async (name: string, sso?: string) => {
      const r = await admin(`/organizations/${org}/teams`, {
        method: "POST",
        body: { data: { type: "teams", attributes: { name, ...(sso ? { "sso-team-id": sso } : {}), "organization-access": { "read-workspaces": true } } } },
      });
      expect([200, 201]).toContain(r.status);
      return r.body.data.id as string;
    };
    devs = await team("developers");
    ops = await team("operations", "grp-ops-0001");
  });

  it("offers SSO on the sign-in page, makes the user at the first sign-in and signs it in", async () => {
    people["sub-alice"] = { email: "alice@corp.example", preferred_username: "alice", groups: ["developers", "unknown-group"] };
    const page = await fetch(`${service.base}/app/session/new`).then((r) => r.text());
    expect(page).toContain('id="sso-sign-in"');

    const { callback, b } = await signInThroughProvider("sub-alice", `${service.base}/app/sso/start`);
    expect(callback.status).toBe(200);
    const html = await callback.text();
    const next = /content="0;url=([^"]+)"/.exec(html)?.[1];
    expect(next).toBe("/app");
    const home = await b.go(`${service.base}${next}`);
    expect(home.status).toBe(200);
    expect(await home.text()).toContain("alice");
    expect(await usernamesIn(devs)).toContain("alice");
    expect(await usernamesIn(ops)).not.toContain("alice");
  }, 60_000);

  it("makes memberships follow the groups at every sign-in", async () => {
    people["sub-bob"] = { email: "bob@corp.example", groups: ["developers"] };
    expect((await signInThroughProvider("sub-bob", `${service.base}/app/sso/start`)).callback.status).toBe(200);
    expect(await usernamesIn(devs)).toContain("bob");

    people["sub-bob"].groups = ["grp-ops-0001"];
    expect((await signInThroughProvider("sub-bob", `${service.base}/app/sso/start`)).callback.status).toBe(200);
    expect(await usernamesIn(devs)).not.toContain("bob");
    expect(await usernamesIn(ops)).toContain("bob");

    // A provider that sends no groups claim changes nothing.
    delete people["sub-bob"].groups;
    expect((await signInThroughProvider("sub-bob", `${service.base}/app/sso/start`)).callback.status).toBe(200);
    expect(await usernamesIn(ops)).toContain("bob");
  }, 60_000);

  it("refuses a replayed code and a callback with another state", async () => {
    people["sub-carol"] = { email: "carol@corp.example" };
    const first = await signInThroughProvider("sub-carol", `${service.base}/app/sso/start`);
    expect(first.callback.status).toBe(200);
    const used = new URL(first.callback.url || "", service.base);
    // The callback's URL as the browser reached it: replayed from a new sign-in under way, refused by the provider.
    const b = browser();
    const start = await b.go(`${service.base}/app/sso/start`);
    const state = new URL(start.headers.get("location") ?? "").searchParams.get("state") ?? "";
    const replay = new URL(`${service.base}/app/sso/callback`);
    replay.searchParams.set("code", used.searchParams.get("code") ?? "no-code");
    replay.searchParams.set("state", state);
    replay.searchParams.set("iss", issuer);
    const replayed = await b.go(replay.toString());
    expect(replayed.status).toBe(401);
    expect(replayed.headers.getSetCookie().some((c) => c.startsWith("ws_session="))).toBe(false);

    const c = browser();
    const again = await c.go(`${service.base}/app/sso/start`);
    const forged = new URL(`${service.base}/app/sso/callback`);
    forged.searchParams.set("code", "x");
    forged.searchParams.set("state", `${new URL(again.headers.get("location") ?? "").searchParams.get("state")}-forged`);
    const refused = await c.go(forged.toString());
    expect(refused.status).toBe(401);
  }, 60_000);

  it("signs Terraform in through SSO: the approval page sends the visitor to sign in, SSO included, and back", async () => {
    people["sub-dave"] = { email: "dave@corp.example", preferred_username: "dave" };
    const verifier = randomBytes(32).toString("base64url");
    const challenge = createHash("sha256").update(verifier).digest("base64url");
    const authorize = new URL(`${service.base}/app/oauth/authorize`);
    for (const [k, v] of Object.entries({
      client_id: "terraform-cli",
      redirect_uri: "http://localhost:10000/login",
      response_type: "code",
      state: "tf-state-1",
      code_challenge: challenge,
      code_challenge_method: "S256",
    }))
      authorize.searchParams.set(k, v);
    const b = browser();
    const unsigned = await b.go(authorize.toString());
    expect(unsigned.status).toBe(303);
    const signInPage = await b.go(new URL(unsigned.headers.get("location") ?? "", service.base).toString());
    const ssoHref = /id="sso-sign-in" href="([^"]+)"/.exec(await signInPage.text())?.[1]?.replace(/&amp;/g, "&");
    expect(ssoHref).toMatch(/^\/app\/sso\/start\?next=/);

    const { callback } = await signInThroughProvider("sub-dave", `${service.base}${ssoHref}`, b);
    expect(callback.status).toBe(200);
    const next = /content="0;url=([^"]+)"/.exec(await callback.text())?.[1]?.replace(/&amp;/g, "&");
    expect(next?.startsWith("/app/oauth/authorize?")).toBe(true);
    const approvalPage = await b.go(`${service.base}${next}`);
    expect(approvalPage.status).toBe(200);
    const approvalHtml = await approvalPage.text();
    expect(approvalHtml).toContain('id="approve"');

    const fields = Object.fromEntries(Object.entries(Object.fromEntries(authorize.searchParams)));
    const approved = await b.go(`${service.base}/app/oauth/authorize/approve`, { form: fields });
    expect(approved.status).toBe(303);
    const back = new URL(approved.headers.get("location") ?? "");
    expect(`${back.origin}${back.pathname}`).toBe("http://localhost:10000/login");
    expect(back.searchParams.get("state")).toBe("tf-state-1");
    const token = await fetch(`${service.base}/oauth/token`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code: back.searchParams.get("code") ?? "",
        client_id: "terraform-cli",
        redirect_uri: "http://localhost:10000/login",
        code_verifier: verifier,
      }).toString(),
    }).then((r) => r.json() as Promise<{ access_token: string }>);
    const me = await fetch(`${service.base}/api/v2/account/details`, { headers: { Authorization: `Bearer ${token.access_token}` } }).then(
      (r) => r.json() as Promise<any>,
    );
    expect(me.data.attributes.username).toBe("dave");
  }, 60_000);
});
