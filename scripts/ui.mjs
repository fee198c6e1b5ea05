#!/usr/bin/env node
// `npm run test:ui`: the web UI in a real browser. Starts the service (`npm start`) on a free port with a
// fresh store (scripts/lib/service.mjs), drives Debian's chromium through playwright-core, and checks what the UI
// does against what the API says: sign-in and sign-out, the list's filters, sort and paging, lock and unlock, lock
// holders named, a read-only caller's page (and its forged POSTs refused, as a cross-origin POST is), the projects
// page with its filters and paging, the workspace's state, outputs, bindings and access lists, the settings form
// (saved, refused with the API's reasons, and its agent pool), editing remote-state consumers and team access, and
// runs: Terraform's run address, the run page and its action forms, the runs list. A run reaches `planned` only when
// the service runs a local agent (its launcher is present and `terraform` is on PATH): the step then confirms the
// run and follows it to `applied`; without one it cancels the queued run instead.
// Every page is checked with axe-core (no serious or critical violations), must log no console error, and is
// screenshotted (desktop and 360 px wide) into test/ui/.screenshots/ (git-ignored).
//
// Each step prints one line (PASS/FAIL, seconds, name); "N passed, M failed" closes the run; the exit status is
// non-zero when any step failed. CHROMIUM: the browser binary (default: `chromium` on PATH, else /usr/bin/chromium).
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { accessSync, constants, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { delimiter, dirname, isAbsolute, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import { check, jsonApi, onExit, readJson, StepError, stepRunner } from "./lib/harness.mjs";
import { freePort, killAllGroups, startService } from "./lib/service.mjs";
import { startIdp } from "./lib/oidc-idp.mjs";
import { chromiumPath } from "./lib/chromium.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const shots = join(root, "test", "ui", ".screenshots");
const require = createRequire(import.meta.url);
const axeSource = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
const ORG = "ui-org";
const log = (msg) => console.log(`ui: ${msg}`);

onExit(killAllGroups);

const t0 = Date.now();
const work = mkdtempSync(join(tmpdir(), "ui-"));
rmSync(shots, { recursive: true, force: true });
mkdirSync(shots, { recursive: true });
log(`starting the service (log: ${join(work, "service.log")})`);
// Single sign-on through a real OpenID Connect provider on loopback (scripts/lib/oidc-idp.mjs, steps in
// scripts/ui/17-sso.steps.mjs): its port is chosen first, since the service is configured with its issuer.
const idpPort = await freePort();
const sso = { clientId: "workspace-service", clientSecret: randomBytes(16).toString("hex") };
const service = await startService({
  root,
  logFile: join(work, "service.log"),
  env: { OIDC_ISSUER: `http://127.0.0.1:${idpPort}`, OIDC_CLIENT_ID: sso.clientId, OIDC_CLIENT_SECRET: sso.clientSecret, OUTBOUND_ALLOW_PRIVATE: "1" },
});
log(`service on ${service.base} after ${service.startSeconds.toFixed(1)} s`);
const idp = await startIdp({ port: idpPort, ...sso, redirectUri: `${service.base}/app/sso/callback` });
const browser = await chromium.launch({ executablePath: chromiumPath(), args: ["--no-sandbox"] });

const { step, results, passed: countPassed, failed: countFailed } = stepRunner();

const callApi = jsonApi(`${service.base}/api/v2`, service.token);
/** The admin's (or `token`'s) API call; its parsed body, or a failed step unless it answered 2xx. */
async function api(method, path, body, token = service.token) {
  const r = await callApi(method, path, body, token);
  if (r.status >= 300) throw new StepError(`harness API call ${method} ${path} answered ${r.status}: ${r.text.slice(0, 400)}`);
  return r.json;
}

/** @typedef {import("playwright-core").Page & { errors: string[] }} AuditedPage a page that records its console errors */
/** @typedef {{ impact: string, id: string, help: string, nodes: { target: string[] }[] }} AxeViolation */

/** A browser context (its own cookies) whose pages record console errors and page errors. */
async function newPage(viewport = { width: 1280, height: 900 }) {
  const context = await browser.newContext({ viewport });
  // This machine has no network: a page's request for another host (the OIDC provider's login page imports a web
  // font) is refused at once rather than left to time out, which held back its load event past the waits' timeout.
  await context.route(
    (url) => !["127.0.0.1", "localhost", "[::1]"].includes(url.hostname),
    (route) => route.abort("internetdisconnected"),
  );
  const page = /** @type {AuditedPage} */ (await context.newPage());
  page.setDefaultTimeout(10_000);
  page.errors = [];
  page.on("console", (m) => {
    if (m.type() === "error") page.errors.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => page.errors.push(`page error: ${e.message}`));
  return page;
}

let shotCount = 0;
/**
 * axe-core on the current page (no serious or critical violation), no console errors so far, a screenshot. The
 * expressions evaluated in the page are strings: they run in the browser, not here.
 * @param {AuditedPage} page @param {string} label
 */
async function audit(page, label) {
  await page.evaluate(axeSource);
  /** @type {{ violations: AxeViolation[] }} */
  const result = await page.evaluate('axe.run(document, { resultTypes: ["violations"] })');
  const bad = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  check(
    bad.length === 0,
    `axe on ${label} (${page.url()}):\n${bad.map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`).join("\n")}`,
  );
  check(page.errors.length === 0, `console errors on ${label}:\n${page.errors.join("\n")}`);
  const width = page.viewportSize().width;
  /** @type {number} */
  const overflow = await page.evaluate("document.documentElement.scrollWidth");
  check(overflow <= width, `${label} is ${overflow} px wide in a ${width} px viewport`);
  shotCount++;
  await page.screenshot({ path: join(shots, `${String(shotCount).padStart(2, "0")}-${label}-${width}.png`), fullPage: true });
}

const rowNames = (page) => page.$$eval("tr[data-workspace]", (rows) => rows.map((r) => r.getAttribute("data-workspace")));
async function apiNames(query) {
  const doc = await api("GET", `/organizations/${ORG}/workspaces?${query}`);
  return { names: doc.data.map((w) => w.attributes.name), total: doc.meta.pagination["total-count"] };
}

/** Submits a form by clicking `button`; waits for the POST's answer (a 303 or a refused page) and the page it leads to. */
/**
 * `page.goto`, for a page that may be showing a run page that refreshes itself: its refresh can start a navigation
 * just as ours does, which Playwright reports as an interrupted or aborted navigation; ours is then made again.
 */
async function gotoPage(page, url) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await page.goto(url);
    } catch (err) {
      if (attempt >= 3 || !/interrupted by another navigation|net::ERR_ABORTED/.test(String(err?.message))) throw err;
    }
  }
}

async function submit(page, button, pathEnd) {
  await Promise.all([page.waitForResponse((r) => r.request().method() === "POST" && new URL(r.url()).pathname.endsWith(pathEnd)), page.click(button)]);
  await page.waitForLoadState("load");
}

/** A refused form answers 422, which the browser logs as one console error: expected, so taken off the page's errors. */
async function takeRefusalLog(page) {
  for (let i = 0; i < 50 && !page.errors.some((e) => e.includes("status of 422")); i++) await page.waitForTimeout(100);
  const expected = page.errors.filter((e) => e.includes("status of 422"));
  check(expected.length === 1, `console after the refused form: ${page.errors.join("\n")}`);
  page.errors = page.errors.filter((e) => !expected.includes(e));
}

/** A page answered with `status` logs a console error: expected, so taken off the page's errors (at least one). */
async function takeStatusLog(page, status) {
  for (let i = 0; i < 50 && !page.errors.some((e) => e.includes(`status of ${status}`)); i++) await page.waitForTimeout(100);
  const expected = page.errors.filter((e) => e.includes(`status of ${status}`));
  check(expected.length >= 1, `no ${status} logged; console: ${page.errors.join("\n")}`);
  page.errors = page.errors.filter((e) => !expected.includes(e));
}

/** Signs in through the password form (`login`: a username or an e-mail address). */
async function passwordSignIn(page, login, password) {
  await page.goto(`${service.base}/app/session/new`);
  await page.fill("#username", login);
  await page.fill("#password", password);
  await submit(page, "#password-sign-in", "/app/session/password");
}

/** A new browser context signed in with `token`. */
async function signedIn(token, viewport) {
  const page = await newPage(viewport);
  await page.goto(`${service.base}/app/session/new`);
  await page.fill("#token", token);
  await Promise.all([page.waitForURL(`${service.base}/app`), page.click("button[type=submit]")]);
  return page;
}

/** A POST as a form would send it, from `page`'s context (its session cookie); `origin` defaults to the service's own. */
async function post(page, path, form, origin = service.base) {
  const res = await page.request.post(`${service.base}${path}`, { form, headers: { Origin: origin }, maxRedirects: 0, failOnStatusCode: false });
  return res.status();
}

const consumerIds = async (id) => (await api("GET", `/workspaces/${id}/relationships/remote-state-consumers`)).data.map((w) => w.id);
const teamAccesses = async (id) =>
  (await api("GET", `/team-workspaces?filter[workspace][id]=${id}`)).data.map((d) => ({ team: d.relationships.team.data.id, access: d.attributes.access }));

/** @type {AuditedPage} */
let admin;
let firstWs;
let readOnlyToken;
let writersTeam;
let writersToken;
let pool;
const names = [];
const ids = [];

await step("setup: organisation, workspaces and a read-only team token (through the API)", async () => {
  await api("POST", "/organizations", { data: { type: "organizations", attributes: { name: ORG, email: "ui@example.com" } } });
  for (let i = 0; i < 12; i++) {
    const name = `${i % 2 ? "api" : "web"}-${String(i).padStart(2, "0")}`;
    names.push(name);
    const tags = [i % 3 === 0 ? "prod" : "dev"];
    const ws = await api("POST", `/organizations/${ORG}/workspaces`, {
      data: {
        type: "workspaces",
        attributes: { name },
        relationships: {
          tags: { data: tags.map((t) => ({ type: "tags", attributes: { name: t } })) },
          "tag-bindings": { data: [{ type: "tag-bindings", attributes: { key: "env", value: i % 4 === 1 ? "prod" : "dev" } }] },
        },
      },
    });
    ids.push(ws.data.id);
    if (i === 0) firstWs = ws.data;
  }
  const team = await api("POST", `/organizations/${ORG}/teams`, { data: { type: "teams", attributes: { name: "readers" } } });
  await api("POST", "/team-workspaces", {
    data: {
      type: "team-workspaces",
      attributes: { access: "read" },
      relationships: { workspace: { data: { type: "workspaces", id: firstWs.id } }, team: { data: { type: "teams", id: team.data.id } } },
    },
  });
  readOnlyToken = (await api("POST", `/teams/${team.data.id}/authentication-token`, { data: { type: "authentication-token", attributes: {} } })).data.attributes
    .token;
  check(typeof readOnlyToken === "string", "no team token returned");
  // A second team, which may lock one workspace with its own token (a lock held by a team).
  writersTeam = (await api("POST", `/organizations/${ORG}/teams`, { data: { type: "teams", attributes: { name: "writers" } } })).data;
  await api("POST", "/team-workspaces", {
    data: {
      type: "team-workspaces",
      attributes: { access: "write" },
      relationships: { workspace: { data: { type: "workspaces", id: ids[2] } }, team: { data: { type: "teams", id: writersTeam.id } } },
    },
  });
  writersToken = (await api("POST", `/teams/${writersTeam.id}/authentication-token`, { data: { type: "authentication-token", attributes: {} } })).data
    .attributes.token;
  pool = (await api("POST", `/organizations/${ORG}/agent-pools`, { data: { type: "agent-pools", attributes: { name: "ui-pool" } } })).data;
});

await step("sign in with the site-admin token", async () => {
  admin = await newPage();
  await admin.goto(`${service.base}/app`);
  check(admin.url().endsWith("/app/session/new"), `/app without a session went to ${admin.url()}`);
  await audit(admin, "sign-in");
  await admin.fill("#token", service.token);
  await admin.click("button[type=submit]");
  await admin.waitForURL(`${service.base}/app`);
  const cookies = await admin.context().cookies();
  const session = cookies.find((c) => c.name === "ws_session");
  check(session?.httpOnly && session.sameSite === "Strict", `session cookie ${JSON.stringify(session)}`);
  check((await admin.textContent("main")).includes(ORG), "the organisations page does not list the organisation");
  await audit(admin, "organisations");
});

await step("list: filters, sort and paging give the same workspaces as the API", async () => {
  await admin.click(`a[href="/app/${ORG}/workspaces"]`);
  await admin.waitForURL(`**/app/${ORG}/workspaces`);
  let want = await apiNames("");
  check(JSON.stringify(await rowNames(admin)) === JSON.stringify(want.names), `default list ${await rowNames(admin)} vs API ${want.names}`);
  check((await admin.textContent("#total")).includes(`${want.total} workspaces`), `total shown: ${await admin.textContent("#total")}`);
  await audit(admin, "list");

  // Through the form, as a person would: name search, sort, page size, then the Next link.
  await admin.fill("#f-name", "web");
  await admin.selectOption("#f-sort", "-name");
  await admin.selectOption("#f-size", "5");
  await Promise.all([admin.waitForURL(/search/), admin.click("form.filters button[type=submit]")]);
  const query = new URL(admin.url()).search.slice(1);
  want = await apiNames(query);
  check(want.names.length === 5 && want.total === 6, `API gave ${want.names} of ${want.total} for ${query}`);
  check(JSON.stringify(await rowNames(admin)) === JSON.stringify(want.names), `page 1: UI ${await rowNames(admin)} vs API ${want.names}`);
  await Promise.all([admin.waitForURL(/page%5Bnumber%5D=2|page\[number\]=2/), admin.click("a[rel=next]")]);
  want = await apiNames(new URL(admin.url()).search.slice(1));
  check(
    JSON.stringify(await rowNames(admin)) === JSON.stringify(want.names) && want.names.length === 1,
    `page 2: UI ${await rowNames(admin)} vs API ${want.names}`,
  );
  await audit(admin, "list-filtered");

  // A tag binding's key and value, through the form.
  await admin.goto(`${service.base}/app/${ORG}/workspaces`);
  await admin.fill("#f-tkey", "env");
  await admin.fill("#f-tvalue", "prod");
  await admin.selectOption("#f-sort", "-latest-change-at");
  await Promise.all([admin.waitForURL(/filter/), admin.click("form.filters button[type=submit]")]);
  want = await apiNames(new URL(admin.url()).search.slice(1));
  check(want.total === 3, `the API gives ${want.total} workspaces bound env=prod`);
  check(JSON.stringify(await rowNames(admin)) === JSON.stringify(want.names), `env=prod: UI ${await rowNames(admin)} vs API ${want.names}`);

  for (const q of [
    "search[tags]=prod&sort=name",
    "search[exclude-tags]=prod&sort=-name",
    "search[wildcard-name]=api-*",
    "search[wildcard-name]=*-1*&sort=latest-change-at",
    "filter[tagged][0][key]=env&sort=-current-run.created-at",
    `filter[project][id]=${firstWs.relationships.project.data.id}&page[size]=20`,
  ]) {
    await admin.goto(`${service.base}/app/${ORG}/workspaces?${q}`);
    want = await apiNames(q);
    check(JSON.stringify(await rowNames(admin)) === JSON.stringify(want.names), `${q}: UI ${await rowNames(admin)} vs API ${want.names}`);
  }
  check(admin.errors.length === 0, `console errors: ${admin.errors.join("\n")}`);
});

await step("lock and unlock through the UI change what the API shows", async () => {
  const self = (await api("GET", `/workspaces/${firstWs.id}`)).data.links["self-html"];
  await admin.goto(`${service.base}${self}`);
  check((await admin.textContent("h1")) === firstWs.attributes.name, `workspace page heading ${await admin.textContent("h1")}`);
  await audit(admin, "workspace");
  await admin.fill("#reason", "browser test");
  await Promise.all([admin.waitForLoadState("load"), admin.click("button:text-is('Lock')")]);
  let attrs = (await api("GET", `/workspaces/${firstWs.id}`)).data.attributes;
  check(attrs.locked === true && attrs["locked-reason"] === "browser test", `after Lock the API shows locked=${attrs.locked} reason=${attrs["locked-reason"]}`);
  check((await admin.textContent("#lock-state")).includes("(you)"), `lock state shown: ${await admin.textContent("#lock-state")}`);
  await audit(admin, "workspace-locked");
  await Promise.all([admin.waitForLoadState("load"), admin.click("button:text-is('Unlock')")]);
  attrs = (await api("GET", `/workspaces/${firstWs.id}`)).data.attributes;
  check(attrs.locked === false, "after Unlock the API still shows the workspace locked");
  check((await admin.$("button:text-is('Lock')")) !== null, "no Lock button after unlocking");
});

await step("lock holders are named: the user's username, the team's name", async () => {
  const username = (await api("GET", "/account/details")).data.attributes.username;
  await api("POST", `/workspaces/${firstWs.id}/actions/lock`);
  await api("POST", `/workspaces/${ids[2]}/actions/lock`, undefined, writersToken);
  await admin.goto(`${service.base}/app/${ORG}/workspaces?sort=name&page[size]=20`);
  const badge = (name) => admin.textContent(`tr[data-workspace="${name}"] .badge`);
  check((await badge(firstWs.attributes.name)) === `locked by ${username}`, `list badge: ${await badge(firstWs.attributes.name)}`);
  check((await badge(names[2])) === "locked by team writers", `list badge: ${await badge(names[2])}`);
  check((await badge(names[1])) === "unlocked", `list badge: ${await badge(names[1])}`);
  await audit(admin, "list-locks");
  await admin.goto(`${service.base}/app/${ORG}/workspaces/${names[2]}`);
  check((await admin.textContent("#lock-holder")) === "team writers", `holder shown: ${await admin.textContent("#lock-holder")}`);
  // Someone else holds it: the admin may force-unlock, not unlock.
  check((await admin.$("button:text-is('Force unlock')")) !== null && (await admin.$("button:text-is('Unlock')")) === null, "wrong lock buttons");
  await audit(admin, "workspace-locked-by-team");
  await admin.goto(`${service.base}/app/${ORG}/workspaces/${firstWs.attributes.name}`);
  check((await admin.textContent("#lock-holder")) === username, `holder shown: ${await admin.textContent("#lock-holder")}`);
  await api("POST", `/workspaces/${firstWs.id}/actions/unlock`);
  await api("POST", `/workspaces/${ids[2]}/actions/unlock`, undefined, writersToken);
});

await step("a read-only caller sees no lock button; its forged POSTs and a cross-origin POST are refused", async () => {
  const reader = await signedIn(readOnlyToken);
  await reader.goto(`${service.base}/app/${ORG}/workspaces/${firstWs.attributes.name}`);
  check((await reader.textContent("h1")) === firstWs.attributes.name, "the reader cannot see the workspace page");
  for (const label of ["Lock", "Unlock", "Force unlock", "Delete workspace"])
    check((await reader.$(`button:text-is('${label}')`)) === null, `the reader sees a ${label} button`);
  await audit(reader, "workspace-read-only");
  await reader.goto(`${service.base}/app/${ORG}/workspaces`);
  const want = await apiNames("");
  const seen = await rowNames(reader);
  check(seen.length === 1 && seen[0] === firstWs.attributes.name && want.total === 12, `the reader's list shows ${seen}`);
  // Forged same-origin POSTs with the reader's session: the API's answer to a caller who may not (404).
  const base = `/app/${ORG}/workspaces/${firstWs.attributes.name}`;
  for (const [path, form] of [
    [`${base}/lock`, { reason: "forged" }],
    [`${base}/consumers`, { name: names[5] }],
    [`${base}/team-access`, { team: writersTeam.id, access: "admin" }],
  ]) {
    const status = await post(reader, path, form);
    check(status === 404, `forged POST ${path} answered ${status}`);
  }
  // A cross-origin POST with the admin's session: refused by the Origin check.
  const status = await post(admin, `${base}/lock`, { reason: "cross-origin" }, "https://evil.example");
  check(status === 403, `cross-origin POST answered ${status}`);
  const attrs = (await api("GET", `/workspaces/${firstWs.id}`)).data.attributes;
  check(attrs.locked === false, "a refused POST locked the workspace");
  check((await consumerIds(firstWs.id)).length === 0, "a refused POST added a consumer");
  check((await teamAccesses(firstWs.id)).length === 1, "a refused POST gave a team access");
  await reader.context().close();
});

await step("projects page: lists what the API lists, each linking to its filtered workspace list", async () => {
  await api("POST", `/organizations/${ORG}/projects`, { data: { type: "projects", attributes: { name: "ui-empty-project" } } });
  await admin.goto(`${service.base}/app/${ORG}/workspaces`);
  await Promise.all([admin.waitForURL(`**/app/${ORG}/projects`), admin.click("nav.orgnav a:text-is('Projects')")]);
  const want = (await api("GET", `/organizations/${ORG}/projects?page[size]=100`)).data.map((p) => p.id);
  const seen = await admin.$$eval("tr[data-project]", (rows) => rows.map((r) => r.getAttribute("data-project")));
  check(JSON.stringify(seen) === JSON.stringify(want), `projects: UI ${seen} vs API ${want}`);
  await audit(admin, "projects");
  const defaultId = firstWs.relationships.project.data.id;
  await Promise.all([admin.waitForURL(/filter/), admin.click(`tr[data-project="${defaultId}"] a`)]);
  const listed = await apiNames(`filter[project][id]=${defaultId}`);
  check(JSON.stringify(await rowNames(admin)) === JSON.stringify(listed.names), `project link: UI ${await rowNames(admin)} vs API ${listed.names}`);
  check((await admin.inputValue("#f-project")) === defaultId, "the project filter is not selected on the linked list");
});

await step("projects page: name search, sort and paging give the API's projects and counts", async () => {
  for (const name of ["ui-alpha", "ui-beta", "ui-gamma", "other"]) {
    await api("POST", `/organizations/${ORG}/projects`, { data: { type: "projects", attributes: { name } } });
  }
  const apiIds = async (query) => {
    const doc = await api("GET", `/organizations/${ORG}/projects?${query}`);
    return { ids: doc.data.map((p) => p.id), total: doc.meta.pagination["total-count"], all: doc.meta["status-counts"].total };
  };
  const seen = () => admin.$$eval("tr[data-project]", (rows) => rows.map((r) => r.getAttribute("data-project")));
  await admin.goto(`${service.base}/app/${ORG}/projects`);
  await admin.fill("#p-q", "ui-");
  await admin.selectOption("#p-sort", "-name");
  await admin.selectOption("#p-size", "5");
  await Promise.all([admin.waitForURL(/q=/), admin.click("form.filters button[type=submit]")]);
  // The form sends its empty fields; the page reads them as no filter.
  const nonEmpty = (url) => new URLSearchParams([...new URL(url).searchParams].filter(([, v]) => v !== "")).toString();
  let want = await apiIds(nonEmpty(admin.url()));
  check(want.total === 4 && want.all === 6, `the API counts ${want.total} of ${want.all}`);
  check(JSON.stringify(await seen()) === JSON.stringify(want.ids), `q=ui-: UI ${await seen()} vs API ${want.ids}`);
  check((await admin.textContent("#total")).trim() === "4 projects of 6", `total shown: ${await admin.textContent("#total")}`);
  await audit(admin, "projects-filtered");
  await admin.selectOption("#p-size", "20");
  await admin.fill("#p-q", "");
  await admin.selectOption("#p-sort", "name");
  await Promise.all([admin.waitForURL(/sort=name/), admin.click("form.filters button[type=submit]")]);
  const url = new URL(admin.url());
  url.searchParams.set("page[size]", "2");
  await admin.goto(url.toString());
  for (const n of [1, 2, 3]) {
    want = await apiIds(nonEmpty(admin.url()));
    check(JSON.stringify(await seen()) === JSON.stringify(want.ids), `page ${n}: UI ${await seen()} vs API ${want.ids}`);
    check((await admin.textContent(".pager span")).includes(`Page ${n} of 3`), `pager: ${await admin.textContent(".pager span")}`);
    if (n < 3) await Promise.all([admin.waitForURL(new RegExp(`page%5Bnumber%5D=${n + 1}`)), admin.click("a[rel=next]")]);
  }
  check((await admin.$("a[rel=next]")) === null, "a Next link on the last page");
  await audit(admin, "projects-paged");
});

await step("workspace details: state versions with download, masked outputs, inherited bindings, consumers, team access", async () => {
  const state = JSON.stringify({
    version: 4,
    terraform_version: "1.9.0",
    serial: 3,
    lineage: "ui",
    outputs: { url: { value: "https://ui.example", type: "string" }, secret: { value: "browser-secret", type: "string", sensitive: true } },
    resources: [{ mode: "managed", type: "null_resource", name: "a", provider: 'provider["registry.terraform.io/hashicorp/null"]', instances: [{}, {}] }],
  });
  await api("POST", `/workspaces/${firstWs.id}/actions/lock`);
  const md5 = createHash("md5").update(state).digest("hex");
  await api("POST", `/workspaces/${firstWs.id}/state-versions`, {
    data: { type: "state-versions", attributes: { serial: 3, lineage: "ui", md5, state: Buffer.from(state).toString("base64") } },
  });
  await api("POST", `/workspaces/${firstWs.id}/actions/unlock`);
  await api("PATCH", `/projects/${firstWs.relationships.project.data.id}/tag-bindings`, {
    data: [{ type: "tag-bindings", attributes: { key: "cost-centre", value: "cc-7" } }],
  });
  const consumer = names[1];
  const consumerId = (await api("GET", `/organizations/${ORG}/workspaces/${consumer}`)).data.id;
  await api("POST", `/workspaces/${firstWs.id}/relationships/remote-state-consumers`, { data: [{ type: "workspaces", id: consumerId }] });
  await admin.goto(`${service.base}/app/${ORG}/workspaces/${firstWs.attributes.name}`);
  const href = await admin.getAttribute("#state-versions a.download", "href");
  check(!!href, "no download link for the site admin");
  const blob = await fetch(new URL(href, service.base), { signal: AbortSignal.timeout(30_000) });
  check(blob.status === 200 && (await blob.text()) === state, `the download link answered ${blob.status}`);
  const outputs = await admin.textContent("#outputs");
  check(outputs.includes("https://ui.example") && outputs.includes("(sensitive)") && !outputs.includes("browser-secret"), `outputs shown: ${outputs}`);
  check((await admin.textContent("#tag-bindings")).includes("inherited from project"), "no inherited binding shown");
  check((await admin.textContent("#consumers")).includes(consumer), "the consumer is not listed");
  check((await admin.textContent("#team-access")).includes("readers"), "the team access is not listed");
  await audit(admin, "workspace-details");
});

await step("settings form: saving changes what the API shows; a refusal shows the API's reason next to the form", async () => {
  // Waits for the POST's answer (a 303 to the page, or the page itself with 422) and the page it leads to.
  const submitSettings = async () => {
    await Promise.all([
      admin.waitForResponse((r) => r.request().method() === "POST" && r.url().endsWith("/settings")),
      admin.click("button:text-is('Save settings')"),
    ]);
    await admin.waitForLoadState("load");
  };
  await admin.goto(`${service.base}/app/${ORG}/workspaces/${firstWs.attributes.name}`);
  await admin.fill("#s-description", "edited in the browser");
  await admin.selectOption("#s-mode", "local");
  await admin.fill("#s-version", "1.7.5");
  await admin.fill("#s-dir", "stacks/web");
  await admin.check("#s-auto");
  await submitSettings();
  const attrs = (await api("GET", `/workspaces/${firstWs.id}`)).data.attributes;
  check(
    attrs.description === "edited in the browser" &&
      attrs["execution-mode"] === "local" &&
      attrs["terraform-version"] === "1.7.5" &&
      attrs["working-directory"] === "stacks/web" &&
      attrs["auto-apply"] === true,
    `after saving the API shows ${JSON.stringify(attrs)}`,
  );
  check((await admin.inputValue("#s-description")) === "edited in the browser", "the form does not show the saved description");
  await admin.fill("#s-version", "not a version");
  await submitSettings();
  // The refused form answers 422, which the browser logs; that one console line is expected.
  for (let i = 0; i < 50 && !admin.errors.some((e) => e.includes("status of 422")); i++) await admin.waitForTimeout(100);
  const expected = admin.errors.filter((e) => e.includes("status of 422"));
  check(expected.length === 1, `console after the refused form: ${admin.errors.join("\n")}`);
  admin.errors = admin.errors.filter((e) => !expected.includes(e));
  const errors = await admin.textContent("#settings-errors");
  check(errors.includes("not saved"), `no refusal shown: ${errors}`);
  check((await admin.inputValue("#s-version")) === "not a version", "the refused form lost what was typed");
  check((await api("GET", `/workspaces/${firstWs.id}`)).data.attributes["terraform-version"] === "1.7.5", "the refused version was saved");
  await audit(admin, "workspace-settings-refused");

  const reader = await newPage();
  await reader.goto(`${service.base}/app/session/new`);
  await reader.fill("#token", readOnlyToken);
  await Promise.all([reader.waitForURL(`${service.base}/app`), reader.click("button[type=submit]")]);
  await reader.goto(`${service.base}/app/${ORG}/workspaces/${firstWs.attributes.name}`);
  check((await reader.$("form.settings")) === null, "the read-only caller sees the settings form");
  check((await reader.$("#state-versions a.download")) !== null, "a reader with state read sees no download link");
  await audit(reader, "workspace-details-read-only");
  await reader.goto(`${service.base}/app/${ORG}/projects`);
  await audit(reader, "projects-read-only");
  await reader.context().close();
});

await step("settings form: the agent pool, validated by the API's rules", async () => {
  const page = `${service.base}/app/${ORG}/workspaces/${firstWs.attributes.name}`;
  await admin.goto(page);
  const offered = await admin.$$eval("#s-pool option", (os) => os.map((o) => o.value));
  check(JSON.stringify(offered) === JSON.stringify(["", pool.id]), `pools offered: ${offered}`);
  // Agent mode without a pool: the API's own refusal for the same attributes.
  const fromApi = await fetch(`${service.base}/api/v2/workspaces/${firstWs.id}`, {
    method: "PATCH",
    headers: { Authorization: `Bearer ${service.token}`, "Content-Type": "application/vnd.api+json" },
    body: JSON.stringify({ data: { type: "workspaces", attributes: { "execution-mode": "agent", "agent-pool-id": null } } }),
  });
  const detail = (await readJson(fromApi)).errors[0].detail;
  check(fromApi.status === 422, `the API answered ${fromApi.status}`);
  await admin.selectOption("#s-mode", "agent");
  await admin.selectOption("#s-pool", "");
  await submit(admin, "button:text-is('Save settings')", "/settings");
  await takeRefusalLog(admin);
  const errors = await admin.textContent("#settings-errors");
  check(errors.includes(detail), `refusal shown: ${errors} (the API says ${detail})`);
  check((await admin.inputValue("#s-mode")) === "agent", "the refused form lost the mode");
  await audit(admin, "workspace-settings-pool-refused");
  await admin.selectOption("#s-pool", pool.id);
  await submit(admin, "button:text-is('Save settings')", "/settings");
  const shown = (await api("GET", `/workspaces/${firstWs.id}`)).data;
  check(
    shown.attributes["execution-mode"] === "agent" && shown.relationships["agent-pool"].data?.id === pool.id,
    `after saving the API shows ${shown.attributes["execution-mode"]} with ${JSON.stringify(shown.relationships["agent-pool"].data)}`,
  );
  check((await admin.inputValue("#s-pool")) === pool.id, "the saved pool is not selected");
  await audit(admin, "workspace-settings-pool");
});

await step("remote-state consumers: added by name and removed through the page; refusals shown next to the form", async () => {
  const page = `${service.base}/app/${ORG}/workspaces/${firstWs.attributes.name}`;
  await admin.goto(page);
  const before = await consumerIds(firstWs.id);
  await admin.fill("#c-name", names[3]);
  await submit(admin, "button:text-is('Add consumer')", "/consumers");
  let now = await consumerIds(firstWs.id);
  check(JSON.stringify(now) === JSON.stringify([...before, ids[3]]), `after adding, the API lists ${now}`);
  check((await admin.textContent("#consumers")).includes(names[3]), "the added consumer is not listed");
  await admin.fill("#c-name", "no-such-workspace");
  await submit(admin, "button:text-is('Add consumer')", "/consumers");
  await takeRefusalLog(admin);
  const errors = await admin.textContent("#consumers-errors");
  check(errors.includes("Workspace not found: no-such-workspace"), `refusal shown: ${errors}`);
  check((await admin.inputValue("#c-name")) === "no-such-workspace", "the refused form lost the name");
  await audit(admin, "workspace-consumers-refused");
  await submit(admin, `button[aria-label="Remove consumer ${names[1]}"]`, "/consumers/delete");
  now = await consumerIds(firstWs.id);
  check(JSON.stringify(now) === JSON.stringify(before.filter((id) => id !== ids[1]).concat(ids[3])), `after removing, the API lists ${now}`);
  await audit(admin, "workspace-consumers");
  const reader = await signedIn(readOnlyToken);
  await reader.goto(page);
  check((await reader.$("#c-name")) === null && (await reader.$("ul#consumers form")) === null, "the read-only caller sees consumer forms");
  await reader.context().close();
});

await step("team access: given, changed and removed through the page", async () => {
  const page = `${service.base}/app/${ORG}/workspaces/${firstWs.attributes.name}`;
  await admin.goto(page);
  await admin.selectOption("#ta-team", { label: "writers" });
  await admin.selectOption("#ta-access", "plan");
  await submit(admin, "button:text-is('Give access')", "/team-access");
  let now = await teamAccesses(firstWs.id);
  check(
    now.some((a) => a.team === writersTeam.id && a.access === "plan"),
    `after giving, the API shows ${JSON.stringify(now)}`,
  );
  await audit(admin, "workspace-team-access");
  await admin.selectOption('select[aria-label="Access of team writers"]', "admin");
  await submit(admin, 'button[aria-label="Update the access of team writers"]', "");
  now = await teamAccesses(firstWs.id);
  check(
    now.some((a) => a.team === writersTeam.id && a.access === "admin"),
    `after changing, the API shows ${JSON.stringify(now)}`,
  );
  await submit(admin, 'button[aria-label="Remove the access of team writers"]', "/delete");
  now = await teamAccesses(firstWs.id);
  check(!now.some((a) => a.team === writersTeam.id) && now.length === 1, `after removing, the API shows ${JSON.stringify(now)}`);
  const reader = await signedIn(readOnlyToken);
  await reader.goto(page);
  check((await reader.$("#ta-team")) === null && (await reader.$("#team-access form")) === null, "the read-only caller sees team-access forms");
  await audit(reader, "workspace-team-access-read-only");
  await reader.context().close();
});

/** Whether `npm start` runs a local agent here: its launcher exists, Terraform is on PATH, NO_AGENT is unset. */
function localAgent() {
  if (process.env.NO_AGENT || !existsSync(join(root, "scripts", "lib", "agent.mjs"))) return false;
  if (process.env.TERRAFORM) return true;
  return (process.env.PATH ?? "").split(delimiter).some((dir) => {
    if (!dir || !isAbsolute(dir)) return false;
    try {
      accessSync(join(dir, "terraform"), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** Polls the API (an agent process moves the run on its own time) until the run's status is one of `want`. */
async function runReaches(id, want, seconds) {
  const until = Date.now() + seconds * 1000;
  let status;
  do {
    status = (await api("GET", `/runs/${id}`)).data.attributes.status;
    if (want.includes(status)) return status;
    if (["errored", "canceled", "discarded"].includes(status)) break;
    await new Promise((r) => setTimeout(r, 500));
  } while (Date.now() < until);
  throw new StepError(`run ${id} is ${status}, not ${want.join(" or ")}`);
}

const RUNS_WS = "runs-web";
let runPage;

await step("runs: Terraform's run address, the run page and its action, the runs list and the workspace's current run", async () => {
  const ws = (await api("POST", `/organizations/${ORG}/workspaces`, { data: { type: "workspaces", attributes: { name: RUNS_WS } } })).data;
  const readers = (await api("GET", `/organizations/${ORG}/teams?q=readers`)).data.find((t) => t.attributes.name === "readers");
  await api("POST", "/team-workspaces", {
    data: {
      type: "team-workspaces",
      attributes: { access: "read" },
      relationships: { workspace: { data: { type: "workspaces", id: ws.id } }, team: { data: { type: "teams", id: readers.id } } },
    },
  });
  // A configuration Terraform plans without downloading a provider.
  const dir = mkdtempSync(join(work, "config-"));
  writeFileSync(join(dir, "main.tf"), 'resource "terraform_data" "web" {\n  input = "browser"\n}\n');
  execFileSync("tar", ["-czf", join(work, "config.tar.gz"), "-C", dir, "main.tf"]);
  const cv = (
    await api("POST", `/workspaces/${ws.id}/configuration-versions`, { data: { type: "configuration-versions", attributes: { "auto-queue-runs": false } } })
  ).data;
  const put = await fetch(cv.attributes["upload-url"], {
    method: "PUT",
    body: readFileSync(join(work, "config.tar.gz")),
    headers: { "Content-Type": "application/octet-stream" },
  });
  check(put.status === 200, `the upload answered ${put.status}`);
  const run = (
    await api("POST", "/runs", {
      data: { type: "runs", attributes: { message: "from the browser <test>" }, relationships: { workspace: { data: { type: "workspaces", id: ws.id } } } },
    })
  ).data;
  runPage = `/app/${ORG}/workspaces/${RUNS_WS}/runs/${run.id}`;

  // The address Terraform prints leads to the run's page.
  await gotoPage(admin, `${service.base}/app/${ORG}/${RUNS_WS}/runs/${run.id}`);
  check(new URL(admin.url()).pathname === runPage, `Terraform's address led to ${admin.url()}`);
  check((await admin.textContent("#run-message")) === "from the browser <test>", `message shown: ${await admin.textContent("#run-message")}`);

  // A reader sees the run but no action, and its forged POSTs change nothing.
  const reader = await signedIn(readOnlyToken);
  await gotoPage(reader, `${service.base}${runPage}`);
  check((await reader.textContent("h1")).includes(run.id), "the reader cannot see the run page");
  check((await reader.$("form.run-action")) === null, "the reader sees a run action form");
  for (const action of ["apply", "discard", "cancel"]) {
    const status = await post(reader, `${runPage}/${action}`, { comment: "forged" });
    check(status === 404, `the reader's forged ${action} answered ${status}`);
  }
  await reader.context().close();

  if (localAgent()) {
    log("a local agent runs the run: confirming it");
    await runReaches(run.id, ["planned"], 180);
    await gotoPage(admin, `${service.base}${runPage}`);
    check((await admin.$('meta[http-equiv="refresh"]')) === null, "a planned run's page refreshes itself");
    const planLog = await admin.textContent("#plan-log");
    check(planLog.includes("terraform_data.web") && !planLog.includes("\u0002"), `plan log shown: ${planLog.slice(0, 400)}`);
    check((await admin.textContent("#changes")).includes("terraform_data.web"), "the JSON plan's change is not listed");
    await audit(admin, "run-planned");
    await admin.fill("#apply-comment", "confirmed in the browser");
    await submit(admin, "button:text-is('Confirm and apply')", "/apply");
    const status = (await api("GET", `/runs/${run.id}`)).data.attributes.status;
    check(["confirmed", "apply_queued", "applying", "applied"].includes(status), `after Confirm the API shows ${status}`);
    const comments = (await api("GET", `/runs/${run.id}/comments`)).data.map((c) => c.attributes.body);
    check(comments.includes("confirmed in the browser"), `comments: ${comments}`);
    await runReaches(run.id, ["applied"], 180);
    await gotoPage(admin, `${service.base}${runPage}`);
    check((await admin.textContent("#run-status")).trim() === "applied", `status shown: ${await admin.textContent("#run-status")}`);
    check((await admin.textContent("#apply-log")).includes("Apply complete"), `apply log: ${await admin.textContent("#apply-log")}`);
  } else {
    log("no local agent: the queued run's page, then Cancel");
    check((await admin.textContent("#run-status")).trim() === "plan queued", `status shown: ${await admin.textContent("#run-status")}`);
    check((await admin.$('meta[http-equiv="refresh"]')) !== null, "a queued run's page does not refresh itself");
    check((await admin.textContent("main")).includes("The plan has not started."), "no word of the plan not having started");
    await submit(admin, "button:text-is('Cancel run')", "/cancel");
    const status = (await api("GET", `/runs/${run.id}`)).data.attributes.status;
    check(status === "canceled", `after Cancel the API shows ${status}`);
    check((await admin.textContent("#run-status")).trim() === "canceled", `status shown: ${await admin.textContent("#run-status")}`);
    check((await admin.$('meta[http-equiv="refresh"]')) === null, "a canceled run's page refreshes itself");
    check((await admin.$("form.run-action")) === null, "a canceled run offers an action");
  }
  await audit(admin, "run");

  // The runs list gives the API's runs, each linking to its page; the workspace page links its current run.
  await gotoPage(admin, `${service.base}/app/${ORG}/workspaces/${RUNS_WS}`);
  await Promise.all([admin.waitForURL(/\/runs$/), admin.click("#all-runs")]);
  const want = (await api("GET", `/workspaces/${ws.id}/runs`)).data.map((r) => r.id);
  const seen = await admin.$$eval("tr[data-run]", (rows) => rows.map((r) => r.getAttribute("data-run")));
  check(JSON.stringify(seen) === JSON.stringify(want) && seen[0] === run.id, `runs: UI ${seen} vs API ${want}`);
  await audit(admin, "runs");
  await Promise.all([admin.waitForURL(`**${runPage}`), admin.click(`tr[data-run="${run.id}"] a`)]);
  await gotoPage(admin, `${service.base}/app/${ORG}/workspaces/${RUNS_WS}`);
  check((await admin.textContent("#current-run")).includes(run.id), `current run shown: ${await admin.textContent("#current-run")}`);
});

await step("pages fit a 360 px wide screen", async () => {
  const phone = await newPage({ width: 360, height: 740 });
  await phone.goto(`${service.base}/app/session/new`);
  await phone.fill("#token", service.token);
  await Promise.all([phone.waitForURL(`${service.base}/app`), phone.click("button[type=submit]")]);
  await phone.goto(`${service.base}/app/${ORG}/workspaces`);
  await audit(phone, "list");
  await phone.goto(`${service.base}/app/${ORG}/workspaces/${firstWs.attributes.name}`);
  await audit(phone, "workspace");
  await phone.goto(`${service.base}/app/${ORG}/projects`);
  await audit(phone, "projects");
  await phone.goto(`${service.base}/app/${ORG}/projects?q=ui-&sort=name&page[size]=2`);
  await audit(phone, "projects-filtered");
  await phone.goto(`${service.base}/app/${ORG}/workspaces?filter[tagged][0][key]=env&filter[tagged][0][value]=prod`);
  await audit(phone, "list-filtered");
  if (runPage) {
    await phone.goto(`${service.base}${runPage}`);
    await audit(phone, "run");
    await phone.goto(`${service.base}/app/${ORG}/workspaces/${RUNS_WS}/runs`);
    await audit(phone, "runs");
  }
  await phone.context().close();
});

// Further areas' steps, one module each (scripts/ui/*.steps.mjs, run in name order): each exports a default
// `async (h) => {}` given the harness below, and keeps its own workspaces, teams and users.
/** A new team of `ORG` with read access to the workspace, and that team's token (a read-only caller's pages). */
async function readerTokenFor(workspaceId, teamName) {
  const team = (await api("POST", `/organizations/${ORG}/teams`, { data: { type: "teams", attributes: { name: teamName } } })).data;
  await api("POST", "/team-workspaces", {
    data: {
      type: "team-workspaces",
      attributes: { access: "read" },
      relationships: { workspace: { data: { type: "workspaces", id: workspaceId } }, team: { data: { type: "teams", id: team.id } } },
    },
  });
  return (await api("POST", `/teams/${team.id}/authentication-token`, { data: { type: "authentication-token", attributes: {} } })).data.attributes.token;
}
const harness = {
  step,
  check,
  api,
  newPage,
  audit,
  gotoPage,
  submit,
  takeRefusalLog,
  takeStatusLog,
  passwordSignIn,
  signedIn,
  post,
  readerTokenFor,
  service,
  idp,
  ORG,
  log,
  StepError,
};
const stepDir = join(root, "scripts", "ui");
if (existsSync(stepDir)) {
  for (const file of readdirSync(stepDir)
    .filter((f) => f.endsWith(".steps.mjs"))
    .sort()) {
    const mod = await import(pathToFileURL(join(stepDir, file)).href);
    await mod.default(harness);
  }
}

await step("sign out ends the session", async () => {
  await admin.goto(`${service.base}/app`);
  await Promise.all([admin.waitForURL(/\/app\/session\/new$/), admin.click("button:text-is('Sign out')")]);
  check(!(await admin.context().cookies()).some((c) => c.name === "ws_session"), "the session cookie is still set");
  await admin.goto(`${service.base}/app/${ORG}/workspaces`);
  // Sign-in remembers the page asked for (`next`), to come back to it.
  check(new URL(admin.url()).pathname === "/app/session/new", `after sign-out the list page answered at ${admin.url()}`);
  check(admin.errors.length === 0, `console errors: ${admin.errors.join("\n")}`);
});

await browser.close();
await idp.close();
await service.stop();
const passed = countPassed();
const failed = countFailed();
if (failed === 0) rmSync(work, { recursive: true, force: true });
else log(`service log kept: ${join(work, "service.log")}`);
log(`screenshots in ${shots}; total ${((Date.now() - t0) / 1000).toFixed(0)} s`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed || results.length === 0 ? 1 : 0);
