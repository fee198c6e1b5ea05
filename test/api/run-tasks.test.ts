// Run tasks through the API, and the engine's waits: organisation tasks (verified on create, the HMAC key never
// answered), workspace attachments, a run held at a stage while its tasks' requests go out from the workspace object's
// alarm (signed, to a fake receiver: the Worker's outbound fetch answered by test/vcs/outbound.ts), the integration's
// callback with the request's access token, and what the run does after: a mandatory failure stops it, an advisory
// one does not, a task that never answers or a receiver that keeps failing errors its result.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createOrg, createWorkspace } from "../fixtures";
import { api } from "../helpers";
import { NON_PUBLIC_URLS, hmacSha512Hex, receiversAt } from "../vcs/outbound";
import { action, claim, createRun, finish, plan, run as readRun, seedCv } from "../do/runs.helpers";

const HOST = "tasks.example.com";
const KEY = "task-hmac-key";

/** A receiver at https://tasks.example.com: every request kept; `answer` decides each status (200 by default). */
const receiver = receiversAt(HOST);
const hmac = hmacSha512Hex;

const taskBody = (attributes: Record<string, unknown> = {}) => ({
  data: { type: "tasks", attributes: { name: "scanner", url: `https://${HOST}/hook`, category: "task", "hmac-key": KEY, ...attributes } },
});

/** An organisation with a workspace and a run task attached to it (`enforcement`, `stages`). */
async function attached(enforcement: "advisory" | "mandatory", stages: string[] = ["post_plan"]) {
  const org = await createOrg();
  const ws = await createWorkspace(org);
  const task = (await api("POST", `/organizations/${org}/tasks`, { body: taskBody() })).body.data;
  const wt = await api("POST", `/workspaces/${ws.id}/tasks`, {
    body: {
      data: {
        type: "workspace-tasks",
        attributes: { "enforcement-level": enforcement, stages },
        relationships: { task: { data: { type: "tasks", id: task.id } } },
      },
    },
  });
  expect(wt.status).toBe(201);
  const stub = env.WORKSPACES.getByName(ws.id);
  return { org, ws: ws.id as string, task, workspaceTask: wt.body.data, stub };
}

const callback = (url: string, token: string | null, attributes: Record<string, unknown>, relationships?: unknown) =>
  exports.default.fetch(
    new Request(url, {
      method: "PATCH",
      headers: { "Content-Type": "application/vnd.api+json", ...(token ? { Authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ data: { type: "task-results", attributes, ...(relationships ? { relationships } : {}) } }),
    }),
  );

/** Makes every result's pending request or callback deadline due now, and runs the alarm. */
async function dueNow(stub: DurableObjectStub, what: "send_at" | "deadline") {
  await runInDurableObject(stub, async (_o, state) => {
    state.storage.sql.exec(`UPDATE task_results SET ${what} = 0 WHERE ${what} IS NOT NULL`);
    await state.storage.setAlarm(Date.now());
  });
  await runDurableObjectAlarm(stub);
}

const stageOf = async (runId: string) => {
  const list = await api("GET", `/runs/${runId}/task-stages?include=task_results`);
  expect(list.status).toBe(200);
  return { stage: list.body.data[0], results: list.body.included ?? [] };
};

describe("run tasks API", () => {
  it("creates (verified, signed), lists, shows, updates and deletes; the HMAC key is never answered", async () => {
    const got = receiver();
    const org = await createOrg();
    const created = await api("POST", `/organizations/${org}/tasks`, { body: taskBody({ description: "scans" }) });
    expect(created.status).toBe(201);
    const task = created.body.data;
    expect(task).toMatchObject({
      type: "tasks",
      attributes: { name: "scanner", url: `https://${HOST}/hook`, category: "task", description: "scans", enabled: true, "hmac-key": null },
      relationships: { organization: { data: { id: org, type: "organizations" } } },
    });
    expect(JSON.stringify(created.body)).not.toContain(KEY);
    // The verification request: a test payload, signed with the key.
    expect(got).toHaveLength(1);
    expect(JSON.parse(got[0].body)).toMatchObject({ payload_version: 1, stage: "test", access_token: "test-token", organization_name: org });
    expect(got[0].headers.get("x-tfc-task-signature")).toBe(await hmac(KEY, got[0].body));

    expect((await api("GET", `/organizations/${org}/tasks`)).body.data.map((t: { id: string }) => t.id)).toEqual([task.id]);
    const updated = await api("PATCH", `/tasks/${task.id}`, { body: { data: { type: "tasks", attributes: { name: "renamed", enabled: false } } } });
    expect(updated.body.data.attributes).toMatchObject({ name: "renamed", enabled: false, "hmac-key": null });

    const ws = await createWorkspace(org);
    const wt = await api("POST", `/workspaces/${ws.id}/tasks`, {
      body: {
        data: {
          type: "workspace-tasks",
          attributes: { "enforcement-level": "mandatory", stage: "pre_plan" },
          relationships: { task: { data: { type: "tasks", id: task.id } } },
        },
      },
    });
    expect(wt.status).toBe(201);
    expect(wt.body.data).toMatchObject({
      type: "workspace-tasks",
      attributes: { "enforcement-level": "mandatory", stage: "pre_plan", stages: ["pre_plan"] },
      relationships: { task: { data: { id: task.id, type: "tasks" } }, workspace: { data: { id: ws.id, type: "workspaces" } } },
    });
    const again = await api("POST", `/workspaces/${ws.id}/tasks`, {
      body: {
        data: { type: "workspace-tasks", attributes: { "enforcement-level": "advisory" }, relationships: { task: { data: { type: "tasks", id: task.id } } } },
      },
    });
    expect(again.status).toBe(422);
    const changed = await api("PATCH", `/workspaces/${ws.id}/tasks/${wt.body.data.id}`, {
      body: { data: { type: "workspace-tasks", attributes: { stages: ["pre_plan", "post_plan"] } } },
    });
    expect(changed.body.data.attributes).toMatchObject({ stage: "pre_plan", stages: ["pre_plan", "post_plan"], "enforcement-level": "mandatory" });
    const withTasks = await api("GET", `/tasks/${task.id}?include=workspace_tasks`);
    expect(withTasks.body.included).toMatchObject([{ id: wt.body.data.id, type: "workspace-tasks", attributes: { "enforcement-level": "mandatory" } }]);
    expect((await api("GET", `/tasks/${task.id}?include=nonsense`)).status).toBe(400);

    expect((await api("DELETE", `/workspaces/${ws.id}/tasks/${wt.body.data.id}`)).status).toBe(204);
    expect((await api("GET", `/workspaces/${ws.id}/tasks/${wt.body.data.id}`)).status).toBe(404);
    expect((await api("DELETE", `/tasks/${task.id}`)).status).toBe(204);
    expect((await api("GET", `/tasks/${task.id}`)).status).toBe(404);
  });

  it("an attachment is acknowledged once its workspace's object has it: a failed index write is retried by the alarm", async () => {
    receiver();
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const task = (await api("POST", `/organizations/${org}/tasks`, { body: taskBody() })).body.data;
    const stub = env.WORKSPACES.getByName(ws.id);
    const included = async () => ((await api("GET", `/tasks/${task.id}?include=workspace_tasks`)).body.included ?? []).map((r: { id: string }) => r.id);
    const failOne = { "X-Fault-Fail-Index-Writes": "1" };
    const wt = await api("POST", `/workspaces/${ws.id}/tasks`, {
      headers: failOne,
      body: {
        data: { type: "workspace-tasks", attributes: { "enforcement-level": "advisory" }, relationships: { task: { data: { type: "tasks", id: task.id } } } },
      },
    });
    expect(wt.status).toBe(201);
    // The index lags until the alarm writes what the object committed.
    expect(await included()).toEqual([]);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await included()).toEqual([wt.body.data.id]);
    const changed = await api("PATCH", `/workspaces/${ws.id}/tasks/${wt.body.data.id}`, {
      headers: failOne,
      body: { data: { type: "workspace-tasks", attributes: { "enforcement-level": "mandatory" } } },
    });
    expect(changed.status).toBe(200);
    const level = async () => (await api("GET", `/tasks/${task.id}?include=workspace_tasks`)).body.included[0].attributes["enforcement-level"];
    expect(await level()).toBe("advisory");
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await level()).toBe("mandatory");
    expect((await api("DELETE", `/workspaces/${ws.id}/tasks/${wt.body.data.id}`, { headers: failOne })).status).toBe(204);
    expect(await included()).toEqual([wt.body.data.id]);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await included()).toEqual([]);
    // Attached again, then the workspace deleted: its rows leave the index with it.
    expect(
      (
        await api("POST", `/workspaces/${ws.id}/tasks`, {
          body: {
            data: {
              type: "workspace-tasks",
              attributes: { "enforcement-level": "advisory" },
              relationships: { task: { data: { type: "tasks", id: task.id } } },
            },
          },
        })
      ).status,
    ).toBe(201);
    expect(await included()).toHaveLength(1);
    expect((await api("DELETE", `/workspaces/${ws.id}`)).status).toBe(204);
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM workspace_run_tasks WHERE workspace_id = ?").bind(ws.id).first<number>("n");
    expect(rows).toBe(0);
  });

  it("refuses a task whose URL does not answer the verification with 200, a wrong category, and an unknown agent pool", async () => {
    receiver(() => new Response("no", { status: 500 }));
    const org = await createOrg();
    const res = await api("POST", `/organizations/${org}/tasks`, { body: taskBody() });
    expect(res.status).toBe(422);
    expect(res.body.errors[0].detail).toMatch(/answered 500/);
    expect((await api("GET", `/organizations/${org}/tasks`)).body.data).toEqual([]);
    expect((await api("POST", `/organizations/${org}/tasks`, { body: taskBody({ category: "other" }) })).status).toBe(422);
    const pool = await api("POST", `/organizations/${org}/tasks`, {
      body: { ...taskBody(), data: { ...taskBody().data, relationships: { "agent-pool": { data: { type: "agent-pools", id: "apool-nope" } } } } },
    });
    expect(pool.status).toBe(422);
    expect(pool.body.errors[0].detail).toBe("The provided agent pool does not exist");
  });

  it("refuses task URLs on loopback, private, link-local and metadata addresses", async () => {
    const org = await createOrg();
    for (const url of [...NON_PUBLIC_URLS, "http://localhost/api/v2"]) {
      const res = await api("POST", `/organizations/${org}/tasks`, { body: taskBody({ url }) });
      expect(res.status, url).toBe(422);
      expect(res.body.errors[0].source.pointer).toBe("/data/attributes/url");
    }
  });
});

describe("run tasks in runs", () => {
  it("holds a run at post-plan, sends the signed request, and stops it on a mandatory failure with the task's message", async () => {
    const got = receiver();
    const t = await attached("mandatory");
    got.splice(0);
    const r = await createRun(t.stub, await seedCv(t.stub));
    expect(r.taskStages).toHaveLength(1);
    const runDoc = await api("GET", `/runs/${r.id}?include=task_stages`);
    expect(runDoc.body.data.relationships["task-stages"].data).toEqual([{ id: r.taskStages![0].id, type: "task-stages" }]);
    expect(runDoc.body.included).toMatchObject([{ type: "task-stages", attributes: { stage: "post_plan", status: "pending" } }]);

    const planned = await plan(t.stub, r.id);
    expect(planned.status).toBe("post_plan_running");
    await runDurableObjectAlarm(t.stub);
    expect(got).toHaveLength(1);
    const payload = JSON.parse(got[0].body);
    expect(got[0].headers.get("x-tfc-task-signature")).toBe(await hmac(KEY, got[0].body));
    const { stage, results } = await stageOf(r.id);
    expect(payload).toMatchObject({
      payload_version: 1,
      stage: "post_plan",
      is_speculative: false,
      run_id: r.id,
      workspace_id: t.ws,
      organization_name: t.org,
      task_result_id: results[0].id,
      task_result_enforcement_level: "mandatory",
      task_result_callback_url: `http://localhost/api/v2/task-results/${results[0].id}/callback`,
      plan_json_api_url: `http://localhost/api/v2/plans/${r.plan.id}/json-output`,
      vcs_repo_url: null,
      vcs_branch: null,
    });
    expect(stage.attributes.status).toBe("running");
    expect(results[0].attributes).toMatchObject({ status: "running", "task-name": "scanner", "workspace-task-id": t.workspaceTask.id });

    // The access token is good for this result's callback only.
    expect((await callback(payload.task_result_callback_url, null, { status: "passed" })).status).toBe(401);
    expect((await callback(payload.task_result_callback_url, "nope.atlasv1.token", { status: "passed" })).status).toBe(401);
    expect((await callback(payload.task_result_callback_url, `${payload.access_token}x`, { status: "passed" })).status).toBe(401);
    const other = `http://localhost/api/v2/task-results/taskrs-${"A".repeat(16)}${t.ws.slice(3)}/callback`;
    expect((await callback(other, payload.access_token, { status: "passed" })).status).toBe(401);
    // It reads the run's JSON plan, and it is no API token.
    const planJson = await exports.default.fetch(new Request(payload.plan_json_api_url, { headers: { Authorization: `Bearer ${payload.access_token}` } }));
    expect([204, 307]).toContain(planJson.status);
    expect((await api("GET", `/runs/${r.id}`, { token: payload.access_token })).status).toBe(401);

    const running = await callback(payload.task_result_callback_url, payload.access_token, { status: "running", message: "scanning" });
    expect(running.status).toBe(200);
    expect((await readRun(t.stub, r.id)).status).toBe("post_plan_running");
    const failed = await callback(
      payload.task_result_callback_url,
      payload.access_token,
      { status: "failed", message: "2 critical findings", url: "https://scanner.example.com/r/1" },
      {
        outcomes: { data: [{ type: "task-result-outcomes", attributes: { "outcome-id": "X-1" } }] },
      },
    );
    expect(failed.status).toBe(200);
    const stopped = await readRun(t.stub, r.id);
    expect(stopped.status).toBe("errored");
    expect(stopped.apply.status).toBe("unreachable");
    const after = await stageOf(r.id);
    expect(after.stage.attributes.status).toBe("failed");
    expect(after.results[0].attributes).toMatchObject({ status: "failed", message: "2 critical findings", url: "https://scanner.example.com/r/1" });
    // A final result takes no more callbacks.
    expect((await callback(payload.task_result_callback_url, payload.access_token, { status: "passed" })).status).toBe(409);
    expect((await api("GET", `/task-results/${after.results[0].id}`)).body.data.attributes.status).toBe("failed");
  });

  it("lets an advisory failure through: the run goes on to planned", async () => {
    const got = receiver();
    const t = await attached("advisory");
    got.splice(0);
    const r = await createRun(t.stub, await seedCv(t.stub));
    await plan(t.stub, r.id);
    await runDurableObjectAlarm(t.stub);
    const payload = JSON.parse(got[0].body);
    expect((await callback(payload.task_result_callback_url, payload.access_token, { status: "failed", message: "advice" })).status).toBe(200);
    expect((await readRun(t.stub, r.id)).status).toBe("planned");
    expect((await stageOf(r.id)).stage.attributes.status).toBe("passed");
  });

  it("waits at pre-plan before the plan is queued, and at pre-apply before the apply", async () => {
    const got = receiver();
    const t = await attached("mandatory", ["pre_plan", "pre_apply"]);
    got.splice(0);
    const r = await createRun(t.stub, await seedCv(t.stub));
    expect(r.status).toBe("pre_plan_running");
    await runDurableObjectAlarm(t.stub);
    let payload = JSON.parse(got[0].body);
    expect(payload.stage).toBe("pre_plan");
    expect(payload.plan_json_api_url).toBeUndefined();
    await callback(payload.task_result_callback_url, payload.access_token, { status: "passed" });
    expect((await readRun(t.stub, r.id)).status).toBe("plan_queued");
    await plan(t.stub, r.id);
    expect((await action(t.stub, r.id, "apply")).ok).toBe(true);
    expect((await readRun(t.stub, r.id)).status).toBe("pre_apply_running");
    await runDurableObjectAlarm(t.stub);
    payload = JSON.parse(got[1].body);
    expect(payload.stage).toBe("pre_apply");
    await callback(payload.task_result_callback_url, payload.access_token, { status: "passed" });
    expect((await readRun(t.stub, r.id)).status).toBe("apply_queued");
    await finish(t.stub, await claim(t.stub, r.id, "apply"), "finished");
    expect((await readRun(t.stub, r.id)).status).toBe("applied");
  });

  it("errors the result of a task that never answers once its deadline passes, and stops the run", async () => {
    receiver();
    const t = await attached("mandatory");
    const r = await createRun(t.stub, await seedCv(t.stub));
    await plan(t.stub, r.id);
    await runDurableObjectAlarm(t.stub);
    // The wait is the object's alarm, due at the callback's deadline.
    const waiting = await runInDurableObject(t.stub, async (_o, state) => ({
      deadline: state.storage.sql.exec<{ deadline: number }>("SELECT deadline FROM task_results").one().deadline,
      alarm: await state.storage.getAlarm(),
    }));
    expect(waiting.deadline).toBeGreaterThan(Date.now());
    expect(waiting.alarm).toBe(waiting.deadline);
    await dueNow(t.stub, "deadline");
    expect((await readRun(t.stub, r.id)).status).toBe("errored");
    const { results } = await stageOf(r.id);
    expect(results[0].attributes.status).toBe("errored");
    expect(results[0].attributes.message).toMatch(/did not answer/);
  });

  it("retries a request the receiver answered 500, then errors the result", async () => {
    const got = receiver((_r, n) => (n === 1 ? new Response("ok") : new Response("down", { status: 500 })));
    const t = await attached("advisory");
    const r = await createRun(t.stub, await seedCv(t.stub));
    await plan(t.stub, r.id);
    await runDurableObjectAlarm(t.stub);
    expect(got).toHaveLength(2);
    const retry = await runInDurableObject(t.stub, async (_o, state) => ({
      ...state.storage.sql.exec<{ attempts: number; send_at: number }>("SELECT attempts, send_at FROM task_results").one(),
      alarm: await state.storage.getAlarm(),
    }));
    expect(retry.attempts).toBe(1);
    expect(retry.send_at).toBeGreaterThan(Date.now());
    expect(retry.alarm).toBe(retry.send_at);
    expect((await readRun(t.stub, r.id)).status).toBe("post_plan_running");
    await dueNow(t.stub, "send_at");
    await dueNow(t.stub, "send_at");
    expect(got).toHaveLength(4);
    const { results } = await stageOf(r.id);
    expect(results[0].attributes.status).toBe("errored");
    expect(results[0].attributes.message).toMatch(/answered 500/);
    // Advisory: the run goes on.
    expect((await readRun(t.stub, r.id)).status).toBe("planned");
  });

  it("follows no redirect of a task request to a metadata address", async () => {
    const got = receiver((_r, n) =>
      n === 1 ? new Response("ok") : new Response(null, { status: 307, headers: { location: "http://169.254.169.254/latest/meta-data" } }),
    );
    const t = await attached("advisory");
    const r = await createRun(t.stub, await seedCv(t.stub));
    await plan(t.stub, r.id);
    await runDurableObjectAlarm(t.stub);
    await dueNow(t.stub, "send_at");
    await dueNow(t.stub, "send_at");
    expect(got.every((x) => new URL(x.url).host === HOST)).toBe(true);
    const { results } = await stageOf(r.id);
    expect(results[0].attributes.status).toBe("errored");
    expect(results[0].attributes.message).toMatch(/link-local or metadata/);
    expect((await readRun(t.stub, r.id)).status).toBe("planned");
  });

  it("goes when its organisation is deleted", async () => {
    receiver();
    const t = await attached("advisory");
    expect((await api("DELETE", `/organizations/${t.org}`)).status).toBe(204);
    expect((await api("GET", `/tasks/${t.task.id}`)).status).toBe(404);
    const left = await env.DB.prepare("SELECT count(*) AS n FROM run_tasks WHERE id = ?").bind(t.task.id).first<{ n: number }>();
    expect(left?.n).toBe(0);
  });

  it("cancels the waiting stage with its run", async () => {
    receiver();
    const t = await attached("mandatory", ["pre_plan"]);
    const r = await createRun(t.stub, await seedCv(t.stub));
    expect((await action(t.stub, r.id, "cancel")).ok).toBe(true);
    expect((await readRun(t.stub, r.id)).status).toBe("canceled");
    const { stage, results } = await stageOf(r.id);
    expect(stage.attributes.status).toBe("canceled");
    expect(results[0].attributes.status).toBe("canceled");
  });
});
