// Run actions through the workspace object: cancel (at once, or by signal then force-cancel), discard,
// force-execute, saved plans, comments; a refused action changes nothing.
import { describe, expect, it } from "vitest";
import { AGENT, USER, action, claim, createRun, expectFailure, finish, iso, plan, run, setup, value, workspace } from "./runs.helpers";

const bytes = (s: string) => new TextEncoder().encode(s);

describe("cancel", () => {
  it("a pending run ends canceled at once, with canceled-at and force-cancel-available-at; the queue is untouched", async () => {
    const { stub, cv } = await setup();
    const first = await createRun(stub, cv);
    const second = await createRun(stub, cv);
    const now = new Date().toISOString();
    const canceled = value(await action(stub, second.id, "cancel", { now })).run;
    expect(canceled).toMatchObject({ status: "canceled", canceledAt: now, forceCancelAvailableAt: iso(Date.parse(now) + 10_000) });
    expect(canceled.plan.status).toBe("unreachable");
    expect((await workspace(stub)).lock.holder).toEqual({ type: "runs", id: first.id });
    expect(value(await stub.listRunEvents(second.id)).map((e) => e.action)).toEqual(["queued", "canceled"]);
  });

  it("a queued plan is canceled at once and its job can no longer be claimed", async () => {
    const { stub, cv } = await setup();
    const r = await createRun(stub, cv);
    value(await action(stub, r.id, "cancel"));
    expect((await run(stub, r.id)).plan.status).toBe("canceled");
    expectFailure(await stub.claimJob({ runId: r.id, phase: "plan", agent: AGENT, now: new Date().toISOString() }), "job_unavailable");
    expect((await workspace(stub)).lock.locked).toBe(false);
  });

  it("a running phase gets the cancel signal; the agent's canceled finish ends the run and releases the lock", async () => {
    const { stub, cv } = await setup();
    const r = await createRun(stub, cv);
    const job = await claim(stub, r.id, "plan");
    value(await action(stub, r.id, "cancel"));
    expect(await run(stub, r.id)).toMatchObject({ status: "planning", signal: "cancel" });
    expect(value(await stub.heartbeat({ runId: r.id, phase: "plan", claimId: job.claimId, now: new Date().toISOString() }))).toEqual({ signal: "cancel" });
    expect(
      value(await stub.appendLog({ runId: r.id, phase: "plan", claimId: job.claimId, offset: 0, bytes: bytes("x"), now: new Date().toISOString() })).signal,
    ).toBe("cancel");
    expectFailure(await action(stub, r.id, "cancel"), "run_transition");
    const done = await finish(stub, job, "canceled");
    expect(done).toMatchObject({ status: "canceled", signal: null, plan: { status: "canceled" }, apply: { status: "unreachable" } });
    expect((await workspace(stub)).lock.locked).toBe(false);
  });

  it("force-cancel: refused before a cancel and during the cool-off; then the run ends canceled at once and the agent's claim is lost", async () => {
    const { stub, cv } = await setup();
    const r = await createRun(stub, cv);
    const next = await createRun(stub, cv);
    await plan(stub, r.id, true);
    value(await action(stub, r.id, "apply"));
    const job = await claim(stub, r.id, "apply");
    const t = Date.now();
    expectFailure(await action(stub, r.id, "force-cancel", { now: iso(t) }), "run_transition");
    value(await action(stub, r.id, "cancel", { now: iso(t) }));
    expectFailure(await action(stub, r.id, "force-cancel", { now: iso(t + 5_000) }), "run_transition");
    expect((await run(stub, r.id)).status).toBe("applying");
    const forced = value(await action(stub, r.id, "force-cancel", { now: iso(t + 10_000) })).run;
    expect(forced).toMatchObject({ status: "canceled", signal: "force-cancel", apply: { status: "canceled" } });
    expect(forced.statusTimestamps["force-canceled-at"]).toBe(iso(t + 10_000));
    expectFailure(await stub.heartbeat({ runId: r.id, phase: "apply", claimId: job.claimId, now: iso(t + 10_001) }), "job_lost");
    const log = value(await stub.readLog({ runId: r.id, phase: "apply", offset: 0, limit: 10_000 })).bytes;
    expect(log[log.length - 1]).toBe(0x03);
    const w = await workspace(stub);
    expect(w.lock.holder).toEqual({ type: "runs", id: next.id });
    expect((await run(stub, next.id)).status).toBe("plan_queued");
  });
});

describe("discard and apply", () => {
  it("refused actions are 409s and change nothing", async () => {
    const { stub, cv } = await setup();
    const r = await createRun(stub, cv);
    const before = await run(stub, r.id);
    expectFailure(await action(stub, r.id, "apply"), "run_transition", /plan_queued/);
    expectFailure(await action(stub, r.id, "discard"), "run_transition");
    expectFailure(await action(stub, "run-NoSuchRun00000001", "cancel"), "not_found");
    expect(await run(stub, r.id)).toEqual(before);
    expect(value(await stub.listRunEvents(r.id))).toHaveLength(1);
  });

  it("a discarded plan frees the queue; its apply is unreachable", async () => {
    const { stub, cv } = await setup();
    const r = await createRun(stub, cv);
    await plan(stub, r.id, true);
    const d = value(await action(stub, r.id, "discard", { comment: "not now" })).run;
    expect(d).toMatchObject({ status: "discarded", apply: { status: "unreachable" } });
    expect(d.commentIds).toHaveLength(1);
    expect((await workspace(stub)).lock.locked).toBe(false);
  });

  it("a confirmed saved plan takes the lock when it is free, and waits while another run holds it", async () => {
    const { stub, cv } = await setup();
    const saved = await createRun(stub, cv, { savePlan: true });
    const blocker = await createRun(stub, cv);
    expect((await plan(stub, saved.id, true)).status).toBe("planned_and_saved");
    const confirmed = value(await action(stub, saved.id, "apply")).run;
    expect(confirmed).toMatchObject({ status: "confirmed", positionInQueue: 1 });
    expect((await workspace(stub)).lock.holder).toEqual({ type: "runs", id: blocker.id });
    value(await action(stub, blocker.id, "cancel"));
    expect(await run(stub, saved.id)).toMatchObject({ status: "apply_queued", apply: { status: "queued" } });
    const w = await workspace(stub);
    expect(w.lock.holder).toEqual({ type: "runs", id: saved.id });
    expect(w.currentRun).toMatchObject({ id: saved.id, status: "apply_queued" });
  });

  it("an apply discards the saved plans made against the state it replaced; a saved plan of its own is untouched", async () => {
    const { stub, cv } = await setup();
    const saved = await createRun(stub, cv, { savePlan: true });
    expect((await plan(stub, saved.id, true)).status).toBe("planned_and_saved");
    const other = await createRun(stub, cv);
    expect((await plan(stub, other.id, true)).status).toBe("planned");
    // Until another run applies, the saved plan stays applicable.
    expect((await run(stub, saved.id)).status).toBe("planned_and_saved");
    value(await action(stub, other.id, "apply"));
    expect((await finish(stub, await claim(stub, other.id, "apply"), "finished")).status).toBe("applied");
    expect(await run(stub, saved.id)).toMatchObject({ status: "discarded", apply: { status: "unreachable" } });
    const events = value(await stub.listRunEvents(saved.id));
    expect(events.at(-1)).toMatchObject({ action: "discarded", description: expect.stringContaining(other.id) });
    expectFailure(await action(stub, saved.id, "apply"), "run_transition");
  });

  it("a comment is added with a commented event and read back by id", async () => {
    const { stub, cv } = await setup();
    const r = await createRun(stub, cv);
    const id = `wsc-${r.id.slice(4)}abcd`;
    const c = value(await stub.addComment({ runId: r.id, id, body: "hello", now: new Date().toISOString(), actor: USER }));
    expect(value(await stub.getComment(id))).toEqual(c);
    expect((await run(stub, r.id)).commentIds).toEqual([id]);
    const events = value(await stub.listRunEvents(r.id));
    expect(events.at(-1)).toMatchObject({ action: "commented", commentId: id, actor: USER, id: c.runEventId });
    expectFailure(await stub.addComment({ runId: "run-NoSuchRun00000001", id: "wsc-x", body: "x", now: new Date().toISOString(), actor: USER }), "not_found");
  });
});

describe("force-execute", () => {
  it("discards the discardable run holding the lock and every earlier pending run; the target starts", async () => {
    const { stub, cv } = await setup();
    const first = await createRun(stub, cv);
    const second = await createRun(stub, cv);
    const third = await createRun(stub, cv);
    // The blocker is not discardable while it is queued (409); a run not pending cannot be force-executed (403).
    expectFailure(await action(stub, third.id, "force-execute"), "run_transition");
    expectFailure(await action(stub, first.id, "force-execute"), "run_force_execute_forbidden");
    await plan(stub, first.id, true);
    value(await action(stub, third.id, "force-execute"));
    expect((await run(stub, first.id)).status).toBe("discarded");
    expect((await run(stub, second.id)).status).toBe("discarded");
    expect((await run(stub, third.id)).status).toBe("plan_queued");
    const w = await workspace(stub);
    expect(w.lock.holder).toEqual({ type: "runs", id: third.id });
    expect(w.currentRun?.id).toBe(third.id);
  });

  it("is forbidden when no other run holds the lock", async () => {
    const { stub, cv } = await setup();
    value(await stub.lock({ holder: USER, reason: "", now: new Date().toISOString() }));
    const r = await createRun(stub, cv);
    expectFailure(await action(stub, r.id, "force-execute"), "run_force_execute_forbidden");
    expect((await run(stub, r.id)).status).toBe("pending");
  });
});
