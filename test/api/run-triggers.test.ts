// Run triggers through the API (create, list inbound and outbound, show, delete, the refusals), and what they do: a
// source's apply queues one run in each target from the source's alarm, tagged `tfe-run-trigger`, applying by
// itself only where the target's auto-apply-run-trigger is on; a repeated delivery queues nothing twice.
import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { createOrg, createWorkspace, grantWorkspace, makeTeam } from "../fixtures";
import { api } from "../helpers";
import { action, claim, createRun, finish, plan, seedCv, type Stub } from "../do/runs.helpers";

const body = (source: string) => ({ data: { type: "run-triggers", relationships: { sourceable: { data: { type: "workspaces", id: source } } } } });
const FILTER = "filter%5Brun-trigger%5D%5Btype%5D";

async function pair(org?: string) {
  const o = org ?? (await createOrg());
  const target = await createWorkspace(o);
  const source = await createWorkspace(o);
  return { org: o, target: target.id as string, source: source.id as string, targetName: target.attributes.name, sourceName: source.attributes.name };
}

/** A run of `stub` taken through plan and apply to `applied`. */
async function applyOnce(stub: Stub, cv: string): Promise<string> {
  const run = await createRun(stub, cv);
  await plan(stub, run.id);
  await action(stub, run.id, "apply");
  const job = await claim(stub, run.id, "apply");
  expect((await finish(stub, job, "finished", { resourceAdditions: 1 })).status).toBe("applied");
  return run.id;
}

async function runsOf(workspaceId: string) {
  return (await api("GET", `/workspaces/${workspaceId}/runs`)).body.data as Array<{ id: string; attributes: Record<string, unknown> }>;
}

describe("run triggers API", () => {
  it("creates, lists inbound and outbound, shows with includes and deletes", async () => {
    const p = await pair();
    const created = await api("POST", `/workspaces/${p.target}/run-triggers`, { body: body(p.source) });
    expect(created.status).toBe(201);
    const rt = created.body.data;
    expect(rt).toMatchObject({
      type: "run-triggers",
      attributes: { "workspace-name": p.targetName, "sourceable-name": p.sourceName },
      relationships: { workspace: { data: { id: p.target, type: "workspaces" } }, sourceable: { data: { id: p.source, type: "workspaces" } } },
    });

    const inbound = await api("GET", `/workspaces/${p.target}/run-triggers?${FILTER}=inbound&include=sourceable`);
    expect(inbound.status).toBe(200);
    expect(inbound.body.data).toEqual([rt]);
    expect(inbound.body.meta.pagination["total-count"]).toBe(1);
    expect(inbound.body.included.map((r: { id: string }) => r.id)).toEqual([p.source]);
    expect((await api("GET", `/workspaces/${p.source}/run-triggers?${FILTER}=outbound`)).body.data).toEqual([rt]);
    expect((await api("GET", `/workspaces/${p.source}/run-triggers?${FILTER}=inbound`)).body.data).toEqual([]);

    const shown = await api("GET", `/run-triggers/${rt.id}?include=sourceable,workspace`);
    expect(shown.status).toBe(200);
    expect(shown.body.data).toEqual(rt);
    expect(shown.body.included.map((r: { id: string }) => r.id).sort()).toEqual([p.source, p.target].sort());

    expect((await api("DELETE", `/run-triggers/${rt.id}`)).status).toBe(204);
    expect((await api("GET", `/run-triggers/${rt.id}`)).status).toBe(404);
    expect((await api("DELETE", `/run-triggers/${rt.id}`)).status).toBe(404);
  });

  it("needs the list's type filter: 400 naming the parameter", async () => {
    const p = await pair();
    for (const q of ["", `?${FILTER}=oubound`]) {
      const res = await api("GET", `/workspaces/${p.target}/run-triggers${q}`);
      expect(res.status).toBe(400);
      expect(res.body.errors[0].source).toEqual({ parameter: "filter[run-trigger][type]" });
    }
  });

  it("refuses the workspace itself, a second trigger of the same source, and a source of another organisation", async () => {
    const p = await pair();
    const self = await api("POST", `/workspaces/${p.target}/run-triggers`, { body: body(p.target) });
    expect(self.status).toBe(422);
    expect(self.body.errors[0].source.pointer).toBe("/data/relationships/sourceable/data/id");
    expect((await api("POST", `/workspaces/${p.target}/run-triggers`, { body: body(p.source) })).status).toBe(201);
    const again = await api("POST", `/workspaces/${p.target}/run-triggers`, { body: body(p.source) });
    expect(again.status).toBe(422);
    expect(again.body.errors[0].detail).toMatch(/already/);

    const elsewhere = await createWorkspace(await createOrg());
    const other = await api("POST", `/workspaces/${p.target}/run-triggers`, { body: body(elsewhere.id) });
    expect(other.status).toBe(422);
    expect(other.body.errors[0].detail).toMatch(/same organization/);
    expect((await api("POST", `/workspaces/${p.target}/run-triggers`, { body: body("ws-doesnotexist00001") })).status).toBe(404);
    const list = await api("GET", `/workspaces/${p.target}/run-triggers?${FILTER}=inbound`);
    expect(list.body.data).toHaveLength(1);
  });

  it("allows 20 sources per workspace and refuses the 21st", async () => {
    const org = await createOrg();
    const target = (await createWorkspace(org)).id;
    for (let i = 0; i < 20; i++) {
      const source = (await createWorkspace(org)).id;
      expect((await api("POST", `/workspaces/${target}/run-triggers`, { body: body(source) })).status).toBe(201);
    }
    const refused = await api("POST", `/workspaces/${target}/run-triggers`, { body: body((await createWorkspace(org)).id) });
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0].detail).toMatch(/at most 20/);
    expect((await api("GET", `/workspaces/${target}/run-triggers?${FILTER}=inbound&page%5Bsize%5D=100`)).body.data).toHaveLength(20);
  });

  it("needs admin on the workspace and read access to the source's runs", async () => {
    const p = await pair();
    const team = await makeTeam(p.org);
    await grantWorkspace(team.id, p.target, "admin");
    // No access to the source: it is not found.
    expect((await api("POST", `/workspaces/${p.target}/run-triggers`, { body: body(p.source), token: team.token })).status).toBe(404);
    await grantWorkspace(team.id, p.source, "read");
    expect((await api("POST", `/workspaces/${p.target}/run-triggers`, { body: body(p.source), token: team.token })).status).toBe(201);
    const writer = await makeTeam(p.org);
    await grantWorkspace(writer.id, p.target, "write");
    await grantWorkspace(writer.id, p.source, "admin");
    const other = await createWorkspace(p.org);
    expect((await api("POST", `/workspaces/${p.target}/run-triggers`, { body: body(other.id), token: writer.token })).status).toBe(404);
  });
});

describe("a source's apply", () => {
  it("queues one run in each target, with the run trigger's source and message; auto-applied only with auto-apply-run-trigger", async () => {
    const org = await createOrg();
    const source = (await createWorkspace(org)).id as string;
    const plain = (await createWorkspace(org, { "auto-apply": true })).id as string;
    const auto = (await createWorkspace(org, { "auto-apply-run-trigger": true })).id as string;
    const sourceStub = env.WORKSPACES.getByName(source);
    const cv = await seedCv(sourceStub);
    for (const target of [plain, auto]) {
      await seedCv(env.WORKSPACES.getByName(target));
      expect((await api("POST", `/workspaces/${target}/run-triggers`, { body: body(source) })).status).toBe(201);
    }
    const before = { plain: (await runsOf(plain)).length, auto: (await runsOf(auto)).length };
    expect(before).toEqual({ plain: 0, auto: 0 });

    const sourceRun = await applyOnce(sourceStub, cv);
    await runDurableObjectAlarm(sourceStub);
    for (const target of [plain, auto]) await vi.waitFor(async () => expect(await runsOf(target)).toHaveLength(1));
    const [p] = await runsOf(plain);
    const [a] = await runsOf(auto);
    for (const r of [p, a]) {
      expect(r.attributes.source).toBe("tfe-run-trigger");
      expect(r.attributes.message).toContain(sourceRun);
      expect(r.attributes.status).toBe("plan_queued");
    }
    expect(p.attributes["auto-apply"]).toBe(false);
    expect(a.attributes["auto-apply"]).toBe(true);

    // A repeated delivery (an answer lost on the way back) queues nothing more.
    const again = await env.WORKSPACES.getByName(auto).receiveRunTrigger({
      sourceRunId: sourceRun,
      sourceWorkspaceId: source,
      message: "again",
      now: new Date().toISOString(),
    });
    expect(again).toMatchObject({ ok: true, value: { runId: a.id } });
    expect(await runsOf(auto)).toHaveLength(1);

    // The source's own run is untouched, and the source has no targets left to tell.
    await runDurableObjectAlarm(sourceStub);
    expect(await runsOf(plain)).toHaveLength(1);
  });

  it("queues nothing in a workspace without a configuration version, and nothing for a plan that is not applied", async () => {
    const org = await createOrg();
    const source = (await createWorkspace(org)).id as string;
    const empty = (await createWorkspace(org)).id as string;
    const ready = (await createWorkspace(org)).id as string;
    await seedCv(env.WORKSPACES.getByName(ready));
    for (const t of [empty, ready]) await api("POST", `/workspaces/${t}/run-triggers`, { body: body(source) });
    const stub = env.WORKSPACES.getByName(source);
    const cv = await seedCv(stub);
    const discarded = await createRun(stub, cv);
    await plan(stub, discarded.id);
    await action(stub, discarded.id, "discard");
    await runDurableObjectAlarm(stub);
    expect(await runsOf(ready)).toHaveLength(0);

    await applyOnce(stub, cv);
    await runDurableObjectAlarm(stub);
    await vi.waitFor(async () => expect(await runsOf(ready)).toHaveLength(1));
    expect(await runsOf(empty)).toHaveLength(0);
  });
});
