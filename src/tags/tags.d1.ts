/** Repository: tag writes that run as one batch (the statements come from project-tags.index.ts). */
import type { Db } from "../caller";
import { upsertProjectBindingsStatements } from "./project-tags.index";

/**
 * Adds or updates a project's bindings by key in one batch, one transaction; the trigger of migration
 * 0005 makes the limit hold under races (its error is `isProjectLimitError`).
 */
export async function upsertProjectBindings(db: Db, projectId: string, bindings: Array<{ key: string; value: string }>, now: string): Promise<void> {
  const stmts = upsertProjectBindingsStatements(db, projectId, bindings, now);
  if (stmts.length) await db.batch(stmts); // an empty list changes nothing (D1 refuses an empty batch)
}
