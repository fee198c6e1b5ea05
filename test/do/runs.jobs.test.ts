// Jobs, leases and logs of the run engine, through the workspace object's RPC methods: claims racing, the plan and
// apply phases end to end, an agent that stops answering, log framing read at every offset, the D1 index rows.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Result } from "../../src/errors";
import { newId } from "../../src/ids";
import { queuedJobs, runIndexRow } from "../../src/runs/runs.d1";
import { organizationRunSlice } from "../../src/runs/runs.list.d1";
import { LOST_AGENT_LINE } from "../../src/runs/runs.object";
import { runActions } from "../../src/runs/runs.rules";
import { type CreateVersionInput, md5Hex } from "../../src/state-versions/state-versions.store";
import { createOrg, createWorkspace } from "../fixtures";
import { api } from "../helpers";
import { AGENT, USER, action, claim, createRun, expectFailure, finish, iso, plan, run, seedCv, setup, value, workspace } from "./runs.helpers";

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
const bytes = (s: string) => new TextEncoder().encode(s);
const framed = (...parts: Array<string | number>) => Uint8Array.from(parts.flatMap((p) => (typeof p === "number" ? [p] : [...bytes(p)])));

describe("claiming a job", () => {
  it("two agents racing for one job: exactly one wins; the phase starts and its log opens with STX", async () => {
    const { stub, cv } = await setup();
    const r = await createRun(stub, cv);
    const now = new Date().toISOString();
    const claims = await Promise.all([
      stub.claimJob({ runId: r.id, phase: "plan", agent: AGENT, now }),
      stub.claimJob({ runId: r.id, phase: "plan", agent: { ...AGENT, id: "agent-SecondAgent0001" }, now }),
    ]);
    expect(claims.filter((c) => c.ok)).toHaveLength(1);
    expectFailure(claims.find((c) => !c.ok)!, "job_unavailable");
    const job = value(claims.find((c) => c.ok)!);
    expect(job).toMatchObject({ runId: r.id, phase: "plan", run: { status: "planning" } });
    expect(Date.parse(job.leaseUntil) - Date.parse(now)).toBe(60_000);
    const after = await run(stub, r.id);
    expect(after.plan).toMatchObject({ status: "running", agent: job.run.plan.agent });
    expect(after.plan.statusTimestamps["started-at"]).toBe(now);
    expect(value(await stub.readLog({ runId: r.id, phase: "plan", offset: 0, limit: 100 })).bytes).toEqual(framed(2));
    // A phase that is not queued cannot be claimed; nor can a pool's job by an agent of another pool.
    expectFailure(await stub.claimJob({ runId: r.id, phase: "apply", agent: AGENT, now }), "job_unavailable");
    const other = await createRun(stub, cv, { planOnly: true });
    expectFailure(await stub.claimJob({ runId: other.id, phase: "plan", agent: { ...AGENT, poolId: "apool-Other000000001" }, now }), "job_unavailable");
  });

  it("an agent's calls about a job it lost (wrong claim, finished job) are refused with job_lost", async () => {
    const { stub, cv } = await setup();
    const r = await createRun(stub, cv);
    const job = await claim(stub, r.id, "plan");
    const now = new Date().toISOString();
    expectFailure(await stub.heartbeat({ runId: r.id, phase: "plan", claimId: "not-the-claim", now }), "job_lost");
    expect(value(await stub.heartbeat({ runId: r.id, phase: "plan", claimId: job.claimId, now }))).toEqual({ signal: null });
    await finish(stub, job, "finished", { hasChanges: true });
    expectFailure(await stub.heartbeat({ runId: r.id, phase: "plan", claimId: job.claimId, now }), "job_lost");
    expectFailure(await stub.appendLog({ runId: r.id, phase: "plan", claimId: job.claimId, offset: 0, bytes: bytes("x"), now }), "job_lost");
    expectFailure(await stub.finishJob({ runId: r.id, phase: "plan", claimId: job.claimId, now, status: "finished" }), "job_lost");
    expect((await run(stub, r.id)).status).toBe("planned");
  });
});

describe("a run from plan to apply", () => {
  it("plans, is confirmed with a comment, applies; the lock is released and the next run starts in the same commit", async () => {
    const { stub, cv } = await setup();
    const r = await createRun(stub, cv);
    const next = await createRun(stub, cv);
    const job = await claim(stub, r.id, "plan");
    value(await stub.putArtifact({ runId: r.id, claimId: job.claimId, kind: "plan-json", bytes: bytes('{"planned_values":{}}') }));
    const planned = await finish(stub, job, "finished", { hasChanges: true, resourceAdditions: 1 });
    // Status, has-changes, confirmable and the plan's status change together.
    expect(planned).toMatchObject({ status: "planned", hasChanges: true, plan: { status: "finished", hasChanges: true, resourceAdditions: 1 } });
    expect(runActions(planned, new Date().toISOString())).toMatchObject({ "is-confirmable": true, "is-discardable": true, "is-cancelable": false });
    expect(text(value(await stub.getArtifact({ runId: r.id, kind: "plan-json" })).bytes!)).toBe('{"planned_values":{}}');
    expectFailure(await stub.getArtifact({ runId: r.id, kind: "plan-binary" }), "not_found");

    const confirmed = value(await action(stub, r.id, "apply", { comment: "ship it" })).run;
    expect(confirmed).toMatchObject({ status: "apply_queued", confirmedBy: USER, apply: { status: "queued" } });
    expect(confirmed.statusTimestamps["confirmed-at"]).toBeDefined();
    expect(confirmed.commentIds).toHaveLength(1);
    const comment = value(await stub.getComment(confirmed.commentIds[0]!));
    expect(comment).toMatchObject({ runId: r.id, body: "ship it" });
    expect(comment.id).toMatch(new RegExp(`^wsc-${r.id.slice(4)}[0-9A-Za-z]{4}$`));
    const events = value(await stub.listRunEvents(r.id));
    expect(events.map((e) => e.action)).toEqual(["queued", "confirmed", "commented"]);
    expect(events[2]!.commentId).toBe(comment.id);
    expect(comment.runEventId).toBe(events[2]!.id);

    const applyJob = await claim(stub, r.id, "apply");
    const preamble = text(value(await stub.readLog({ runId: r.id, phase: "apply", offset: 0, limit: 1000 })).bytes);
    expect(preamble[0]).toBe("\x02");
    expect(preamble.slice(1)).toMatch(/^Terraform v.+\n\nInitializing plugins and modules\.\.\.\n$/);
    const applied = await finish(stub, applyJob, "finished", { resourceAdditions: 1 });
    expect(applied).toMatchObject({ status: "applied", apply: { status: "finished", resourceAdditions: 1 } });
    const w = await workspace(stub);
    expect(w.lock.holder).toEqual({ type: "runs", id: next.id });
    expect(w.currentRun).toMatchObject({ id: next.id, status: "plan_queued" });
    expect(w.runMetrics).toMatchObject({ runsCount: 1, runFailures: 0 });
    expect(w.runMetrics!.planDurationAverage).toBeGreaterThanOrEqual(0);
    expect((await run(stub, next.id)).status).toBe("plan_queued");
  });

  it("auto-apply queues the apply when the plan finishes, unless its creator may not apply", async () => {
    const { stub, cv } = await setup({ "auto-apply": true });
    const r = await createRun(stub, cv);
    const planned = await plan(stub, r.id, true);
    expect(planned).toMatchObject({ status: "apply_queued", confirmedBy: null, apply: { status: "queued" } });
    expect(planned.statusTimestamps["planned-at"]).toBeDefined();
    expect(planned.statusTimestamps["confirmed-at"]).toBeDefined();
    value(await action(stub, r.id, "cancel"));

    const other = await createRun(stub, cv, {}, { canApply: false });
    expect((await plan(stub, other.id, true)).status).toBe("planned");
  });

  it("a failed plan errors the run, the apply is unreachable, the lock is released and the metrics count it", async () => {
    const { stub, cv } = await setup();
    const r = await createRun(stub, cv);
    const job = await claim(stub, r.id, "plan");
    const errored = await finish(stub, job, "errored", { error: "init failed" });
    expect(errored).toMatchObject({ status: "errored", plan: { status: "errored" }, apply: { status: "unreachable" } });
    const log = text(value(await stub.readLog({ runId: r.id, phase: "plan", offset: 0, limit: 1000 })).bytes);
    expect(log).toBe("\x02\nError: init failed\n\x03");
    const w = await workspace(stub);
    expect(w.lock.locked).toBe(false);
    expect(w.currentRun).toMatchObject({ id: r.id, status: "errored" });
    expect(w.runMetrics).toMatchObject({ runsCount: 1, runFailures: 1, applyDurationAverage: null });
  });
});

describe("an agent that stops answering", () => {
  it("killed mid-apply: the alarm ends the run errored after the lease, releases the lock, and the state it uploaded stays current", async () => {
    const { stub, cv } = await setup();
    const r = await createRun(stub, cv);
    await plan(stub, r.id, true);
    value(await action(stub, r.id, "apply"));
    const job = await claim(stub, r.id, "apply");
    // The alarm waits for the lease.
    expect(await runInDurableObject(stub, (_i, state) => state.storage.getAlarm())).toBe(Date.parse(job.leaseUntil));
    const state = bytes(
      JSON.stringify({
        version: 4,
        terraform_version: "1.11.4",
        serial: 1,
        lineage: "l-1",
        outputs: {},
        resources: [
          {
            mode: "managed",
            type: "null_resource",
            name: "foo",
            provider: 'provider["registry.terraform.io/hashicorp/null"]',
            instances: [{ attributes: { id: "1" } }],
          },
        ],
      }),
    );
    const svId = newId("sv");
    // (Typed narrowly: the stub's own type of this method is too deep for the checker here.)
    const states = stub as unknown as { createStateVersion(input: CreateVersionInput): Promise<Result<unknown>> };
    const created = await states.createStateVersion({
      id: svId,
      holder: { type: "runs", id: r.id },
      serial: 1,
      md5: md5Hex(state),
      lineage: "l-1",
      intermediate: false,
      state,
      jsonState: null,
      now: new Date().toISOString(),
      createdBy: r.id,
    });
    value(created);
    // No heartbeat came: time passes beyond the lease (moved back rather than waited for).
    await runInDurableObject(stub, (_i, s) => s.storage.sql.exec("UPDATE run_jobs SET lease_until = ? WHERE run_id = ?", Date.now() - 1, r.id));
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const after = await run(stub, r.id);
    expect(after).toMatchObject({ status: "errored", apply: { status: "errored" } });
    const log = text(value(await stub.readLog({ runId: r.id, phase: "apply", offset: 0, limit: 10_000 })).bytes);
    expect(log.endsWith(`${LOST_AGENT_LINE}\x03`)).toBe(true);
    const w = await workspace(stub);
    expect(w.lock.locked).toBe(false);
    expect(w.currentStateVersionId).toBe(svId);
    expect(w.resourceCount).toBe(1);
    expect(w.currentRun).toMatchObject({ id: r.id, status: "errored" });
    expectFailure(await stub.finishJob({ runId: r.id, phase: "apply", claimId: job.claimId, now: new Date().toISOString(), status: "finished" }), "job_lost");
    // Nothing is left for the alarm.
    expect(await runInDurableObject(stub, (_i, s) => s.storage.getAlarm())).toBeNull();
  });

  it("a heartbeat renews the lease: the alarm leaves a live job alone", async () => {
    const { stub, cv } = await setup();
    const r = await createRun(stub, cv);
    const job = await claim(stub, r.id, "plan", iso(Date.now() - 50_000));
    const now = new Date().toISOString();
    value(await stub.heartbeat({ runId: r.id, phase: "plan", claimId: job.claimId, now }));
    const lease = await runInDurableObject(stub, (_i, s) => s.storage.sql.exec("SELECT lease_until FROM run_jobs WHERE run_id = ?", r.id).one().lease_until);
    expect(lease).toBe(Date.parse(now) + 60_000);
    await runDurableObjectAlarm(stub);
    expect((await run(stub, r.id)).status).toBe("planning");
    // The alarm is armed again for the renewed lease.
    expect(await runInDurableObject(stub, (_i, s) => s.storage.getAlarm())).toBe(lease);
  });
});

describe("logs", () => {
  it("appends are idempotent by the agent's offset; a gap is refused", async () => {
    const { stub, cv } = await setup();
    const r = await createRun(stub, cv);
    const job = await claim(stub, r.id, "plan");
    const append = (offset: number, s: string) =>
      stub.appendLog({ runId: r.id, phase: "plan", claimId: job.claimId, offset, bytes: bytes(s), now: new Date().toISOString() });
    expect(value(await append(0, "hello "))).toEqual({ size: 6, signal: null });
    expect(value(await append(0, "hello "))).toEqual({ size: 6, signal: null }); // a retry
    expect(value(await append(3, "lo world"))).toEqual({ size: 11, signal: null }); // partly stored: only the tail
    expectFailure(await append(20, "x"), "log_gap");
    expect(text(value(await stub.readLog({ runId: r.id, phase: "plan", offset: 0, limit: 100 })).bytes)).toBe("\x02hello world");
  });

  it("reads the framed stream at every offset and limit, across chunk boundaries; nothing before the claim", async () => {
    const { stub, cv } = await setup();
    const r = await createRun(stub, cv);
    expect(value(await stub.readLog({ runId: r.id, phase: "plan", offset: 0, limit: 100 })).bytes).toEqual(new Uint8Array());
    const job = await claim(stub, r.id, "plan");
    let size = 0;
    for (const chunk of ["ab", "c\n", "Plan: 1 to add, 0 to change, 0 to destroy.\n"]) {
      size = value(
        await stub.appendLog({ runId: r.id, phase: "plan", claimId: job.claimId, offset: size, bytes: bytes(chunk), now: new Date().toISOString() }),
      ).size;
    }
    await finish(stub, job, "finished", { hasChanges: true });
    const expected = framed(2, "abc\nPlan: 1 to add, 0 to change, 0 to destroy.\n", 3);
    for (let offset = 0; offset <= expected.length + 1; offset++) {
      for (const limit of [1, 2, 3, 5, 64]) {
        const got = value(await stub.readLog({ runId: r.id, phase: "plan", offset, limit })).bytes;
        expect([offset, limit, [...got]]).toEqual([offset, limit, [...expected.subarray(offset, offset + limit)]]);
      }
    }
    expect(value(await stub.readLog({ runId: r.id, phase: "apply", offset: 0, limit: 100 })).bytes).toEqual(new Uint8Array());
  });
});

describe("the D1 index", () => {
  it("the flush writes the run and job rows; agents find queued jobs of their pool; organisation lists read the docs", async () => {
    const { id, stub, cv } = await setup();
    const r = await createRun(stub, cv, { message: "indexed" });
    const w = await workspace(stub);
    expect(await runIndexRow(env.DB, r.id)).toEqual({ workspaceId: id, organizationId: w.organizationId, status: "plan_queued" });
    const queued = await queuedJobs(env.DB, null, 1000);
    expect(queued.find((j) => j.runId === r.id)).toMatchObject({ phase: "plan", workspaceId: id, organizationId: w.organizationId });
    expect((await queuedJobs(env.DB, "apool-NoSuchPool00001", 10)).find((j) => j.runId === r.id)).toBeUndefined();

    await claim(stub, r.id, "plan");
    expect((await runIndexRow(env.DB, r.id))?.status).toBe("planning");
    expect((await queuedJobs(env.DB, null, 1000)).find((j) => j.runId === r.id)).toBeUndefined();
    const job = await env.DB.prepare("SELECT status FROM run_jobs WHERE run_id = ? AND phase = 'plan'").bind(r.id).first<{ status: string }>();
    expect(job?.status).toBe("claimed");
    const listed = await organizationRunSlice(env.DB, {
      organizationId: w.organizationId,
      workspaceIds: null,
      statuses: null,
      since: null,
      until: null,
      oldestFirst: false,
      offset: 0,
      limit: 10,
    });
    expect(listed.map((x) => x.id)).toEqual([r.id]);
    expect(listed[0]).toMatchObject({ status: "planning", message: "indexed" });
    // Marks are cleared once D1 has them.
    expect(await runInDurableObject(stub, (_i, s) => s.storage.sql.exec("SELECT count(*) AS n FROM runs_unindexed").one().n)).toBe(0);
  });

  it("an organisation delete drops its runs and jobs from the index, and a later run change does not bring them back", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const stub = env.WORKSPACES.getByName(ws.id);
    const r = await createRun(stub, await seedCv(stub));
    expect(await runIndexRow(env.DB, r.id)).not.toBeNull();
    expect((await api("DELETE", `/organizations/${org}`)).status).toBe(204);
    expect(await runIndexRow(env.DB, r.id)).toBeNull();
    value(await action(stub, r.id, "cancel"));
    expect(await runIndexRow(env.DB, r.id)).toBeNull();
    expect(await env.DB.prepare("SELECT count(*) AS n FROM run_jobs WHERE run_id = ?").bind(r.id).first<{ n: number }>()).toEqual({ n: 0 });
  });

  it("a failed index write leaves the run marked; the alarm's retry writes it", async () => {
    const { stub, cv } = await setup();
    const r = await createRun(stub, cv);
    await runInDurableObject(stub, (instance) => {
      (instance as unknown as { outbox: { faultBudget: number } }).outbox.faultBudget = 1;
    });
    await claim(stub, r.id, "plan");
    expect((await runIndexRow(env.DB, r.id))?.status).toBe("plan_queued");
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect((await runIndexRow(env.DB, r.id))?.status).toBe("planning");
  });
});
