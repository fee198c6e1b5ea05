/** Repository: what the signed blob URLs check in D1. */
import type { Db } from "../caller";

/** Whether the organisation with this external id still exists (deleted, or deleted and re-created under its name, it does not). */
export async function organizationIsLive(db: Db, externalId: string): Promise<boolean> {
  return !!(await db.prepare("SELECT 1 AS ok FROM organizations WHERE external_id = ?").bind(externalId).first());
}
