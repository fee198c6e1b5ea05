/** Repository: project writes beyond projects.index.ts's statement builders. */
import type { Db } from "../caller";

/** One D1 batch (one transaction): a project row and its bindings land together or not at all. */
export async function writeProjectBatch(db: Db, stmts: D1PreparedStatement[]): Promise<void> {
  if (stmts.length === 0) return; // D1 refuses an empty batch
  await db.batch(stmts);
}
