// A workspace record as the Durable Object keeps it, for the pure rules' tests (no storage, no HTTP).
import { initialRecord } from "../../src/workspaces/workspace.record";
import { defaultSettings } from "../../src/workspaces/workspace.rules";
import type { WorkspaceRecord } from "../../src/workspaces/workspace.types";

export const NOW = "2026-11-23T00:00:00.000Z";

/** A new workspace's record with the given fields replaced. */
export const record = (over: Partial<WorkspaceRecord> = {}): WorkspaceRecord => ({
  ...initialRecord({
    id: "ws-a",
    organizationId: "org-1",
    projectId: "prj-1",
    name: "a",
    settings: defaultSettings("1.14.0"),
    tags: [],
    tagBindings: [],
    now: NOW,
  }),
  ...over,
});
