// The web UI (issue 20) through the Worker: sessions, CSRF, pages, and that pages and the API agree.
import { exports } from "cloudflare:workers";
import SparkMD5 from "spark-md5";
import { describe, expect, it } from "vitest";
import app from "../src/index";
import { UI_ROUTE_REQUIREMENTS } from "../src/ui/ui.requirements";
import { REQUIREMENTS } from "../src/auth/requirements";
import { ADMIN, api, createOrg, createWorkspace, uniqueName } from "./helpers";
import { grantProject, grantWorkspace, makeTeam, makeUser } from "./principals";

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
const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");
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

const STATE = JSON.stringify({
  version: 4,
  terraform_version: "1.9.0",
  serial: 7,
  lineage: "ui",
  outputs: { url: { value: "https://ui.example", type: "string" }, secret: { value: "hunter2-output", type: "string", sensitive: true } },
  resources: [{ mode: "managed", type: "null_resource", name: "a", provider: 'provider["registry.terraform.io/hashicorp/null"]', instances: [{}, {}, {}] }],
});
const unescapeHtml = (s: string) =>
  s
    .replace(/&amp;/g, "&")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'");

async function withState(org: string) {
  const ws = await createWorkspace(org);
  expect((await api("POST", `/workspaces/${ws.id}/actions/lock`)).status).toBe(200);
  const sv = await api("POST", `/workspaces/${ws.id}/state-versions`, {
    body: { data: { type: "state-versions", attributes: { serial: 7, lineage: "ui", md5: SparkMD5.hash(STATE), state: btoa(STATE) } } },
  });
  expect(sv.status).toBe(201);
  expect((await api("POST", `/workspaces/${ws.id}/actions/unlock`)).status).toBe(200);
  return { ws, sv: sv.body.data };
}

describe("UI workspace details", () => {
  it("a state reader sees serial, resources, the API's download link and outputs with sensitive values masked", async () => {
    const org = await createOrg();
    const { ws, sv } = await withState(org);
    const team = await makeTeam(org);
    await grantWorkspace(team.id, ws.id, "read");
    const reader = await makeUser({ teams: [team.id] });
    const cookie = await signIn(reader.token);
    const page = await ui("GET", `/app/${org}/workspaces/${ws.attributes.name}`, { cookie });
    expect(page.status).toBe(200);
    const row = new RegExp(`<tr data-state-version="${sv.id}">([\\s\\S]*?)</tr>`).exec(page.text)?.[1] ?? "";
    expect(row).toMatch(/<td>7<\/td>/);
    expect(row).toMatch(/<td>3<\/td>/);
    const href = /<a class="download" href="([^"]+)"/.exec(row)?.[1];
    expect(href).toBeTruthy();
    // The same signed URL the API hands out, and it serves the state.
    const download = await exports.default.fetch(new Request(unescapeHtml(href!)));
    expect(download.status).toBe(200);
    expect(await download.text()).toBe(STATE);
    expect(page.text).toContain("https://ui.example");
    expect(page.text).toContain("secret");
    expect(page.text).toContain("(sensitive)");
    expect(page.text).not.toContain("hunter2-output");
  });

  it("a caller without state read sees no state versions or download link; outputs only with read-outputs", async () => {
    const org = await createOrg();
    const { ws } = await withState(org);
    const outputsOnly = await makeTeam(org);
    await grantWorkspace(outputsOnly.id, ws.id, "custom", { "state-versions": "read-outputs" });
    const noState = await makeTeam(org);
    await grantWorkspace(noState.id, ws.id, "custom", { "state-versions": "none" });
    for (const [team, outputs] of [
      [outputsOnly, true],
      [noState, false],
    ] as const) {
      const cookie = await signIn(team.token);
      const page = await ui("GET", `/app/${org}/workspaces/${ws.attributes.name}`, { cookie });
      expect(page.status).toBe(200);
      expect(page.text).not.toContain("State versions");
      expect(page.text).not.toContain('class="download"');
      expect(page.text).not.toContain("/blobs/");
      expect(page.text).not.toContain("hunter2-output");
      expect(page.text.includes("https://ui.example")).toBe(outputs);
      expect((await api("GET", `/workspaces/${ws.id}/current-state-version`, { token: team.token })).status).not.toBe(200);
    }
  });

  it("shows inherited tag bindings with their project, remote-state consumers and team access", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org, {}, undefined, { "tag-bindings": { data: [{ type: "tag-bindings", attributes: { key: "env", value: "prod" } }] } });
    const projectId = ws.relationships.project.data.id;
    const project = await api("GET", `/projects/${projectId}`);
    const bind = await api("PATCH", `/projects/${projectId}/tag-bindings`, {
      body: {
        data: [
          { type: "tag-bindings", attributes: { key: "cost-centre", value: "cc-42" } },
          { type: "tag-bindings", attributes: { key: "env", value: "project-env" } },
        ],
      },
    });
    expect(bind.status).toBe(200);
    const consumer = await createWorkspace(org);
    expect(
      (await api("POST", `/workspaces/${ws.id}/relationships/remote-state-consumers`, { body: { data: [{ type: "workspaces", id: consumer.id }] } })).status,
    ).toBe(204);
    const team = await makeTeam(org);
    await grantWorkspace(team.id, ws.id, "plan");
    const teamName = (await api("GET", `/teams/${team.id}`)).body.data.attributes.name;
    const cookie = await signIn(ADMIN);
    const page = await ui("GET", `/app/${org}/workspaces/${ws.attributes.name}`, { cookie });
    expect(page.status).toBe(200);
    const bindings = /<table id="tag-bindings">([\s\S]*?)<\/table>/.exec(page.text)?.[1] ?? "";
    expect(bindings).toMatch(/cost-centre<\/td><td>cc-42<\/td><td>inherited from project <strong>[^<]+<\/strong>/);
    expect(bindings).toContain(`<strong>${project.body.data.attributes.name}</strong>`);
    // A direct key wins over the project's.
    expect(bindings).toContain("prod");
    expect(bindings).not.toContain("project-env");
    const consumers = /<ul id="consumers">([\s\S]*?)<\/ul>/.exec(page.text)?.[1] ?? "";
    expect(consumers).toContain(consumer.attributes.name);
    const teams = /<table id="team-access">([\s\S]*?)<\/table>/.exec(page.text)?.[1] ?? "";
    expect(teams).toContain(teamName);
    expect(teams).toContain("plan");
  });
});

describe("UI projects page", () => {
  it("lists the projects the API lists for the caller, each linking to its filtered workspace list", async () => {
    const org = await createOrg();
    const made: string[] = [];
    for (const name of ["alpha", "beta", "gamma"]) {
      const p = await api("POST", `/organizations/${org}/projects`, {
        body: { data: { type: "projects", attributes: { name: `${name}-${uniqueName("p")}` } } },
      });
      expect(p.status).toBe(201);
      made.push(p.body.data.id);
    }
    const ws = await createWorkspace(org, {}, undefined, { project: { data: { type: "projects", id: made[1] } } });
    const team = await makeTeam(org);
    await grantProject(team.id, made[0], "read");
    const user = await makeUser({ teams: [team.id] });
    const ids = (html: string) => [...html.matchAll(/<tr data-project="([^"]+)"/g)].map((m) => m[1]);
    for (const token of [ADMIN, user.token]) {
      const fromApi = await api("GET", `/organizations/${org}/projects?sort=name&page[size]=100`, { token });
      const cookie = await signIn(token);
      const page = await ui("GET", `/app/${org}/projects`, { cookie });
      expect(page.status).toBe(200);
      expect(ids(page.text)).toEqual(fromApi.body.data.map((p: { id: string }) => p.id));
      for (const id of ids(page.text)) expect(page.text).toContain(`href="/app/${org}/workspaces?filter%5Bproject%5D%5Bid%5D=${id}"`);
    }
    expect(ids((await ui("GET", `/app/${org}/projects`, { cookie: await signIn(user.token) })).text)).toEqual([made[0]]);
    // The link's list is the project's workspaces.
    const cookie = await signIn(ADMIN);
    const list = await ui("GET", `/app/${org}/workspaces?filter%5Bproject%5D%5Bid%5D=${made[1]}`, { cookie });
    expect(workspaceNamesIn(list.text)).toEqual([ws.attributes.name]);
    expect(list.text).toContain(`href="/app/${org}/projects"`);
    expect((await ui("GET", "/app/no-such-org/projects", { cookie })).status).toBe(404);
  });
});

describe("UI settings form", () => {
  const settings = (over: Record<string, string> = {}) => ({
    description: "set from the UI",
    "execution-mode": "local",
    "terraform-version": "1.6.2",
    "working-directory": "infra/app",
    "auto-apply": "on",
    ...over,
  });

  it("changes what the API shows; refusals come from the API's rules, shown next to the form", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const cookie = await signIn(ADMIN);
    const base = `/app/${org}/workspaces/${ws.attributes.name}`;
    const page = await ui("GET", base, { cookie });
    expect(page.text).toContain(`action="${base}/settings"`);
    const saved = await ui("POST", `${base}/settings`, { cookie, form: settings() });
    expect(saved.status).toBe(303);
    expect(saved.headers.get("Location")).toBe(base);
    const a = (await api("GET", `/workspaces/${ws.id}`)).body.data.attributes;
    expect(a).toMatchObject({
      description: "set from the UI",
      "execution-mode": "local",
      "terraform-version": "1.6.2",
      "working-directory": "infra/app",
      "auto-apply": true,
    });
    // An unticked checkbox is sent as nothing: auto-apply off.
    const { "auto-apply": _, ...off } = settings();
    expect((await ui("POST", `${base}/settings`, { cookie, form: off })).status).toBe(303);
    expect((await api("GET", `/workspaces/${ws.id}`)).body.data.attributes["auto-apply"]).toBe(false);

    for (const bad of <Array<Record<string, string>>>[{ "terraform-version": "not a version" }, { "execution-mode": "agent" }, { "execution-mode": "bogus" }]) {
      const apiRefusal = await api("PATCH", `/workspaces/${ws.id}`, { body: { data: { type: "workspaces", attributes: bad } } });
      expect(apiRefusal.status).toBe(422);
      const refused = await ui("POST", `${base}/settings`, { cookie, form: settings(bad) });
      expect(refused.status, JSON.stringify(bad)).toBe(422);
      expect(refused.text).toContain('id="settings-errors"');
      expect(refused.text).toContain(escapeHtml(apiRefusal.body.errors[0].detail));
      // The page, not an error page: the form keeps what was sent.
      expect(refused.text).toContain(`<h1>${ws.attributes.name}</h1>`);
      expect(refused.text).toContain('value="set from the UI"');
    }
    expect((await api("GET", `/workspaces/${ws.id}`)).body.data.attributes["execution-mode"]).toBe("local");
  });

  it("a read-only caller sees no settings form, and a forged or cross-origin settings POST is refused", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org, { description: "before" });
    const team = await makeTeam(org);
    await grantWorkspace(team.id, ws.id, "write");
    const writer = await makeUser({ teams: [team.id] });
    const base = `/app/${org}/workspaces/${ws.attributes.name}`;
    const cookie = await signIn(writer.token);
    const page = await ui("GET", base, { cookie });
    expect(page.status).toBe(200);
    expect(page.text).not.toContain(`${base}/settings`);
    const forged = await ui("POST", `${base}/settings`, { cookie, form: settings() });
    expect(forged.status).toBe(404);
    expect(forged.text).not.toContain("settings-errors");
    // Invalid input from a caller who may not update is refused the same way (no form, no detail).
    expect((await ui("POST", `${base}/settings`, { cookie, form: settings({ "execution-mode": "bogus" }) })).status).toBe(404);
    const admin = await signIn(ADMIN);
    expect((await ui("POST", `${base}/settings`, { cookie: admin, origin: "https://evil.example", form: settings() })).status).toBe(403);
    expect((await api("GET", `/workspaces/${ws.id}`)).body.data.attributes.description).toBe("before");
  });
});

describe("UI authorisation table", () => {
  it("declares every served /app route, each against a known action", () => {
    const served = new Set(app.routes.filter((r) => r.path.startsWith("/app") && r.method !== "ALL").map((r) => `${r.method} ${r.path}`));
    expect([...served].sort()).toEqual(Object.keys(UI_ROUTE_REQUIREMENTS).sort());
    for (const action of Object.values(UI_ROUTE_REQUIREMENTS)) if (action) expect(REQUIREMENTS).toHaveProperty(action);
  });
});
