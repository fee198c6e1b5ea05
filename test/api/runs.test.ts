// Runs through the API: create, read, the lists, includes, the organisation's queue and capacity, and what the
// workspace shows of its runs. Agents are played through the workspace object's job methods.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createOrg, createWorkspace, grantWorkspace, makeOrgToken, makeTeam } from "../fixtures";
import { api } from "../helpers";
import { claim, finish, plan, seedCv, setup, type Stub } from "../do/runs.helpers";

const runBody = (workspaceId: string, attributes: Record<string, unknown> = {}, cv?: string | null) => ({
  data: {
    type: "runs",
    attributes,
    relationships: {
      workspace: { data: { type: "workspaces", id: workspaceId } },
      ...(cv === undefined ? {} : { "configuration-version": { data: cv === null ? null : { type: "configuration-versions", id: cv } } }),
    },
  },
});

async function createRun(workspaceId: string, attributes: Record<string, unknown> = {}, cv?: string | null, token?: string) {
  const res = await api("POST", "/runs", { body: runBody(workspaceId, attributes, cv), token });
  expect(res.status).toBe(201);
  return res.body.data;
}

const ISO_Z = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

describe("POST /runs", () => {
  it("creates a run with the sent options echoed and the defaults, and reads it back the same", async () => {
    const { id, cv } = await setup();
    const res = await api("POST", "/runs", {
      body: runBody(
        id,
        {
          message: "yo",
          refresh: false,
          "target-addrs": ["null_resource.example"],
          "replace-addrs": ["null_resource.example"],
          variables: [{ key: "test_variable", value: "Hello, World!" }],
          "allow-empty-apply": true,
        },
        cv,
      ),
    });
    expect(res.status).toBe(201);
    const run = res.body.data;
    expect(run.type).toBe("runs");
    expect(run.id).toMatch(/^run-[A-Za-z0-9]{16}$/);
    const a = run.attributes;
    expect(a).toMatchObject({
      message: "yo",
      refresh: false,
      "refresh-only": false,
      "is-destroy": false,
      "plan-only": false,
      "save-plan": false,
      "auto-apply": false,
      "allow-empty-apply": true,
      "target-addrs": ["null_resource.example"],
      "replace-addrs": ["null_resource.example"],
      variables: [{ key: "test_variable", value: "Hello, World!" }],
      source: "tfe-api",
      "trigger-reason": "manual",
      "has-changes": false,
      "canceled-at": null,
    });
    // The first run of an idle workspace takes the lock and waits for an agent.
    expect(a.status).toBe("plan_queued");
    expect(a["created-at"]).toMatch(ISO_Z);
    expect(a["status-timestamps"]["plan-queueable-at"]).toMatch(ISO_Z);
    expect(a.actions).toEqual({ "is-cancelable": true, "is-confirmable": false, "is-discardable": false, "is-force-cancelable": false });
    expect(a.permissions).toMatchObject({ "can-apply": true, "can-cancel": true, "can-comment": true, "can-force-cancel": true, "can-force-execute": true });
    const rel = run.relationships;
    expect(rel.workspace.data).toEqual({ id, type: "workspaces" });
    expect(rel["configuration-version"].data).toEqual({ id: cv, type: "configuration-versions" });
    expect(rel.plan.data).toEqual({ id: `plan-${run.id.slice(4)}`, type: "plans" });
    expect(rel.apply.data).toEqual({ id: `apply-${run.id.slice(4)}`, type: "applies" });
    expect(rel["created-by"].data.type).toBe("users");
    expect(rel["confirmed-by"].data).toBeNull();
    expect(rel["cost-estimate"].data).toBeNull();
    expect(rel["policy-checks"].data).toEqual([]);
    expect(rel["run-events"].data.length).toBeGreaterThan(0);

    const read = await api("GET", `/runs/${run.id}`);
    expect(read.status).toBe(200);
    expect(read.body.data).toEqual(run);
    // The workspace's lock is the run's.
    const ws = await api("GET", `/workspaces/${id}`);
    expect(ws.body.data.attributes.locked).toBe(true);
    expect(ws.body.data.relationships["locked-by"].data).toEqual({ id: run.id, type: "runs" });
  });

  it("uses the workspace's latest configuration version when none, or null, is named", async () => {
    const { id, stub } = await setup();
    const latest = await seedCv(stub);
    for (const cv of [undefined, null]) {
      const run = await createRun(id, {}, cv);
      expect(run.relationships["configuration-version"].data.id).toBe(latest);
      expect(run.attributes.refresh).toBe(true);
      expect(run.attributes.message).toBe("Queued manually via the Terraform Enterprise API");
    }
  });

  it("defaults auto-apply to the workspace's, and echoes terraform-version on plan-only runs only", async () => {
    const { id } = await setup({ "auto-apply": true });
    expect((await createRun(id)).attributes["auto-apply"]).toBe(true);
    expect((await createRun(id, { "auto-apply": false })).attributes["auto-apply"]).toBe(false);

    const refused = await api("POST", "/runs", { body: runBody(id, { "terraform-version": "1.0.0" }) });
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0].source).toEqual({ pointer: "/data/attributes/terraform-version" });
    const planOnly = await createRun(id, { "terraform-version": "1.0.0", "plan-only": true });
    expect(planOnly.attributes["plan-only"]).toBe(true);
    expect(planOnly.attributes["terraform-version"]).toBe("1.0.0");
  });

  it("refuses bad input with a pointer and creates nothing", async () => {
    const { id } = await setup();
    const bad = await api("POST", "/runs", { body: runBody(id, { variables: "nope" }) });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].source.pointer).toBe("/data/attributes/variables");
    const noWorkspace = await api("POST", "/runs", { body: { data: { type: "runs", attributes: {} } } });
    expect(noWorkspace.status).toBe(422);
    expect(noWorkspace.body.errors[0].source.pointer).toBe("/data/relationships");
    const list = await api("GET", `/workspaces/${id}/runs`);
    expect(list.body.data).toEqual([]);
  });

  it("answers 404 for a missing workspace, and refuses organisation tokens", async () => {
    const missing = await api("POST", "/runs", { body: runBody("ws-doesnotexist0000") });
    expect(missing.status).toBe(404);
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const stub = env.WORKSPACES.getByName(ws.id);
    await seedCv(stub);
    const orgToken = await makeOrgToken(org);
    const refused = await api("POST", "/runs", { body: runBody(ws.id), token: orgToken.token });
    expect(refused.status).toBe(404);
    expect((await api("GET", `/workspaces/${ws.id}/runs`)).body.data).toEqual([]);
  });

  it("lets a plan-level team queue runs but not destroy runs, and shows it what it may do", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    await seedCv(env.WORKSPACES.getByName(ws.id));
    const team = await makeTeam(org);
    await grantWorkspace(team.id, ws.id, "plan");
    const run = await createRun(ws.id, {}, undefined, team.token);
    expect(run.attributes.permissions).toEqual({
      "can-apply": false,
      "can-cancel": false,
      "can-comment": true,
      "can-discard": false,
      "can-force-execute": false,
      "can-force-cancel": false,
      "can-override-policy-check": false,
    });
    const destroy = await api("POST", "/runs", { body: runBody(ws.id, { "is-destroy": true }), token: team.token });
    expect(destroy.status).toBe(404);
    expect((await api("GET", `/workspaces/${ws.id}/runs`)).body.data.map((r: { id: string }) => r.id)).toEqual([run.id]);
  });
});

describe("GET /runs/:id with include", () => {
  it("includes the creator as a user with a username, the plan, the apply and the workspace; accepts what Terraform asks", async () => {
    const { id } = await setup();
    const run = await createRun(id);
    const res = await api("GET", `/runs/${run.id}?include=created_by,plan,apply,workspace,configuration_version`);
    expect(res.status).toBe(200);
    const byType = (t: string) => res.body.included.filter((r: { type: string }) => r.type === t);
    expect(byType("users")).toHaveLength(1);
    expect(byType("users")[0].attributes.username).toBeTruthy();
    expect(byType("plans")[0].id).toBe(run.relationships.plan.data.id);
    expect(byType("applies")[0].id).toBe(run.relationships.apply.data.id);
    expect(byType("workspaces")[0].attributes.name).toBeTruthy();
    expect(byType("configuration-versions")[0].id).toBe(run.relationships["configuration-version"].data.id);
    for (const include of ["task_stages", "tf_policy_evaluations", "cost_estimate", "configuration_version.ingress_attributes"]) {
      expect((await api("GET", `/runs/${run.id}?include=${include}`)).status).toBe(200);
    }
  });

  it("answers 404 for an unknown run and for a caller without access", async () => {
    const { id } = await setup();
    const run = await createRun(id);
    expect((await api("GET", "/runs/run-doesnotexist0000")).status).toBe(404);
    const other = await makeTeam(await createOrg());
    expect((await api("GET", `/runs/${run.id}`, { token: other.token })).status).toBe(404);
  });
});

describe("GET /workspaces/:id/runs", () => {
  it("lists newest first, leaves plan-only runs out unless filter[operation] names them, and echoes an out-of-range page", async () => {
    const { id } = await setup();
    const first = await createRun(id);
    const second = await createRun(id);
    const planOnly = await createRun(id, { "plan-only": true });
    const res = await api("GET", `/workspaces/${id}/runs`);
    expect(res.status).toBe(200);
    expect(res.body.data.map((r: { id: string }) => r.id)).toEqual([second.id, first.id]);
    expect(res.body.meta.pagination).toMatchObject({ "current-page": 1, "total-count": 2 });

    const planOnlyList = await api("GET", `/workspaces/${id}/runs?filter%5Boperation%5D=plan_only`);
    expect(planOnlyList.body.data.map((r: { id: string }) => r.id)).toEqual([planOnly.id]);
    expect((await api("GET", `/workspaces/${id}/runs?filter%5Boperation%5D=save_plan`)).body.data).toEqual([]);

    const pending = await api("GET", `/workspaces/${id}/runs?filter%5Bstatus%5D=pending`);
    expect(pending.body.data.map((r: { id: string }) => r.id)).toEqual([second.id]);
    const bySource = await api("GET", `/workspaces/${id}/runs?filter%5Bsource%5D=tfe-api`);
    expect(bySource.body.data).toHaveLength(2);
    const nonFinal = await api("GET", `/workspaces/${id}/runs?filter%5Bstatus_group%5D=final`);
    expect(nonFinal.body.data).toEqual([]);
    const noUser = await api("GET", `/workspaces/${id}/runs?search%5Buser%5D=nobody&search%5Bcommit%5D=abc`);
    expect(noUser.body.data).toEqual([]);
    const basic = await api("GET", `/workspaces/${id}/runs?search%5Bbasic%5D=${first.id}`);
    expect(basic.body.data.map((r: { id: string }) => r.id)).toEqual([first.id]);

    const far = await api("GET", `/workspaces/${id}/runs?page%5Bnumber%5D=999&page%5Bsize%5D=100`);
    expect(far.body.data).toEqual([]);
    expect(far.body.meta.pagination).toMatchObject({ "current-page": 999, "total-count": 2 });

    const withWorkspace = await api("GET", `/workspaces/${id}/runs?include=workspace`);
    expect(withWorkspace.body.included.map((r: { id: string }) => r.id)).toEqual([id]);
  });

  it("refuses an unknown status group or timeframe with the parameter named", async () => {
    const { id } = await setup();
    const res = await api("GET", `/workspaces/${id}/runs?filter%5Bstatus_group%5D=sideways`);
    expect(res.status).toBe(400);
    expect(res.body.errors[0].source).toEqual({ parameter: "filter[status_group]" });
    expect((await api("GET", `/workspaces/${id}/runs?filter%5Btimeframe%5D=soon`)).status).toBe(400);
  });
});

describe("the organisation's runs, queue and capacity", () => {
  async function twoRuns() {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const stub = env.WORKSPACES.getByName(ws.id);
    await seedCv(stub);
    const first = await createRun(ws.id);
    const second = await createRun(ws.id);
    return { org, ws, stub, first, second };
  }

  it("lists the organisation's runs newest first, without totals, filtered by workspace name", async () => {
    const { org, ws, first, second } = await twoRuns();
    const other = await createWorkspace(org);
    await seedCv(env.WORKSPACES.getByName(other.id));
    const third = await createRun(other.id);
    const res = await api("GET", `/organizations/${org}/runs`);
    expect(res.status).toBe(200);
    expect(res.body.data.map((r: { id: string }) => r.id)).toEqual([third.id, second.id, first.id]);
    expect(res.body.meta.pagination).toEqual({ "current-page": 1, "page-size": 20, "prev-page": null, "next-page": null });

    const named = await api("GET", `/organizations/${org}/runs?filter%5Bworkspace_names%5D=${ws.attributes.name}&include=workspace`);
    expect(named.body.data.map((r: { id: string }) => r.id)).toEqual([second.id, first.id]);
    expect(named.body.included[0].attributes.name).toBe(ws.attributes.name);

    const paged = await api("GET", `/organizations/${org}/runs?page%5Bsize%5D=2`);
    expect(paged.body.data).toHaveLength(2);
    expect(paged.body.meta.pagination["next-page"]).toBe(2);
    const far = await api("GET", `/organizations/${org}/runs?page%5Bnumber%5D=999&page%5Bsize%5D=100`);
    expect(far.body.data).toEqual([]);
    expect(far.body.meta.pagination).toMatchObject({ "current-page": 999, "next-page": null });
  });

  it("shows a member only the runs of workspaces it may read", async () => {
    const { org, ws, first, second } = await twoRuns();
    const hidden = await createWorkspace(org);
    await seedCv(env.WORKSPACES.getByName(hidden.id));
    await createRun(hidden.id);
    const team = await makeTeam(org);
    await grantWorkspace(team.id, ws.id, "read");
    const res = await api("GET", `/organizations/${org}/runs`, { token: team.token });
    expect(res.status).toBe(200);
    expect(res.body.data.map((r: { id: string }) => r.id)).toEqual([second.id, first.id]);
    expect(res.body.data[0].attributes.permissions["can-apply"]).toBe(false);
  });

  it("filters by the agent pool of the runs' workspace", async () => {
    const org = await createOrg();
    const pool = await api("POST", `/organizations/${org}/agent-pools`, { body: { data: { type: "agent-pools", attributes: { name: "pool-a" } } } });
    const ws = await createWorkspace(org, { "execution-mode": "agent", "agent-pool-id": pool.body.data.id });
    await seedCv(env.WORKSPACES.getByName(ws.id));
    const run = await createRun(ws.id);
    const plain = await createWorkspace(org);
    await seedCv(env.WORKSPACES.getByName(plain.id));
    await createRun(plain.id);
    const res = await api("GET", `/organizations/${org}/runs?filter%5Bagent_pool_names%5D=pool-a`);
    expect(res.body.data.map((r: { id: string }) => r.id)).toEqual([run.id]);
    expect((await api("GET", `/workspaces/${ws.id}/runs?filter%5Bagent_pool_names%5D=pool-a`)).body.data.map((r: { id: string }) => r.id)).toEqual([run.id]);
    expect((await api("GET", `/workspaces/${ws.id}/runs?filter%5Bagent_pool_names%5D=other`)).body.data).toEqual([]);
  });

  it("queues runs waiting for an agent, and counts them in the capacity", async () => {
    const { org, stub, first } = await twoRuns();
    const queue = await api("GET", `/organizations/${org}/runs/queue`);
    expect(queue.status).toBe(200);
    expect(queue.body.data.map((r: { id: string; attributes: Record<string, unknown> }) => [r.id, r.attributes["position-in-queue"]])).toEqual([[first.id, 1]]);
    let capacity = await api("GET", `/organizations/${org}/capacity`);
    expect(capacity.status).toBe(200);
    expect(capacity.body.data).toMatchObject({ type: "organization-capacity", attributes: { pending: 1, running: 0 } });

    await claim(stub as Stub, first.id, "plan");
    capacity = await api("GET", `/organizations/${org}/capacity`);
    expect(capacity.body.data.attributes).toEqual({ pending: 0, running: 1 });
  });
});

describe("what the workspace shows of its runs", () => {
  it("includes its current run, with its plan, as run documents", async () => {
    const { id } = await setup();
    const run = await createRun(id, { message: "shown" });
    const res = await api("GET", `/workspaces/${id}?include=current_run,current_run.plan,current_run.configuration_version`);
    expect(res.status).toBe(200);
    expect(res.body.data.relationships["current-run"].data).toEqual({ id: run.id, type: "runs" });
    const included = res.body.included as Array<{ id: string; type: string; attributes: Record<string, unknown> }>;
    const shown = included.find((r) => r.type === "runs")!;
    expect(shown.id).toBe(run.id);
    expect(shown.attributes.message).toBe("shown");
    expect(shown.attributes["created-at"]).toBe(run.attributes["created-at"]);
    expect(included.find((r) => r.type === "plans")!.id).toBe(run.relationships.plan.data.id);
    expect(included.find((r) => r.type === "configuration-versions")!.id).toBe(run.relationships["configuration-version"].data.id);
  });

  it("counts an applied run in its metrics", async () => {
    const { id, stub } = await setup();
    const run = await createRun(id);
    let ws = await api("GET", `/workspaces/${id}`);
    expect(ws.body.data.attributes["workspace-kpis-runs-count"]).toBeNull();
    await plan(stub, run.id);
    expect((await api("POST", `/runs/${run.id}/actions/apply`)).status).toBe(202);
    const job = await claim(stub, run.id, "apply");
    await finish(stub, job, "finished", { resourceAdditions: 1 });
    ws = await api("GET", `/workspaces/${id}`);
    expect(ws.body.data.attributes["workspace-kpis-runs-count"]).toBe(1);
    expect(ws.body.data.attributes["run-failures"]).toBe(0);
    expect(typeof ws.body.data.attributes["apply-duration-average"]).toBe("number");
    expect((await api("GET", `/runs/${run.id}`)).body.data.attributes.status).toBe("applied");
  });
});

describe("round trips of a run read", () => {
  // Terraform polls a run every second or two while it plans and applies: only the first poll looks the run's
  // workspace up in the index, on the nearest instance; later ones go straight to the access batch and the object.
  it("looks the run's workspace up nearby once; then the access batch and the object's reads are one step", async () => {
    const { id, cv } = await setup();
    const run = await createRun(id, {}, cv);
    const trace = async () => (await api("GET", `/runs/${run.id}`)).headers.get("X-Hop-Trace");
    const traces = [await trace(), await trace(), (await api("GET", `/plans/${run.relationships.plan.data.id}`)).headers.get("X-Hop-Trace")];
    expect(traces).toEqual(["d1r, d1r | do | do", "d1r | do | do", "d1r | do"]);
  });
});
