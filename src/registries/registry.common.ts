import type { Context } from "hono";
import { requireOrgAccess, type OrgAccess } from "../auth/access";
import { primary } from "../db";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";

/** Loads a row of an organisation registry and the caller's access to its organisation (404 when not visible). */
export async function loadOwned<T extends { organization_name: string }>(c: Context<AppEnv>, table: string, id: string): Promise<{ row: T; access: OrgAccess }> {
  const db = primary(c);
  const row = await db.prepare(`SELECT * FROM ${table} WHERE id = ?`).bind(id).first<T>();
  if (!row) throw ApiError.of("not_found");
  return { row, access: await requireOrgAccess(db, c.get("principal"), row.organization_name) };
}

/** Owners, the organisation token and site admins, or teams holding the named organisation permission. */
export function canManage(access: OrgAccess, permission: string): boolean {
  return access.isOwner || access.isOrgToken || access.orgPermissions[permission] === true;
}

export function requireManage(access: OrgAccess, permission: string): void {
  if (!canManage(access, permission)) throw ApiError.of("not_found");
}

export function uniqueViolation(err: unknown, pointer = "/data/attributes/name"): never {
  if (String(err).includes("UNIQUE")) throw ApiError.of("invalid_attribute", { detail: "Name has already been taken", pointer });
  throw err;
}
