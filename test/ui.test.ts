// The web UI (issue 20) through the Worker: sessions, CSRF, pages, and that pages and the API agree.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import app from "../src/index";
import { UI_ROUTE_REQUIREMENTS } from "../src/ui/ui.requirements";
import { REQUIREMENTS } from "../src/auth/requirements";
import { ADMIN, api, createOrg, createWorkspace, uniqueName } from "./helpers";
import { grantWorkspace, makeTeam, makeUser } from "./principals";

const ORIGIN = "http://localhost";

async function ui(method: string, path: string, opts: { cookie?: string; form?: Record<string, string>; origin?: string | null } = {}) {
  const headers: Record<string, string> = {};
  if (opts.cookie) headers.Cookie = opts.cookie;
  let body: string | undefined;
  if (opts.form) {
    body = new URLSearchParams(opts.form).toString();
    headers["Content-Type"] = "application/x-www-form-urlencoded";
  }
  if (method !== "GET" && opts.origin !== null) headers.Origin = opts.origin ?? ORIGIN;
  const res = await exports.default.fetch(new Request(`${ORIGIN}${path}`, { method, headers, body, redirect: "manual" }));
  return { status: res.status, headers: res.headers, text: await res.text() };
}

async function signIn(token: string): Promise<string> {
  const res = await ui("POST", "/app/session", { form: { token } });
  expect(res.status).toBe(303);
  const set = res.headers.get("Set-Cookie") ?? "";
  const m = /ws_session=([^;]+)/.exec(set);
  if (!m) throw new Error(`no session cookie: ${set}`);
  return `ws_session=${m[1]}`;
}

const flatTags = (...names: string[]) => ({ tags: { data: names.map((name) => ({ type: "tags", attributes: { name } })) } });
const workspaceNamesIn = (html: string) => [...html.matchAll(/<tr data-workspace="([^"]+)"/g)].map((m) => m[1]);

describe("UI sessions", () => {
  it("sign-in sets an HttpOnly, SameSite=Strict session cookie (Secure except on localhost)", async () => {
    const res = await ui("POST", "/app/session", { form: { token: ADMIN } });
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe("/app");
    const cookie = res.headers.get("Set-Cookie") ?? "";
    expect(cookie).toMatch(/^ws_session=[A-Za-z0-9]{43};/);
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Strict");
    expect(cookie).toContain("Path=/app");
    expect(cookie).not.toContain("Secure");
    // The cookie never carries the token, and D1 keeps only hashes.
    expect(cookie).not.toContain(ADMIN);

    const remote = await exports.default.fetch(
      new Request("https://ui.example.com/app/session", {
        method: "POST",
        headers: { Origin: "https://ui.example.com", "Content-Type": "application/x-www-form-urlencoded" },
        body: `token=${ADMIN}`,
        redirect: "manual",
      }),
    );
    expect(remote.status).toBe(303);
    expect(remote.headers.get("Set-Cookie")).toContain("Secure");
  });

  it("refuses a bad token, and pages without a session redirect to sign-in", async () => {
    const bad = await ui("POST", "/app/session", { form: { token: "nope.atlasv1.nope" } });
    expect(bad.status).toBe(401);
    expect(bad.headers.get("Set-Cookie")).toBeNull();
    expect(bad.text).toContain("not valid");
    const anon = await ui("GET", "/app");
    expect(anon.status).toBe(303);
    expect(anon.headers.get("Location")).toBe("/app/session/new");
    expect((await ui("GET", "/app", { cookie: "ws_session=forged" })).status).toBe(303);
    const page = await ui("GET", "/app/session/new");
    expect(page.status).toBe(200);
    expect(page.headers.get("Content-Security-Policy")).toContain("default-src 'none'");
  });

  it("sign-out ends the session", async () => {
    const cookie = await signIn(ADMIN);
    expect((await ui("GET", "/app", { cookie })).status).toBe(200);
    expect((await ui("HEAD", "/app", { cookie })).status).toBe(200);
    const out = await ui("POST", "/app/session/delete", { cookie });
    expect(out.status).toBe(303);
    expect(out.headers.get("Set-Cookie")).toMatch(/ws_session=;/);
    expect((await ui("GET", "/app", { cookie })).status).toBe(303);
  });

  it("a revoked token ends its sessions at once", async () => {
    const user = await makeUser();
    const created = await api("POST", `/users/${user.id}/authentication-tokens`, {
      token: user.token,
      body: { data: { type: "authentication-tokens", attributes: {} } },
    });
    expect(created.status).toBe(201);
    const cookie = await signIn(created.body.data.attributes.token);
    expect((await ui("GET", "/app", { cookie })).status).toBe(200);
    expect((await api("DELETE", `/authentication-tokens/${created.body.data.id}`, { token: user.token })).status).toBe(204);
    const after = await ui("GET", "/app", { cookie });
    expect(after.status).toBe(303);
    expect(after.headers.get("Location")).toBe("/app/session/new");
  });

  it("an expired token cannot sign in", async () => {
    const user = await makeUser({ expiredAt: new Date(Date.now() - 1000).toISOString() });
    expect((await ui("POST", "/app/session", { form: { token: user.token } })).status).toBe(401);
  });

  it("a cross-origin or origin-less form POST is refused", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const cookie = await signIn(ADMIN);
    for (const origin of ["https://evil.example", null]) {
      const res = await ui("POST", `/app/${org}/workspaces/${ws.attributes.name}/lock`, { cookie, origin, form: { reason: "x" } });
      expect(res.status).toBe(403);
    }
    expect((await ui("POST", "/app/session", { origin: "https://evil.example", form: { token: ADMIN } })).status).toBe(403);
    expect((await api("GET", `/workspaces/${ws.id}`)).body.data.attributes.locked).toBe(false);
  });
});

describe("UI pages", () => {
  it("render for a signed-in user, and links.self-html points at the workspace page", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org, {}, undefined, flatTags("web"));
    const cookie = await signIn(ADMIN);
    const home = await ui("GET", "/app", { cookie });
    expect(home.status).toBe(200);
    expect(home.text).toContain(`href="/app/${org}/workspaces"`);
    const list = await ui("GET", `/app/${org}/workspaces`, { cookie });
    expect(list.status).toBe(200);
    expect(workspaceNamesIn(list.text)).toEqual([ws.attributes.name]);
    const shown = await api("GET", `/workspaces/${ws.id}`);
    const page = await ui("GET", shown.body.data.links["self-html"], { cookie });
    expect(page.status).toBe(200);
    expect(page.text).toContain(ws.id);
    expect(page.text).toContain("web");
    expect(page.text).toContain(`action="/app/${org}/workspaces/${ws.attributes.name}/lock"`);
    expect(page.text).toContain("Delete this workspace");
    expect((await ui("GET", `/app/${org}/workspaces/nope`, { cookie })).status).toBe(404);
    expect((await ui("GET", `/app/${org}/workspaces?sort=bogus`, { cookie })).status).toBe(400);
  });

  it("shows variables to callers who may read them, sensitive values masked", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const varBody = (attributes: Record<string, unknown>) => ({ data: { type: "vars", attributes: { category: "terraform", ...attributes } } });
    expect((await api("POST", `/workspaces/${ws.id}/vars`, { body: varBody({ key: "region", value: "eu-west-9" }) })).status).toBe(201);
    expect((await api("POST", `/workspaces/${ws.id}/vars`, { body: varBody({ key: "password", value: "hunter2-secret", sensitive: true }) })).status).toBe(201);
    const cookie = await signIn(ADMIN);
    const page = await ui("GET", `/app/${org}/workspaces/${ws.attributes.name}`, { cookie });
    expect(page.status).toBe(200);
    expect(page.text).toContain("eu-west-9");
    expect(page.text).toContain("password");
    expect(page.text).toContain("(sensitive)");
    expect(page.text).not.toContain("hunter2-secret");
  });

  it("lock and unlock through the UI change what the API shows", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const cookie = await signIn(ADMIN);
    const base = `/app/${org}/workspaces/${ws.attributes.name}`;
    const locked = await ui("POST", `${base}/lock`, { cookie, form: { reason: "maintenance" } });
    expect(locked.status).toBe(303);
    expect(locked.headers.get("Location")).toBe(base);
    let shown = await api("GET", `/workspaces/${ws.id}`);
    expect(shown.body.data.attributes.locked).toBe(true);
    expect(shown.body.data.attributes["locked-reason"]).toBe("maintenance");
    const page = await ui("GET", base, { cookie });
    expect(page.text).toContain("(you)");
    expect(page.text).toContain(`${base}/unlock`);
    expect((await ui("POST", `${base}/lock`, { cookie, form: {} })).status).toBe(409);
    expect((await ui("POST", `${base}/unlock`, { cookie })).status).toBe(303);
    shown = await api("GET", `/workspaces/${ws.id}`);
    expect(shown.body.data.attributes.locked).toBe(false);
  });

  it("a read-only user sees no lock button, and a forged lock POST is refused", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const team = await makeTeam(org);
    await grantWorkspace(team.id, ws.id, "read");
    const reader = await makeUser({ teams: [team.id] });
    const cookie = await signIn(reader.token);
    const base = `/app/${org}/workspaces/${ws.attributes.name}`;
    const page = await ui("GET", base, { cookie });
    expect(page.status).toBe(200);
    expect(page.text).not.toContain(`${base}/lock`);
    expect(page.text).not.toContain("force-unlock");
    expect(page.text).not.toContain("Delete this workspace");
    const forged = await ui("POST", `${base}/lock`, { cookie, form: { reason: "x" } });
    expect(forged.status).toBe(404);
    expect((await ui("POST", `${base}/safe-delete`, { cookie, form: { confirm: ws.attributes.name } })).status).toBe(404);
    expect((await api("GET", `/workspaces/${ws.id}`)).body.data.attributes.locked).toBe(false);
  });

  it("force-unlock is offered to admins when someone else holds the lock; safe delete needs the name", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const other = await makeUser({ ownerOf: org });
    expect((await api("POST", `/workspaces/${ws.id}/actions/lock`, { token: other.token })).status).toBe(200);
    const cookie = await signIn(ADMIN);
    const base = `/app/${org}/workspaces/${ws.attributes.name}`;
    const page = await ui("GET", base, { cookie });
    expect(page.text).toContain(`${base}/force-unlock`);
    expect(page.text).not.toContain(`${base}/unlock"`);
    expect((await ui("POST", `${base}/force-unlock`, { cookie })).status).toBe(303);
    expect((await api("GET", `/workspaces/${ws.id}`)).body.data.attributes.locked).toBe(false);
    expect((await ui("POST", `${base}/safe-delete`, { cookie, form: { confirm: "wrong" } })).status).toBe(400);
    expect((await ui("POST", `${base}/safe-delete`, { cookie, form: { confirm: ws.attributes.name } })).status).toBe(303);
    expect((await api("GET", `/workspaces/${ws.id}`)).status).toBe(404);
  });

  it("the list page shows the same workspaces as the API for the same query", async () => {
    const org = await createOrg();
    let projectId = "";
    for (let i = 0; i < 7; i++) {
      const name = `${i % 2 ? "app" : "db"}-${i}-${uniqueName("w")}`;
      const ws = await createWorkspace(org, { name }, undefined, flatTags(i % 3 === 0 ? "prod" : "dev"));
      projectId = ws.relationships.project.data.id;
    }
    const cookie = await signIn(ADMIN);
    expect((await api("GET", `/organizations/${org}/workspaces?search[tags]=prod`)).body.data).toHaveLength(3);
    const queries = [
      "",
      "sort=name",
      "sort=-name&page[size]=3&page[number]=2",
      "search[name]=app",
      "search[wildcard-name]=db-*",
      "search[tags]=prod",
      "search[exclude-tags]=prod&sort=name",
      `filter[project][id]=${projectId}&sort=name&page[size]=5`,
    ];
    for (const q of queries) {
      const fromApi = await api("GET", `/organizations/${org}/workspaces?${q}`);
      const page = await ui("GET", `/app/${org}/workspaces?${q}`, { cookie });
      expect(page.status).toBe(200);
      expect(workspaceNamesIn(page.text), q).toEqual(fromApi.body.data.map((w: { attributes: { name: string } }) => w.attributes.name));
      expect(page.text).toContain(`${fromApi.body.meta.pagination["total-count"]} workspace`);
    }
  });
});

describe("UI authorisation table", () => {
  it("declares every served /app route, each against a known action", () => {
    const served = new Set(app.routes.filter((r) => r.path.startsWith("/app") && r.method !== "ALL").map((r) => `${r.method} ${r.path}`));
    expect([...served].sort()).toEqual(Object.keys(UI_ROUTE_REQUIREMENTS).sort());
    for (const action of Object.values(UI_ROUTE_REQUIREMENTS)) if (action) expect(REQUIREMENTS).toHaveProperty(action);
  });
});
