// The lock rules the Durable Object applies (src/workspaces/lock.rules.ts), tested without HTTP or storage.
import { describe, expect, it } from "vitest";
import { checkSafeDelete, forceUnlock, lock, unlock } from "../../src/workspaces/lock.rules";
import { isFailure } from "../../src/workspaces/workspace.rules";
import type { WorkspaceRecord } from "../../src/workspaces/workspace.types";
import { NOW, record } from "./workspace-record";

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
    // A current state nobody could read: its count of 0 proves nothing.
    expect(checkSafeDelete(record(), false, true)?.code).toBe("safe_delete_unreadable");
    expect(checkSafeDelete(record(), false)).toBeNull();
  });
});
