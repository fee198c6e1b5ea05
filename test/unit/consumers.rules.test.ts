// The remote-state consumer rules the Durable Object applies (src/workspaces/consumers.rules.ts).
import { describe, expect, it } from "vitest";
import { changeConsumers } from "../../src/workspaces/consumers.rules";
import { defaultSettings } from "../../src/workspaces/workspace.rules";
import type { WorkspaceRecord } from "../../src/workspaces/workspace.types";
import { record } from "./workspace-record";

describe("consumer rules", () => {
  it("adds without duplicates, removes, replaces, and never lists the workspace itself", () => {
    const added = changeConsumers(record(), { op: "add", ids: ["ws-b", "ws-c", "ws-b"] }) as WorkspaceRecord;
    expect(added.remoteStateConsumers).toEqual(["ws-b", "ws-c"]);
    expect((changeConsumers(structuredClone(added), { op: "remove", ids: ["ws-b"] }) as WorkspaceRecord).remoteStateConsumers).toEqual(["ws-c"]);
    expect((changeConsumers(structuredClone(added), { op: "replace", ids: ["ws-d"] }) as WorkspaceRecord).remoteStateConsumers).toEqual(["ws-d"]);
    expect(changeConsumers(record(), { op: "add", ids: ["ws-b", "ws-a"] })).toMatchObject({ ok: false, pointer: "/data/1/id" });
  });

  it("refuses any change while global or project remote state sharing is on", () => {
    const global = record({ settings: { ...defaultSettings("1.14.0"), "global-remote-state": true } });
    expect(changeConsumers(global, { op: "add", ids: ["ws-b"] })).toMatchObject({ ok: false, code: "invalid_attribute" });
  });
});
