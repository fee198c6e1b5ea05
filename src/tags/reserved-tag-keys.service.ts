/**
 * Reserved tag keys (HCP reserved-tag-keys API): keys an organisation reserves for its tag bindings. Members read
 * them; owners and the organisation token manage them (the docs ask for the admin preset). A key reserved with
 * `disable-overrides` may not be bound on a workspace whose project binds it (`refuseOverrides`).
 */
import { loadOwned, requireOrgAccess } from "../auth/access";
import { authorize } from "../auth/requirements";
import type { Caller } from "../caller";
import { ApiError } from "../errors";
import { newId, nowIso } from "../ids";
import type { Page } from "../jsonapi/document";
import {
  deleteReservedTagKey,
  findReservedTagKey,
  insertReservedTagKey,
  listReservedTagKeys,
  lockedProjectKeys,
  updateReservedTagKey,
  type ReservedTagKey,
  type ReservedTagKeyChanges,
} from "./reserved-tag-keys.d1";
import { checkReservedKey } from "./tags.rules";

export interface ReservedTagKeyInput {
  key?: string;
  disableOverrides?: boolean;
}

const KEY_POINTER = "/data/attributes/key";

function checkKey(key: string): void {
  const f = checkReservedKey(key, KEY_POINTER);
  if (f) throw ApiError.of(f.code, { detail: f.detail, pointer: f.pointer });
}

function keyTaken(err: unknown): never {
  if (String(err).includes("UNIQUE")) throw ApiError.of("key_taken", { pointer: KEY_POINTER });
  throw err;
}

/** One page of the organisation's reserved keys, oldest first. */
export async function listOrgReservedTagKeys(caller: Caller, organization: string, page: Page): Promise<{ keys: ReservedTagKey[]; total: number }> {
  const access = await requireOrgAccess(caller, { name: organization });
  return listReservedTagKeys(caller.db, access.organization.externalId, page.size, (page.number - 1) * page.size);
}

export async function createReservedTagKey(caller: Caller, organization: string, input: ReservedTagKeyInput): Promise<ReservedTagKey> {
  const access = await requireOrgAccess(caller, { name: organization });
  authorize(caller, "organization.manage", { access });
  checkKey(input.key ?? "");
  const now = nowIso();
  const reserved: ReservedTagKey = {
    id: newId("rtk"),
    organizationId: access.organization.externalId,
    key: input.key!,
    disableOverrides: !!input.disableOverrides,
    createdAt: now,
    updatedAt: now,
  };
  await insertReservedTagKey(caller.db, reserved).catch(keyTaken);
  return reserved;
}

async function loadManaged(caller: Caller, id: string): Promise<ReservedTagKey> {
  const { item, access } = await loadOwned(caller, findReservedTagKey, id);
  authorize(caller, "organization.manage", { access });
  return item;
}

/** Changes what the request names; answers the key as stored. */
export async function updateReservedTagKeyById(caller: Caller, id: string, input: ReservedTagKeyInput): Promise<ReservedTagKey> {
  const reserved = await loadManaged(caller, id);
  if (input.key !== undefined) checkKey(input.key);
  const changes: ReservedTagKeyChanges = { key: input.key, disableOverrides: input.disableOverrides, updatedAt: nowIso() };
  if (!(await updateReservedTagKey(caller.db, reserved.id, changes).catch(keyTaken))) throw ApiError.of("not_found"); // deleted concurrently
  const updated = await findReservedTagKey(caller.db, reserved.id);
  if (!updated) throw ApiError.of("not_found");
  return updated;
}

export async function removeReservedTagKey(caller: Caller, id: string): Promise<void> {
  const reserved = await loadManaged(caller, id);
  if (!(await deleteReservedTagKey(caller.db, reserved.id))) throw ApiError.of("not_found");
}

/**
 * `disable-overrides`: a workspace may not bind a key its project binds when the organisation reserves that key with
 * overrides disabled (the binding would override the inherited value). Checks the bindings a request writes, not
 * those the workspace already has: like the real service, enabling the option is not retroactive. 422 on the first.
 * `pointer`: the base of the entries' pointers (`<base>/<index>/attributes/key`), or a function naming the pointer.
 */
export async function refuseOverrides(
  caller: Caller,
  where: { organizationId: string; projectId: string },
  bindings: Array<{ key: string; index: number }>,
  pointer: string | ((index: number) => string),
): Promise<void> {
  if (bindings.length === 0) return;
  const locked = await lockedProjectKeys(
    caller.db,
    where.organizationId,
    where.projectId,
    bindings.map((b) => b.key),
  );
  const first = bindings.find((b) => locked.has(b.key));
  if (first)
    throw ApiError.of("invalid_attribute", {
      detail: `Key ${first.key} is reserved with overrides disabled: the workspace cannot override the value its project sets`,
      pointer: typeof pointer === "string" ? `${pointer}/${first.index}/attributes/key` : pointer(first.index),
    });
}
