// A workspace object's store as code before schema 14 left it: the schema version in `meta`, the outbox and the audit
// events waiting for D1 in tables of their own (what `foldOutbox` in src/workspaces/workspace.migrations.ts reads).

/**
 * Reshapes the store of a current object (call inside `runInDurableObject`): what the record's row had pending becomes
 * rows of the old tables, then `outbox` entries and `events` given are added after them.
 */
export function asStoreOfSchema(
  sql: SqlStorage,
  version: number,
  outbox: { op: "upsert" | "delete"; record: { version: number } }[] = [],
  events: object[] = [],
): void {
  const row = sql.exec<{ outbox: string | null; record: string; audit: string | null }>("SELECT outbox, record, audit FROM workspace").one();
  const pending = row.outbox ? [{ op: row.outbox, record: JSON.parse(row.record) as { version: number } }] : [];
  const audit = row.audit ? (JSON.parse(row.audit) as object[]) : [];
  sql.exec("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
  sql.exec("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)", String(version));
  sql.exec(`CREATE TABLE IF NOT EXISTS outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, version INTEGER NOT NULL, op TEXT NOT NULL, record TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0)`);
  for (const entry of [...pending, ...outbox]) {
    sql.exec("INSERT INTO outbox (version, op, record) VALUES (?, ?, ?)", entry.record.version, entry.op, JSON.stringify(entry.record));
  }
  sql.exec("CREATE TABLE IF NOT EXISTS audit_outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, event TEXT NOT NULL)");
  for (const event of [...audit, ...events]) sql.exec("INSERT INTO audit_outbox (event) VALUES (?)", JSON.stringify(event));
  for (const column of ["schema", "outbox", "attempts", "audit"]) sql.exec(`ALTER TABLE workspace DROP COLUMN ${column}`);
}
