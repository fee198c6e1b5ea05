/** Lock, unlock, force-unlock and safe delete (spec §3, §4.7, §4.9): authorise, then one DO call. */
import { lockHolderOf } from "../auth/principal";
import type { Caller } from "../caller";
import { unwrap } from "../errors";
import { nowIso } from "../ids";
import type { Faults } from "./workspace.types";
import { readById, resolveId, workspaceStub, type WorkspaceRef } from "./workspaces.service";
import type { Written } from "./workspaces.write.service";

export async function lockWorkspace(caller: Caller, id: string, reason: string, faults: Faults | undefined): Promise<Written> {
  const { scope } = await readById(caller, id, "workspace.lock");
  const result = unwrap(await workspaceStub(caller.env, id).lock({ holder: lockHolderOf(caller.principal), reason, now: nowIso(), faults }));
  return { workspace: result.value, scope, bookmark: result.bookmark };
}

/** Only the lock's holder may unlock (the DO compares holders). */
export async function unlockWorkspace(caller: Caller, id: string, faults: Faults | undefined): Promise<Written> {
  const { scope } = await readById(caller, id, "workspace.lock");
  const result = unwrap(await workspaceStub(caller.env, id).unlock({ holder: lockHolderOf(caller.principal), faults }));
  return { workspace: result.value, scope, bookmark: result.bookmark };
}

/** Workspace admins may unlock whoever holds the lock. */
export async function forceUnlockWorkspace(caller: Caller, id: string, faults: Faults | undefined): Promise<Written> {
  const { scope } = await readById(caller, id, "workspace.force-unlock");
  const result = unwrap(await workspaceStub(caller.env, id).forceUnlock({ faults }));
  return { workspace: result.value, scope, bookmark: result.bookmark };
}

export async function safeDeleteWorkspace(caller: Caller, ref: WorkspaceRef, faults: Faults | undefined): Promise<void> {
  const id = await resolveId(caller, ref);
  // Spec §7: a caller who may not delete gets 404, as for a missing workspace.
  await readById(caller, id, "workspace.delete");
  unwrap(await workspaceStub(caller.env, id).remove({ safe: true, faults }));
}
