/** Lock, unlock, force-unlock and safe delete (HCP Terraform API docs, Workspaces): authorise, then one DO call. */
import { lockHolderOf } from "../auth/principal";
import type { Caller } from "../caller";
import { nowIso } from "../ids";
import { lockHolderName } from "./lock.d1";
import { mutateAs, type Readable, type WorkspaceRef } from "./workspaces.service";
import type { Written } from "./workspaces.write.service";
import { workspaceObject } from "./workspace.stub";
import { audited } from "../audit/audit.service";

/** `ref`: an id (the API), or organisation and name (the web UI: no lookup before the read that authorises). */
export async function lockWorkspace(caller: Caller, ref: WorkspaceRef, reason: string): Promise<Written> {
  const holder = lockHolderOf(caller.principal);
  const done = await mutateAs(caller, ref, "workspace.lock", (r, guard) =>
    workspaceObject(caller.env, r.record.id).lock({
      holder,
      reason,
      now: nowIso(),
      guard: audited(caller, guard, { id: r.record.id, type: "workspace", action: "lock", meta: { name: r.record.name } }),
    }),
  );
  return { workspace: done.value, scope: done.readable.scope, bookmark: done.bookmark };
}

/** Only the lock's holder may unlock (the DO compares holders). */
export async function unlockWorkspace(caller: Caller, ref: WorkspaceRef): Promise<Written> {
  const holder = lockHolderOf(caller.principal);
  const done = await mutateAs(caller, ref, "workspace.lock", (r, guard) =>
    workspaceObject(caller.env, r.record.id).unlock({
      holder,
      guard: audited(caller, guard, { id: r.record.id, type: "workspace", action: "unlock", meta: { name: r.record.name } }),
    }),
  );
  return { workspace: done.value, scope: done.readable.scope, bookmark: done.bookmark };
}

/** Workspace admins may unlock whoever holds the lock. */
export async function forceUnlockWorkspace(caller: Caller, ref: WorkspaceRef): Promise<Written> {
  const done = await mutateAs(caller, ref, "workspace.force-unlock", (r, guard) =>
    workspaceObject(caller.env, r.record.id).forceUnlock({
      guard: audited(caller, guard, { id: r.record.id, type: "workspace", action: "force_unlock", meta: { name: r.record.name } }),
    }),
  );
  return { workspace: done.value, scope: done.readable.scope, bookmark: done.bookmark };
}

/** The name of whoever holds the workspace's lock (lock.d1.ts); null when unlocked or the holder is gone. */
export async function lockHolderNameOf(caller: Caller, readable: Readable): Promise<string | null> {
  const holder = readable.record.lock.locked ? readable.record.lock.holder : null;
  return holder ? lockHolderName(caller.db, holder) : null;
}

/** A caller who may not delete gets 404, as for a missing workspace (the real API's documented answer). */
export async function safeDeleteWorkspace(caller: Caller, ref: WorkspaceRef): Promise<void> {
  await mutateAs(caller, ref, "workspace.delete", (r, guard) =>
    workspaceObject(caller.env, r.record.id).remove({
      safe: true,
      guard: audited(caller, guard, { id: r.record.id, type: "workspace", action: "destroy", meta: { name: r.record.name, safe: true } }),
    }),
  );
}
