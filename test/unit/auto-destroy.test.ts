// When a workspace's automatic destroy falls due (src/workspaces/auto-destroy.ts), and which workspaces' state a run
// may read (src/auth/access.ts): pure rules over a workspace record.
import { describe, expect, it } from "vitest";
import { sharesStateWith } from "../../src/auth/access";
import { activityDurationMs, autoDestroyDue } from "../../src/workspaces/auto-destroy";
import { defaultSettings } from "../../src/workspaces/workspace.rules";
import { NOW, record } from "./workspace-record";

const at = (ms: number) => new Date(Date.parse(NOW) + ms).toISOString();
const HOUR = 3_600_000;
const settings = (over: Record<string, unknown>) => ({ ...defaultSettings("1.14.0"), ...over });

describe("automatic destroy", () => {
  it("reads activity durations in hours and days", () => {
    expect(activityDurationMs("2h")).toBe(2 * HOUR);
    expect(activityDurationMs("14d")).toBe(14 * 24 * HOUR);
    expect(activityDurationMs(null)).toBeNull();
    expect(activityDurationMs("0d")).toBeNull();
  });

  it("is due at auto-destroy-at, or after the duration since the latest state change, the earlier of the two", () => {
    expect(autoDestroyDue(record())).toBeNull();
    expect(autoDestroyDue(record({ settings: settings({ "auto-destroy-at": at(HOUR) }) }))).toBe(Date.parse(NOW) + HOUR);
    const idle = record({ latestChangeAt: at(5 * HOUR), settings: settings({ "auto-destroy-activity-duration": "2h" }) });
    expect(autoDestroyDue(idle)).toBe(Date.parse(NOW) + 7 * HOUR);
    const both = record({ latestChangeAt: NOW, settings: settings({ "auto-destroy-at": at(3 * HOUR), "auto-destroy-activity-duration": "2h" }) });
    expect(autoDestroyDue(both)).toBe(Date.parse(NOW) + 2 * HOUR);
  });

  it("is not due again once acted on, but a new due time is", () => {
    const w = record({ settings: settings({ "auto-destroy-at": at(HOUR) }), autoDestroyDoneFor: at(HOUR) });
    expect(autoDestroyDue(w)).toBeNull();
    expect(autoDestroyDue({ ...w, settings: settings({ "auto-destroy-at": at(2 * HOUR) }) })).toBe(Date.parse(NOW) + 2 * HOUR);
  });
});

describe("remote state sharing", () => {
  it("global: every other workspace; project: those of its project (known); else the consumer list", () => {
    const global = record({ settings: settings({ "global-remote-state": true }) });
    expect(sharesStateWith(global, "ws-b", undefined)).toBe(true);
    expect(sharesStateWith(global, "ws-a", undefined)).toBe(false);
    const project = record({ settings: settings({ "project-remote-state": true }) });
    expect(sharesStateWith(project, "ws-b", "prj-1")).toBe(true);
    expect(sharesStateWith(project, "ws-b", "prj-2")).toBe(false);
    expect(sharesStateWith(project, "ws-b", undefined)).toBe(false);
    const listed = record({ remoteStateConsumers: ["ws-c"] });
    expect(sharesStateWith(listed, "ws-c", undefined)).toBe(true);
    expect(sharesStateWith(listed, "ws-b", "prj-1")).toBe(false);
  });
});
