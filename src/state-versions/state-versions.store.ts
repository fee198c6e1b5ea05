/**
 * State versions inside the workspace's Durable Object (its SQLite): metadata rows and the state
 * bodies in chunks below the 2 MB row limit. Synchronous helpers for the DO's critical sections.
 */
import SparkMD5 from "spark-md5";
import type { ParsedState } from "./state.parse";

export const CHUNK_BYTES = 1024 * 1024;

export type StateVersionRow = {
  id: string;
  seq: number;
  serial: number;
  md5: string;
  lineage: string | null;
  status: "pending" | "finalized" | "discarded";
  intermediate: number;
  created_at: string;
  size: number;
  parsed: string | null;
  json_present: number;
  created_by: string | null;
};

export interface StateVersionView extends Omit<StateVersionRow, "parsed"> {
  parsed: ParsedState | null;
}

export function migrateStateVersions(sql: SqlStorage): void {
  sql.exec(`CREATE TABLE IF NOT EXISTS state_versions (
    id TEXT PRIMARY KEY, seq INTEGER NOT NULL UNIQUE, serial INTEGER NOT NULL, md5 TEXT NOT NULL, lineage TEXT,
    status TEXT NOT NULL, intermediate INTEGER NOT NULL, created_at TEXT NOT NULL, size INTEGER NOT NULL DEFAULT 0,
    parsed TEXT, json_present INTEGER NOT NULL DEFAULT 0, created_by TEXT)`);
  sql.exec(`CREATE TABLE IF NOT EXISTS state_chunks (
    sv_id TEXT NOT NULL, kind TEXT NOT NULL, seq INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (sv_id, kind, seq))`);
}

export function view(row: StateVersionRow): StateVersionView {
  return { ...row, parsed: row.parsed ? (JSON.parse(row.parsed) as ParsedState) : null };
}

export function getRow(sql: SqlStorage, id: string): StateVersionRow | null {
  return sql.exec<StateVersionRow>("SELECT * FROM state_versions WHERE id = ?", id).toArray()[0] ?? null;
}

export function latestRow(sql: SqlStorage): StateVersionRow | null {
  return sql.exec<StateVersionRow>("SELECT * FROM state_versions WHERE status <> 'discarded' ORDER BY seq DESC LIMIT 1").toArray()[0] ?? null;
}

export function nextSeq(sql: SqlStorage): number {
  return (sql.exec<{ n: number | null }>("SELECT max(seq) AS n FROM state_versions").one().n ?? 0) + 1;
}

export function writeChunks(sql: SqlStorage, svId: string, kind: string, bytes: Uint8Array, fromSeq = 0): number {
  let seq = fromSeq;
  for (let off = 0; off < bytes.byteLength; off += CHUNK_BYTES) {
    sql.exec("INSERT OR REPLACE INTO state_chunks (sv_id, kind, seq, data) VALUES (?, ?, ?, ?)", svId, kind, seq++, bytes.subarray(off, off + CHUNK_BYTES));
  }
  return seq;
}

export function readBlob(sql: SqlStorage, svId: string, kind: string): Uint8Array | null {
  const parts = sql.exec<{ data: ArrayBuffer }>("SELECT data FROM state_chunks WHERE sv_id = ? AND kind = ? ORDER BY seq", svId, kind).toArray();
  if (parts.length === 0) return null;
  const total = parts.reduce((n, p) => n + p.data.byteLength, 0);
  const out = new Uint8Array(total);
  let off = 0;
  for (const p of parts) {
    out.set(new Uint8Array(p.data), off);
    off += p.data.byteLength;
  }
  return out;
}

export function clearBlob(sql: SqlStorage, svId: string, kind: string): void {
  sql.exec("DELETE FROM state_chunks WHERE sv_id = ? AND kind = ?", svId, kind);
}

export function md5Hex(bytes: Uint8Array): string {
  return SparkMD5.ArrayBuffer.hash(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
}
