// The private agent protocol (docs/runs.md "Agent protocol"): agents register with an agent token, claim the oldest
// queued job of their pool, in turn by organisation (a racing agent gets the next one or nothing), and make the
// job's calls with its run token; pools never see each other's jobs, the default pool only remote-mode workspaces'.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Job as AgentJob } from "../../agent/protocol";
import { createOrg, createWorkspace, makeAgentPool, organizationId } from "../fixtures";
import { api, uniqueName } from "../helpers";
import { action, createRun, run, seedCv, value, type Stub } from "../do/runs.helpers";
import { OPERATOR, agentCall as call, nextJob as next, registerAgent as register } from "../agent-client";

async function poolToken(poolId: string): Promise<string> {
  const res = await api("POST", `/agent-pools/${poolId}/authentication-tokens`, {
    body: { data: { type: "authentication-tokens", attributes: { description: "agent" } } },
  });
  expect(res.status).toBe(201);
  return res.body.data.attributes.token;
}

/** A workspace (remote mode unless the attributes say otherwise) with one queued run; returns the run's id. */
async function queuedRun(org: string, attributes: Record<string, unknown> = {}): Promise<{ ws: string; stub: Stub; run: string; cv: string }> {
  const ws = await createWorkspace(org, { "execution-mode": "remote", ...attributes });
  const stub = env.WORKSPACES.getByName(ws.id);
  const cv = await seedCv(stub);
  const r = await createRun(stub, cv);
  expect(r.status).toBe("plan_queued");
  return { ws: ws.id, stub, run: r.id, cv };
}

/** Claims every job the default pool has queued (earlier tests' leftovers), so the next claim is this test's. */
async function drainDefaultPool(): Promise<void> {
  const agent = await register();
  while (await next(agent)) {}
}

describe("registering", () => {
  it("registers with the operator's token or a pool's, and refuses anything else", async () => {
    const org = await createOrg();
    const pool = await makeAgentPool(org);
    const id = await register(await poolToken(pool), "pool-agent");
    expect(id).toMatch(/^agent-[A-Za-z0-9]{16}$/);
    const shown = await api("GET", `/agents/${id}`);
    expect(shown.status).toBe(200);
    expect(shown.body.data.attributes).toMatchObject({ name: "pool-agent", status: "idle" });
    const listed = await api("GET", `/agent-pools/${pool}/agents`);
    expect(listed.body.data.map((a: { id: string }) => a.id)).toEqual([id]);

    // The answer says which pool the token serves: one organisation's, or the default pool (every organisation's).
    const answered = await call("POST", "/register", { token: await poolToken(pool), json: { name: "scoped" } });
    expect(answered.body).toEqual({ id: expect.stringMatching(/^agent-/), pool: { id: pool, organizationId: await organizationId(org) } });
    const shared = await call("POST", "/register", { json: { name: "shared" } });
    expect(shared.status).toBe(201);
    expect(shared.body).toEqual({ id: expect.stringMatching(/^agent-/), pool: { id: null, organizationId: null } });

    const operators = await register();
    // The default pool's agents belong to no organisation: no API caller sees them.
    expect((await api("GET", `/agents/${operators}`)).status).toBe(404);

    for (const token of [null, "nope", "test-admin-token", `${OPERATOR}x`]) {
      const res = await call("POST", "/register", { token, json: { name: "x" } });
      expect(res.status).toBe(401);
      expect(res.body.errors[0].status).toBe("401");
    }
    const bad = await call("POST", "/register", { json: { name: "" } });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].source).toEqual({ pointer: "/name" });
    expect((await call("POST", "/register", { json: "{" })).status).toBe(422);
  });

  it("records the reported status; another pool's token cannot speak for the agent", async () => {
    const org = await createOrg();
    const pool = await makeAgentPool(org);
    const token = await poolToken(pool);
    const id = await register(token);
    expect((await call("POST", `/agents/${id}/status`, { token, json: { status: "busy" } })).status).toBe(204);
    expect((await api("GET", `/agents/${id}`)).body.data.attributes.status).toBe("busy");
    expect((await call("POST", `/agents/${id}/status`, { token, json: { status: "sleeping" } })).status).toBe(422);
    const other = await poolToken(await makeAgentPool(org));
    expect((await call("POST", `/agents/${id}/status`, { token: other, json: { status: "exited" } })).status).toBe(404);
    expect((await call("POST", `/agents/${id}/status`, { json: { status: "exited" } })).status).toBe(404);
    expect((await api("GET", `/agents/${id}`)).body.data.attributes.status).toBe("busy");
    expect((await call("POST", `/agents/${id}/status`, { token, json: { status: "exited" } })).status).toBe(204);
    expect((await api("GET", `/agents/${id}`)).body.data.attributes.status).toBe("exited");
  });
});

describe("the next job", () => {
  it("claims the oldest queued job: the run starts planning, and the job carries what the agent needs", async () => {
    await drainDefaultPool();
    const org = await createOrg();
    const { ws, stub, run: runId } = await queuedRun(org, { "working-directory": "infra", "terraform-version": "1.9.8" });
    const wsName = (await api("GET", `/workspaces/${ws}`)).body.data.attributes.name;
    const agent = await register();
    const job = await next(agent);
    expect(job).toMatchObject({
      run: runId,
      phase: "plan",
      claim: expect.any(String),
      token: expect.stringMatching(/^run\./),
      leaseSeconds: 60,
      hostname: "localhost",
      apiBase: "http://localhost/api/v2/",
      organization: org,
      workspace: { id: ws, name: wsName, workingDirectory: "infra", terraformVersion: "1.9.8" },
      operation: {
        isDestroy: false,
        refresh: true,
        refreshOnly: false,
        targetAddrs: [],
        replaceAddrs: [],
        planOnly: false,
        savePlan: false,
        allowEmptyApply: false,
        allowConfigGeneration: false,
      },
      variables: [],
      runVariables: [],
    });
    const started = await run(stub, runId);
    expect(started.status).toBe("planning");
    expect(started.plan.agent).toMatchObject({ id: agent, poolId: null });
    expect((await api("GET", `/agents/${agent}`)).status).toBe(404);
    // Claimed: no one else gets it.
    expect(await next(await register())).toBeNull();
  });

  it("hands out the workspace's effective variables in clear: workspace beats set, priority set beats workspace", async () => {
    await drainDefaultPool();
    const org = await createOrg();
    const ws = await createWorkspace(org, { "execution-mode": "remote" });
    const v = (key: string, value: string, extra: Record<string, unknown> = {}) => ({
      data: { type: "vars", attributes: { key, value, category: "terraform", ...extra } },
    });
    await api("POST", `/workspaces/${ws.id}/vars`, { body: v("region", "eu-ws", { sensitive: true }) });
    await api("POST", `/workspaces/${ws.id}/vars`, { body: v("size", "ws") });
    await api("POST", `/workspaces/${ws.id}/vars`, { body: v("TF_LOG", "info", { category: "env" }) });
    const set = async (priority: boolean, vars: Array<[string, string]>) => {
      const s = await api("POST", `/organizations/${org}/varsets`, {
        body: { data: { type: "varsets", attributes: { name: uniqueName("vs"), global: true, priority } } },
      });
      expect(s.status).toBe(201);
      for (const [key, value] of vars) expect((await api("POST", `/varsets/${s.body.data.id}/relationships/vars`, { body: v(key, value) })).status).toBe(201);
    };
    await set(false, [
      ["region", "eu-set"],
      ["zone", "a"],
    ]);
    await set(true, [["size", "priority"]]);
    const stub = env.WORKSPACES.getByName(ws.id);
    const r = await createRun(stub, await seedCv(stub), { variables: [{ key: "n", value: "3" }] });
    const job = await next(await register());
    expect(job?.run).toBe(r.id);
    const byKey = Object.fromEntries(job!.variables.map((x) => [`${x.category}:${x.key}`, x]));
    expect(byKey).toEqual({
      "terraform:region": { key: "region", value: "eu-ws", category: "terraform", hcl: false, sensitive: true },
      "terraform:size": { key: "size", value: "priority", category: "terraform", hcl: false, sensitive: false },
      "terraform:zone": { key: "zone", value: "a", category: "terraform", hcl: false, sensitive: false },
      "env:TF_LOG": { key: "TF_LOG", value: "info", category: "env", hcl: false, sensitive: false },
    });
    expect(job!.runVariables).toEqual([{ key: "n", value: "3" }]);
  });

  it("two agents racing for two jobs get one each; a third gets nothing", async () => {
    await drainDefaultPool();
    const org = await createOrg();
    const a = await queuedRun(org);
    const b = await queuedRun(org);
    const [x, y] = await Promise.all([register(), register()]);
    const jobs = await Promise.all([next(x), next(y)]);
    expect(jobs.map((j) => j?.run).sort()).toEqual([a.run, b.run].sort());
    expect(await next(await register())).toBeNull();
    // Each job went to exactly one agent: their claims differ, and each run names its agent.
    const agents = [(await run(a.stub, a.run)).plan.agent?.id, (await run(b.stub, b.run)).plan.agent?.id];
    expect(agents.sort()).toEqual([x, y].sort());
  });

  it("keeps pools apart: a pool's agent gets its pool's jobs only, the default pool remote workspaces' only", async () => {
    await drainDefaultPool();
    const org = await createOrg();
    const poolA = await makeAgentPool(org);
    const poolB = await makeAgentPool(org);
    const [tokenA, tokenB] = [await poolToken(poolA), await poolToken(poolB)];
    const agentA = await register(tokenA);
    const agentB = await register(tokenB);
    const operator = await register();
    const agentMode = await queuedRun(org, { "execution-mode": "agent", "agent-pool-id": poolA });
    expect(await next(agentB, tokenB)).toBeNull();
    expect(await next(operator)).toBeNull();
    const remote = await queuedRun(org);
    expect(await next(agentA, tokenA).then((j) => j?.run)).toBe(agentMode.run);
    expect(await next(agentA, tokenA)).toBeNull();
    expect(await next(agentB, tokenB)).toBeNull();
    expect(await next(operator).then((j) => j?.run)).toBe(remote.run);
    // An agent asks with its own pool's token only.
    expect((await call("POST", `/agents/${agentA}/jobs/next?wait=0`, { token: tokenB, json: {} })).status).toBe(404);
  });

  it("takes turns between organisations on the default pool: one tenant's queue cannot starve another's", async () => {
    await drainDefaultPool();
    const [busy, other] = [await createOrg(), await createOrg()];
    // The busy tenant queues three runs, then the other two.
    const queued = new Map<string, string>();
    for (const org of [busy, busy, busy, other, other]) queued.set((await queuedRun(org)).run, org);
    const agent = await register();
    const served: string[] = [];
    for (let i = 0; i < queued.size; i++) {
      const job = await next(agent);
      expect(job).not.toBeNull();
      served.push(queued.get(job!.run)!);
    }
    // The oldest job first; then in turn, while both have jobs waiting.
    expect(served).toEqual([busy, other, busy, other, busy]);
    expect(await next(agent)).toBeNull();
  });
});

describe("a job's calls", () => {
  async function claimed() {
    await drainDefaultPool();
    const q = await queuedRun(await createOrg());
    const job = await next(await register());
    expect(job?.run).toBe(q.run);
    return { ...q, job: job! };
  }
  const path = (job: AgentJob, rest: string) => `/jobs/${job.run}/${job.phase}/${rest}`;
  const bytes = (s: string) => new TextEncoder().encode(s);

  it("appends log chunks by offset: a retried chunk is not appended twice, a gap is 409", async () => {
    const { stub, job } = await claimed();
    const first = await call("POST", path(job, "logs?offset=0"), { token: job.token, bytes: bytes("hello\n") });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ size: 6, signal: null });
    const again = await call("POST", path(job, "logs?offset=0"), { token: job.token, bytes: bytes("hello\n") });
    expect(again.body).toEqual({ size: 6, signal: null });
    const second = await call("POST", path(job, "logs?offset=6"), { token: job.token, bytes: bytes("world\n") });
    expect(second.body.size).toBe(12);
    const gap = await call("POST", path(job, "logs?offset=20"), { token: job.token, bytes: bytes("x") });
    expect(gap.status).toBe(409);
    expect((await call("POST", path(job, "logs"), { token: job.token, bytes: bytes("x") })).status).toBe(400);
    const log = new TextDecoder().decode(value(await stub.readLog({ runId: job.run, phase: "plan", offset: 0, limit: 1000 })).bytes);
    expect(log).toBe("\u0002hello\nworld\n");
  });

  it("stores artifacts in the plan phase and reads them back exactly", async () => {
    const { job } = await claimed();
    const plan = crypto.getRandomValues(new Uint8Array(60_000));
    expect((await call("PUT", path(job, "artifacts/plan-binary"), { token: job.token, bytes: plan })).status).toBe(204);
    const back = await call("GET", path(job, "artifacts/plan-binary"), { token: job.token });
    expect(back.status).toBe(200);
    expect(back.bytes).toEqual(plan);
    expect((await call("GET", path(job, "artifacts/lock-file"), { token: job.token })).status).toBe(404);
    expect((await call("PUT", path(job, "artifacts/state"), { token: job.token, bytes: plan })).status).toBe(404);
  });

  it("downloads the run's configuration archive, byte for byte", async () => {
    await drainDefaultPool();
    const ws = await createWorkspace(await createOrg(), { "execution-mode": "remote" });
    const cv = await api("POST", `/workspaces/${ws.id}/configuration-versions`, {
      body: { data: { type: "configuration-versions", attributes: { "auto-queue-runs": false } } },
    });
    expect(cv.status).toBe(201);
    // Larger than one stored part, not text (a tar.gz never is).
    const archive = new Uint8Array(3 * 1024 * 1024 + 17).map((_, i) => (i * 7919) % 251);
    const put = await exports.default.fetch(
      new Request(cv.body.data.attributes["upload-url"], { method: "PUT", body: archive, headers: { "Content-Type": "application/octet-stream" } }),
    );
    expect(put.status).toBe(200);
    const r = await createRun(env.WORKSPACES.getByName(ws.id), cv.body.data.id);
    const job = await next(await register());
    expect(job?.run).toBe(r.id);
    const got = await call("GET", path(job!, "configuration"), { token: job!.token });
    expect(got.status).toBe(200);
    expect(got.bytes.length).toBe(archive.length);
    expect(got.bytes).toEqual(archive);
    expect((await call("GET", path(job!, "configuration"), { token: null })).status).toBe(401);
  });

  it("answers the heartbeat with the run's signal, and a cancel reaches the agent", async () => {
    const { stub, job } = await claimed();
    const beat = await call("POST", path(job, "heartbeat"), { token: job.token, json: {} });
    expect(beat.status).toBe(200);
    expect(beat.body).toEqual({ signal: null });
    expect((await action(stub, job.run, "cancel")).ok).toBe(true);
    expect((await call("POST", path(job, "heartbeat"), { token: job.token, json: {} })).body).toEqual({ signal: "cancel" });
  });

  it("finishes the phase (the run moves on); afterwards the claim is lost (409) and the token no longer reads the API", async () => {
    const { stub, ws, job } = await claimed();
    expect((await api("GET", `/workspaces/${ws}`, { token: job.token })).status).toBe(200);
    const done = await call("POST", path(job, "finish"), {
      token: job.token,
      json: { status: "finished", hasChanges: false, resourceAdditions: 0, resourceChanges: 0, resourceDestructions: 0, resourceImports: 0 },
    });
    expect(done.status).toBe(200);
    expect(done.body).toEqual({});
    expect((await run(stub, job.run)).status).toBe("planned_and_finished");
    const lost = await call("POST", path(job, "heartbeat"), { token: job.token, json: {} });
    expect(lost.status).toBe(409);
    expect(lost.body.errors[0]).toMatchObject({ status: "409" });
    expect((await call("POST", path(job, "logs?offset=0"), { token: job.token, bytes: bytes("late") })).status).toBe(409);
    expect((await call("GET", path(job, "artifacts/plan-json"), { token: job.token })).status).toBe(409);
    expect((await api("GET", `/workspaces/${ws}`, { token: job.token })).status).toBe(401);
  });

  it("refuses a token of another job, a forged one, or none (401); a bad finish body is 422 and changes nothing", async () => {
    const { stub, job } = await claimed();
    const other = (await claimed()).job;
    for (const token of [other.token, null, "run.e30.00", job.token.replace(/.$/, (c) => (c === "0" ? "1" : "0"))]) {
      expect((await call("POST", path(job, "heartbeat"), { token, json: {} })).status).toBe(401);
    }
    expect((await call("POST", `/jobs/${job.run}/apply/heartbeat`, { token: job.token, json: {} })).status).toBe(401);
    const bad = await call("POST", path(job, "finish"), { token: job.token, json: { status: "done" } });
    expect(bad.status).toBe(422);
    expect((await run(stub, job.run)).status).toBe("planning");
  });
});
