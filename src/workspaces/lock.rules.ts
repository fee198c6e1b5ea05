/** Lock transitions (lock, unlock, force-unlock), as pure functions over a workspace record. */
import { fail, type Failure } from "../errors";
import type { LockHolder, WorkspaceRecord } from "./workspace.types";

const HOLDER_WORD: Record<LockHolder["type"], string> = { users: "User", teams: "Team", runs: "Run" };

export function lock(w: WorkspaceRecord, holder: LockHolder, reason: string, now: string): WorkspaceRecord | Failure {
  if (w.lock.locked) return fail("already_locked"); // locking a locked workspace is a 409
  w.lock = { locked: true, reason, holder, lockedAt: now };
  return w;
}

/** Only the holder may unlock; the detail names the holder the way go-tfe classifies it. */
export function unlock(w: WorkspaceRecord, caller: LockHolder): WorkspaceRecord | Failure {
  if (!w.lock.locked) return fail("not_locked");
  const h = w.lock.holder;
  if (h && (h.type !== caller.type || h.id !== caller.id)) {
    return fail("conflict", `Unable to unlock workspace. The workspace is locked by ${HOLDER_WORD[h.type]} ${h.id} and may not be unlocked except by them.`);
  }
  w.lock = { locked: false, reason: null, holder: null, lockedAt: null };
  return w;
}

/**
 * A run's lock is its own until it ends: taking it away would let the run apply while someone else holds the lock, and
 * its state upload would then be refused. It is refused as OTF refuses it (409 "is locked by Run", go-tfe's
 * `ErrWorkspaceLockedByRun` wording); cancelling or discarding the run releases it.
 */
export function forceUnlock(w: WorkspaceRecord): WorkspaceRecord | Failure {
  if (!w.lock.locked) return fail("not_locked");
  const h = w.lock.holder;
  if (h?.type === "runs") {
    return fail("conflict", `Unable to unlock workspace. The workspace is locked by Run ${h.id}: cancel or discard the run to release it.`);
  }
  w.lock = { locked: false, reason: null, holder: null, lockedAt: null };
  return w;
}

/**
 * Safe delete: only an unlocked workspace that manages no resources. `unknown`: its current state
 * could not be read (nor a JSON state beside it), so a count of 0 proves nothing and it counts as managing.
 */
export function checkSafeDelete(w: WorkspaceRecord, processing: boolean, unknown = false): Failure | null {
  if (w.lock.locked) return fail("safe_delete_locked");
  if (processing) return fail("safe_delete_processing");
  if (unknown) return fail("safe_delete_unreadable");
  if (w.resourceCount > 0) return fail("safe_delete_managing");
  return null;
}
