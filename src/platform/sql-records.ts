/**
 * What the stores of the workspace object's SQLite (`<resource>.store.ts`) share: rows that keep their value as JSON
 * in a `record` column, read back as that value, and the next `seq` of a table kept in insertion order.
 */

/** Every row's record the query selects, in its order. */
export function records<T>(sql: SqlStorage, query: string, ...binds: SqlStorageValue[]): T[] {
  return sql
    .exec<{ record: string }>(query, ...binds)
    .toArray()
    .map((r) => JSON.parse(r.record) as T);
}

/** The first row's record the query selects; null when it selects none. */
export function record<T>(sql: SqlStorage, query: string, ...binds: SqlStorageValue[]): T | null {
  const row = sql.exec<{ record: string }>(query, ...binds).toArray()[0];
  return row ? (JSON.parse(row.record) as T) : null;
}

/** One more than the table's highest `seq` (1 when it is empty). */
export function nextSeq(sql: SqlStorage, table: string): number {
  return (sql.exec<{ n: number | null }>(`SELECT max(seq) AS n FROM ${table}`).one().n ?? 0) + 1;
}
