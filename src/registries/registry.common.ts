/** What the organisation registries' services share: loading an owned row with its access, and who manages it. */
import { requireOrgAccess, type OrgAccess } from "../auth/access";
import type { Caller, Db } from "../caller";
import { ApiError } from "../errors";

/**
 * Loads a row of an organisation registry (through its repository's finder) and the caller's access
 * to its organisation (404 when not visible).
 */
export async function loadOwned<T extends { organization_id: string }>(
  caller: Caller,
  find: (db: Db, id: string) => Promise<T | null>,
  id: string,
): Promise<{ row: T; access: OrgAccess }> {
  const row = await find(caller.db, id);
  if (!row) throw ApiError.of("not_found");
  return { row, access: await requireOrgAccess(caller, { id: row.organization_id }) };
}

export function uniqueViolation(err: unknown, pointer = "/data/attributes/name"): never {
  if (String(err).includes("UNIQUE")) throw ApiError.of("invalid_attribute", { detail: "Name has already been taken", pointer });
  throw err;
}
