// The run token as an API caller (docs/runs.md "The run token"): what Terraform on the agent calls with it works on
// its own workspace while the run is active (reads, state written as the run holding the lock); other workspaces are
// not there for it (404), other routes refuse it (404), and a forged, expired or finished run's token is 401.
import SparkMD5 from "spark-md5";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Job as AgentJob } from "../../agent/protocol";
import { mintRunToken, runTokenMayCall } from "../../src/auth/run-token";
import { ROUTE_ACTIONS } from "../../src/jsonapi/define-route";
import { createOrg, createWorkspace } from "../fixtures";
import { api, uniqueName } from "../helpers";
import { MODULE_FILES, tarGz } from "../registry/archives";
import { action, createRun, run, seedCv, value } from "../do/runs.helpers";

const AGENT = "http://localhost/api/agent";
const agentCall = async (path: string, token: string, body: unknown = {}) =>
  exports.default.fetch(
    new Request(`${AGENT}${path}`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    }),
  );

/** Claims every queued job of the default pool with a fresh operator agent; returns the claimed jobs. */
async function claimAll(): Promise<AgentJob[]> {
  const reg = await agentCall("/register", "test-agent-token", { name: "t" });
  const { id } = (await reg.json()) as { id: string };
  const jobs: AgentJob[] = [];
  for (;;) {
    const res = await agentCall(`/agents/${id}/jobs/next?wait=0`, "test-agent-token");
    if (res.status === 204) return jobs;
    jobs.push((await res.json()) as AgentJob);
  }
}

/** An organisation with a workspace whose run is planning on an agent; its job and a second workspace. */
async function running() {
  await claimAll();
  const org = await createOrg();
  const ws = await createWorkspace(org, { "execution-mode": "remote" });
  const other = await createWorkspace(org, { "execution-mode": "remote" });
  const stub = env.WORKSPACES.getByName(ws.id);
  const r = await createRun(stub, await seedCv(stub));
  const job = (await claimAll()).find((j) => j.run === r.id);
  expect(job).toBeDefined();
  return { org, ws: ws.id as string, name: ws.attributes.name as string, other: other.id as string, stub, job: job! };
}

const STATE = JSON.stringify({ version: 4, terraform_version: "1.9.8", serial: 1, lineage: "l-1", outputs: {}, resources: [] });
const svBody = (serial: number) => ({
  data: { type: "state-versions", attributes: { serial, md5: SparkMD5.hash(STATE), lineage: "l-1", state: btoa(STATE) } },
});

describe("a run token and the workspace's lock", () => {
  it("can neither unlock its run's lock nor lock the workspace; a force-unlock of the run's lock is refused naming the run", async () => {
    const { ws, stub, job } = await running();
    const t = { token: job.token };
    expect((await api("POST", `/workspaces/${ws}/actions/unlock`, t)).status).toBe(404);
    expect((await api("POST", `/workspaces/${ws}/actions/lock`, { ...t, body: { reason: "x" } })).status).toBe(404);
    const forced = await api("POST", `/workspaces/${ws}/actions/force-unlock`);
    expect(forced.status).toBe(409);
    expect(forced.body.errors[0].detail).toContain(`is locked by Run ${job.run}`);
    const w = value(await stub.get());
    expect(w.lock).toMatchObject({ locked: true, holder: { type: "runs", id: job.run } });
  });
});

describe("a run token on the API", () => {
  it("reads its organisation, entitlements and own workspace, and the state, but a plan's token writes no state", async () => {
    const { org, ws, name, job } = await running();
    const t = { token: job.token };
    expect((await api("GET", "/ping", t)).status).toBe(204);
    expect((await api("GET", `/organizations/${org}`, t)).status).toBe(200);
    const ent = await api("GET", `/organizations/${org}/entitlement-set`, t);
    expect(ent.status).toBe(200);
    const byName = await api("GET", `/organizations/${org}/workspaces/${name}`, t);
    expect(byName.status).toBe(200);
    expect(byName.body.data.id).toBe(ws);
    expect(byName.body.data.attributes.permissions).toMatchObject({
      "can-read-state-versions": true,
      "can-create-state-versions": false,
      "can-queue-run": false,
      "can-update": false,
      "can-update-variable": false,
    });
    expect(byName.body.data.attributes.locked).toBe(true);
    expect((await api("GET", `/workspaces/${ws}/vars`, t)).status).toBe(200);
    expect((await api("GET", `/workspaces/${ws}/current-state-version`, t)).status).toBe(404);
    // What an interrupted `terraform plan` on the agent sends: refused (404, as for any caller without state write),
    // and nothing is written.
    const refused = await api("POST", `/workspaces/${ws}/state-versions`, { ...t, body: svBody(1) });
    expect(refused.status).toBe(404);
    expect(refused.body.errors[0].status).toBe("404");
    expect((await api("GET", `/workspaces/${ws}/current-state-version`)).status).toBe(404);
  });

  it("of the apply phase writes state as the run holding the lock", async () => {
    const { org, ws, name, stub, job } = await running();
    expect((await agentCall(`/jobs/${job.run}/plan/finish`, job.token, { status: "finished", hasChanges: true, resourceAdditions: 1 })).status).toBe(200);
    value(await action(stub, job.run, "apply"));
    const applyJob = (await claimAll()).find((j) => j.run === job.run && j.phase === "apply");
    expect(applyJob).toBeDefined();
    const t = { token: applyJob!.token };
    expect((await api("GET", `/organizations/${org}/workspaces/${name}`, t)).body.data.attributes.permissions["can-create-state-versions"]).toBe(true);
    const created = await api("POST", `/workspaces/${ws}/state-versions`, { ...t, body: svBody(1) });
    expect(created.status).toBe(201);
    // The version belongs to the run that wrote it, as a reader of the workspace sees it.
    expect(created.body.data.relationships.run.data).toEqual({ id: job.run, type: "runs" });
    expect((await api("GET", `/state-versions/${created.body.data.id}`)).body.data.relationships.run.data).toEqual({ id: job.run, type: "runs" });
    const current = await api("GET", `/workspaces/${ws}/current-state-version`, t);
    expect(current.status).toBe(200);
    expect(current.body.data.id).toBe(created.body.data.id);
    const download = await exports.default.fetch(new Request(current.body.data.attributes["hosted-state-download-url"]));
    expect(download.status).toBe(200);
    expect(await download.text()).toBe(STATE);
  });

  it("finds nothing on another workspace of its organisation, and may not write its state", async () => {
    const { other, job } = await running();
    const t = { token: job.token };
    expect((await api("GET", `/workspaces/${other}`, t)).status).toBe(404);
    expect((await api("GET", `/workspaces/${other}/current-state-version`, t)).status).toBe(404);
    expect((await api("POST", `/workspaces/${other}/state-versions`, { ...t, body: svBody(1) })).status).toBe(404);
    // Nothing was written there.
    expect((await api("GET", `/workspaces/${other}/current-state-version`)).status).toBe(404);
  });

  it("installs its organisation's private modules through the registry protocol, and finds no other organisation's", async () => {
    const { org, job } = await running();
    const elsewhere = await running();
    const name = uniqueName("mod").replace(/-/g, "_");
    const body = { data: { type: "registry-modules", attributes: { name, provider: "aws", "registry-name": "private" } } };
    expect((await api("POST", `/organizations/${org}/registry-modules`, { body })).status).toBe(201);
    const v = await api("POST", `/organizations/${org}/registry-modules/private/${org}/${name}/aws/versions`, {
      body: { data: { type: "registry-module-versions", attributes: { version: "1.0.0" } } },
    });
    const archive = await tarGz(MODULE_FILES);
    const put = await exports.default.fetch(
      new Request(v.body.data.links.upload, { method: "PUT", body: archive, headers: { "Content-Length": String(archive.length) } }),
    );
    expect(put.status).toBe(200);
    const registry = (token: string, path: string) =>
      exports.default.fetch(
        new Request(`http://localhost/api/registry/v1/modules/${org}/${name}/aws${path}`, { headers: { Authorization: `Bearer ${token}` } }),
      );
    const versions = await registry(job.token, "/versions");
    expect(versions.status).toBe(200);
    expect(await versions.json()).toMatchObject({ modules: [{ versions: [{ version: "1.0.0" }] }] });
    const download = await registry(job.token, "/1.0.0/download");
    expect(download.status).toBe(204);
    expect(download.headers.get("X-Terraform-Get")).toContain("/_registry/");
    // A run of another organisation: the namespace is not there for it.
    expect((await registry(elsewhere.job.token, "/versions")).status).toBe(404);
    expect((await registry(elsewhere.job.token, "/1.0.0/download")).status).toBe(404);
  });

  it("is refused (404) by every route outside its list, before the route does anything", async () => {
    const { org, ws, job } = await running();
    const t = { token: job.token };
    // The ones a leak would matter most for, with real targets.
    const refused: Array<[string, string, unknown?]> = [
      ["GET", `/organizations/${org}/teams`],
      ["GET", `/organizations/${org}/workspaces`],
      ["GET", `/organizations/${org}/projects`],
      ["GET", `/organizations/${org}/agent-pools`],
      ["GET", "/organizations"],
      ["GET", "/account/details"],
      ["PATCH", `/organizations/${org}`, { data: { type: "organizations", attributes: { email: "x@y.z" } } }],
      ["POST", `/organizations/${org}/workspaces`, { data: { type: "workspaces", attributes: { name: "sneaky" } } }],
      ["PATCH", `/workspaces/${ws}`, { data: { type: "workspaces", attributes: { description: "x" } } }],
      ["POST", `/workspaces/${ws}/vars`, { data: { type: "vars", attributes: { key: "k", value: "v", category: "env" } } }],
      ["POST", `/users/x/authentication-tokens`, { data: { type: "authentication-tokens", attributes: {} } }],
    ];
    for (const [method, path, body] of refused) expect((await api(method, path, { ...t, body })).status, `${method} ${path}`).toBe(404);
    expect((await api("GET", `/organizations/${org}/workspaces`)).body.data.length).toBe(2);
    // And every declared route outside the list, whatever its parameters.
    for (const [route, action] of Object.entries(ROUTE_ACTIONS)) {
      if (runTokenMayCall(route, action)) continue;
      const [method, pattern] = route.split(" ");
      const url = `http://localhost${pattern.replace(/:[a-z_]+/g, "x1")}`;
      const res = await api(method, url, { ...t, ...(method === "GET" || method === "DELETE" ? {} : { body: {} }) });
      expect(res.status, route).toBe(404);
    }
  });

  it("is 401 when forged, expired, for an unknown run, or once its run is final", async () => {
    const { ws, stub, job } = await running();
    const [, payload, sig] = job.token.split(".");
    const claims = JSON.parse(atob(payload.replace(/-/g, "+").replace(/_/g, "/")));
    const swapped = btoa(JSON.stringify({ ...claims, w: "ws-elsewhere" }))
      .replace(/=+$/, "")
      .replace(/\+/g, "-")
      .replace(/\//g, "_");
    const base = { runId: job.run, workspaceId: ws, organizationId: claims.o, phase: "plan" as const, claimId: job.claim };
    const expired = await mintRunToken(env, base, Math.floor(Date.now() / 1000) - 25 * 60 * 60);
    const unknown = await mintRunToken(env, { ...base, runId: "run-NoSuchRun0000000" });
    for (const token of [`run.${swapped}.${sig}`, `run.${payload}.${"0".repeat(64)}`, expired, unknown, "run.garbage"]) {
      const res = await api("GET", `/workspaces/${ws}`, { token });
      expect(res.status).toBe(401);
      expect(res.body.errors[0].status).toBe("401");
    }
    expect((await api("GET", `/workspaces/${ws}`, { token: job.token })).status).toBe(200);
    const done = await agentCall(`/jobs/${job.run}/plan/finish`, job.token, { status: "errored", error: "boom" });
    expect(done.status).toBe(200);
    expect((await run(stub, job.run)).status).toBe("errored");
    for (const [method, path, body] of [
      ["GET", `/workspaces/${ws}`],
      ["GET", "/ping"],
      ["POST", `/workspaces/${ws}/state-versions`, svBody(1)],
    ] as const) {
      expect((await api(method, path, { token: job.token, body })).status, `${method} ${path}`).toBe(401);
    }
    expect((await api("GET", `/workspaces/${ws}/current-state-version`)).status).toBe(404);
  });

  it("of another live run is no key to this workspace (404)", async () => {
    const a = await running();
    const b = await running();
    expect((await api("GET", `/workspaces/${a.ws}`, { token: b.job.token })).status).toBe(404);
    expect((await api("GET", `/organizations/${a.org}/entitlement-set`, { token: b.job.token })).status).toBe(404);
  });
});
