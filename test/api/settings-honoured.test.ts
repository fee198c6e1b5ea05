// Settings the API accepts and what each changes (docs/behaviour.md, "Settings"): a refused value is a 422 that
// changes nothing; an honoured one is shown by its effect.
import SparkMD5 from "spark-md5";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Job as AgentJob } from "../../agent/protocol";
import { createOrg, createWorkspace, makeAgentPool, makeOwner, makeProject, makeUser } from "../fixtures";
import { api, sha256, uniqueName } from "../helpers";
import { signIn, ui } from "../ui-client";
import { createRun, seedCv } from "../do/runs.helpers";
import { nullResource, stateDoc } from "../state-docs";

const runBody = (workspaceId: string, attributes: Record<string, unknown> = {}) => ({
  data: { type: "runs", attributes, relationships: { workspace: { data: { type: "workspaces", id: workspaceId } } } },
});

describe("allow-destroy-plan", () => {
  it("false refuses destroy runs (422, nothing queued) and still takes other runs; true takes them again", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org, { "allow-destroy-plan": false });
    await seedCv(env.WORKSPACES.getByName(ws.id));
    const refused = await api("POST", "/runs", { body: runBody(ws.id, { "is-destroy": true }) });
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0].source.pointer).toBe("/data/attributes/is-destroy");
    expect(refused.body.errors[0].detail).toMatch(/allow-destroy-plan/);
    expect((await api("GET", `/workspaces/${ws.id}/runs`)).body.data).toEqual([]);

    const plain = await api("POST", "/runs", { body: runBody(ws.id, { "plan-only": true }) });
    expect(plain.status).toBe(201);

    const on = await api("PATCH", `/workspaces/${ws.id}`, { body: { data: { type: "workspaces", attributes: { "allow-destroy-plan": true } } } });
    expect(on.status).toBe(200);
    expect(on.body.data.attributes["can-queue-destroy-plan"]).toBe(true);
    const destroy = await api("POST", "/runs", { body: runBody(ws.id, { "is-destroy": true }) });
    expect(destroy.status).toBe(201);
    expect(destroy.body.data.attributes["is-destroy"]).toBe(true);
  });
});

describe("settings this service cannot honour: switched on, they are refused and nothing changes", () => {
  const hosted = { edition: "hosted" as const };

  it("assessments-enabled: true (hosted edition; no health assessments run here), on create and on update", async () => {
    const org = await createOrg();
    const name = uniqueName("ws");
    const refused = await api("POST", `/organizations/${org}/workspaces`, {
      ...hosted,
      body: { data: { type: "workspaces", attributes: { name, "assessments-enabled": true } } },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0]).toMatchObject({ status: "422", source: { pointer: "/data/attributes/assessments-enabled" } });
    expect(refused.body.errors[0].detail).toMatch(/not available/);
    expect((await api("GET", `/organizations/${org}/workspaces/${name}`, hosted)).status).toBe(404);

    const ws = await api("POST", `/organizations/${org}/workspaces`, {
      ...hosted,
      body: { data: { type: "workspaces", attributes: { name, "assessments-enabled": false } } },
    });
    expect(ws.status).toBe(201);
    const again = await api("PATCH", `/workspaces/${ws.body.data.id}`, {
      ...hosted,
      body: { data: { type: "workspaces", attributes: { "assessments-enabled": true, description: "not applied" } } },
    });
    expect(again.status).toBe(422);
    const after = (await api("GET", `/workspaces/${ws.body.data.id}`, hosted)).body.data.attributes;
    expect(after).toMatchObject({ "assessments-enabled": false, description: null });
  });

  for (const key of ["assessments-enforced", "enforce-hyok"]) {
    it(`the organisation's ${key}: true, on create and on update; false is taken`, async () => {
      const name = uniqueName("org");
      const refused = await api("POST", "/organizations", {
        body: { data: { type: "organizations", attributes: { name, email: "a@example.com", [key]: true } } },
      });
      expect(refused.status).toBe(422);
      expect(refused.body.errors[0]).toMatchObject({ status: "422", source: { pointer: `/data/attributes/${key}` } });
      expect((await api("GET", `/organizations/${name}`)).status).toBe(404);

      const org = await createOrg();
      const patch = (attributes: Record<string, unknown>) => api("PATCH", `/organizations/${org}`, { body: { data: { type: "organizations", attributes } } });
      const before = (await api("GET", `/organizations/${org}`)).body.data.attributes;
      const again = await patch({ [key]: true, email: "changed@example.com" });
      expect(again.status).toBe(422);
      expect((await api("GET", `/organizations/${org}`)).body.data.attributes).toEqual(before);
      const off = await patch({ [key]: false });
      expect(off.status).toBe(200);
      expect(off.body.data.attributes["assessments-enforced"]).toBe(false);
    });
  }
});

describe("remote state sharing: runs read the state of the workspaces sharing theirs with the run's workspace", () => {
  const agentCall = (path: string, body: unknown = {}) =>
    exports.default.fetch(
      new Request(`http://localhost/api/agent${path}`, {
        method: "POST",
        headers: { Authorization: "Bearer test-agent-token", "Content-Type": "application/json" },
        body: JSON.stringify(body),
      }),
    );
  /** Claims every queued job of the default pool with a fresh operator agent. */
  async function claimAll(): Promise<AgentJob[]> {
    const registered = await agentCall("/register", { name: "settings" });
    expect(registered.status).toBe(201);
    const { id } = (await registered.json()) as { id: string };
    const jobs: AgentJob[] = [];
    for (;;) {
      const res = await agentCall(`/agents/${id}/jobs/next?wait=0`);
      if (res.status === 204) return jobs;
      expect(res.status).toBe(200);
      jobs.push((await res.json()) as AgentJob);
    }
  }
  /** The token of a planning run of a new workspace of `org` (in `project` when given). */
  async function runToken(org: string, project?: string): Promise<string> {
    await claimAll();
    const relationships = project ? { project: { data: { type: "projects", id: project } } } : undefined;
    const ws = await createWorkspace(org, {}, undefined, relationships);
    const stub = env.WORKSPACES.getByName(ws.id);
    const r = await createRun(stub, await seedCv(stub));
    const job = (await claimAll()).find((j) => j.run === r.id);
    expect(job).toBeDefined();
    return job!.token;
  }
  const STATE = JSON.stringify({
    version: 4,
    terraform_version: "1.11.4",
    serial: 1,
    lineage: "l-1",
    outputs: { v: { value: "shared", type: "string" } },
    resources: [],
  });
  /** A workspace with one state version. */
  async function withState(org: string, attributes: Record<string, unknown> = {}, project?: string): Promise<string> {
    const relationships = project ? { project: { data: { type: "projects", id: project } } } : undefined;
    const ws = await createWorkspace(org, attributes, undefined, relationships);
    await api("POST", `/workspaces/${ws.id}/actions/lock`);
    const sv = await api("POST", `/workspaces/${ws.id}/state-versions`, {
      body: { data: { type: "state-versions", attributes: { serial: 1, md5: SparkMD5.hash(STATE), lineage: "l-1", state: btoa(STATE) } } },
    });
    expect(sv.status).toBe(201);
    await api("POST", `/workspaces/${ws.id}/actions/unlock`);
    return ws.id;
  }
  /** What `terraform_remote_state` and `tfe_outputs` read with the run's token: 200s, or every one 404. */
  async function reads(token: string, workspaceId: string): Promise<number[]> {
    const t = { token };
    const current = await api("GET", `/workspaces/${workspaceId}/current-state-version`, t);
    const statuses = [
      (await api("GET", `/workspaces/${workspaceId}`, t)).status,
      current.status,
      (await api("GET", `/workspaces/${workspaceId}/current-state-version-outputs`, t)).status,
    ];
    if (current.status === 200) {
      const download = await exports.default.fetch(new Request(current.body.data.attributes["hosted-state-download-url"]));
      expect(await download.text()).toBe(STATE);
    }
    return statuses;
  }
  const ALLOWED = [200, 200, 200];
  const HIDDEN = [404, 404, 404];

  it("global-remote-state: every run of the organisation reads it, and nothing else of it; off again, none does", async () => {
    const org = await createOrg();
    const shared = await withState(org, { "global-remote-state": true });
    const token = await runToken(org);
    expect(await reads(token, shared)).toEqual(ALLOWED);
    // Only its state: not its runs, variables, lock or state writes.
    const t = { token };
    expect((await api("GET", `/workspaces/${shared}/runs`, t)).status).toBe(404);
    expect((await api("GET", `/workspaces/${shared}/vars`, t)).status).toBe(404);
    expect((await api("POST", `/workspaces/${shared}/actions/lock`, t)).status).toBe(404);
    const write = await api("POST", `/workspaces/${shared}/state-versions`, {
      ...t,
      body: { data: { type: "state-versions", attributes: { serial: 2, md5: SparkMD5.hash(STATE), lineage: "l-1", state: btoa(STATE) } } },
    });
    expect(write.status).toBe(404);
    // A run of another organisation reads none of it.
    expect(await reads(await runToken(await createOrg()), shared)).toEqual(HIDDEN);

    const off = await api("PATCH", `/workspaces/${shared}`, { body: { data: { type: "workspaces", attributes: { "global-remote-state": false } } } });
    expect(off.status).toBe(200);
    expect(await reads(token, shared)).toEqual(HIDDEN);
  });

  it("without sharing, only the workspaces on its remote-state consumer list read it", async () => {
    const org = await createOrg();
    const shared = await withState(org);
    const consumerToken = await runToken(org);
    const otherToken = await runToken(org);
    expect(await reads(consumerToken, shared)).toEqual(HIDDEN);
    // The consumer's workspace: the one its run token names.
    const consumerWs = JSON.parse(atob(consumerToken.split(".")[1].replace(/-/g, "+").replace(/_/g, "/"))).w as string;
    const added = await api("POST", `/workspaces/${shared}/relationships/remote-state-consumers`, {
      body: { data: [{ type: "workspaces", id: consumerWs }] },
    });
    expect(added.status).toBe(204);
    expect(await reads(consumerToken, shared)).toEqual(ALLOWED);
    expect(await reads(otherToken, shared)).toEqual(HIDDEN);
  });

  it("project-remote-state: runs of the workspaces of its project read it, others not", async () => {
    const org = await createOrg();
    const project = await makeProject(org);
    const shared = await withState(org, { "project-remote-state": true }, project);
    expect(await reads(await runToken(org, project), shared)).toEqual(ALLOWED);
    expect(await reads(await runToken(org), shared)).toEqual(HIDDEN);
  });
});

describe("execution mode: a run executes where the workspace's mode says, inherited from its project or organisation", () => {
  const agentCall = async (path: string, token: string, body: unknown = {}) =>
    exports.default.fetch(
      new Request(`http://localhost/api/agent${path}`, {
        method: "POST",
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
        body: JSON.stringify(body),
      }),
    );
  /** The runs whose jobs an agent with this token can claim now (a fresh agent, claiming all of them). */
  async function claimable(token: string): Promise<string[]> {
    const registered = await agentCall("/register", token, { name: "mode" });
    expect(registered.status).toBe(201);
    const { id } = (await registered.json()) as { id: string };
    const runs: string[] = [];
    for (;;) {
      const res = await agentCall(`/agents/${id}/jobs/next?wait=0`, token);
      if (res.status === 204) return runs;
      expect(res.status).toBe(200);
      runs.push(((await res.json()) as AgentJob).run);
    }
  }
  async function poolToken(poolId: string): Promise<string> {
    const res = await api("POST", `/agent-pools/${poolId}/authentication-tokens`, {
      body: { data: { type: "authentication-tokens", attributes: { description: "agent" } } },
    });
    expect(res.status).toBe(201);
    return res.body.data.attributes.token;
  }
  const setDefault = async (org: string, mode: string, pool: string | null = null) => {
    const res = await api("PATCH", `/organizations/${org}`, {
      body: {
        data: {
          type: "organizations",
          attributes: { "default-execution-mode": mode },
          relationships: { "default-agent-pool": { data: pool ? { type: "agent-pools", id: pool } : null } },
        },
      },
    });
    expect(res.status).toBe(200);
  };

  it("an organisation's default agent mode sends an inheriting workspace's runs to its pool, not the operator's agents", async () => {
    const org = await createOrg();
    const pool = await makeAgentPool(org);
    await setDefault(org, "agent", pool);
    const ws = await createWorkspace(org);
    expect(ws.attributes["execution-mode"]).toBe("agent");
    await seedCv(env.WORKSPACES.getByName(ws.id));
    await claimable("test-agent-token");
    const created = await api("POST", "/runs", { body: runBody(ws.id) });
    expect(created.status).toBe(201);
    expect(await claimable("test-agent-token")).not.toContain(created.body.data.id);
    expect(await claimable(await poolToken(pool))).toEqual([created.body.data.id]);
  });

  it("local execution, its own or inherited, queues no run: POST /runs is refused (422) and an upload queues none", async () => {
    const org = await createOrg();
    const own = await createWorkspace(org, { "execution-mode": "local" });
    await seedCv(env.WORKSPACES.getByName(own.id));
    const refused = await api("POST", "/runs", { body: runBody(own.id) });
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0]).toMatchObject({ source: { pointer: "/data/relationships/workspace" } });
    expect(refused.body.errors[0].detail).toMatch(/local execution/);
    expect((await api("GET", `/workspaces/${own.id}/runs`)).body.data).toEqual([]);

    await setDefault(org, "local");
    const inheriting = await createWorkspace(org);
    expect(inheriting.attributes["execution-mode"]).toBe("local");
    const cv = await api("POST", `/workspaces/${inheriting.id}/configuration-versions`, {
      body: { data: { type: "configuration-versions", attributes: { "auto-queue-runs": true } } },
    });
    expect(cv.status).toBe(201);
    expect(cv.body.data.attributes["auto-queue-runs"]).toBe(false);
    const put = await exports.default.fetch(new Request(cv.body.data.attributes["upload-url"], { method: "PUT", body: new Uint8Array([1, 2, 3]) }));
    expect(put.status).toBe(200);
    expect((await api("GET", `/workspaces/${inheriting.id}/runs`)).body.data).toEqual([]);
    expect((await api("POST", "/runs", { body: runBody(inheriting.id) })).status).toBe(422);

    // Back to remote by default: runs are queued again.
    await setDefault(org, "remote");
    expect((await api("POST", "/runs", { body: runBody(inheriting.id) })).status).toBe(201);
  });
});

describe("auto-destroy-at: the workspace's object queues a destroy run when it falls due", () => {
  const STATE = stateDoc({ terraformVersion: "1.11.4", lineage: "l-ad", resources: [nullResource([{ attributes: { id: "1" } }])] });
  /** A workspace with a configuration version and a state managing one resource. */
  async function managed(attributes: Record<string, unknown> = {}): Promise<string> {
    const org = await createOrg();
    const ws = await createWorkspace(org, attributes);
    await seedCv(env.WORKSPACES.getByName(ws.id));
    await api("POST", `/workspaces/${ws.id}/actions/lock`);
    const sv = await api("POST", `/workspaces/${ws.id}/state-versions`, {
      body: { data: { type: "state-versions", attributes: { serial: 1, md5: SparkMD5.hash(STATE), lineage: "l-ad", state: btoa(STATE) } } },
    });
    expect(sv.status).toBe(201);
    await api("POST", `/workspaces/${ws.id}/actions/unlock`);
    expect((await api("GET", `/workspaces/${ws.id}`)).body.data.attributes["resource-count"]).toBe(1);
    return ws.id;
  }
  const schedule = (id: string, at: string | null) =>
    api("PATCH", `/workspaces/${id}`, { body: { data: { type: "workspaces", attributes: { "auto-destroy-at": at } } } });
  const alarmAt = (id: string) => runInDurableObject(env.WORKSPACES.getByName(id), (_o, state) => state.storage.getAlarm());
  const runsOf = async (id: string) => (await api("GET", `/workspaces/${id}/runs`)).body.data as Array<{ attributes: Record<string, unknown> }>;

  it("arms the object's alarm for a future time, and at the time queues a destroy that applies by itself, then unsets it", async () => {
    const id = await managed();
    const later = new Date(Date.now() + 3_600_000).toISOString();
    expect((await schedule(id, later)).status).toBe(200);
    expect(await alarmAt(id)).toBe(Date.parse(later));
    // Not due yet: the alarm (run early) queues nothing.
    await runDurableObjectAlarm(env.WORKSPACES.getByName(id));
    expect(await runsOf(id)).toEqual([]);

    const past = new Date(Date.now() - 1000).toISOString();
    expect((await schedule(id, past)).status).toBe(200);
    expect(await runDurableObjectAlarm(env.WORKSPACES.getByName(id))).toBe(true);
    const runs = await runsOf(id);
    expect(runs).toHaveLength(1);
    expect(runs[0].attributes).toMatchObject({ "is-destroy": true, "auto-apply": true, status: "plan_queued" });
    expect((await api("GET", `/workspaces/${id}`)).body.data.attributes["auto-destroy-at"]).toBeNull();
    // Acted on once: another alarm queues nothing more.
    await runDurableObjectAlarm(env.WORKSPACES.getByName(id));
    expect(await runsOf(id)).toHaveLength(1);
  });

  it("queues nothing where there is nothing to destroy or no way to: no resources, destroy plans off, local execution", async () => {
    const past = new Date(Date.now() - 1000).toISOString();
    const org = await createOrg();
    const empty = await createWorkspace(org, { "auto-destroy-at": past });
    const off = await managed({ "allow-destroy-plan": false });
    const local = await managed({ "execution-mode": "local" });
    for (const id of [off, local]) expect((await schedule(id, past)).status).toBe(200);
    for (const id of [empty.id, off, local]) {
      await runDurableObjectAlarm(env.WORKSPACES.getByName(id));
      expect(await runsOf(id), id).toEqual([]);
      // Still shown as set (only a destroy run unsets it), and not armed again.
      expect((await api("GET", `/workspaces/${id}`)).body.data.attributes["auto-destroy-at"]).toBe(past);
      expect(await alarmAt(id)).toBeNull();
    }
  });
});

describe("session-timeout and session-remember: an organisation's limits on people's web UI sessions", () => {
  const settings = (org: string, attributes: Record<string, unknown>) =>
    api("PATCH", `/organizations/${org}`, { body: { data: { type: "organizations", attributes } } });
  /** Moves a session's start and last request into the past, as if its cookie had been sent that long ago. */
  const age = async (cookie: string, column: "created_at" | "last_seen_at", minutes: number) =>
    env.DB.prepare(`UPDATE ui_sessions SET ${column} = ? WHERE id_hash = ?`)
      .bind(new Date(Date.now() - minutes * 60_000).toISOString(), await sha256(cookie.slice("ws_session=".length)))
      .run();
  const sessionRow = async (cookie: string) =>
    env.DB.prepare("SELECT created_at, last_seen_at FROM ui_sessions WHERE id_hash = ?")
      .bind(await sha256(cookie.slice("ws_session=".length)))
      .first<{ created_at: string; last_seen_at: string | null }>();

  it("a session older than session-remember ends there (sign in again); another organisation's pages served it until then", async () => {
    const strict = await createOrg();
    const lax = await createOrg();
    const user = await makeUser({ ownerOf: strict });
    await makeOwner(user.id, lax);
    expect((await settings(strict, { "session-remember": 60 })).status).toBe(200);
    const cookie = await signIn(user.token);
    await age(cookie, "created_at", 61);
    expect((await ui("GET", `/app/${lax}/workspaces`, { cookie })).status).toBe(200);
    const ended = await ui("GET", `/app/${strict}/workspaces`, { cookie });
    expect(ended.status).toBe(303);
    expect(ended.headers.get("Location")).toMatch(/^\/app\/session\/new/);
    // Signed out: the session is gone everywhere, as a sign-out leaves it.
    expect(await sessionRow(cookie)).toBeNull();
    expect((await ui("GET", `/app/${lax}/workspaces`, { cookie })).status).toBe(303);
    // API tokens have no session: the same user's token still reads the organisation.
    expect((await api("GET", `/organizations/${strict}`, { token: user.token })).status).toBe(200);
  });

  it("a session idle longer than session-timeout ends; a request records its activity, and null lifts the limit", async () => {
    const org = await createOrg();
    const user = await makeUser({ ownerOf: org });
    const cookie = await signIn(user.token);
    await age(cookie, "last_seen_at", 10);
    // No limit set: served, and the request is recorded as the session's last.
    expect((await ui("GET", `/app/${org}/workspaces`, { cookie })).status).toBe(200);
    for (let i = 0; i < 50 && Date.now() - Date.parse((await sessionRow(cookie))!.last_seen_at!) > 60_000; i++) await scheduler.wait(20);
    expect(Date.now() - Date.parse((await sessionRow(cookie))!.last_seen_at!)).toBeLessThan(60_000);

    expect((await settings(org, { "session-timeout": 5 })).status).toBe(200);
    const fresh = await signIn(user.token);
    await age(fresh, "last_seen_at", 4);
    expect((await ui("GET", `/app/${org}/workspaces`, { cookie: fresh })).status).toBe(200);
    const idle = await signIn(user.token);
    await age(idle, "last_seen_at", 6);
    expect((await ui("GET", `/app/${org}/workspaces`, { cookie: idle })).status).toBe(303);
    expect(await sessionRow(idle)).toBeNull();

    expect((await settings(org, { "session-timeout": null })).status).toBe(200);
    const later = await signIn(user.token);
    await age(later, "last_seen_at", 600);
    expect((await ui("GET", `/app/${org}/workspaces`, { cookie: later })).status).toBe(200);
  });
});
