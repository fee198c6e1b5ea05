// The run queue of one workspace, through its object's RPC methods: creation defaults, one active run holding the
// lock, pending runs in creation order, user locks, plan-only runs beside the queue.
import { describe, expect, it } from "vitest";
import { DEFAULT_MESSAGE } from "../../src/runs/runs.rules";
import { env } from "cloudflare:workers";
import { newId } from "../../src/ids";
import { createOrg, createWorkspace } from "../fixtures";
import { USER, action, claim, createRun, expectFailure, finish, plan, run, seedCv, setup, value, workspace } from "./runs.helpers";

describe("creating a run", () => {
  it("has the defaults of a new run, an event, and starts at once in an idle workspace, holding its lock", async () => {
    const { id, stub, cv } = await setup({ "auto-apply": true });
    const r = await createRun(stub, cv);
    expect(r).toMatchObject({
      workspaceId: id,
      configurationVersionId: cv,
      status: "plan_queued",
      message: DEFAULT_MESSAGE,
      refresh: true,
      autoApply: true,
      planOnly: false,
      savePlan: false,
      isDestroy: false,
      source: "tfe-api",
      triggerReason: "manual",
      variables: [],
      targetAddrs: null,
      replaceAddrs: null,
      createdBy: USER,
      confirmedBy: null,
      signal: null,
      hasChanges: false,
    });
    expect(r.statusTimestamps["plan-queueable-at"]).toBe(r.createdAt);
    expect(r.statusTimestamps["plan-queued-at"]).toBeDefined();
    expect(r.plan).toMatchObject({ id: `plan-${r.id.slice(4)}`, status: "queued" });
    expect(r.apply).toMatchObject({ id: `apply-${r.id.slice(4)}`, status: "pending" });
    const events = value(await stub.listRunEvents(r.id));
    expect(events.map((e) => e.action)).toEqual(["queued"]);
    expect(events[0]!.id).toMatch(new RegExp(`^re-${r.id.slice(4)}[0-9A-Za-z]{4}$`));
    const w = await workspace(stub);
    expect(w.lock).toMatchObject({ locked: true, holder: { type: "runs", id: r.id } });
    expect(w.currentRun).toEqual({ id: r.id, status: "plan_queued", createdAt: r.createdAt });
  });

  it("echoes the options sent; an empty message takes the default", async () => {
    const { stub, cv } = await setup();
    const options = {
      refresh: false,
      isDestroy: true,
      targetAddrs: ["null_resource.a"],
      replaceAddrs: [],
      variables: [{ key: "greeting", value: "Hello, World!" }],
      terraformVersion: "1.9.0",
      autoApply: true,
    };
    const r = await createRun(stub, cv, { message: "", ...options });
    expect(r).toMatchObject({ message: DEFAULT_MESSAGE, ...options });
  });

  it("without a configuration version uses the workspace's latest; a speculative one makes the run plan-only", async () => {
    const { stub } = await setup();
    const spec = await seedCv(stub, { speculative: true });
    const r = await createRun(stub, null);
    expect(r.configurationVersionId).toBe(spec);
    expect(r.planOnly).toBe(true);
  });

  it("refuses an unknown configuration version (404), one not uploaded and bad combinations (422), changing nothing", async () => {
    const { stub, cv } = await setup();
    const pending = await seedCv(stub, { uploaded: false });
    const create = (cvId: string | null, options = {}) =>
      stub.createRun({
        id: `run-${"x".repeat(16)}`,
        now: new Date().toISOString(),
        configurationVersionId: cvId,
        options,
        creator: { actor: USER, canApply: true },
      });
    expectFailure(await create("cv-NoSuchVersion00001"), "cv_not_found");
    expectFailure(await create(pending), "cv_not_uploaded");
    expectFailure(await create(cv, { refreshOnly: true, isDestroy: true }), "invalid_attribute");
    expectFailure(await create(cv, { savePlan: true, planOnly: true }), "invalid_attribute");
    expect(value(await stub.listRuns({ offset: 0, limit: 10, includePlanOnly: true })).total).toBe(0);
    expect((await workspace(stub)).lock.locked).toBe(false);
  });
});

describe("configuration versions and runs", () => {
  it("an upload that asked for auto-queue-runs queues its creator's run in the same commit; it auto-applies", async () => {
    const { stub } = await setup({ "auto-apply": true });
    const cv = await seedCv(stub, { autoQueueRuns: true });
    const { items } = value(await stub.listRuns({ offset: 0, limit: 10, includePlanOnly: true }));
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ configurationVersionId: cv, status: "plan_queued", source: "tfe-configuration-version", createdBy: USER });
    expect((await plan(stub, items[0]!.id, true)).status).toBe("apply_queued");
  });

  it("an auto-queued run of a creator who may not apply waits for confirmation, as their own run would", async () => {
    const { stub } = await setup({ "auto-apply": true });
    await seedCv(stub, { autoQueueRuns: true, creator: { actor: USER, canApply: false } });
    const { items } = value(await stub.listRuns({ offset: 0, limit: 10, includePlanOnly: true }));
    expect((await plan(stub, items[0]!.id, true)).status).toBe("planned");
  });

  it("a workspace without any configuration version refuses a run without one (422)", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const stub = env.WORKSPACES.getByName(ws.id);
    expectFailure(
      await stub.createRun({
        id: newId("run"),
        now: new Date().toISOString(),
        configurationVersionId: null,
        options: {},
        creator: { actor: USER, canApply: true },
      }),
      "cv_none",
    );
  });

  it("a provisional configuration version becomes current when its run applies", async () => {
    const { stub, cv } = await setup();
    const provisional = await seedCv(stub, { provisional: true });
    expect((await workspace(stub)).currentConfigurationVersionId).toBe(cv);
    const r = await createRun(stub, provisional);
    await plan(stub, r.id, true);
    value(await action(stub, r.id, "apply"));
    const job = await claim(stub, r.id, "apply");
    await finish(stub, job, "finished");
    expect((await workspace(stub)).currentConfigurationVersionId).toBe(provisional);
  });
});

describe("the queue", () => {
  it("N concurrent creates: one active holding the lock, the rest pending in creation order; each final run starts the next", async () => {
    const { stub, cv } = await setup();
    const base = Date.now();
    const runs = await Promise.all(
      Array.from({ length: 5 }, (_, i) => createRun(stub, cv, { message: `run ${i}` }, { now: new Date(base + i).toISOString() })),
    );
    const ids = value(await stub.listRuns({ offset: 0, limit: 10, includePlanOnly: false }))
      .items.map((r) => r.id)
      .reverse(); // oldest first
    expect(new Set(ids)).toEqual(new Set(runs.map((r) => r.id)));
    const states = await Promise.all(ids.map((i) => run(stub, i)));
    expect(states.map((r) => r.status)).toEqual(["plan_queued", "pending", "pending", "pending", "pending"]);
    expect(states.map((r) => r.positionInQueue)).toEqual([0, 1, 2, 3, 4]);
    let w = await workspace(stub);
    expect(w.lock.holder).toEqual({ type: "runs", id: ids[0] });
    expect(w.currentRun?.id).toBe(ids[0]);

    // Each way a run can end frees the queue for the next, in the same commit.
    value(await action(stub, ids[0]!, "cancel"));
    expect((await run(stub, ids[1]!)).status).toBe("plan_queued");
    expect((await workspace(stub)).lock.holder).toEqual({ type: "runs", id: ids[1] });
    await plan(stub, ids[1]!, false); // no changes: planned_and_finished
    expect((await run(stub, ids[1]!)).status).toBe("planned_and_finished");
    expect((await run(stub, ids[2]!)).status).toBe("plan_queued");
    expect((await plan(stub, ids[2]!, true)).status).toBe("planned");
    expect((await run(stub, ids[3]!)).status).toBe("pending");
    value(await action(stub, ids[2]!, "discard"));
    expect((await run(stub, ids[3]!)).status).toBe("plan_queued");
    w = await workspace(stub);
    expect(w.lock.holder).toEqual({ type: "runs", id: ids[3] });
    expect(w.currentRun).toMatchObject({ id: ids[3], status: "plan_queued" });
    expect((await run(stub, ids[4]!)).positionInQueue).toBe(1);
  });

  it("a user's lock keeps runs pending (the head shown as the current run); the user's unlock starts it", async () => {
    const { stub, cv } = await setup();
    value(await stub.lock({ holder: USER, reason: "hold", now: new Date().toISOString() }));
    const first = await createRun(stub, cv);
    const second = await createRun(stub, cv);
    expect(first.status).toBe("pending");
    expect(second.status).toBe("pending");
    expect((await workspace(stub)).currentRun).toMatchObject({ id: first.id, status: "pending" });
    const unlocked = value(await stub.unlock({ holder: USER }));
    expect(unlocked.lock.holder).toEqual({ type: "runs", id: first.id });
    expect(unlocked.currentRun).toMatchObject({ id: first.id, status: "plan_queued" });
    expect((await run(stub, first.id)).status).toBe("plan_queued");
    expect((await run(stub, second.id)).status).toBe("pending");
  });

  it("a force-unlock starts the head too", async () => {
    const { stub, cv } = await setup();
    value(await stub.lock({ holder: USER, reason: "", now: new Date().toISOString() }));
    const r = await createRun(stub, cv);
    value(await stub.forceUnlock());
    expect((await run(stub, r.id)).status).toBe("plan_queued");
  });

  it("the lock a run holds: a user's unlock is a 409 naming the run, a user's lock a 409, a force-unlock a 409", async () => {
    const { stub, cv } = await setup();
    const r = await createRun(stub, cv);
    expectFailure(await stub.unlock({ holder: USER }), "conflict", new RegExp(`is locked by Run ${r.id}`));
    expectFailure(await stub.forceUnlock(), "conflict", new RegExp(`is locked by Run ${r.id}: cancel or discard the run`));
    expectFailure(await stub.lock({ holder: USER, reason: "", now: new Date().toISOString() }), "already_locked");
    expect((await workspace(stub)).lock.holder).toEqual({ type: "runs", id: r.id });
  });

  it("plan-only and save-plan runs plan at once beside the queue, without the lock, and are never the current run", async () => {
    const { stub, cv } = await setup();
    value(await stub.lock({ holder: USER, reason: "", now: new Date().toISOString() }));
    const spec = await seedCv(stub, { speculative: true });
    const p = await createRun(stub, spec);
    const s = await createRun(stub, cv, { savePlan: true });
    expect(p).toMatchObject({ status: "plan_queued", planOnly: true });
    expect(s).toMatchObject({ status: "plan_queued", savePlan: true });
    const w = await workspace(stub);
    expect(w.lock.holder).toEqual(USER);
    expect(w.currentRun).toBeNull();
    // The workspace list leaves plan-only runs out unless asked.
    expect(value(await stub.listRuns({ offset: 0, limit: 10, includePlanOnly: false })).items.map((r) => r.id)).toEqual([s.id]);
    expect(value(await stub.listRuns({ offset: 0, limit: 10, includePlanOnly: true })).total).toBe(2);
    expect((await plan(stub, p.id, true)).status).toBe("planned_and_finished");
    expect((await plan(stub, s.id, true)).status).toBe("planned_and_saved");
  });
});
