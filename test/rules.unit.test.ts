// The pure rules behind the Durable Object and the list, tested without HTTP or storage.
import { describe, expect, it } from "vitest";
import { isFailure } from "../src/workspaces/workspace.rules";
import { changeConsumers } from "../src/workspaces/consumers.rules";
import { checkSafeDelete, forceUnlock, lock, unlock } from "../src/workspaces/lock.rules";
import { initialRecord } from "../src/workspaces/workspace.record";
import { defaultSettings } from "../src/workspaces/workspace.rules";
import type { WorkspaceRecord } from "../src/workspaces/workspace.types";
import { applyTagChange, sameTags } from "../src/tags/workspace-tags.rules";
import { checkBindings } from "../src/tags/tags.rules";
import { parseListQuery } from "../src/workspaces/workspaces.list";

const NOW = "2026-11-23T00:00:00.000Z";
const record = (over: Partial<WorkspaceRecord> = {}): WorkspaceRecord => ({
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
const alice = { type: "users" as const, id: "user-alice" };
const team = { type: "teams" as const, id: "team-ci" };
const code = (r: unknown) => (isFailure(r as never) ? (r as { code: string }).code : "ok");

describe("lock rules", () => {
  it("locks an unlocked workspace once; a second lock is already_locked", () => {
    const w = lock(record(), alice, "deploy", NOW) as WorkspaceRecord;
    expect(w.lock).toEqual({ locked: true, reason: "deploy", holder: alice, lockedAt: NOW });
    expect(code(lock(structuredClone(w), team, "", NOW))).toBe("already_locked");
  });

  it("only the holder unlocks, and the refusal names the holder as go-tfe reads it", () => {
    const w = lock(record(), alice, "", NOW) as WorkspaceRecord;
    const refused = unlock(structuredClone(w), team);
    expect(refused).toMatchObject({ ok: false, code: "conflict", detail: expect.stringContaining("locked by User user-alice") });
    expect((unlock(structuredClone(w), alice) as WorkspaceRecord).lock.locked).toBe(false);
    expect(code(unlock(record(), alice))).toBe("not_locked");
  });

  it("force-unlock frees any holder, and refuses an unlocked workspace", () => {
    expect((forceUnlock(lock(record(), team, "", NOW) as WorkspaceRecord) as WorkspaceRecord).lock.holder).toBeNull();
    expect(code(forceUnlock(record()))).toBe("not_locked");
  });

  it("safe delete refuses a locked workspace, a pending state version and managed resources, in that order", () => {
    expect(checkSafeDelete(record({ lock: { locked: true, reason: "", holder: alice, lockedAt: NOW } }), true)?.code).toBe("safe_delete_locked");
    expect(checkSafeDelete(record(), true)?.code).toBe("safe_delete_processing");
    expect(checkSafeDelete(record({ resourceCount: 3 }), false)?.code).toBe("safe_delete_managing");
    expect(checkSafeDelete(record(), false)).toBeNull();
  });
});

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

describe("list query rules", () => {
  const spec = (q: string) => parseListQuery(new URLSearchParams(q), { number: 2, size: 10 });

  it("reads every filter, the sort and the page", () => {
    const s = spec(
      "search[name]=app&search[tags]=a,b,a&search[exclude-tags]=c&filter[project][id]=prj-1&filter[tagged][0][key]=env&filter[tagged][0][value]=prod&sort=-name",
    );
    expect(s).toMatchObject({ sort: "-name", limit: 10, offset: 10 });
    expect(s.filters).toMatchObject({ tags: ["a", "b"], excludeTags: ["c"], projectId: "prj-1", tagged: [{ key: "env", value: "prod" }], nothing: false });
    expect(s.filters.names[0]).toMatchObject({ literal: "app" });
  });

  it("takes * in wildcard names only at the ends, escapes LIKE metacharacters, and matches nothing for NUL", () => {
    expect(spec("search[wildcard-name]=*-prod").filters.names[0]?.like.startsWith("%")).toBe(true);
    expect(spec("search[wildcard-name]=*").filters.names).toEqual([]);
    expect(spec("search[name]=50%25_off").filters.names[0]?.like).not.toBe("%50%_off%");
    expect(spec("search[name]=a%00b").filters.nothing).toBe(true);
  });

  it("answers 400 naming the parameter for an unknown sort or a value without a key", () => {
    expect(() => spec("sort=size")).toThrow(expect.objectContaining({ status: 400 }));
    expect(() => spec("filter[tagged][0][value]=x")).toThrow(expect.objectContaining({ status: 400 }));
  });
});
