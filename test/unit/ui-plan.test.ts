// The run page's structured plan, read from a JSON plan: actions, attribute diffs, sensitive and unknown values, outputs.
import { describe, expect, it } from "vitest";
import { planView } from "../../src/ui/runs/run-plan.view";

const bytes = (v: unknown) => new TextEncoder().encode(typeof v === "string" ? v : JSON.stringify(v));
const change = (address: string, actions: string[], extra: Record<string, unknown> = {}) => ({ address, change: { actions, ...extra } });

describe("planView", () => {
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
    const view = planView(bytes(plan), 1, 100)!;
    expect(view.changes.map((c) => [c.address, c.action])).toEqual([
      ["terraform_data.a", "create"],
      ["terraform_data.b", "update"],
      ["terraform_data.c", "delete"],
      ["terraform_data.d", "replace"],
      ["terraform_data.e", "replace"],
      ["terraform_data.g", "import"],
      ["data.http.h", "read"],
    ]);
    expect(view.total).toBe(7);
  });

  it("diffs attributes: an update shows what changes, nested values by path, unknown and sensitive in words", () => {
    const plan = {
      resource_changes: [
        change("aws_instance.web", ["update"], {
          before: { ami: "ami-1", tags: { Name: "web", Team: "a" }, password: "old-secret", ports: [80, 443], id: "i-1" },
          after: { ami: "ami-2", tags: { Name: "web", Team: "b" }, password: "new-secret", ports: [80, 8443] },
          after_unknown: { id: true },
          before_sensitive: { password: true },
          after_sensitive: { password: true },
        }),
        change("aws_db.main", ["create"], {
          before: null,
          after: { engine: "postgres", secret: { key: "k" } },
          after_unknown: { arn: true },
          after_sensitive: { secret: true },
        }),
        change("aws_bucket.old", ["delete"], { before: { name: "b" }, after: null }),
      ],
    };
    const [web, db, old] = planView(bytes(plan), 1, 10)!.changes;
    expect(web!.attributes).toEqual([
      { path: "ami", before: '"ami-1"', after: '"ami-2"' },
      { path: "id", before: '"i-1"', after: "(known after apply)" },
      { path: "password", before: "(sensitive value)", after: "(sensitive value)" },
      { path: "ports[1]", before: "443", after: "8443" },
      { path: "tags.Team", before: '"a"', after: '"b"' },
    ]);
    expect(db!.attributes).toEqual([
      { path: "arn", before: null, after: "(known after apply)" },
      { path: "engine", before: null, after: '"postgres"' },
      { path: "secret", before: null, after: "(sensitive value)" },
    ]);
    expect(old!.attributes).toEqual([{ path: "name", before: '"b"', after: null }]);
    expect(JSON.stringify(planView(bytes(plan), 1, 10))).not.toMatch(/old-secret|new-secret|\\"k\\"/);
  });

  it("marks the attributes that force a replacement; a null attribute created or destroyed is no change", () => {
    const plan = {
      resource_changes: [
        change("aws_instance.web", ["delete", "create"], {
          before: { ami: "ami-1", id: "i-1", network: [{ subnet: "a", ip: "10.0.0.1" }], name: "web", note: null },
          after: { ami: "ami-2", id: null, network: [{ subnet: "b", ip: "10.0.0.1" }], name: "web2", note: null },
          after_unknown: { id: true },
          replace_paths: [["ami"], ["network", 0, "subnet"]],
        }),
        change("terraform_data.new", ["create"], { before: null, after: { input: "x", triggers_replace: null } }),
        change("terraform_data.old", ["delete"], { before: { input: "y", triggers_replace: null }, after: null }),
      ],
    };
    const [web, created, deleted] = planView(bytes(plan), 1, 10)!.changes;
    expect(web!.attributes).toEqual([
      { path: "ami", before: '"ami-1"', after: '"ami-2"', forcesReplacement: true },
      { path: "id", before: '"i-1"', after: "(known after apply)" },
      { path: "name", before: '"web"', after: '"web2"' },
      { path: "network[0].subnet", before: '"a"', after: '"b"', forcesReplacement: true },
    ]);
    expect(created!.attributes).toEqual([{ path: "input", before: null, after: '"x"' }]);
    expect(deleted!.attributes).toEqual([{ path: "input", before: '"y"', after: null }]);
  });

  it("pages the resources and counts them all; output changes with their sensitivity", () => {
    const plan = {
      resource_changes: Array.from({ length: 5 }, (_, i) => change(`a.r${i}`, ["create"], { after: { n: i } })),
      output_changes: {
        url: { actions: ["update"], before: "http://a", after: "http://b" },
        token: { actions: ["create"], before: null, after: "tok", after_sensitive: true },
        id: { actions: ["create"], before: null, after: null, after_unknown: true },
        same: { actions: ["no-op"], before: 1, after: 1 },
      },
    };
    const page2 = planView(bytes(plan), 2, 2)!;
    expect(page2.total).toBe(5);
    expect(page2.changes.map((c) => c.address)).toEqual(["a.r2", "a.r3"]);
    expect(page2.outputs).toEqual([
      { name: "id", action: "create", before: null, after: "(known after apply)" },
      { name: "token", action: "create", before: null, after: "(sensitive value)" },
      { name: "url", action: "update", before: '"http://a"', after: '"http://b"' },
    ]);
  });

  it("a page past the end shows the last page, and one before the start the first, never an empty list", () => {
    const plan = { resource_changes: Array.from({ length: 5 }, (_, i) => change(`a.r${i}`, ["create"], { after: { n: i } })) };
    const past = planView(bytes(plan), 9, 2)!;
    expect([past.page, past.changes.map((c) => c.address)]).toEqual([3, ["a.r4"]]);
    const before = planView(bytes(plan), 0, 2)!;
    expect([before.page, before.changes.map((c) => c.address)]).toEqual([1, ["a.r0", "a.r1"]]);
    const none = planView(bytes({ resource_changes: [] }), 4, 2)!;
    expect([none.page, none.total, none.changes]).toEqual([1, 0, []]);
  });

  it("is null for bytes that are not a JSON plan, and skips malformed entries", () => {
    expect(planView(bytes("not json"), 1, 10)).toBeNull();
    expect(planView(bytes({ resource_changes: "x" }), 1, 10)).toBeNull();
    const view = planView(
      bytes({ resource_changes: [null, 3, { address: 7 }, { address: "a.b", change: { actions: [1] } }, change("a.c", ["create"])] }),
      1,
      10,
    )!;
    expect(view.changes.map((c) => c.address)).toEqual(["a.c"]);
  });
});
