// The run page's resource changes, read from a JSON plan's addresses and actions.
import { describe, expect, it } from "vitest";
import { resourceChanges } from "../../src/ui/runs/run-plan.view";

const bytes = (v: unknown) => new TextEncoder().encode(typeof v === "string" ? v : JSON.stringify(v));
const change = (address: string, actions: string[], extra: Record<string, unknown> = {}) => ({ address, change: { actions, ...extra } });

describe("resourceChanges", () => {
  it("names each changed resource's action; no-ops are left out unless imported", () => {
    const plan = {
      format_version: "1.2",
      resource_changes: [
        change("terraform_data.a", ["create"]),
        change("terraform_data.b", ["update"]),
        change("terraform_data.c", ["delete"]),
        change("terraform_data.d", ["delete", "create"]),
        change("terraform_data.e", ["create", "delete"]),
        change("terraform_data.f", ["no-op"]),
        change("terraform_data.g", ["no-op"], { importing: { id: "x" } }),
        change("data.http.h", ["read"]),
      ],
    };
    expect(resourceChanges(bytes(plan), 100)).toEqual({
      changes: [
        { address: "terraform_data.a", action: "create" },
        { address: "terraform_data.b", action: "update" },
        { address: "terraform_data.c", action: "delete" },
        { address: "terraform_data.d", action: "replace" },
        { address: "terraform_data.e", action: "replace" },
        { address: "terraform_data.g", action: "import" },
        { address: "data.http.h", action: "read" },
      ],
      truncated: false,
    });
  });

  it("keeps at most `max` changes and says so; a plan without changes has none", () => {
    const plan = { resource_changes: [change("a.x", ["create"]), change("a.y", ["create"]), change("a.z", ["create"])] };
    expect(resourceChanges(bytes(plan), 2)).toEqual({
      changes: [
        { address: "a.x", action: "create" },
        { address: "a.y", action: "create" },
      ],
      truncated: true,
    });
    expect(resourceChanges(bytes({ format_version: "1.2" }), 10)).toEqual({ changes: [], truncated: false });
  });

  it("is null for bytes that are not a JSON plan, and skips malformed entries", () => {
    expect(resourceChanges(bytes("not json"), 10)).toBeNull();
    expect(resourceChanges(bytes("[1]"), 10)).toEqual({ changes: [], truncated: false });
    expect(resourceChanges(bytes({ resource_changes: "x" }), 10)).toBeNull();
    expect(
      resourceChanges(bytes({ resource_changes: [null, 3, { address: 7 }, { address: "a.b", change: { actions: [1] } }, change("a.c", ["create"])] }), 10),
    ).toEqual({
      changes: [{ address: "a.c", action: "create" }],
      truncated: false,
    });
  });
});
