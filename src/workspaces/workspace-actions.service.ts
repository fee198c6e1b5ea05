/** Lock, unlock, force-unlock and safe delete (spec §3, §4.7, §4.9): authorise, then one DO call. */
import { lockHolderOf } from "../auth/principal";
import type { Caller } from "../caller";
import { nowIso } from "../ids";
import type { Faults } from "./workspace.types";
import { mutateAs, workspaceStub, type WorkspaceRef } from "./workspaces.service";
import type { Written } from "./workspaces.write.service";

export async function lockWorkspace(caller: Caller, id: string, reason: string, faults: Faults | undefined): Promise<Written> {
  const holder = lockHolderOf(caller.principal);
  const done = await mutateAs(caller, id, "workspace.lock", (_r, guard) =>
    workspaceStub(caller.env, id).lock({ holder, reason, now: nowIso(), faults, guard }),
  );
  return { workspace: done.value, scope: done.readable.scope, bookmark: done.bookmark };
}

/** Only the lock's holder may unlock (the DO compares holders). */
export async function unlockWorkspace(caller: Caller, id: string, faults: Faults | undefined): Promise<Written> {
  const holder = lockHolderOf(caller.principal);
  const done = await mutateAs(caller, id, "workspace.lock", (_r, guard) => workspaceStub(caller.env, id).unlock({ holder, faults, guard }));
  return { workspace: done.value, scope: done.readable.scope, bookmark: done.bookmark };
}

/** Workspace admins may unlock whoever holds the lock. */
export async function forceUnlockWorkspace(caller: Caller, id: string, faults: Faults | undefined): Promise<Written> {
  const done = await mutateAs(caller, id, "workspace.force-unlock", (_r, guard) => workspaceStub(caller.env, id).forceUnlock({ faults, guard }));
  return { workspace: done.value, scope: done.readable.scope, bookmark: done.bookmark };
}

/** Spec §7: a caller who may not delete gets 404, as for a missing workspace. */
export async function safeDeleteWorkspace(caller: Caller, ref: WorkspaceRef, faults: Faults | undefined): Promise<void> {
  await mutateAs(caller, ref, "workspace.delete", (r, guard) => workspaceStub(caller.env, r.record.id).remove({ safe: true, faults, guard }));
}
