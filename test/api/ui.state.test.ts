// The web UI's state pages: a state version's page (outputs, resources, download), rollback through the page, and
// the resource-count chart, checked against what the API says.
import { exports } from "cloudflare:workers";
import SparkMD5 from "spark-md5";
import { describe, expect, it } from "vitest";
import { createOrg, createWorkspace, grantWorkspace, makeTeam, makeUser } from "../fixtures";
import { api } from "../helpers";
import { signIn, ui } from "../ui-client";
import { tofuEnvelope } from "../state-docs";

const unescapeHtml = (s: string) =>
  s
    .replace(/&amp;/g, "&")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'");
const NULL = 'provider["registry.terraform.io/hashicorp/null"]';

/** A Terraform state with `count` null_resource instances, one in a module, and a plain and a sensitive output. */
const stateOf = (serial: number, count: number, tag: string) =>
  JSON.stringify({
    version: 4,
    terraform_version: "1.9.2",
    serial,
    lineage: "ui-state",
    outputs: { url: { value: `https://${tag}.example`, type: "string" }, secret: { value: `hunter2-${tag}`, type: "string", sensitive: true } },
    resources: [
      { mode: "managed", type: "null_resource", name: "a", provider: NULL, instances: Array.from({ length: count }, (_, i) => ({ index_key: i })) },
      { module: "module.net", mode: "managed", type: "random_pet", name: "p", provider: 'provider["registry.terraform.io/hashicorp/random"]', instances: [{}] },
    ],
  });

/** OpenTofu's encrypted state envelope: not a state the service can read. */
const ENVELOPE = tofuEnvelope({ serial: 9, lineage: "ui-state", key: "eyJ9", data: "q83vEjRWeJ" });

async function upload(wsId: string, serial: number, state: string, token?: string) {
  const res = await api("POST", `/workspaces/${wsId}/state-versions`, {
    token,
    body: { data: { type: "state-versions", attributes: { serial, lineage: "ui-state", md5: SparkMD5.hash(state), state: btoa(state) } } },
  });
  expect(res.status).toBe(201);
  return res.body.data as { id: string; attributes: Record<string, unknown> };
}

/** A workspace and an owner holding its lock, with versions of the given resource counts (serials 1, 2, …). */
async function withHistory(counts: number[]) {
  const org = await createOrg();
  const owner = await makeUser({ ownerOf: org });
  const ws = await createWorkspace(org);
  expect((await api("POST", `/workspaces/${ws.id}/actions/lock`, { token: owner.token })).status).toBe(200);
  const versions = [];
  for (const [i, n] of counts.entries()) versions.push(await upload(ws.id, i + 1, stateOf(i + 1, n, `v${i + 1}`), owner.token));
  const base = `/app/${org}/workspaces/${ws.attributes.name}`;
  return { org, owner, ws, versions, base };
}

const listVersions = async (org: string, name: string) =>
  (await api("GET", `/state-versions?filter%5Bworkspace%5D%5Bname%5D=${name}&filter%5Borganization%5D%5Bname%5D=${org}&page%5Bsize%5D=100`)).body;
const current = async (wsId: string) => (await api("GET", `/workspaces/${wsId}/current-state-version`)).body.data;
const download = async (url: string) => {
  const res = await exports.default.fetch(new Request(url));
  expect(res.status).toBe(200);
  return res.text();
};

describe("UI state version page", () => {
  it("shows the version's attributes, outputs (sensitive never in the HTML), resources and the API's download link", async () => {
    const { owner, ws, versions, base } = await withHistory([2, 3]);
    const cookie = await signIn(owner.token);
    const [first] = versions;
    const page = await ui("GET", `${base}/states/${first!.id}`, { cookie });
    expect(page.status).toBe(200);
    expect(page.text).toContain("State version serial 1");
    expect(page.text).toContain("1.9.2");
    expect(page.text).toContain("ui-state");
    // Who created it: the owner's username.
    expect(/<dd id="state-created-by">([^<]*)</.exec(page.text)?.[1]).toBe(`u-${owner.id}`);
    expect(/<dd id="state-resource-count">([^<]*)</.exec(page.text)?.[1]).toBe("3");
    // Outputs: the plain value shown, the sensitive one masked and absent from the page.
    expect(page.text).toMatch(/<tr data-output="url">[\s\S]*?https:\/\/v1\.example/);
    expect(page.text).toMatch(/<tr data-output="secret">[\s\S]*?\(sensitive\)/);
    expect(page.text).not.toContain("hunter2");
    // Resources as the API's `resources` attribute has them.
    const apiResources = (await api("GET", `/state-versions/${first!.id}`)).body.data.attributes.resources as Array<{ type: string; count: number }>;
    const table = /<table id="resources">([\s\S]*?)<\/table>/.exec(page.text)?.[1] ?? "";
    const rows = [...table.matchAll(/<tr><td><code>([^<]+)<\/code><\/td><td><code>([^<]+)<\/code><\/td><td>(\d+)<\/td>/g)].map((m) => [
      m[1],
      m[2],
      Number(m[3]),
    ]);
    expect(rows).toEqual([
      ["null_resource.a", "registry.terraform.io/hashicorp/null", 2],
      ["module.net.random_pet.p", "registry.terraform.io/hashicorp/random", 1],
    ]);
    expect(rows.map((r) => r[2])).toEqual(apiResources.map((r) => r.count));
    // The download link serves this version's state (the API's signed URL).
    const href = /<a class="download" id="state-download" href="([^"]+)"/.exec(page.text)?.[1];
    expect(href).toBeTruthy();
    expect(JSON.parse(await download(unescapeHtml(href!))).serial).toBe(1);
    // Not current (serial 2 is): a link to the current one and the rollback offered to the owner.
    expect(page.text).not.toContain('<span class="badge good">current</span>');
    expect(page.text).toContain(`${base}/states/${versions[1]!.id}`);
    expect(page.text).toContain('id="rollback-link"');
    // The current version's page shows it is current and offers no rollback.
    const cur = await ui("GET", `${base}/states/${versions[1]!.id}`, { cookie });
    expect(cur.text).toContain('<span class="badge good">current</span>');
    expect(cur.text).not.toContain('id="rollback-link"');
    expect((await current(ws.id)).id).toBe(versions[1]!.id);
  });

  it("a reader sees the page and its download but no rollback; a caller without state read gets no page and no download", async () => {
    const { org, ws, versions, base } = await withHistory([1, 2]);
    const readers = await makeTeam(org);
    await grantWorkspace(readers.id, ws.id, "read");
    const outputsOnly = await makeTeam(org);
    await grantWorkspace(outputsOnly.id, ws.id, "custom", { "state-versions": "read-outputs" });
    const path = `${base}/states/${versions[0]!.id}`;

    const reader = await ui("GET", path, { cookie: await signIn(readers.token) });
    expect(reader.status).toBe(200);
    expect(reader.text).toContain('id="state-download"');
    expect(reader.text).not.toContain("rollback");
    expect(reader.text).not.toContain("hunter2");

    const cookie = await signIn(outputsOnly.token);
    for (const p of [path, `${base}/states`]) {
      const page = await ui("GET", p, { cookie });
      // As the API answers this caller for GET /state-versions/:id.
      expect(page.status).toBe((await api("GET", `/state-versions/${versions[0]!.id}`, { token: outputsOnly.token })).status);
      expect(page.status).toBe(404);
      expect(page.text).not.toContain("download");
      expect(page.text).not.toContain("/blobs/");
    }
  });

  it("a version of another workspace is not found under this one", async () => {
    const a = await withHistory([1]);
    const b = await withHistory([1]);
    const cookie = await signIn(a.owner.token);
    expect((await ui("GET", `${a.base}/states/${a.versions[0]!.id}`, { cookie })).status).toBe(200);
    // The owner of A may not read B; and B's version is not A's.
    expect((await ui("GET", `${a.base}/states/${b.versions[0]!.id}`, { cookie })).status).toBe(404);
    expect((await ui("GET", `${a.base}/states/not-an-id`, { cookie })).status).toBe(404);
  });

  it("a state whose raw state could not be read says its resources are unknown, not zero", async () => {
    const { owner, ws, base } = await withHistory([1]);
    const sv = await upload(ws.id, 2, ENVELOPE, owner.token);
    expect(sv.attributes["resources-processed"]).toBe(false);
    const cookie = await signIn(owner.token);
    const page = await ui("GET", `${base}/states/${sv.id}`, { cookie });
    expect(page.status).toBe(200);
    expect(page.text).toContain('id="resources-unknown"');
    expect(/<dd id="state-resource-count">([^<]*)</.exec(page.text)?.[1]).toBe("unknown");
    expect(page.text).not.toContain('<table id="resources">');
  });
});

describe("UI rollback", () => {
  it("through the page: a new current version holding the old state, the history kept", async () => {
    const { org, owner, ws, versions, base } = await withHistory([1, 4, 2]);
    const cookie = await signIn(owner.token);
    const target = versions[0]!;
    const confirm = await ui("GET", `${base}/states/${target.id}/rollback`, { cookie });
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain(`action="${base}/states/${target.id}/rollback"`);
    expect(confirm.text).toContain('name="confirm" type="checkbox" required');
    expect(confirm.text).not.toContain('id="lock-needed"');

    const res = await ui("POST", `${base}/states/${target.id}/rollback`, { cookie, form: { confirm: "on" } });
    expect(res.status).toBe(303);
    const now = await current(ws.id);
    expect(res.headers.get("Location")).toBe(`${base}/states/${now.id}`);
    // A NEW version, current, equal in content to the old one (both downloaded through the API).
    expect(versions.map((v) => v.id)).not.toContain(now.id);
    expect(now.attributes.serial).toBe(1);
    expect(now.relationships["rollback-state-version"].data.id).toBe(target.id);
    const old = (await api("GET", `/state-versions/${target.id}`)).body.data;
    expect(await download(now.attributes["hosted-state-download-url"])).toBe(await download(old.attributes["hosted-state-download-url"]));
    const listed = await listVersions(org, ws.attributes.name);
    expect(listed.data.map((v: { id: string }) => v.id)).toEqual([now.id, ...versions.map((v) => v.id).reverse()]);
    // The page it leads to shows the new version as current and what it copies.
    const after = await ui("GET", res.headers.get("Location")!, { cookie });
    expect(after.status).toBe(200);
    expect(after.text).toContain('<span class="badge good">current</span>');
    expect(after.text).toContain(`a copy of <a href="${base}/states/${target.id}">`);
  });

  it("refused with the API's reason and status when the workspace is not locked by the caller; nothing created", async () => {
    const { org, owner, ws, versions, base } = await withHistory([1, 2]);
    const other = await makeUser({ ownerOf: org });
    const path = `${base}/states/${versions[0]!.id}/rollback`;
    const before = (await listVersions(org, ws.attributes.name)).meta.pagination["total-count"];
    const api409 = async (token: string) => {
      const r = await api("PATCH", `/workspaces/${ws.id}/state-versions`, {
        token,
        body: { data: { type: "state-versions", relationships: { "rollback-state-version": { data: { type: "state-versions", id: versions[0]!.id } } } } },
      });
      expect(r.status).toBe(409);
      return r.body.errors[0].detail as string;
    };
    // Locked by someone else (the owner): the other owner is refused, as the API refuses them.
    const otherCookie = await signIn(other.token);
    const confirm = await ui("GET", path, { cookie: otherCookie });
    expect(confirm.text).toContain('id="lock-needed"');
    const locked = await ui("POST", path, { cookie: otherCookie, form: { confirm: "on" } });
    expect(locked.status).toBe(409);
    expect(locked.text).toContain('id="rollback-errors"');
    expect(locked.text).toContain(await api409(other.token));
    // Not locked at all.
    expect((await api("POST", `/workspaces/${ws.id}/actions/unlock`, { token: owner.token })).status).toBe(200);
    const unlocked = await ui("POST", path, { cookie: await signIn(owner.token), form: { confirm: "on" } });
    expect(unlocked.status).toBe(409);
    expect(unlocked.text).toContain(await api409(owner.token));
    expect(unlocked.text).toContain("The workspace must be locked by the caller");
    expect((await listVersions(org, ws.attributes.name)).meta.pagination["total-count"]).toBe(before);
    expect((await current(ws.id)).id).toBe(versions[1]!.id);
  });

  it("refuses without the confirmation, and for the current version; nothing created", async () => {
    const { org, owner, ws, versions, base } = await withHistory([1, 2]);
    const cookie = await signIn(owner.token);
    const unconfirmed = await ui("POST", `${base}/states/${versions[0]!.id}/rollback`, { cookie, form: {} });
    expect(unconfirmed.status).toBe(422);
    expect(unconfirmed.text).toContain("Tick the box to confirm the rollback.");
    const same = await ui("POST", `${base}/states/${versions[1]!.id}/rollback`, { cookie, form: { confirm: "on" } });
    expect(same.status).toBe(409);
    expect(same.text).toContain("already the workspace&#39;s current state");
    expect((await ui("GET", `${base}/states/${versions[1]!.id}/rollback`, { cookie })).text).toContain('id="rollback-unavailable"');
    expect((await listVersions(org, ws.attributes.name)).meta.pagination["total-count"]).toBe(2);
  });

  it("a reader gets no form, and a forged POST (or a cross-site one) is refused; nothing created", async () => {
    const { org, owner, ws, versions, base } = await withHistory([1, 2]);
    const readers = await makeTeam(org);
    await grantWorkspace(readers.id, ws.id, "read");
    const cookie = await signIn(readers.token);
    const path = `${base}/states/${versions[0]!.id}/rollback`;
    const page = await ui("GET", `${base}/states/${versions[0]!.id}`, { cookie });
    expect(page.status).toBe(200);
    expect(page.text).not.toContain(path);
    const confirm = await ui("GET", path, { cookie });
    expect(confirm.status).toBeGreaterThanOrEqual(400);
    expect(confirm.text).not.toContain('name="confirm"');
    // The API refuses this caller; the page answers with the same status.
    const fromApi = await api("PATCH", `/workspaces/${ws.id}/state-versions`, {
      token: readers.token,
      body: { data: { type: "state-versions", relationships: { "rollback-state-version": { data: { type: "state-versions", id: versions[0]!.id } } } } },
    });
    const forged = await ui("POST", path, { cookie, form: { confirm: "on" } });
    expect(forged.status).toBe(fromApi.status);
    expect([403, 404]).toContain(forged.status);
    // The owner holds the lock, but a cross-site form is refused before anything runs.
    const crossSite = await ui("POST", path, { cookie: await signIn(owner.token), form: { confirm: "on" }, origin: "https://evil.example" });
    expect(crossSite.status).toBe(403);
    expect((await listVersions(org, ws.attributes.name)).meta.pagination["total-count"]).toBe(2);
    expect((await current(ws.id)).id).toBe(versions[1]!.id);
  });
});

/** The chart's points in drawing order: [serial, count, state version id]. */
const chartPoints = (html: string) =>
  [...html.matchAll(/<circle class="point" cx="([\d.]+)" cy="([\d.]+)" r="4" data-serial="(\d+)" data-count="(\d+)" data-state-version="([^"]+)"/g)].map(
    (m) => ({
      x: Number(m[1]),
      y: Number(m[2]),
      serial: Number(m[3]),
      count: Number(m[4]),
      id: m[5],
    }),
  );

describe("UI states list and resource chart", () => {
  it("draws one point per version with its resource count, oldest first, and the same numbers as text", async () => {
    const counts = [1, 4, 0, 2];
    const { owner, ws, versions, base } = await withHistory(counts);
    const unreadable = await upload(ws.id, 9, ENVELOPE, owner.token);
    const page = await ui("GET", `${base}/states`, { cookie: await signIn(owner.token) });
    expect(page.status).toBe(200);
    const svg = /<svg[^>]*>[\s\S]*?<\/svg>/.exec(page.text)?.[0] ?? "";
    expect(svg).toMatch(/^<svg viewBox="0 0 600 200" width="100%" role="img" aria-labelledby="resource-chart-title resource-chart-desc"/);
    expect(svg).toContain('<title id="resource-chart-title">');
    expect(svg).not.toMatch(/<script|href=|style=/);
    const points = chartPoints(svg);
    // Counts as the API reports them; the unreadable version is left out (its count is unknown), and said so.
    const fromApi = await Promise.all(versions.map(async (v) => (await api("GET", `/state-versions/${v.id}`)).body.data.attributes));
    const apiCounts = fromApi.map((a) => (a.resources as Array<{ count: number }>).reduce((n, r) => n + r.count, 0));
    expect(points.map((p) => [p.serial, p.count, p.id])).toEqual(versions.map((v, i) => [i + 1, apiCounts[i], v.id]));
    expect(apiCounts).toEqual(counts.map((n) => n + 1));
    expect(points.map((p) => p.id)).not.toContain(unreadable.id);
    expect(page.text).toContain('id="chart-left-out"');
    // Left to right, and higher counts higher up (smaller y).
    for (let i = 1; i < points.length; i++) expect(points[i]!.x).toBeGreaterThan(points[i - 1]!.x);
    expect(points[1]!.y).toBeLessThan(points[0]!.y);
    expect(points[2]!.y).toBeGreaterThan(points[0]!.y);
    // The polyline goes through the same points.
    const line = /<polyline class="line" fill="none" points="([^"]+)"/.exec(svg)?.[1];
    expect(line).toBe(points.map((p) => `${p.x},${p.y}`).join(" "));
    // The visually hidden table has the same numbers.
    const table = /<table class="sr-only">([\s\S]*?)<\/table>/.exec(page.text)?.[1] ?? "";
    const rows = [...table.matchAll(/<tr><td>(\d+)<\/td><td>[^<]*<\/td><td>(\d+)<\/td><\/tr>/g)].map((m) => [Number(m[1]), Number(m[2])]);
    expect(rows).toEqual(points.map((p) => [p.serial, p.count]));
    // The list: every version, newest first, each linking to its page.
    const listed = [...page.text.matchAll(/<tr data-state-version="([^"]+)">/g)].map((m) => m[1]);
    expect(listed).toEqual([unreadable.id, ...versions.map((v) => v.id).reverse()]);
    for (const v of versions) expect(page.text).toContain(`href="${base}/states/${v.id}"`);
  });

  it("draws the last 50 versions; the list pages through all of them as the API does", async () => {
    const { org, ws, base, owner } = await withHistory(Array.from({ length: 53 }, (_, i) => i % 5));
    const cookie = await signIn(owner.token);
    const page = await ui("GET", `${base}/states`, { cookie });
    const points = chartPoints(page.text);
    expect(points.length).toBe(50);
    expect(points.map((p) => p.serial)).toEqual(Array.from({ length: 50 }, (_, i) => i + 4));
    expect(page.text).toContain("53 state versions");
    const third = await ui("GET", `${base}/states?page%5Bnumber%5D=3&page%5Bsize%5D=20`, { cookie });
    const fromApi = await api(
      "GET",
      `/state-versions?filter%5Bworkspace%5D%5Bname%5D=${ws.attributes.name}&filter%5Borganization%5D%5Bname%5D=${org}&page%5Bnumber%5D=3&page%5Bsize%5D=20`,
    );
    expect([...third.text.matchAll(/<tr data-state-version="([^"]+)">/g)].map((m) => m[1])).toEqual(fromApi.body.data.map((v: { id: string }) => v.id));
    expect(chartPoints(third.text).length).toBe(50);
  });
});
