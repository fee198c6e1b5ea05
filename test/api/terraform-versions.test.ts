// Terraform versions: the site-admin API as go-tfe's admin_terraform_version uses it, the list seeded from a releases
// index, a workspace's terraform-version checked against the list, and the version a run's job runs (resolved when
// the plan is handed out, reported by the agent, named by the apply log's header). The tests of one file share D1,
// so this file's steps run in order on one list.
import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Job as AgentJob } from "../../agent/protocol";
import { terraformForJob } from "../../src/terraform-versions/terraform-versions.service";
import { syncReleases } from "../../src/terraform-versions/terraform-versions.sync";
import { createOrg, createWorkspace, makeUser } from "../fixtures";
import { api, uniqueName } from "../helpers";
import { createRun, run, seedCv } from "../do/runs.helpers";

const SHA = (c: string) => c.repeat(64);
const body = (attributes: Record<string, unknown>) => ({ data: { type: "terraform-versions", attributes } });
const create = (attributes: Record<string, unknown>) => api("POST", "/admin/terraform-versions", { body: body(attributes) });

async function listed(version: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await create({ version, url: `https://releases.example.test/${version}.zip`, sha: SHA("a"), ...extra });
  expect(res.status).toBe(201);
  return res.body.data.id;
}

async function setVersion(ws: string, attrs: Record<string, unknown>) {
  return api("PATCH", `/workspaces/${ws}`, { body: { data: { type: "workspaces", attributes: attrs } } });
}

describe("while no version is listed", () => {
  it("a workspace takes any valid version or constraint, and a new one gets LATEST_ENGINE_VERSION", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    expect(ws.attributes["terraform-version"]).toBe("1.14.0");
    for (const v of ["1.3.7", "~> 1.5.0", "latest"]) expect((await setVersion(ws.id, { "terraform-version": v })).status).toBe(200);
    const bad = await setVersion(ws.id, { "terraform-version": "nonexisting" });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].source).toEqual({ pointer: "/data/attributes/engine-version" });
  });

  it("a job runs the exact version asked for, with nothing to download; a constraint runs the fallback when it fits", async () => {
    expect(await terraformForJob(env, env.DB, "1.3.7")).toEqual({ version: "1.3.7", archs: [], shasumsUrl: null, shasumsSignatureUrl: null });
    expect((await terraformForJob(env, env.DB, "~> 1.14.0")).version).toBe("1.14.0");
    expect(await terraformForJob(env, env.DB, "~> 2.0")).toMatchObject({ error: expect.stringContaining("lists none") });
  });
});

describe("the admin API (go-tfe's admin_terraform_version)", () => {
  it("is the site admin's alone: others get 404", async () => {
    const org = await createOrg();
    const owner = await makeUser({ ownerOf: org });
    expect((await api("GET", "/admin/terraform-versions", { token: owner.token })).status).toBe(404);
    expect((await api("POST", "/admin/terraform-versions", { token: owner.token, body: body({ version: "1.0.1" }) })).status).toBe(404);
  });

  it("creates with url and sha only: defaults, and one linux/amd64 build", async () => {
    const res = await create({ version: "1.0.20", url: "https://www.hashicorp.com", sha: SHA("b") });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      id: expect.stringMatching(/^tool-/),
      type: "terraform-versions",
      attributes: {
        version: "1.0.20",
        url: "https://www.hashicorp.com",
        sha: SHA("b"),
        official: false,
        enabled: true,
        beta: false,
        deprecated: false,
        "deprecated-reason": null,
        usage: 0,
        archs: [{ url: "https://www.hashicorp.com", sha: SHA("b"), os: "linux", arch: "amd64" }],
      },
    });
    const again = await create({ version: "1.0.20", url: "https://www.hashicorp.com", sha: SHA("b") });
    expect(again.status).toBe(422);
    expect(again.body.errors[0]).toMatchObject({ detail: "Version has already been taken", source: { pointer: "/data/attributes/version" } });
  });

  it("creates with archs: url and sha are the amd64 build's; updating url and sha leaves that one build", async () => {
    const res = await create({
      version: "1.0.21",
      deprecated: true,
      "deprecated-reason": "Test Reason",
      enabled: false,
      archs: [
        { url: "https://a.test/amd64.zip", sha: SHA("c"), os: "linux", arch: "amd64" },
        { url: "https://a.test/arm64.zip", sha: SHA("d"), os: "linux", arch: "arm64" },
      ],
    });
    expect(res.status).toBe(201);
    const id = res.body.data.id;
    const shown = await api("GET", `/admin/terraform-versions/${id}`);
    expect(shown.body.data.attributes).toMatchObject({ url: "https://a.test/amd64.zip", sha: SHA("c"), deprecated: true, "deprecated-reason": "Test Reason" });
    expect(shown.body.data.attributes.archs).toHaveLength(2);
    const upd = await api("PATCH", `/admin/terraform-versions/${id}`, {
      body: body({ version: "1.0.22", url: "https://app.terraform.io/", sha: SHA("e"), deprecated: false }),
    });
    expect(upd.status).toBe(200);
    expect(upd.body.data.attributes).toMatchObject({
      version: "1.0.22",
      url: "https://app.terraform.io/",
      sha: SHA("e"),
      deprecated: false,
      "deprecated-reason": null,
      enabled: false,
      archs: [{ url: "https://app.terraform.io/", sha: SHA("e"), os: "linux", arch: "amd64" }],
    });
    // archs alone, without amd64: no url or sha at the top.
    const arm = await api("PATCH", `/admin/terraform-versions/${id}`, {
      body: body({ archs: [{ url: "https://a.test/arm64.zip", sha: SHA("f"), os: "linux", arch: "arm64" }] }),
    });
    expect(arm.body.data.attributes).toMatchObject({ url: "", sha: "", archs: [{ arch: "arm64", sha: SHA("f") }] });
  });

  it("refuses what it cannot honour, naming the attribute", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ url: "https://x.test/a.zip", sha: SHA("a") }, "/data/attributes/version"],
      [{ version: "one", url: "https://x.test/a.zip", sha: SHA("a") }, "/data/attributes/version"],
      [{ version: "1.0.30" }, "/data/attributes/url"],
      [{ version: "1.0.30", url: "https://x.test/a.zip", sha: "nope" }, "/data/attributes/sha"],
      [{ version: "1.0.30", url: "file:///etc/passwd", sha: SHA("a") }, "/data/attributes/url"],
      [{ version: "1.0.30", archs: [{ url: "https://x.test/a.zip", sha: SHA("a"), os: "windows", arch: "amd64" }] }, "/data/attributes/archs/0/os"],
      [
        { version: "1.0.30", url: "https://x.test/b.zip", sha: SHA("a"), archs: [{ url: "https://x.test/a.zip", sha: SHA("a"), os: "linux", arch: "amd64" }] },
        "/data/attributes/url",
      ],
    ];
    for (const [attrs, pointer] of cases) {
      const res = await create(attrs);
      expect(res.status, JSON.stringify(attrs)).toBe(422);
      expect(res.body.errors[0].source).toEqual({ pointer });
    }
    expect((await api("GET", "/admin/terraform-versions?filter%5Bversion%5D=1.0.30")).body.data).toEqual([]);
  });

  it("filters by exact version, searches by substring, pages newest first", async () => {
    await listed("1.0.4");
    await listed("1.0.10");
    const exact = await api("GET", "/admin/terraform-versions?filter%5Bversion%5D=1.0.4");
    expect(exact.body.data.map((v: any) => v.attributes.version)).toEqual(["1.0.4"]);
    const search = await api("GET", "/admin/terraform-versions?search%5Bversion%5D=1.0.");
    const versions: string[] = search.body.data.map((v: any) => v.attributes.version);
    expect(versions.every((v) => v.includes("1.0."))).toBe(true);
    // Numeric order: 1.0.22 before 1.0.10 before 1.0.4.
    expect(versions.indexOf("1.0.10")).toBeLessThan(versions.indexOf("1.0.4"));
    expect(versions.indexOf("1.0.22")).toBeLessThan(versions.indexOf("1.0.10"));
    const far = await api("GET", "/admin/terraform-versions?page%5Bnumber%5D=999&page%5Bsize%5D=100");
    expect(far.body.data).toEqual([]);
    expect(far.body.meta.pagination["current-page"]).toBe(999);
    expect((await api("GET", "/admin/terraform-versions/random-id")).status).toBe(404);
  });

  it("does not remove an official version, nor one a workspace uses; removes others", async () => {
    const official = await listed("1.0.40", { official: true });
    const gone = await api("DELETE", `/admin/terraform-versions/${official}`);
    expect(gone.status).toBe(422);
    expect(gone.body.errors[0].detail).toContain("official");
    const used = await listed("1.0.41");
    const ws = await createWorkspace(await createOrg(), { "terraform-version": "1.0.41" });
    expect((await api("GET", `/admin/terraform-versions/${used}`)).body.data.attributes.usage).toBe(1);
    const refused = await api("DELETE", `/admin/terraform-versions/${used}`);
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0].detail).toContain("1 workspace");
    expect((await setVersion(ws.id, { "terraform-version": "1.0.4" })).status).toBe(200);
    expect((await api("DELETE", `/admin/terraform-versions/${used}`)).status).toBe(204);
    expect((await api("GET", `/admin/terraform-versions/${used}`)).status).toBe(404);
  });
});

describe("once versions are listed", () => {
  it("a workspace accepts listed enabled versions and constraints they satisfy, and refuses the rest", async () => {
    await listed("1.5.7", { official: true });
    await listed("1.5.2", { official: true });
    await listed("1.6.0", { official: true, enabled: false });
    await listed("1.7.0-beta1", { official: true, beta: true });
    const org = await createOrg();
    const ws = await createWorkspace(org);
    // The newest official enabled release, not the disabled 1.6.0 nor the beta.
    expect(ws.attributes["terraform-version"]).toBe("1.5.7");
    for (const v of ["1.5.2", "~> 1.5.0", ">= 1.5, < 1.6", "latest", "1.7.0-beta1"]) {
      const res = await setVersion(ws.id, { "terraform-version": v });
      expect(res.status, v).toBe(200);
      expect(res.body.data.attributes["terraform-version"]).toBe(v);
    }
    const refused: Array<[string, string]> = [
      ["1.6.0", 'Terraform version "1.6.0" is not a valid version'],
      ["9.9.9", 'Terraform version "9.9.9" is not a valid version'],
      ["~> 2.0", "is not satisfied by any enabled version"],
    ];
    for (const [v, text] of refused) {
      const res = await setVersion(ws.id, { "terraform-version": v });
      expect(res.status, v).toBe(422);
      expect(res.body.errors[0].detail).toContain(text);
      expect(res.body.errors[0].source).toEqual({ pointer: "/data/attributes/terraform-version" });
    }
    expect((await run422(org, "0.11.0")).status).toBe(422);
    // A workspace on a version an admin disables afterwards keeps it through updates that re-send it.
    const v152 = (await api("GET", "/admin/terraform-versions?filter%5Bversion%5D=1.5.2")).body.data[0].id;
    expect((await setVersion(ws.id, { "terraform-version": "1.5.2" })).status).toBe(200);
    await api("PATCH", `/admin/terraform-versions/${v152}`, { body: body({ enabled: false }) });
    expect((await setVersion(ws.id, { "terraform-version": "1.5.2", description: "still here" })).status).toBe(200);
    expect((await setVersion((await createWorkspace(org)).id, { "terraform-version": "1.5.2" })).status).toBe(422);
    await api("PATCH", `/admin/terraform-versions/${v152}`, { body: body({ enabled: true }) });
  });

  it("a plan-only run's terraform-version is checked too", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const stub = env.WORKSPACES.getByName(ws.id);
    await seedCv(stub);
    const ok = await api("POST", "/runs", { body: runBody(ws.id, { "terraform-version": "1.5.2", "plan-only": true }) });
    expect(ok.status).toBe(201);
    expect(ok.body.data.attributes["terraform-version"]).toBe("1.5.2");
    const bad = await api("POST", "/runs", { body: runBody(ws.id, { "terraform-version": "0.12.0", "plan-only": true }) });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].source).toEqual({ pointer: "/data/attributes/terraform-version" });
  });

  it("a job resolves the setting when it is handed out: constraints to the newest enabled match", async () => {
    expect(await terraformForJob(env, env.DB, "~> 1.5.0")).toMatchObject({
      version: "1.5.7",
      archs: [{ url: "https://releases.example.test/1.5.7.zip", sha: SHA("a"), os: "linux", arch: "amd64" }],
    });
    expect((await terraformForJob(env, env.DB, "latest")).version).toBe("1.5.7");
    // A workspace already on a version an admin disabled since still runs it.
    expect((await terraformForJob(env, env.DB, "1.6.0")).version).toBe("1.6.0");
    expect(await terraformForJob(env, env.DB, "~> 3.0")).toMatchObject({ version: "~> 3.0", error: expect.stringContaining("not satisfied") });
  });
});

const runBody = (ws: string, attributes: Record<string, unknown>) => ({
  data: { type: "runs", attributes, relationships: { workspace: { data: { type: "workspaces", id: ws } } } },
});
async function run422(org: string, version: string) {
  return api("POST", `/organizations/${org}/workspaces`, {
    body: { data: { type: "workspaces", attributes: { name: uniqueName("ws"), "terraform-version": version } } },
  });
}

// ---- the agent's side ----

const AGENT_BASE = "http://localhost/api/agent";
async function agentCall(method: string, path: string, token: string, json?: unknown): Promise<{ status: number; body: any }> {
  const res = await exports.default.fetch(
    new Request(`${AGENT_BASE}${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(json !== undefined ? { "Content-Type": "application/json" } : {}) },
      body: json !== undefined ? JSON.stringify(json) : undefined,
    }),
  );
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

describe("the version a run runs", () => {
  it("the plan's job names the resolved version; the agent's report becomes the run's terraform-version and the apply log's header", async () => {
    const agent = (await agentCall("POST", "/register", "test-agent-token", { name: uniqueName("a"), version: "0.2.0" })).body.id as string;
    // Earlier tests' queued jobs out of the way.
    while ((await agentCall("POST", `/agents/${agent}/jobs/next?wait=0`, "test-agent-token", {})).status === 200) {}
    const org = await createOrg();
    const ws = await createWorkspace(org, { "execution-mode": "remote", "terraform-version": "~> 1.5.0", "auto-apply": true });
    const stub = env.WORKSPACES.getByName(ws.id);
    const r = await createRun(stub, await seedCv(stub), { autoApply: true });
    const next = await agentCall("POST", `/agents/${agent}/jobs/next?wait=0`, "test-agent-token", {});
    expect(next.status).toBe(200);
    const job = next.body as AgentJob;
    expect(job.run).toBe(r.id);
    expect(job.workspace.terraformVersion).toBe("~> 1.5.0");
    expect(job.terraform).toMatchObject({ version: "1.5.7", archs: [{ arch: "amd64", sha: SHA("a") }] });
    const finish = (j: AgentJob, extra: Record<string, unknown>) =>
      agentCall("POST", `/jobs/${j.run}/${j.phase}/finish`, j.token, { status: "finished", hasChanges: true, resourceAdditions: 1, ...extra });
    expect((await finish(job, { terraformVersion: "1.5.7" })).status).toBe(200);
    expect((await run(stub, r.id)).terraformVersion).toBe("1.5.7");
    const apply = (await agentCall("POST", `/agents/${agent}/jobs/next?wait=0`, "test-agent-token", {})).body as AgentJob;
    expect(apply).toMatchObject({ run: r.id, phase: "apply", terraform: { version: "1.5.7" } });
    const log = await stub.readLog({ runId: r.id, phase: "apply", offset: 0, limit: 1000 });
    expect(log.ok && new TextDecoder().decode(log.value.bytes)).toContain("Terraform v1.5.7\n");
    expect((await api("GET", `/runs/${r.id}`)).body.data.attributes["terraform-version"]).toBe("1.5.7");
  });
});

// ---- the sync ----

const INDEX_URL = "https://releases.example.test/terraform/index.json";
const sums = (v: string) =>
  `${SHA("1")}  terraform_${v}_linux_amd64.zip\n${SHA("2")}  terraform_${v}_linux_arm64.zip\n${SHA("3")}  terraform_${v}_darwin_arm64.zip\n`;
const indexOf = (versions: string[]) => ({
  name: "terraform",
  versions: Object.fromEntries(
    versions.map((v) => [
      v,
      {
        name: "terraform",
        version: v,
        shasums: `terraform_${v}_SHA256SUMS`,
        shasums_signature: `terraform_${v}_SHA256SUMS.sig`,
        builds: ["amd64", "arm64"]
          .map((arch) => ({
            os: "linux",
            arch,
            filename: `terraform_${v}_linux_${arch}.zip`,
            url: `https://releases.example.test/terraform/${v}/terraform_${v}_linux_${arch}.zip`,
          }))
          .concat([{ os: "darwin", arch: "arm64", filename: `terraform_${v}_darwin_arm64.zip`, url: "x" }]),
      },
    ]),
  ),
});

function serve(files: Record<string, string | number>): void {
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL) => {
    const url = String(input instanceof Request ? input.url : input);
    const f = files[url];
    if (f === undefined) return new Response("not found", { status: 404 });
    if (typeof f === "number") return new Response("", { status: f });
    return new Response(f, { status: 200 });
  });
}

describe("seeding from a releases index", () => {
  afterEach(() => vi.restoreAllMocks());
  const syncEnv = { TERRAFORM_RELEASES_URL: INDEX_URL, OUTBOUND_ALLOW_PRIVATE: "0" };

  it("adds each release with its linux builds' checksums, once; a deleted one stays deleted", async () => {
    const versions = ["2.0.0", "2.0.1", "2.1.0-rc1"];
    serve({
      [INDEX_URL]: JSON.stringify(indexOf(versions)),
      ...Object.fromEntries(versions.map((v) => [`https://releases.example.test/terraform/${v}/terraform_${v}_SHA256SUMS`, sums(v)])),
    });
    const first = await syncReleases(syncEnv, env.DB, { self: null, force: true });
    expect(first).toMatchObject({ ran: true, pending: 0, error: null });
    expect(first.added.sort()).toEqual(versions.sort());
    const row = (await api("GET", "/admin/terraform-versions?filter%5Bversion%5D=2.0.1")).body.data[0];
    expect(row.attributes).toMatchObject({
      official: true,
      enabled: true,
      beta: false,
      url: "https://releases.example.test/terraform/2.0.1/terraform_2.0.1_linux_amd64.zip",
      sha: SHA("1"),
      archs: [
        { arch: "amd64", sha: SHA("1"), os: "linux" },
        { arch: "arm64", sha: SHA("2"), os: "linux" },
      ],
    });
    expect((await api("GET", "/admin/terraform-versions?filter%5Bversion%5D=2.1.0-rc1")).body.data[0].attributes.beta).toBe(true);
    // An admin removes one (not official any more, so it may go); the next sync does not bring it back.
    await api("PATCH", `/admin/terraform-versions/${row.id}`, { body: body({ official: false }) });
    expect((await api("DELETE", `/admin/terraform-versions/${row.id}`)).status).toBe(204);
    const second = await syncReleases(syncEnv, env.DB, { self: null, force: true });
    expect(second).toMatchObject({ ran: true, added: [], error: null });
    expect((await api("GET", "/admin/terraform-versions?filter%5Bversion%5D=2.0.1")).body.data).toEqual([]);
    // The job of a workspace on 2.0.0 carries where the release's checksums and signature are.
    expect(await terraformForJob(env, env.DB, "2.0.0")).toMatchObject({
      shasumsUrl: "https://releases.example.test/terraform/2.0.0/terraform_2.0.0_SHA256SUMS",
      shasumsSignatureUrl: "https://releases.example.test/terraform/2.0.0/terraform_2.0.0_SHA256SUMS.sig",
    });
  });

  it("a release whose SHA256SUMS cannot be read is left for a later sync", async () => {
    serve({ [INDEX_URL]: JSON.stringify(indexOf(["2.2.0"])), "https://releases.example.test/terraform/2.2.0/terraform_2.2.0_SHA256SUMS": 500 });
    const out = await syncReleases(syncEnv, env.DB, { self: null, force: true });
    expect(out).toMatchObject({ ran: true, added: [], pending: 1, error: expect.stringContaining("1 release") });
  });

  it("an unreachable or refused source is recorded, never thrown", async () => {
    serve({});
    expect(await syncReleases(syncEnv, env.DB, { self: null, force: true })).toMatchObject({ ran: true, error: expect.stringContaining("answered 404") });
    const metadata = { TERRAFORM_RELEASES_URL: "http://169.254.169.254/latest/index.json", OUTBOUND_ALLOW_PRIVATE: "1" };
    expect(await syncReleases(metadata, env.DB, { self: null, force: true })).toMatchObject({ error: expect.stringContaining("link-local") });
    const loopback = { TERRAFORM_RELEASES_URL: "http://127.0.0.1:1/index.json", OUTBOUND_ALLOW_PRIVATE: "0" };
    expect(await syncReleases(loopback, env.DB, { self: null, force: true })).toMatchObject({ error: expect.stringContaining("loopback") });
    const self = { TERRAFORM_RELEASES_URL: "https://tf.example.test/index.json", OUTBOUND_ALLOW_PRIVATE: "0" };
    expect(await syncReleases(self, env.DB, { self: "https://tf.example.test", force: true })).toMatchObject({ error: expect.stringContaining("own address") });
  });

  it("takes its lease once: a second sync within the hour does not run", async () => {
    serve({ [INDEX_URL]: JSON.stringify(indexOf(["2.3.0"])), "https://releases.example.test/terraform/2.3.0/terraform_2.3.0_SHA256SUMS": sums("2.3.0") });
    expect((await syncReleases(syncEnv, env.DB, { self: null, force: true })).ran).toBe(true);
    expect((await syncReleases(syncEnv, env.DB, { self: null })).ran).toBe(false);
  });
});
