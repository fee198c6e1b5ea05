// The web UI through the Worker: sessions, CSRF, pages, and that pages and the API agree.
import { env, exports } from "cloudflare:workers";
import SparkMD5 from "spark-md5";
import { describe, expect, it } from "vitest";
import app from "../../src/index";
import { UI_ROUTE_ACTIONS } from "../../src/ui/define-page";
import { REQUIREMENTS } from "../../src/auth/requirements";
import { createOrg, createWorkspace, grantProject, grantWorkspace, makeOrgToken, makeTeam, makeUser } from "../fixtures";
import { ADMIN, api, uniqueName, indexSettled } from "../helpers";
import { memberCookie, signIn, ui } from "../ui-client";
import { nullResource, stateDoc, urlAndSecret } from "../state-docs";

const hopsOf = (res: { headers: Headers }) => res.headers.get("X-Hops");
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

  it("a cached session whose token is revoked elsewhere locks nothing and signs in again", async () => {
    const org = await createOrg();
    const user = await makeUser({ ownerOf: org });
    const ws = await createWorkspace(org);
    const cookie = await signIn(user.token);
    // Twice: the session's principal is cached, and the second page carries its recheck in its one batch.
    expect((await ui("GET", `/app/${org}/workspaces`, { cookie })).status).toBe(200);
    expect(hopsOf(await ui("GET", `/app/${org}/workspaces`, { cookie }))).toBe("d1=1, do=0");
    // Another isolate (or instance) revokes: nothing in this one hears of it.
    await env.DB.prepare("DELETE FROM tokens WHERE user_id = ?").bind(user.id).run();
    const lock = await ui("POST", `/app/${org}/workspaces/${ws.attributes.name}/lock`, { cookie, form: { reason: "late" } });
    expect(lock.status).toBe(303);
    expect(lock.headers.get("Location")).toBe("/app/session/new");
    expect(hopsOf(lock)).toMatch(/do=0$/);
    expect((await api("GET", `/workspaces/${ws.id}`)).body.data.attributes.locked).toBe(false);
    expect((await ui("GET", "/app", { cookie })).status).toBe(303);
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
    expectMasked(page.text, "password", "hunter2-secret");
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
    const cookie = await memberCookie(org, { [ws.id]: "read" });
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

const STATE = stateDoc({ serial: 7, lineage: "ui", outputs: urlAndSecret("https://ui.example", "hunter2-output"), resources: [nullResource([{}, {}, {}])] });
/** The page names the sensitive value `name` and marks it so, but never shows its value `secret`. */
function expectMasked(text: string, name: string, secret: string): void {
  expect(text).toContain(name);
  expect(text).toContain("(sensitive)");
  expect(text).not.toContain(secret);
}
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

describe("UI round trips", () => {
  it("a page reads its session and token in one D1 read; the list page costs what the JSON list costs", async () => {
    const org = await createOrg();
    const user = await makeUser({ ownerOf: org });
    for (let i = 0; i < 3; i++) await createWorkspace(org, {}, undefined, flatTags("hop"));
    const cookie = await signIn(user.token);
    // One D1 read: the session joined to its token (and the user), nothing else.
    expect(hopsOf(await ui("GET", "/app/no-such-org/nothing", { cookie }))).toBe("d1=1, do=0");
    // From then on the session's principal is cached and rechecked inside each page's first batch (as the API's token).
    await api("GET", `/organizations/${org}/workspaces`, { token: user.token });
    for (const q of ["", "?search%5Btags%5D=hop&sort=-name", "?search%5Bname%5D=ws"]) {
      const fromApi = await api("GET", `/organizations/${org}/workspaces${q}`, { token: user.token });
      const page = await ui("GET", `/app/${org}/workspaces${q}`, { cookie });
      expect(page.status).toBe(200);
      // The same one list batch (which also brings the project filter's options and the holders' names).
      expect(hopsOf(page), q).toBe(hopsOf(fromApi));
      expect(hopsOf(page)).toBe("d1=1, do=0");
    }
  });

  it("a UI action by name costs what the API's action by id costs (no lookup of the name first)", async () => {
    const org = await createOrg();
    const user = await makeUser({ ownerOf: org });
    const ws = await createWorkspace(org);
    const cookie = await signIn(user.token);
    // Both principals cached (the session's and the token's), so each action is its own work only.
    expect((await ui("GET", "/app", { cookie })).status).toBe(200);
    expect((await api("GET", "/ping", { token: user.token })).status).toBe(204);
    const base = `/app/${org}/workspaces/${ws.attributes.name}`;
    const viaUi = await ui("POST", `${base}/lock`, { cookie, form: { reason: "hops" } });
    expect(viaUi.status).toBe(303);
    const unlockUi = await ui("POST", `${base}/unlock`, { cookie });
    const viaApi = await api("POST", `/workspaces/${ws.id}/actions/lock`, { token: user.token });
    expect(hopsOf(viaUi)).toBe(hopsOf(viaApi));
    expect(hopsOf(unlockUi)).toBe(hopsOf(await api("POST", `/workspaces/${ws.id}/actions/unlock`, { token: user.token })));
    expect(hopsOf(viaUi)).toBe("d1=1, do=1");
  });
});

describe("UI lock holders", () => {
  it("name the user, team or organisation token holding the lock, in the list and on the workspace page", async () => {
    const org = await createOrg();
    const user = await makeUser({ ownerOf: org });
    const team = await makeTeam(org);
    const orgToken = await makeOrgToken(org);
    const byUser = await createWorkspace(org, { name: uniqueName("by-user") });
    const byTeam = await createWorkspace(org, { name: uniqueName("by-team") });
    const byOrg = await createWorkspace(org, { name: uniqueName("by-org") });
    await grantWorkspace(team.id, byTeam.id, "write");
    expect((await api("POST", `/workspaces/${byUser.id}/actions/lock`, { token: user.token })).status).toBe(200);
    expect((await api("POST", `/workspaces/${byTeam.id}/actions/lock`, { token: team.token })).status).toBe(200);
    expect((await api("POST", `/workspaces/${byOrg.id}/actions/lock`, { token: orgToken.token })).status).toBe(200);
    const username = (await api("GET", `/users/${user.id}`)).body.data.attributes.username;
    const teamName = (await api("GET", `/teams/${team.id}`)).body.data.attributes.name;
    const expected = [
      [byUser, username],
      [byTeam, `team ${teamName}`],
      [byOrg, `api-org-${org}`],
    ] as const;
    const cookie = await signIn(ADMIN);
    // A lock answers before its index write, which the list reads (docs/consistency.md).
    await indexSettled(byUser.id, byTeam.id, byOrg.id);
    const list = await ui("GET", `/app/${org}/workspaces?page[size]=100`, { cookie });
    for (const [ws, who] of expected) {
      const row = new RegExp(`<tr data-workspace="${ws.attributes.name}">([\\s\\S]*?)</tr>`).exec(list.text)?.[1] ?? "";
      // The whole badge: the name, not the holder's id.
      expect(row).toContain(`<span class="badge locked">locked by ${who}</span>`);
      const page = await ui("GET", `/app/${org}/workspaces/${ws.attributes.name}`, { cookie });
      expect(/<strong id="lock-holder">([^<]*)<\/strong>/.exec(page.text)?.[1]).toBe(who);
    }
    // The lock's own holder is told it is theirs.
    const mine = await ui("GET", `/app/${org}/workspaces/${byUser.attributes.name}`, { cookie: await signIn(user.token) });
    expect(mine.text).toContain(`<strong id="lock-holder">${username}</strong> (you)`);
  });
});

describe("UI workspace details", () => {
  it("a state reader sees serial, resources, the API's download link and outputs with sensitive values masked", async () => {
    const org = await createOrg();
    const { ws, sv } = await withState(org);
    const cookie = await memberCookie(org, { [ws.id]: "read" });
    const page = await ui("GET", `/app/${org}/workspaces/${ws.attributes.name}`, { cookie });
    expect(page.status).toBe(200);
    const row = new RegExp(`<tr data-state-version="${sv.id}">([\\s\\S]*?)</tr>`).exec(page.text)?.[1] ?? "";
    expect(row).toMatch(/>7<\/a><\/td>/);
    expect(row).toMatch(/<td>3<\/td>/);
    const href = /<a class="download" href="([^"]+)"/.exec(row)?.[1];
    expect(href).toBeTruthy();
    // The same signed URL the API hands out, and it serves the state.
    const download = await exports.default.fetch(new Request(unescapeHtml(href!)));
    expect(download.status).toBe(200);
    expect(await download.text()).toBe(STATE);
    expect(page.text).toContain("https://ui.example");
    expectMasked(page.text, "secret", "hunter2-output");
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
      expect((await api("GET", `/workspaces/${ws.id}/current-state-version`, { token: team.token })).status).toBe(404);
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
    const consumers = /<ul id="consumers"[^>]*>([\s\S]*?)<\/ul>/.exec(page.text)?.[1] ?? "";
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
      const fromApi = await api("GET", `/organizations/${org}/projects?page[size]=100`, { token });
      const cookie = await signIn(token);
      const page = await ui("GET", `/app/${org}/projects?page[size]=100`, { cookie });
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

describe("UI projects page: filters and paging", () => {
  it("gives the API's projects and counts for the same query, page by page", async () => {
    const org = await createOrg();
    const made: Array<{ id: string; name: string }> = [];
    for (const name of ["alpha-one", "alpha-two", "beta-one", "gamma-one", "Alpha-three"]) {
      const p = await api("POST", `/organizations/${org}/projects`, { body: { data: { type: "projects", attributes: { name } } } });
      expect(p.status).toBe(201);
      made.push({ id: p.body.data.id, name });
    }
    const bind = await api("PATCH", `/projects/${made[1].id}/tag-bindings`, {
      body: { data: [{ type: "tag-bindings", attributes: { key: "env", value: "prod" } }] },
    });
    expect(bind.status).toBe(200);
    expect(
      (await api("PATCH", `/projects/${made[3].id}/tag-bindings`, { body: { data: [{ type: "tag-bindings", attributes: { key: "env", value: "dev" } }] } }))
        .status,
    ).toBe(200);
    const cookie = await signIn(ADMIN);
    const ids = (html: string) => [...html.matchAll(/<tr data-project="([^"]+)"/g)].map((m) => m[1]);
    const queries = [
      "",
      "sort=name",
      "sort=-name&page[size]=2",
      "sort=-name&page[size]=2&page[number]=2",
      "sort=name&page[size]=2&page[number]=3",
      "q=alpha",
      "q=ALPHA&sort=-name",
      "filter[names]=beta-one,gamma-one",
      "filter[tagged][0][key]=env",
      "filter[tagged][0][key]=env&filter[tagged][0][value]=prod",
    ];
    for (const q of queries) {
      const fromApi = await api("GET", `/organizations/${org}/projects?${q}`);
      const page = await ui("GET", `/app/${org}/projects?${q}`, { cookie });
      expect(page.status, q).toBe(200);
      expect(ids(page.text), q).toEqual(fromApi.body.data.map((p: { id: string }) => p.id));
      const matching = fromApi.body.meta.pagination["total-count"];
      const all = fromApi.body.meta["status-counts"].total;
      expect(/<p class="muted" id="total">([^<]*)<\/p>/.exec(page.text)?.[1], q).toBe(
        `${matching} ${matching === 1 ? "project" : "projects"}${matching !== all ? ` of ${all}` : ""}`,
      );
      const pages = fromApi.body.meta.pagination["total-pages"];
      const current = fromApi.body.meta.pagination["current-page"];
      expect(page.text).toContain(`Page ${current} of ${Math.max(1, pages)}`);
      expect(page.text.includes('rel="next"'), q).toBe(current < pages);
    }
    // The form sends its empty fields too: they filter nothing.
    const emptyFields = await ui("GET", `/app/${org}/projects?q=&filter%5Bnames%5D=&filter%5Btagged%5D%5B0%5D%5Bkey%5D=&sort=name`, { cookie });
    expect(ids(emptyFields.text)).toEqual((await api("GET", `/organizations/${org}/projects?sort=name`)).body.data.map((p: { id: string }) => p.id));
    // The form shows the query it was given, and its links keep it.
    const filtered = await ui("GET", `/app/${org}/projects?q=alpha&sort=name&page[size]=2`, { cookie });
    expect(filtered.text).toContain('id="p-q" name="q" value="alpha"');
    expect(filtered.text).toMatch(/<option value="name" selected="">/);
    expect(filtered.text).toContain('href="?q=alpha&amp;sort=name&amp;page%5Bsize%5D=2&amp;page%5Bnumber%5D=2" rel="next"');
    expect((await ui("GET", `/app/${org}/projects?sort=bogus`, { cookie })).status).toBe(400);
  });
});

describe("UI list: project filter options, binding filters and every sort", () => {
  it("offers the projects the caller may read, and key/value and latest-change sorts give the API's workspaces", async () => {
    const org = await createOrg();
    const other = await api("POST", `/organizations/${org}/projects`, { body: { data: { type: "projects", attributes: { name: uniqueName("other") } } } });
    const hidden = await api("POST", `/organizations/${org}/projects`, { body: { data: { type: "projects", attributes: { name: uniqueName("hidden") } } } });
    const made = [];
    for (let i = 0; i < 5; i++) {
      const bindings = { "tag-bindings": { data: [{ type: "tag-bindings", attributes: { key: "env", value: i % 2 ? "prod" : "dev" } }] } };
      const project = i === 4 ? { project: { data: { type: "projects", id: other.body.data.id } } } : {};
      made.push(await createWorkspace(org, { name: uniqueName(`kv${i}`) }, undefined, { ...bindings, ...project }));
    }
    const admin = await signIn(ADMIN);
    for (const q of [
      "filter[tagged][0][key]=env&filter[tagged][0][value]=prod",
      "filter[tagged][0][key]=env&sort=name",
      "sort=latest-change-at",
      "sort=-latest-change-at",
      "sort=current-run.created-at&page[size]=2",
      `filter[project][id]=${other.body.data.id}`,
    ]) {
      const fromApi = await api("GET", `/organizations/${org}/workspaces?${q}`);
      const page = await ui("GET", `/app/${org}/workspaces?${q}`, { cookie: admin });
      expect(workspaceNamesIn(page.text), q).toEqual(fromApi.body.data.map((w: { attributes: { name: string } }) => w.attributes.name));
    }
    const projectOptions = (html: string) =>
      [...(/<select id="f-project"[^>]*>([\s\S]*?)<\/select>/.exec(html)?.[1] ?? "").matchAll(/<option value="(prj-[^"]+)"/g)].map((m) => m[1]);
    const adminOptions = projectOptions((await ui("GET", `/app/${org}/workspaces`, { cookie: admin })).text);
    const all = await api("GET", `/organizations/${org}/projects?sort=name&page[size]=100`);
    expect(adminOptions).toEqual(all.body.data.map((p: { id: string }) => p.id));
    expect(adminOptions).toContain(hidden.body.data.id);
    // A user reaching one workspace in `other` sees that project only: the API's project list for them.
    const team = await makeTeam(org);
    await grantWorkspace(team.id, made[4].id, "read");
    const user = await makeUser({ teams: [team.id] });
    const theirs = await api("GET", `/organizations/${org}/projects?sort=name`, { token: user.token });
    const userOptions = projectOptions((await ui("GET", `/app/${org}/workspaces`, { cookie: await signIn(user.token) })).text);
    expect(userOptions).toEqual(theirs.body.data.map((p: { id: string }) => p.id));
    expect(userOptions).toEqual([other.body.data.id]);
    // Rows name their project.
    const row = new RegExp(`<tr data-workspace="${made[4].attributes.name}">([\\s\\S]*?)</tr>`).exec(
      (await ui("GET", `/app/${org}/workspaces`, { cookie: admin })).text,
    )?.[1];
    expect(row).toContain(`<td>${other.body.data.attributes.name}</td>`);
  });
});

describe("UI settings form: agent pool", () => {
  const form = (over: Record<string, string>) => ({ description: "", "execution-mode": "agent", "terraform-version": "", "working-directory": "", ...over });
  const makePool = async (org: string, attributes: Record<string, unknown> = {}, relationships?: unknown) => {
    const res = await api("POST", `/organizations/${org}/agent-pools`, {
      body: { data: { type: "agent-pools", attributes: { name: uniqueName("pool"), ...attributes }, ...(relationships ? { relationships } : {}) } },
    });
    expect(res.status).toBe(201);
    return res.body.data as { id: string; attributes: { name: string } };
  };

  it("offers the pools the workspace may use; the API's rules refuse agent mode without one, or a pool not found", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const otherWs = await createWorkspace(org);
    const pool = await makePool(org);
    const scopedElsewhere = await makePool(org, { "organization-scoped": false }, { "allowed-workspaces": { data: [{ type: "workspaces", id: otherWs.id }] } });
    const foreign = await makePool(await createOrg());
    const cookie = await signIn(ADMIN);
    const base = `/app/${org}/workspaces/${ws.attributes.name}`;
    const page = await ui("GET", base, { cookie });
    const offered = [...(/<select id="s-pool"[^>]*>([\s\S]*?)<\/select>/.exec(page.text)?.[1] ?? "").matchAll(/<option value="([^"]*)"/g)].map((m) => m[1]);
    const usable = await api("GET", `/organizations/${org}/agent-pools?filter[allowed_workspaces][name]=${ws.attributes.name}`);
    expect(offered).toEqual(["", ...usable.body.data.map((p: { id: string }) => p.id)]);
    expect(offered).toContain(pool.id);
    expect(offered).not.toContain(scopedElsewhere.id);

    // Refused as the API refuses the same attributes, with its words, next to the form.
    for (const [sent, attributes] of [
      [{ "agent-pool-id": "" }, { "execution-mode": "agent", "agent-pool-id": null }],
      [{ "agent-pool-id": foreign.id }, { "execution-mode": "agent", "agent-pool-id": foreign.id }],
      [{ "agent-pool-id": "apool-nope" }, { "execution-mode": "agent", "agent-pool-id": "apool-nope" }],
    ] as const) {
      const fromApi = await api("PATCH", `/workspaces/${ws.id}`, { body: { data: { type: "workspaces", attributes } } });
      expect(fromApi.status).toBe(422);
      const refused = await ui("POST", `${base}/settings`, { cookie, form: form(sent) });
      expect(refused.status).toBe(422);
      expect(/<div class="error" role="alert" id="settings-errors">([\s\S]*?)<\/div>/.exec(refused.text)?.[1]).toContain(
        escapeHtml(fromApi.body.errors[0].detail),
      );
    }
    expect((await api("GET", `/workspaces/${ws.id}`)).body.data.attributes["execution-mode"]).toBe("remote");

    // Saved: the API shows agent mode with the pool, and the form selects it.
    expect((await ui("POST", `${base}/settings`, { cookie, form: form({ "agent-pool-id": pool.id }) })).status).toBe(303);
    let shown = (await api("GET", `/workspaces/${ws.id}`)).body.data;
    expect(shown.attributes["execution-mode"]).toBe("agent");
    expect(shown.relationships["agent-pool"].data).toEqual({ id: pool.id, type: "agent-pools" });
    expect((await ui("GET", base, { cookie })).text).toContain(`<option value="${pool.id}" selected="">`);
    // Leaving agent mode drops the pool, whatever the (ignored) select says.
    expect((await ui("POST", `${base}/settings`, { cookie, form: form({ "execution-mode": "remote", "agent-pool-id": pool.id }) })).status).toBe(303);
    shown = (await api("GET", `/workspaces/${ws.id}`)).body.data;
    expect(shown.attributes["execution-mode"]).toBe("remote");
    expect(shown.relationships["agent-pool"].data).toBeNull();
  });
});

describe("UI remote-state consumers", () => {
  it("an admin adds (by name) and removes consumers through the same service as the API; refusals show next to the form", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const consumer = await createWorkspace(org, { name: uniqueName("Cons") });
    const cookie = await signIn(ADMIN);
    const base = `/app/${org}/workspaces/${ws.attributes.name}`;
    expect((await ui("GET", base, { cookie })).text).toContain(`action="${base}/consumers"`);
    // Names compare case-insensitively, as the API's names do.
    const added = await ui("POST", `${base}/consumers`, { cookie, form: { name: consumer.attributes.name.toLowerCase() } });
    expect(added.status).toBe(303);
    expect(added.headers.get("Location")).toBe(base);
    const listed = await api("GET", `/workspaces/${ws.id}/relationships/remote-state-consumers`);
    expect(listed.body.data.map((w: { id: string }) => w.id)).toEqual([consumer.id]);
    const page = await ui("GET", base, { cookie });
    expect(page.text).toContain(`<input type="hidden" name="id" value="${consumer.id}"/>`);

    for (const [name, detail] of [
      ["no-such-workspace", "Workspace not found: no-such-workspace"],
      [ws.attributes.name, "A workspace cannot be a remote state consumer of itself"],
    ]) {
      const refused = await ui("POST", `${base}/consumers`, { cookie, form: { name } });
      expect(refused.status).toBe(422);
      const errors = /<div class="error" role="alert" id="consumers-errors">([\s\S]*?)<\/div>/.exec(refused.text)?.[1] ?? "";
      expect(errors).toContain(escapeHtml(detail));
      expect(refused.text).toContain(`id="c-name" name="name" required="" autocomplete="off" value="${escapeHtml(name)}"`);
    }

    expect((await ui("POST", `${base}/consumers/delete`, { cookie, form: { id: consumer.id } })).status).toBe(303);
    expect((await api("GET", `/workspaces/${ws.id}/relationships/remote-state-consumers`)).body.data).toEqual([]);

    // While sharing globally the list is fixed: no forms.
    expect((await api("PATCH", `/workspaces/${ws.id}`, { body: { data: { type: "workspaces", attributes: { "global-remote-state": true } } } })).status).toBe(
      200,
    );
    const global = await ui("GET", base, { cookie });
    expect(global.text).toContain("Every workspace of the organisation may read");
    expect(global.text).not.toContain(`action="${base}/consumers"`);
  });

  it("a caller who may not administer the workspace sees no consumer forms, and forged or cross-origin POSTs change nothing", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const consumer = await createWorkspace(org);
    expect(
      (await api("POST", `/workspaces/${ws.id}/relationships/remote-state-consumers`, { body: { data: [{ type: "workspaces", id: consumer.id }] } })).status,
    ).toBe(204);
    const cookie = await memberCookie(org, { [ws.id]: "write", [consumer.id]: "write" });
    const base = `/app/${org}/workspaces/${ws.attributes.name}`;
    const page = await ui("GET", base, { cookie });
    expect(page.status).toBe(200);
    expect(page.text).toContain(consumer.attributes.name);
    expect(page.text).not.toContain(`${base}/consumers`);
    expect((await ui("POST", `${base}/consumers/delete`, { cookie, form: { id: consumer.id } })).status).toBe(404);
    expect((await ui("POST", `${base}/consumers`, { cookie, form: { name: "no-such-workspace" } })).status).toBe(404);
    const admin = await signIn(ADMIN);
    expect((await ui("POST", `${base}/consumers/delete`, { cookie: admin, origin: "https://evil.example", form: { id: consumer.id } })).status).toBe(403);
    const listed = await api("GET", `/workspaces/${ws.id}/relationships/remote-state-consumers`);
    expect(listed.body.data.map((w: { id: string }) => w.id)).toEqual([consumer.id]);
  });
});

describe("UI team access", () => {
  const accessesOf = async (wsId: string) =>
    (await api("GET", `/team-workspaces?filter[workspace][id]=${wsId}`)).body.data.map(
      (d: { id: string; attributes: { access: string }; relationships: { team: { data: { id: string } } } }) => ({
        id: d.id,
        team: d.relationships.team.data.id,
        access: d.attributes.access,
      }),
    );

  it("an admin gives, changes and removes a team's access; the API shows each change; refusals show next to the form", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const team = await makeTeam(org);
    const stranger = await makeTeam(await createOrg());
    const cookie = await signIn(ADMIN);
    const base = `/app/${org}/workspaces/${ws.attributes.name}`;
    const page = await ui("GET", base, { cookie });
    expect(page.text).toContain(`<option value="${team.id}"`);
    expect((await ui("POST", `${base}/team-access`, { cookie, form: { team: team.id, access: "plan" } })).status).toBe(303);
    let accesses = await accessesOf(ws.id);
    expect(accesses).toEqual([{ id: expect.any(String), team: team.id, access: "plan" }]);
    const tw = accesses[0].id;
    // A team that has access is no longer offered; its row can be changed and removed.
    const after = await ui("GET", base, { cookie });
    expect(/<select id="ta-team"[^>]*>([\s\S]*?)<\/select>/.exec(after.text)?.[1] ?? "").not.toContain(team.id);
    expect(after.text).toContain(`action="${base}/team-access/${tw}"`);

    for (const [form, detail] of [
      [{ team: team.id, access: "read" }, "Team already has access to this workspace"],
      [{ team: stranger.id, access: "read" }, "Team not found"],
      [{ team: team.id, access: "owner" }, "access: "],
    ] as const) {
      const refused = await ui("POST", `${base}/team-access`, { cookie, form });
      expect(refused.status, JSON.stringify(form)).toBe(422);
      expect(/<div class="error" role="alert" id="team-access-errors">([\s\S]*?)<\/div>/.exec(refused.text)?.[1]).toContain(detail);
    }
    // The API refuses the same two with the same words.
    const body = (teamId: string) => ({
      data: {
        type: "team-workspaces",
        attributes: { access: "read" },
        relationships: { workspace: { data: { type: "workspaces", id: ws.id } }, team: { data: { type: "teams", id: teamId } } },
      },
    });
    expect((await api("POST", "/team-workspaces", { body: body(team.id) })).body.errors[0].detail).toBe("Team already has access to this workspace");
    expect((await api("POST", "/team-workspaces", { body: body(stranger.id) })).body.errors[0].detail).toBe("Team not found");

    expect((await ui("POST", `${base}/team-access/${tw}`, { cookie, form: { access: "admin" } })).status).toBe(303);
    expect((await accessesOf(ws.id))[0].access).toBe("admin");
    expect((await ui("POST", `${base}/team-access/${tw}`, { cookie, form: { access: "bogus" } })).status).toBe(422);
    expect((await ui("POST", `${base}/team-access/${tw}/delete`, { cookie })).status).toBe(303);
    accesses = await accessesOf(ws.id);
    expect(accesses).toEqual([]);
  });

  it("a caller who may not administer the workspace sees no team-access forms, and forged POSTs change nothing", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const team = await makeTeam(org);
    await grantWorkspace(team.id, ws.id, "write");
    const other = await makeTeam(org);
    const writer = await makeUser({ teams: [team.id] });
    const cookie = await signIn(writer.token);
    const base = `/app/${org}/workspaces/${ws.attributes.name}`;
    const page = await ui("GET", base, { cookie });
    expect(page.status).toBe(200);
    expect(page.text).toContain('id="team-access"');
    expect(page.text).not.toContain(`${base}/team-access`);
    const [tw] = await accessesOf(ws.id);
    expect((await ui("POST", `${base}/team-access`, { cookie, form: { team: other.id, access: "admin" } })).status).toBe(404);
    expect((await ui("POST", `${base}/team-access`, { cookie, form: { team: other.id, access: "bogus" } })).status).toBe(404);
    expect((await ui("POST", `${base}/team-access/${tw.id}`, { cookie, form: { access: "admin" } })).status).toBe(404);
    expect((await ui("POST", `${base}/team-access/${tw.id}/delete`, { cookie })).status).toBe(404);
    const admin = await signIn(ADMIN);
    expect((await ui("POST", `${base}/team-access/${tw.id}/delete`, { cookie: admin, origin: "https://evil.example" })).status).toBe(403);
    expect(await accessesOf(ws.id)).toEqual([{ id: tw.id, team: team.id, access: "write" }]);
  });
});

describe("UI authorisation table", () => {
  it("declares every served /app route, each against a known action", () => {
    const served = new Set(app.routes.filter((r) => r.path.startsWith("/app") && r.method !== "ALL").map((r) => `${r.method} ${r.path}`));
    expect([...served].sort()).toEqual(Object.keys(UI_ROUTE_ACTIONS).sort());
    for (const action of Object.values(UI_ROUTE_ACTIONS)) if (action) expect(REQUIREMENTS).toHaveProperty(action);
  });
});

// ---- runs ----

const AGENT = { id: "agent-UiTestAgent00001", name: "ui-test", poolId: null, poolName: null };
const ESC = "\u001b";
const PLAN_JSON = JSON.stringify({
  format_version: "1.2",
  resource_changes: [
    { address: "terraform_data.web", change: { actions: ["create"], before: null, after: { input: "hello" }, after_unknown: { id: true } } },
    { address: "terraform_data.kept", change: { actions: ["no-op"] } },
    { address: "terraform_data.old", change: { actions: ["delete", "create"], before: { input: "v1" }, after: { input: "v2" } } },
    {
      address: "terraform_data.db",
      change: {
        actions: ["update"],
        before: { input: { password: "plan-secret-one", size: 1 } },
        after: { input: { password: "plan-secret-two", size: 2 } },
        before_sensitive: { input: { password: true } },
        after_sensitive: { input: { password: true } },
      },
    },
  ],
  output_changes: { token: { actions: ["update"], before: "out-secret-one", after: "out-secret-two", before_sensitive: true, after_sensitive: true } },
});

/** A workspace with an uploaded configuration version, through the API. */
async function runnable(org: string) {
  const ws = await createWorkspace(org);
  const cv = await api("POST", `/workspaces/${ws.id}/configuration-versions`, {
    body: { data: { type: "configuration-versions", attributes: { "auto-queue-runs": false } } },
  });
  expect(cv.status).toBe(201);
  const put = await exports.default.fetch(
    new Request(cv.body.data.attributes["upload-url"], {
      method: "PUT",
      body: new Uint8Array([31, 139, 8, 0]),
      headers: { "Content-Type": "application/octet-stream" },
    }),
  );
  expect(put.status).toBe(200);
  return ws;
}

async function queueRun(wsId: string, message = "from the UI tests", token = ADMIN): Promise<string> {
  const res = await api("POST", "/runs", {
    token,
    body: { data: { type: "runs", attributes: { message }, relationships: { workspace: { data: { type: "workspaces", id: wsId } } } } },
  });
  expect(res.status).toBe(201);
  return res.body.data.id;
}

const runOf = async (id: string) => (await api("GET", `/runs/${id}`)).body.data;

/** A runnable workspace of `org` with one run, its plan finished with `log`. */
async function plannedRun(org: string, log: string) {
  const ws = await runnable(org);
  const runId = await queueRun(ws.id);
  await planRun(ws.id, runId, log);
  return { ws, runId };
}

/**
 * The plan phase as an agent would run it, through the workspace object's job methods (no agent process here).
 * `json`: the redacted JSON plan; `fullJson`: the unredacted one.
 */
async function planRun(
  wsId: string,
  runId: string,
  log: string,
  opts: { json?: string; fullJson?: string; finish?: boolean } = {},
): Promise<() => Promise<void>> {
  const stub = env.WORKSPACES.getByName(wsId);
  const claimed = await stub.claimJob({ runId, phase: "plan", agent: AGENT, now: new Date().toISOString() });
  if (!claimed.ok) throw new Error(`claim: ${claimed.code}`);
  const claimId = claimed.value.claimId;
  const appended = await stub.appendLog({ runId, phase: "plan", claimId, offset: 0, bytes: new TextEncoder().encode(log), now: new Date().toISOString() });
  expect(appended.ok).toBe(true);
  if (opts.json) expect((await stub.putArtifact({ runId, claimId, kind: "plan-json-redacted", bytes: new TextEncoder().encode(opts.json) })).ok).toBe(true);
  if (opts.fullJson) expect((await stub.putArtifact({ runId, claimId, kind: "plan-json", bytes: new TextEncoder().encode(opts.fullJson) })).ok).toBe(true);
  const finish = async () => {
    const now = new Date().toISOString();
    const done = await stub.finishJob({
      runId,
      phase: "plan",
      claimId,
      now,
      status: "finished",
      hasChanges: true,
      resourceAdditions: 2,
      resourceDestructions: 1,
    });
    expect(done.ok).toBe(true);
  };
  if (opts.finish !== false) await finish();
  return finish;
}

const forms = (html: string) => [...html.matchAll(/<form method="post" action="([^"]+)"/g)].map((m) => m[1]).filter((a) => a.includes("/runs/"));
const runIdsIn = (html: string) => [...html.matchAll(/<tr data-run="([^"]+)"/g)].map((m) => m[1]);

describe("UI runs: the run page", () => {
  it("Terraform's run address leads to it; it refreshes itself while the run moves on, with the caller's cancel", async () => {
    const org = await createOrg();
    const ws = await runnable(org);
    const name = ws.attributes.name;
    const runId = await queueRun(ws.id);
    const cookie = await signIn(ADMIN);
    const printed = await ui("GET", `/app/${org}/${name}/runs/${runId}`, { cookie });
    expect(printed.status).toBe(302);
    const page = `/app/${org}/workspaces/${name}/runs/${runId}`;
    expect(printed.headers.get("Location")).toBe(page);
    const res = await ui("GET", page, { cookie });
    expect(res.status).toBe(200);
    expect((await runOf(runId)).attributes.status).toBe("plan_queued");
    expect(res.text).toContain('<meta http-equiv="refresh" content="2"/>');
    expect(res.text).toMatch(/id="run-status">plan queued</);
    expect(res.text).toContain("The plan has not started.");
    expect(forms(res.text)).toEqual([`${page}/cancel`]);
    // An address naming another workspace leads to the run's own; one for no run is 404.
    const other = await createWorkspace(org);
    const moved = await ui("GET", `/app/${org}/workspaces/${other.attributes.name}/runs/${runId}`, { cookie });
    expect(moved.status).toBe(303);
    expect(moved.headers.get("Location")).toBe(page);
    expect((await ui("GET", `/app/${org}/workspaces/${name}/runs/run-NoSuchRun0000000`, { cookie })).status).toBe(404);
  });

  it("shows the plan log escaped, unframed and coloured, its counts and the JSON plan's changes; confirm and discard offered", async () => {
    const org = await createOrg();
    const ws = await runnable(org);
    const runId = await queueRun(ws.id, "<b>bold</b> message");
    const cookie = await signIn(ADMIN);
    const page = `/app/${org}/workspaces/${ws.attributes.name}/runs/${runId}`;
    const finish = await planRun(ws.id, runId, `Terraform will perform:\n${ESC}[1m${ESC}[32m+${ESC}[0m create <script>alert(1)</script>\r\n`, {
      json: PLAN_JSON,
      finish: false,
    });
    // Planning: the log streams, and the page keeps refreshing.
    let res = await ui("GET", page, { cookie });
    expect(res.text).toMatch(/id="run-status">planning</);
    expect(res.text).toContain("The log is still streaming.");
    expect(res.text).toContain('http-equiv="refresh"');
    await finish();

    res = await ui("GET", page, { cookie });
    expect(res.status).toBe(200);
    expect((await runOf(runId)).attributes.status).toBe("planned");
    expect(res.text).toMatch(/id="run-status">planned</);
    // Waiting for someone: no refresh (it would wipe a comment being typed).
    expect(res.text).not.toContain('http-equiv="refresh"');
    expect(res.text).toContain("&lt;b&gt;bold&lt;/b&gt; message");
    const log = /<pre class="log" id="plan-log"[^>]*>([\s\S]*?)<\/pre>/.exec(res.text)?.[1] ?? "";
    expect(log).toContain('<span class="a-b a-f2">+</span> create &lt;script&gt;alert(1)&lt;/script&gt;\n');
    expect(log.startsWith("Terraform will perform:")).toBe(true);
    expect(res.text).not.toContain("<script>");
    for (const ch of ["\u0002", "\u0003", ESC, "\r"]) expect(res.text).not.toContain(ch);
    expect(res.text).toMatch(/id="plan-counts">[\s\S]*\+2[\s\S]*~0[\s\S]*−1/);
    expect(res.text).toContain('data-change="terraform_data.web"');
    expect(res.text).not.toContain("terraform_data.kept");
    expect(res.text).toMatch(/data-change="terraform_data.old">[\s\S]*?replace/);
    // Each resource's attribute diff: values, unknowns, and sensitive values in words, never their bytes.
    expect(res.text).toMatch(
      /data-change="terraform_data.web">[\s\S]*?<code>id<\/code>[\s\S]*?\(known after apply\)[\s\S]*?<code>input<\/code>[\s\S]*?&quot;hello&quot;/,
    );
    expect(res.text).toMatch(/data-change="terraform_data.old">[\s\S]*?&quot;v1&quot;[\s\S]*?&quot;v2&quot;/);
    expect(res.text).toMatch(/data-change="terraform_data.db">[\s\S]*?input.password[\s\S]*?\(sensitive value\)[\s\S]*?input.size/);
    expect(res.text).toMatch(/data-output="token">[\s\S]*?\(sensitive value\)/);
    for (const secret of ["plan-secret-one", "plan-secret-two", "out-secret-one", "out-secret-two"]) expect(res.text).not.toContain(secret);
    // The raw log link is the API's own log-read-url.
    const plan = (await api("GET", `/runs/${runId}/plan`)).body.data;
    expect(unescapeHtml(/href="([^"]+)" id="plan-raw"/.exec(res.text)?.[1] ?? "")).toBe(plan.attributes["log-read-url"]);
    // A planned run is confirmed or discarded; it is not canceled (the API says so too).
    expect(forms(res.text)).toEqual([`${page}/apply`, `${page}/discard`]);
    expect((await runOf(runId)).attributes.actions["is-cancelable"]).toBe(false);
    expect(res.text).toContain('id="apply-comment"');
  });

  it("lists the changes of the redacted JSON plan, never the full one's addresses (a sensitive for_each key)", async () => {
    const org = await createOrg();
    const ws = await runnable(org);
    const runId = await queueRun(ws.id);
    const address = (key: string) => ({ address: `terraform_data.user["${key}"]`, change: { actions: ["create"] } });
    await planRun(ws.id, runId, "plan output\n", {
      fullJson: JSON.stringify({ format_version: "1.2", resource_changes: [address("db-admin-secret")] }),
      json: JSON.stringify({ plan_format_version: "1.2", resource_changes: [address("(sensitive value 0123456789ab)")] }),
    });
    const res = await ui("GET", `/app/${org}/workspaces/${ws.attributes.name}/runs/${runId}`, { cookie: await signIn(ADMIN) });
    expect(res.status).toBe(200);
    expect(res.text).not.toContain("db-admin-secret");
    expect(res.text).toContain('data-change="terraform_data.user[&quot;(sensitive value 0123456789ab)&quot;]"');
  });

  it("confirm through the page applies as the API's action does, with its comment; a second confirm is refused next to the form", async () => {
    const org = await createOrg();
    const { ws, runId } = await plannedRun(org, "plan output\n");
    const cookie = await signIn(ADMIN);
    const page = `/app/${org}/workspaces/${ws.attributes.name}/runs/${runId}`;
    const confirmed = await ui("POST", `${page}/apply`, { cookie, form: { comment: "ship it <now>" } });
    expect(confirmed.status).toBe(303);
    expect(confirmed.headers.get("Location")).toBe(page);
    const run = await runOf(runId);
    expect(["confirmed", "apply_queued"]).toContain(run.attributes.status);
    expect(run.relationships["confirmed-by"].data).not.toBeNull();
    const comments = await api("GET", `/runs/${runId}/comments`);
    expect(comments.body.data.map((c: { attributes: { body: string } }) => c.attributes.body)).toEqual(["ship it <now>"]);
    const shown = await ui("GET", page, { cookie });
    expect(shown.text).toContain("ship it &lt;now&gt;");
    expect(shown.text).toContain('http-equiv="refresh"');
    expect(forms(shown.text)).toEqual([`${page}/cancel`]);

    const again = await ui("POST", `${page}/apply`, { cookie, form: { comment: "twice" } });
    expect(again.status).toBe(409);
    expect(again.text).toContain('id="apply-errors"');
    expect(again.text).toContain("The run was not confirmed:");
    expect(again.text).toMatch(/cannot be confirmed/);
    expect((await runOf(runId)).attributes.status).toBe(run.attributes.status);
    expect((await api("GET", `/runs/${runId}/comments`)).body.data).toHaveLength(1);
  });

  it("discard and cancel through the page change what the API shows", async () => {
    const org = await createOrg();
    const ws = await runnable(org);
    const cookie = await signIn(ADMIN);
    const base = `/app/${org}/workspaces/${ws.attributes.name}/runs`;
    const planned = await queueRun(ws.id, "to discard");
    await planRun(ws.id, planned, "x\n");
    expect((await ui("POST", `${base}/${planned}/discard`, { cookie, form: { comment: "not today" } })).status).toBe(303);
    expect((await runOf(planned)).attributes.status).toBe("discarded");
    const queued = await queueRun(ws.id, "to cancel");
    expect((await runOf(queued)).attributes.status).toBe("plan_queued");
    expect((await ui("POST", `${base}/${queued}/cancel`, { cookie, form: {} })).status).toBe(303);
    expect((await runOf(queued)).attributes.status).toBe("canceled");
    const over = await ui("GET", `${base}/${queued}`, { cookie });
    expect(over.text).not.toContain('http-equiv="refresh"');
    expect(forms(over.text)).toEqual([]);
    // Canceled before any agent took it: no log, and nothing said to be streaming.
    expect(over.text).toMatch(/id="plan-no-log">No log\.</);
    expect(over.text).not.toContain("streaming");
    // A final run's discard is refused with the API's reason, next to the (now absent) form.
    const refused = await ui("POST", `${base}/${queued}/discard`, { cookie, form: {} });
    expect(refused.status).toBe(409);
    expect(refused.text).toContain('id="discard-errors"');
    expect((await runOf(queued)).attributes.status).toBe("canceled");
  });

  it("force cancel is offered once a signalled cancel's cool-off is over, and ends the run as the API's action does", async () => {
    const org = await createOrg();
    const ws = await runnable(org);
    const runId = await queueRun(ws.id);
    await planRun(ws.id, runId, "still planning\n", { finish: false });
    const cookie = await signIn(ADMIN);
    const page = `/app/${org}/workspaces/${ws.attributes.name}/runs/${runId}`;
    expect(forms((await ui("GET", page, { cookie })).text)).toEqual([`${page}/cancel`]);
    // The cancel is signalled to the agent as of 20 s ago, so the cool-off is over without waiting for it.
    const past = new Date(Date.now() - 20_000).toISOString();
    const stub = env.WORKSPACES.getByName(ws.id);
    const signalled = await stub.runAction({
      runId,
      action: "cancel",
      now: past,
      by: { actor: { type: "users", id: "user-UiTestUser000001" }, canApply: true },
      comment: null,
    });
    expect(signalled.ok).toBe(true);
    const run = await runOf(runId);
    expect(run.attributes.status).toBe("planning");
    expect(run.attributes.actions["is-force-cancelable"]).toBe(true);
    const res = await ui("GET", page, { cookie });
    expect(forms(res.text)).toEqual([`${page}/force-cancel`]);
    expect(res.text).not.toContain('id="force-cancel-comment"');
    // A workspace writer may cancel but not force-cancel (admins only): no form, and a forged POST is refused.
    const team = await makeTeam(org);
    await grantWorkspace(team.id, ws.id, "write");
    const writer = await makeUser({ teams: [team.id] });
    const writerCookie = await signIn(writer.token);
    expect(forms((await ui("GET", page, { cookie: writerCookie })).text)).toEqual([]);
    const forged = await ui("POST", `${page}/force-cancel`, { cookie: writerCookie, form: {} });
    expect(forged.status).toBe((await api("POST", `/runs/${runId}/actions/force-cancel`, { token: writer.token })).status);
    expect((await runOf(runId)).attributes.status).toBe("planning");

    expect((await ui("POST", `${page}/force-cancel`, { cookie, form: {} })).status).toBe(303);
    const after = await runOf(runId);
    expect(after.attributes.status).toBe("canceled");
    expect(after.attributes["status-timestamps"]["force-canceled-at"]).toBeTruthy();
  });

  it("a reader sees no action forms; forged action POSTs get the API's answer and change nothing", async () => {
    const org = await createOrg();
    const { ws, runId } = await plannedRun(org, "plan\n");
    const team = await makeTeam(org);
    await grantWorkspace(team.id, ws.id, "read");
    const reader = await makeUser({ teams: [team.id] });
    const cookie = await signIn(reader.token);
    const page = `/app/${org}/workspaces/${ws.attributes.name}/runs/${runId}`;
    const res = await ui("GET", page, { cookie });
    expect(res.status).toBe(200);
    expect(res.text).toContain('id="plan-log"');
    expect(forms(res.text)).toEqual([]);
    for (const action of ["apply", "discard", "cancel", "force-cancel"]) {
      const fromApi = await api("POST", `/runs/${runId}/actions/${action}`, { token: reader.token });
      const forged = await ui("POST", `${page}/${action}`, { cookie, form: { comment: "forged" } });
      expect(forged.status, action).toBe(fromApi.status);
      expect(forged.status, action).toBeGreaterThanOrEqual(403);
    }
    expect((await runOf(runId)).attributes.status).toBe("planned");
    expect((await api("GET", `/runs/${runId}/comments`)).body.data).toHaveLength(0);
    // Cross-origin, even with the admin's session.
    const admin = await signIn(ADMIN);
    expect((await ui("POST", `${page}/apply`, { cookie: admin, origin: "https://evil.example", form: {} })).status).toBe(403);
    expect((await runOf(runId)).attributes.status).toBe("planned");
  });

  it("a caller who may not read the workspace's runs gets 404 for the run page, the list and the redirect's target", async () => {
    const org = await createOrg();
    const ws = await runnable(org);
    const runId = await queueRun(ws.id);
    const outsider = await makeUser();
    const cookie = await signIn(outsider.token);
    expect((await ui("GET", `/app/${org}/workspaces/${ws.attributes.name}/runs/${runId}`, { cookie })).status).toBe(404);
    expect((await ui("GET", `/app/${org}/workspaces/${ws.attributes.name}/runs`, { cookie })).status).toBe(404);
  });
});

describe("UI runs: the list and the workspace page", () => {
  it("lists the API's runs for the same query, newest first with paging; the workspace page links the current run", async () => {
    const org = await createOrg();
    const ws = await runnable(org);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await queueRun(ws.id, `run ${i}`));
    await planRun(ws.id, ids[0]!, "plan\n");
    const cookie = await signIn(ADMIN);
    const base = `/app/${org}/workspaces/${ws.attributes.name}`;
    for (const q of [
      "",
      "page[size]=2",
      "page[size]=2&page[number]=2",
      "filter[status_group]=discardable",
      "search[basic]=run 1",
      "filter[status_group]=&filter[operation]=",
    ]) {
      const fromApi = await api("GET", `/workspaces/${ws.id}/runs?${q}`);
      const res = await ui("GET", `${base}/runs?${q}`, { cookie });
      expect(res.status, q).toBe(200);
      expect(runIdsIn(res.text), q).toEqual(fromApi.body.data.map((r: { id: string }) => r.id));
      expect(res.text).toContain(`${fromApi.body.meta.pagination["total-count"]} run`);
    }
    const all = await ui("GET", `${base}/runs`, { cookie });
    expect(runIdsIn(all.text)).toEqual([...ids].reverse());
    expect(all.text).toMatch(new RegExp(`data-run="${ids[0]}">[\\s\\S]*?planned[\\s\\S]*?\\+2`));
    expect(all.text).toContain(`href="${base}/runs/${ids[2]}"`);
    expect((await ui("GET", `${base}/runs?filter[status_group]=bogus`, { cookie })).status).toBe(400);

    const wsPage = await ui("GET", base, { cookie });
    const current = (await api("GET", `/workspaces/${ws.id}`)).body.data.relationships["current-run"].data.id;
    expect(current).toBe(ids[0]);
    expect(wsPage.text).toMatch(new RegExp(`id="current-run">[\\s\\S]*?href="${base}/runs/${ids[0]}"[\\s\\S]*?planned`));
    expect(wsPage.text).toContain(`href="${base}/runs" id="all-runs"`);
  });
});

describe("UI runs: New run", () => {
  it("queues each kind through the same service as POST /runs, with its message, addresses and variables", async () => {
    const org = await createOrg();
    const ws = await runnable(org);
    const cookie = await signIn(ADMIN);
    const base = `/app/${org}/workspaces/${ws.attributes.name}/runs`;
    const list = await ui("GET", base, { cookie });
    expect(list.text).toContain('id="new-run"');
    const form = (html: string) => /<details[^>]*id="new-run"[\s\S]*?<\/details>/.exec(html)?.[0] ?? "";
    expect(form(list.text)).not.toMatch(/<details[^>]*\bopen/);
    // The workspace page's "New run" leads to the form, open.
    const wsPage = await ui("GET", base.replace(/\/runs$/, ""), { cookie });
    const link = /href="([^"]+)" id="new-run-link"/.exec(wsPage.text)?.[1]?.replace(/&amp;/g, "&");
    expect(link).toBe(`${base}?new-run#new-run`);
    expect(form((await ui("GET", link!.replace(/#.*/, ""), { cookie })).text)).toMatch(/<details[^>]*\bopen/);
    expect(form(list.text)).toContain('value="destroy"');
    const kinds: Array<[string, Record<string, unknown>]> = [
      ["plan-only", { "plan-only": true }],
      ["refresh-only", { "refresh-only": true }],
      ["destroy", { "is-destroy": true }],
      ["apply", { "plan-only": false, "is-destroy": false, "refresh-only": false }],
    ];
    for (const [kind, expected] of kinds) {
      const res = await ui("POST", `${base}/new`, {
        cookie,
        form: { kind, message: `a ${kind} run`, "target-addrs": "terraform_data.a\nterraform_data.b", "replace-addrs": "", variables: 'greeting = "hi"' },
      });
      expect(res.status).toBe(303);
      const runId = /runs\/(run-[A-Za-z0-9]+)/.exec(res.headers.get("Location") ?? "")?.[1];
      const run = (await api("GET", `/runs/${runId}`)).body.data.attributes;
      expect(run).toMatchObject({ ...expected, message: `a ${kind} run`, "target-addrs": ["terraform_data.a", "terraform_data.b"], source: "tfe-ui" });
      expect(run.variables).toEqual([{ key: "greeting", value: '"hi"' }]);
    }
  });

  it("is refused with the reason when there is no configuration version, or a variable is malformed", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const cookie = await signIn(ADMIN);
    const base = `/app/${org}/workspaces/${ws.attributes.name}/runs`;
    const none = await ui("POST", `${base}/new`, { cookie, form: { kind: "apply", message: "", "target-addrs": "", "replace-addrs": "", variables: "" } });
    expect(none.status).toBe(422);
    expect(none.text).toContain('id="new-run-errors"');
    expect(none.text).toContain("no configuration version");
    const bad = await ui("POST", `${base}/new`, {
      cookie,
      form: { kind: "apply", message: "", "target-addrs": "", "replace-addrs": "", variables: "nothing here" },
    });
    expect(bad.status).toBe(422);
    expect(bad.text).toContain("is not written as key = value");
  });

  it("a reader sees no form and a forged post queues nothing; a writer who may not destroy is offered no destroy and refused one", async () => {
    const org = await createOrg();
    const ws = await runnable(org);
    const base = `/app/${org}/workspaces/${ws.attributes.name}/runs`;
    const reader = await makeTeam(org);
    await grantWorkspace(reader.id, ws.id, "read");
    const readerCookie = await signIn(reader.token);
    expect((await ui("GET", base, { cookie: readerCookie })).text).not.toContain('id="new-run"');
    expect((await ui("GET", base.replace(/\/runs$/, ""), { cookie: readerCookie })).text).not.toContain('id="new-run-link"');
    const forged = await ui("POST", `${base}/new`, {
      cookie: readerCookie,
      form: { kind: "apply", message: "", "target-addrs": "", "replace-addrs": "", variables: "" },
    });
    expect([403, 404]).toContain(forged.status);
    const writer = await makeTeam(org);
    await grantWorkspace(writer.id, ws.id, "write");
    const writerCookie = await signIn(writer.token);
    const page = await ui("GET", base, { cookie: writerCookie });
    expect(page.text).toContain('id="new-run"');
    const form = /<details[^>]*id="new-run"[\s\S]*?<\/details>/.exec(page.text)?.[0] ?? "";
    expect(form).toContain('value="plan-only"');
    expect(form).not.toContain('value="destroy"');
    const destroy = await ui("POST", `${base}/new`, {
      cookie: writerCookie,
      form: { kind: "destroy", message: "", "target-addrs": "", "replace-addrs": "", variables: "" },
    });
    expect([403, 404]).toContain(destroy.status);
    expect((await api("GET", `/workspaces/${ws.id}/runs`)).body.data).toHaveLength(0);
  });
});
