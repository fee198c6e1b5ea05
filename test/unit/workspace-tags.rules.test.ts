// The tag rules the Durable Object applies (src/tags/workspace-tags.rules.ts, src/tags/tags.rules.ts).
import { describe, expect, it } from "vitest";
import { checkBindings } from "../../src/tags/tags.rules";
import { applyTagChange, sameTags } from "../../src/tags/workspace-tags.rules";
import { isFailure } from "../../src/workspaces/workspace.rules";
import { NOW, record } from "./workspace-record";

describe("tag rules", () => {
  it("keeps the two sets apart: a binding change never touches flat tags", () => {
    const w = record({ tags: [{ key: "flat", tagId: "tag-1", createdAt: NOW } as never] });
    const next = applyTagChange(w, { op: "upsert-bindings", bindings: [{ key: "env", value: "prod", index: 0 }], pointerBase: "/data" }, NOW);
    expect(isFailure(next as never)).toBe(false);
    expect((next as { tags: unknown[] }).tags).toEqual(w.tags);
    expect((next as { tagBindings: Array<{ key: string; value: string }> }).tagBindings.map((b) => [b.key, b.value])).toEqual([["env", "prod"]]);
  });

  it("refuses an eleventh binding with a pointer at the offending entry", () => {
    const bindings = Array.from({ length: 11 }, (_, i) => ({ key: `k${i}`, value: "v", index: i }));
    expect(applyTagChange(record(), { op: "replace-bindings", bindings, pointerBase: "/data" }, NOW)).toMatchObject({ ok: false, pointer: "/data/10" });
  });

  it("reserves the hc: and hcp: key prefixes and reports the same sets as unchanged", () => {
    expect(checkBindings([{ key: "hc:owner", value: "x" }], "/data")).toMatchObject({ ok: false, code: "invalid_attribute" });
    expect(sameTags(record(), record())).toBe(true);
  });
});
