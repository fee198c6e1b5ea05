/**
 * State versions inside the workspace's Durable Object (its SQLite): metadata rows and the state
 * bodies in chunks below the 2 MB row limit. Synchronous helpers for the DO's critical sections:
 * none of them awaits, so each runs inside one serialised read-check-write of the workspace.
 */
import SparkMD5 from "spark-md5";
import { fail, type Failure } from "../errors";
import type { LockHolder, WorkspaceRecord } from "../workspaces/workspace.types";
import { parseState, type ParsedState } from "./state.parse";

/** One stored chunk; also the most a blob read returns per RPC call (well under the 32 MiB RPC limit). */
export const CHUNK_BYTES = 1024 * 1024;
export const READ_PARTS_PER_CALL = 8;

export type BlobKind = "state" | "json";

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

/** Schema 2. A new object gets schema 5's `backing` column here too, so creating one never runs an ALTER TABLE. */
export function migrateStateVersions(sql: SqlStorage): void {
  sql.exec(`CREATE TABLE IF NOT EXISTS state_versions (
    id TEXT PRIMARY KEY, seq INTEGER NOT NULL UNIQUE, serial INTEGER NOT NULL, md5 TEXT NOT NULL, lineage TEXT,
    status TEXT NOT NULL, intermediate INTEGER NOT NULL, created_at TEXT NOT NULL, size INTEGER NOT NULL DEFAULT 0,
    parsed TEXT, json_present INTEGER NOT NULL DEFAULT 0, created_by TEXT,
    backing TEXT NOT NULL DEFAULT 'present')`);
  // kind: "state" | "json" once complete; "<kind>~<upload id>" while an upload is being received.
  sql.exec(`CREATE TABLE IF NOT EXISTS state_chunks (
    sv_id TEXT NOT NULL, kind TEXT NOT NULL, seq INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (sv_id, kind, seq))`);
}

/** Schema 5: whether a version's backing data (its blobs) is present, soft deleted, or gone for good. */
export function migrateBackingData(sql: SqlStorage): void {
  const columns = sql.exec<{ name: string }>("PRAGMA table_info(state_versions)").toArray();
  if (!columns.some((c) => c.name === "backing")) sql.exec("ALTER TABLE state_versions ADD COLUMN backing TEXT NOT NULL DEFAULT 'present'");
}

export type BackingAction = "soft_delete_backing_data" | "restore_backing_data" | "permanently_delete_backing_data";

/**
 * The backing-data transitions of Terraform Enterprise's data retention: present → soft deleted → present
 * again, or soft deleted → deleted for good (its blobs erased). The current state version keeps its data.
 */
export function manageBackingData(sql: SqlStorage, id: string, action: BackingAction, currentId: string | null): Failure | null {
  const row = sql.exec<{ backing: string }>("SELECT backing FROM state_versions WHERE id = ?", id).toArray()[0];
  if (!row) return fail("not_found");
  if (id === currentId) return fail("transition_not_allowed", "transition not allowed: the workspace's current state version keeps its backing data");
  const next = {
    soft_delete_backing_data: ["present", "soft_deleted"],
    restore_backing_data: ["soft_deleted", "present"],
    permanently_delete_backing_data: ["soft_deleted", "deleted"],
  }[action];
  if (row.backing === next[1]) return null; // already there: repeating the request changes nothing
  if (row.backing !== next[0]) return fail("transition_not_allowed");
  sql.exec("UPDATE state_versions SET backing = ? WHERE id = ?", next[1], id);
  if (next[1] === "deleted") sql.exec("DELETE FROM state_chunks WHERE sv_id = ?", id);
  return null;
}

/** Whether the version's blobs may be read (absent versions answer false). */
export function backingPresent(sql: SqlStorage, id: string): boolean {
  return sql.exec<{ backing: string }>("SELECT backing FROM state_versions WHERE id = ?", id).toArray()[0]?.backing === "present";
}

/** State versions after `afterSeq` (the last one the D1 index has), for the next outbox flush. */
export function unindexedVersions(sql: SqlStorage, afterSeq: number): Array<{ id: string; created_at: string; seq: number }> {
  return sql
    .exec<{ id: string; created_at: string; seq: number }>("SELECT id, created_at, seq FROM state_versions WHERE seq > ? ORDER BY seq", afterSeq)
    .toArray();
}

export function view(row: StateVersionRow): StateVersionView {
  return { ...row, parsed: row.parsed ? (JSON.parse(row.parsed) as ParsedState) : null };
}

export function getRow(sql: SqlStorage, id: string): StateVersionRow | null {
  return sql.exec<StateVersionRow>("SELECT * FROM state_versions WHERE id = ?", id).toArray()[0] ?? null;
}

/** The newest state version that was not superseded before its upload. */
export function latestRow(sql: SqlStorage): StateVersionRow | null {
  return sql.exec<StateVersionRow>("SELECT * FROM state_versions WHERE status <> 'discarded' ORDER BY seq DESC LIMIT 1").toArray()[0] ?? null;
}

function nextSeq(sql: SqlStorage): number {
  return (sql.exec<{ n: number | null }>("SELECT max(seq) AS n FROM state_versions").one().n ?? 0) + 1;
}

// ---- chunks ----

const staging = (kind: BlobKind, upload: string) => `${kind}~${upload}`;

/** Appends bytes after the chunks already stored under (svId, kind), in rows of at most CHUNK_BYTES. */
function appendChunks(sql: SqlStorage, svId: string, kind: string, bytes: Uint8Array): void {
  let seq = (sql.exec<{ n: number | null }>("SELECT max(seq) AS n FROM state_chunks WHERE sv_id = ? AND kind = ?", svId, kind).one().n ?? -1) + 1;
  for (let off = 0; off < bytes.byteLength; off += CHUNK_BYTES) {
    sql.exec("INSERT INTO state_chunks (sv_id, kind, seq, data) VALUES (?, ?, ?, ?)", svId, kind, seq++, bytes.subarray(off, off + CHUNK_BYTES));
  }
}

function chunks(sql: SqlStorage, svId: string, kind: string): Iterable<ArrayBuffer> {
  const cursor = sql.exec<{ data: ArrayBuffer }>("SELECT data FROM state_chunks WHERE sv_id = ? AND kind = ? ORDER BY seq", svId, kind);
  return {
    *[Symbol.iterator]() {
      for (const row of cursor) yield row.data;
    },
  };
}

function clearChunks(sql: SqlStorage, svId: string, kind: string): void {
  sql.exec("DELETE FROM state_chunks WHERE sv_id = ? AND kind = ?", svId, kind);
}

/** Drops every unfinished upload of (svId, kind) (a finished one or a superseded version makes them moot). */
function clearStaging(sql: SqlStorage, svId: string, kind?: BlobKind): void {
  if (kind) sql.exec("DELETE FROM state_chunks WHERE sv_id = ? AND kind LIKE ?", svId, `${kind}~%`);
  else sql.exec("DELETE FROM state_chunks WHERE sv_id = ? AND kind LIKE '%~%'", svId);
}

/** Up to READ_PARTS_PER_CALL chunks from `fromSeq`, and the seq to ask for next (null at the end). */
export function readParts(sql: SqlStorage, svId: string, kind: BlobKind, fromSeq: number): { bytes: Uint8Array; next: number | null } | null {
  const rows = sql
    .exec<{ seq: number; data: ArrayBuffer }>(
      "SELECT seq, data FROM state_chunks WHERE sv_id = ? AND kind = ? AND seq >= ? ORDER BY seq LIMIT ?",
      svId,
      kind,
      fromSeq,
      READ_PARTS_PER_CALL + 1,
    )
    .toArray();
  if (rows.length === 0 && fromSeq === 0) return null;
  const parts = rows.slice(0, READ_PARTS_PER_CALL);
  const bytes = new Uint8Array(parts.reduce((n, p) => n + p.data.byteLength, 0));
  let off = 0;
  for (const p of parts) {
    bytes.set(new Uint8Array(p.data), off);
    off += p.data.byteLength;
  }
  return { bytes, next: rows.length > READ_PARTS_PER_CALL ? rows[READ_PARTS_PER_CALL].seq : null };
}

function md5OfChunks(sql: SqlStorage, svId: string, kind: string): { md5: string; size: number } {
  const hash = new SparkMD5.ArrayBuffer();
  let size = 0;
  for (const data of chunks(sql, svId, kind)) {
    hash.append(data);
    size += data.byteLength;
  }
  return { md5: hash.end(), size };
}

function textOfChunks(sql: SqlStorage, svId: string, kind: string): string {
  const decoder = new TextDecoder();
  const parts: string[] = [];
  for (const data of chunks(sql, svId, kind)) parts.push(decoder.decode(data, { stream: true }));
  parts.push(decoder.decode());
  return parts.join("");
}

export function md5Hex(bytes: Uint8Array): string {
  return SparkMD5.ArrayBuffer.hash(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
}

// ---- transitions (each called inside the DO's synchronous mutation of the workspace record) ----

/** Makes a finalized state version current: resource count, outputs and the relationship follow. */
function promote(sql: SqlStorage, w: WorkspaceRecord, sv: StateVersionRow, now: string): void {
  const parsed = sv.parsed ? (JSON.parse(sv.parsed) as ParsedState) : null;
  w.currentStateVersionId = sv.id;
  w.outputIds = (parsed?.outputs ?? []).map((_, i) => outputId(sv.id, i));
  w.resourceCount = parsed?.resourceCount ?? 0;
  w.updatedAt = now;
  if (sv.intermediate === 1) sql.exec("UPDATE state_versions SET intermediate = 0 WHERE id = ?", sv.id);
}

/** Stable output ids derived from the state version (outputs are not stored separately). */
export const outputId = (svId: string, i: number) => `wsout-${svId.slice(3)}${i.toString(36).padStart(2, "0")}`;

export interface CreateVersionInput {
  id: string;
  holder: LockHolder;
  serial: number;
  md5: string;
  lineage: string | null;
  intermediate: boolean;
  state: Uint8Array | null;
  jsonState: Uint8Array | null;
  now: string;
  createdBy: string;
}

/**
 * Creates a state version under the caller's lock. A still-pending older version is superseded
 * (`discarded`), so a late upload to it can never replace newer state. With inline state the
 * version is finalized at once and, unless intermediate, becomes current.
 */
export function createVersion(sql: SqlStorage, w: WorkspaceRecord, input: CreateVersionInput): WorkspaceRecord | Failure {
  const h = w.lock.holder;
  if (!w.lock.locked || !h || h.type !== input.holder.type || h.id !== input.holder.id) {
    return fail("conflict", "The workspace must be locked by the caller to create a state version");
  }
  const md5 = input.md5.toLowerCase();
  if (input.state && md5Hex(input.state) !== md5) {
    return fail("invalid_attribute", "md5 does not match the state", "/data/attributes/md5");
  }
  const parsed = input.state ? parseState(new TextDecoder().decode(input.state)) : null;
  for (const old of sql.exec<{ id: string }>("SELECT id FROM state_versions WHERE status = 'pending'").toArray()) clearStaging(sql, old.id);
  sql.exec("UPDATE state_versions SET status = 'discarded' WHERE status = 'pending'");
  sql.exec(
    `INSERT INTO state_versions (id, seq, serial, md5, lineage, status, intermediate, created_at, size, parsed, json_present, created_by)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    input.id,
    nextSeq(sql),
    input.serial,
    md5,
    input.lineage,
    input.state ? "finalized" : "pending",
    input.intermediate ? 1 : 0,
    input.now,
    input.state?.byteLength ?? 0,
    parsed ? JSON.stringify(parsed) : null,
    input.jsonState ? 1 : 0,
    input.createdBy,
  );
  if (input.state) appendChunks(sql, input.id, "state", input.state);
  if (input.jsonState) appendChunks(sql, input.id, "json", input.jsonState);
  // latest-change-at is the creation time of the latest state version.
  if (input.now > w.latestChangeAt) w.latestChangeAt = input.now;
  w.updatedAt = input.now;
  if (input.state && !input.intermediate) promote(sql, w, getRow(sql, input.id)!, input.now);
  return w;
}

/** Refuses pieces for a version that no longer takes this upload. */
export function checkUploadable(row: StateVersionRow | null, kind: BlobKind): Failure | null {
  if (!row) return fail("not_found");
  if (row.status === "discarded") return fail("conflict", "This state version was superseded by a newer one before its state was uploaded");
  if (kind === "state" && row.status !== "pending") return fail("conflict", "The state of this state version was already uploaded");
  // Each upload URL works once: stored JSON state is never rewritten.
  if (kind === "json" && row.json_present === 1) return fail("conflict", "The JSON state of this state version was already uploaded");
  return null;
}

/** Stores one piece of an upload in its own staging area (concurrent uploads never mix). */
export function appendUpload(sql: SqlStorage, svId: string, kind: BlobKind, upload: string, bytes: Uint8Array): Failure | null {
  const refused = checkUploadable(getRow(sql, svId), kind);
  if (refused) return refused;
  appendChunks(sql, svId, staging(kind, upload), bytes);
  return null;
}

/** Drops the staged pieces of an upload that failed midway (too large, client gone). */
export function abortUpload(sql: SqlStorage, svId: string, kind: BlobKind, upload: string): void {
  clearChunks(sql, svId, staging(kind, upload));
}

/**
 * Completes an upload: the staged bytes replace the blob. For the raw state the md5 must match;
 * the version is then parsed and finalized. Returns the finalized row when it should become
 * current (a non-intermediate state), else null.
 */
export function completeUpload(sql: SqlStorage, svId: string, kind: BlobKind, upload: string, last: Uint8Array): { promote: StateVersionRow | null } | Failure {
  const row = getRow(sql, svId);
  const refused = checkUploadable(row, kind);
  if (refused || !row) return refused ?? fail("not_found");
  const from = staging(kind, upload);
  appendChunks(sql, svId, from, last);
  if (kind === "state") {
    const { md5, size } = md5OfChunks(sql, svId, from);
    if (md5 !== row.md5) {
      clearChunks(sql, svId, from);
      return fail("invalid_attribute", "md5 does not match the uploaded state", "/md5");
    }
    const parsed = parseState(textOfChunks(sql, svId, from));
    sql.exec("UPDATE state_versions SET status = 'finalized', size = ?, parsed = ? WHERE id = ?", size, JSON.stringify(parsed), svId);
  } else {
    sql.exec("UPDATE state_versions SET json_present = 1 WHERE id = ?", svId);
  }
  clearChunks(sql, svId, kind);
  sql.exec("UPDATE state_chunks SET kind = ? WHERE sv_id = ? AND kind = ?", kind, svId, from);
  clearStaging(sql, svId, kind);
  const done = getRow(sql, svId)!;
  return { promote: kind === "state" && done.intermediate === 0 ? done : null };
}

/** Applies a finalized version to the record (called inside the DO's mutation). */
export function makeCurrent(sql: SqlStorage, w: WorkspaceRecord, sv: StateVersionRow, now: string): WorkspaceRecord {
  promote(sql, w, sv, now);
  return w;
}

/**
 * On unlock: refuses while the latest version is still pending; otherwise the newest
 * finalized intermediate version newer than the current one becomes current.
 */
export function onUnlock(sql: SqlStorage, w: WorkspaceRecord, now: string, opts: { force: boolean }): WorkspaceRecord | Failure {
  const latest = latestRow(sql);
  if (!opts.force && latest?.status === "pending") return fail("state_pending");
  const currentSeq = w.currentStateVersionId ? (getRow(sql, w.currentStateVersionId)?.seq ?? 0) : 0;
  const candidate = sql
    .exec<StateVersionRow>("SELECT * FROM state_versions WHERE status = 'finalized' AND intermediate = 1 AND seq > ? ORDER BY seq DESC LIMIT 1", currentSeq)
    .toArray()[0];
  if (candidate) promote(sql, w, candidate, now);
  return w;
}

/** Safe delete reports "being processed" while the latest version's state has not arrived. */
export function latestPending(sql: SqlStorage): boolean {
  return latestRow(sql)?.status === "pending";
}

/** Once D1 has a workspace's delete: nothing of its state survives. */
export function eraseAll(sql: SqlStorage): void {
  sql.exec("DELETE FROM state_chunks");
  sql.exec("DELETE FROM state_versions");
}
