/** Naming a lock's holder (the UI shows who holds a lock by name, as the real UI does, not by id). */
import type { Db } from "../caller";
import type { LockHolder } from "./workspace.types";

/**
 * SQL naming the holder whose type and id are the SQL expressions `type` and `id`: a user's username, a
 * team's name, and the organisation token's service user (it has no users row) as `api-org-<organisation>`,
 * the username GET /account/details and `include=locked_by` give it. NULL when the holder is gone.
 */
export function holderNameSql(type: string, id: string): string {
  return `CASE ${type}
    WHEN 'users' THEN coalesce((SELECT u.username FROM users u WHERE u.id = ${id}),
      (SELECT 'api-org-' || o.name FROM tokens k JOIN organizations o ON o.external_id = k.organization_id
        WHERE k.user_id = ${id} AND k.kind = 'organization' LIMIT 1))
    WHEN 'teams' THEN (SELECT t.name FROM teams t WHERE t.id = ${id})
  END`;
}

/** The holder's name (see holderNameSql), or null. */
export async function lockHolderName(db: Db, holder: LockHolder): Promise<string | null> {
  const row = await db
    .prepare(`SELECT ${holderNameSql("?1", "?2")} AS name`)
    .bind(holder.type, holder.id)
    .first<{ name: string | null }>();
  return row?.name ?? null;
}
