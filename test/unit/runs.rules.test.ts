// The run state machine (src/runs/runs.rules.ts): every action from every status, the `actions` flags agreeing with
// what the actions accept, the plan's outcomes, the defaults of a new run and the metrics.
import { describe, expect, it } from "vitest";
import {
  DEFAULT_MESSAGE,
  cancel,
  confirm,
  discard,
  finishPlan,
  forceCancel,
  isFinal,
  metrics,
  newRun,
  queuePhase,
  runActions,
  type PlanOutcome,
} from "../../src/runs/runs.rules";
import type { RunRecord, RunStatus } from "../../src/runs/runs.types";

const T0 = "2026-01-01T00:00:00.000Z";
const later = (ms: number) => new Date(Date.parse(T0) + ms).toISOString();
const ALL: RunStatus[] = [
  "pending",
  "plan_queued",
  "planning",
  "planned",
  "planned_and_finished",
  "planned_and_saved",
  "confirmed",
  "apply_queued",
  "applying",
  "applied",
  "discarded",
  "errored",
  "canceled",
];

function fresh(options: Partial<RunRecord> = {}, speculative = false): RunRecord {
  const r = newRun(
    { id: "run-AAAAAAAAAAAAAAAA", now: T0, configurationVersionId: "cv-1", options, creator: { actor: { type: "users", id: "user-1" }, canApply: true } },
    { workspaceId: "ws-1", organizationId: "org-1", workspaceAutoApply: false, allowDestroyPlan: true, configurationVersion: { id: "cv-1", speculative } },
  );
  if ("ok" in r) throw new Error(r.code);
  return r;
}

const inStatus = (status: RunStatus, signal: RunRecord["signal"] = null): RunRecord => ({ ...fresh(), status, signal });
const succeeded = (x: unknown) => x === null || typeof x === "string";

describe("run actions from every status", () => {
  const legal = {
    confirm: ["planned", "planned_and_saved"],
    discard: ["pending", "planned", "planned_and_saved"],
    cancel: ["pending", "plan_queued", "planning", "confirmed", "apply_queued", "applying"],
  } as const;

  for (const status of ALL) {
    it(`${status}: apply, discard and cancel as the state machine allows, and the flags agree`, () => {
      const flags = runActions(inStatus(status), T0);
      const confirmed = confirm(inStatus(status), null, T0);
      const discarded = discard(inStatus(status), T0);
      const canceled = cancel(inStatus(status), T0);
      expect(succeeded(confirmed)).toBe((legal.confirm as readonly string[]).includes(status));
      expect(succeeded(discarded)).toBe((legal.discard as readonly string[]).includes(status));
      expect(succeeded(canceled)).toBe((legal.cancel as readonly string[]).includes(status));
      expect(flags["is-confirmable"]).toBe(succeeded(confirmed));
      expect(flags["is-discardable"]).toBe(succeeded(discarded));
      expect(flags["is-cancelable"]).toBe(succeeded(canceled));
      // A refusal is the 409 of the run actions.
      for (const r of [confirmed, discarded, canceled]) if (!succeeded(r)) expect(r).toMatchObject({ ok: false, code: "run_transition" });
      // Force-cancel needs a cancel first.
      expect(flags["is-force-cancelable"]).toBe(false);
      expect(forceCancel(inStatus(status), later(60_000))).toMatchObject({ ok: false, code: "run_transition" });
    });
  }

  it("final statuses are exactly applied, planned_and_finished, discarded, errored and canceled", () => {
    expect(ALL.filter(isFinal)).toEqual(["planned_and_finished", "applied", "discarded", "errored", "canceled"]);
  });

  it("cancel: at once when nothing executes (the phases close), else a signal; the cool-off then allows force-cancel", () => {
    const queued = inStatus("apply_queued");
    queued.plan.status = "finished";
    queued.apply.status = "queued";
    expect(cancel(queued, T0)).toBe("at-once");
    expect(queued).toMatchObject({ status: "canceled", canceledAt: T0, forceCancelAvailableAt: later(10_000), apply: { status: "canceled" } });
    expect(queued.plan.status).toBe("finished");

    const pending = fresh();
    expect(cancel(pending, T0)).toBe("at-once");
    expect(pending.plan.status).toBe("unreachable");

    const running = inStatus("applying");
    expect(cancel(running, T0)).toBe("signalled");
    expect(running).toMatchObject({ status: "applying", signal: "cancel", canceledAt: T0, forceCancelAvailableAt: later(10_000) });
    expect(runActions(running, T0)).toMatchObject({ "is-cancelable": false, "is-force-cancelable": false });
    expect(cancel(running, T0)).toMatchObject({ code: "run_transition" });
    expect(forceCancel(running, later(9_999))).toMatchObject({ code: "run_transition" });
    expect(runActions(running, later(10_000))["is-force-cancelable"]).toBe(true);
    expect(forceCancel(running, later(10_000))).toBe("apply");
    expect(running).toMatchObject({ status: "canceled", signal: "force-cancel", apply: { status: "canceled" } });
    expect(running.statusTimestamps["force-canceled-at"]).toBe(later(10_000));
  });

  it("discard closes the phases that never ran", () => {
    const r = fresh();
    expect(discard(r, T0)).toBeNull();
    expect(r).toMatchObject({ status: "discarded", plan: { status: "unreachable" }, apply: { status: "unreachable" } });
    expect(r.statusTimestamps["discarded-at"]).toBe(T0);
  });

  it("queues the plan of a pending run and the apply of a confirmed one, and nothing else", () => {
    const r = fresh();
    expect(queuePhase(r, T0)).toBe("plan");
    expect(r).toMatchObject({ status: "plan_queued", plan: { status: "queued" } });
    expect(r.plan.statusTimestamps["queued-at"]).toBe(T0);
    const c = inStatus("confirmed");
    expect(queuePhase(c, T0)).toBe("apply");
    expect(c).toMatchObject({ status: "apply_queued", apply: { status: "queued" } });
    for (const s of ALL.filter((x) => x !== "pending" && x !== "confirmed")) expect(queuePhase(inStatus(s), T0)).toMatchObject({ ok: false });
  });
});

describe("the plan's outcome", () => {
  const outcome = (o: Partial<PlanOutcome> = {}): PlanOutcome => ({
    status: "finished",
    hasChanges: true,
    counts: { additions: 1, changes: 0, destructions: 0, imports: 0 },
    autoApplies: false,
    ...o,
  });
  const planning = (options: Partial<RunRecord> = {}) => ({ ...fresh(options), status: "planning" as const });

  it.each([
    ["changes", {}, outcome(), "planned", false, "pending"],
    ["no changes", {}, outcome({ hasChanges: false }), "planned_and_finished", false, "unreachable"],
    ["no changes, allow-empty-apply", { allowEmptyApply: true }, outcome({ hasChanges: false }), "planned", false, "pending"],
    ["plan-only", { planOnly: true }, outcome(), "planned_and_finished", false, "unreachable"],
    ["save-plan", { savePlan: true }, outcome({ autoApplies: true }), "planned_and_saved", false, "pending"],
    ["auto-apply", {}, outcome({ autoApplies: true }), "confirmed", true, "pending"],
    ["errored", {}, outcome({ status: "errored" }), "errored", false, "unreachable"],
    ["canceled", {}, outcome({ status: "canceled" }), "canceled", false, "unreachable"],
  ] as const)("%s", (_name, options, o, status, queueApply, applyStatus) => {
    const r = planning(options as Partial<RunRecord>);
    expect(finishPlan(r, o, T0)).toEqual({ queueApply });
    expect(r.status).toBe(status);
    expect(r.apply.status).toBe(applyStatus);
    if (o.status === "finished")
      expect(r).toMatchObject({ hasChanges: o.hasChanges, plan: { status: "finished", hasChanges: o.hasChanges, resourceAdditions: 1 } });
  });

  it("a plan that finishes after a cancel was asked for ends canceled", () => {
    const r = { ...fresh(), status: "planning" as const, signal: "cancel" as const };
    finishPlan(r, outcome({ autoApplies: true }), T0);
    expect(r).toMatchObject({ status: "canceled", plan: { status: "canceled" }, apply: { status: "unreachable" }, signal: null });
  });
});

describe("a new run", () => {
  it("takes the defaults, the workspace's auto-apply and the configuration version's speculative", () => {
    const r = fresh();
    expect(r).toMatchObject({ message: DEFAULT_MESSAGE, refresh: true, autoApply: false, planOnly: false, source: "tfe-api", triggerReason: "manual" });
    expect(r.statusTimestamps).toEqual({ "plan-queueable-at": T0 });
    expect(fresh({}, true).planOnly).toBe(true);
    expect(fresh({ planOnly: false }, true).planOnly).toBe(true);
  });
});

describe("the workspace's metrics", () => {
  it("count the latest 30 runs that applied or errored, with their average phase durations", () => {
    const ended = (status: RunStatus, planMs: number, applyMs: number | null): RunRecord => {
      const r = { ...fresh(), status };
      r.plan.statusTimestamps = { "started-at": T0, "finished-at": later(planMs) };
      r.apply.statusTimestamps = applyMs === null ? {} : { "started-at": T0, "errored-at": later(applyMs) };
      return r;
    };
    const runs = [
      ended("applied", 1000, 3000),
      ended("planned_and_finished", 50_000, null),
      ended("errored", 3000, 1000),
      ...Array.from({ length: 30 }, () => ended("applied", 100_000, 100_000)),
    ];
    expect(metrics(runs)).toEqual({
      runsCount: 30,
      runFailures: 1,
      planDurationAverage: Math.round((4000 + 28 * 100_000) / 30),
      applyDurationAverage: Math.round((4000 + 28 * 100_000) / 30),
    });
    expect(metrics([])).toEqual({ runsCount: 0, runFailures: 0, planDurationAverage: null, applyDurationAverage: null });
  });
});
