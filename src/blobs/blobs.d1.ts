/** Repository: what the signed blob URLs check in D1. */
import type { Db } from "../caller";

/** Whether the organisation exists and is the very one with this external id (not deleted and re-created). */
export async function organizationIsLive(db: Db, name: string, externalId: string): Promise<boolean> {
  return !!(await db.prepare("SELECT 1 AS ok FROM organizations WHERE name = ? AND external_id = ?").bind(name, externalId).first());
}
