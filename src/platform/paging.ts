/** What the repositories' list pages share: one page's rows and the count of all that match, in one D1 batch. */
import type { Db } from "../caller";

/** The rows of `page` (`… LIMIT ? OFFSET ?`) and the `n` of `count` (`SELECT count(*) AS n …`), read in one batch. */
export async function pageWithTotal<R>(db: Db, page: D1PreparedStatement, count: D1PreparedStatement): Promise<{ rows: R[]; total: number }> {
  const [rows, n] = await db.batch([page, count]);
  return { rows: (rows?.results ?? []) as R[], total: (n?.results?.[0] as { n: number } | undefined)?.n ?? 0 };
}

/** The OFFSET of a page numbered from 1. */
export const offsetOf = (page: { number: number; size: number }): number => (page.number - 1) * page.size;
