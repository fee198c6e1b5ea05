/**
 * The SQL of the state-version tables in the workspace's object (STATE_VERSION_TABLES in
 * src/workspaces/workspace.migrations.ts): metadata rows and the state bodies in chunks below the 2 MB row limit.
 * Synchronous helpers its capability (state-versions.object.ts) calls in its critical sections: none of them awaits,
 * so each runs inside one serialised read-check-write of the workspace.
 *
 * Sealed at rest (src/platform/seal.ts): every chunk, and `parsed` (what was read of the state: resources, outputs and
 * their values). The rows' metadata (serial, lineage, md5, sizes, status) stays clear for the queries that need it.
 * Readers here get plaintext; a row stored in clear by earlier code reads as it is until the object reseals it.
 */
import SparkMD5 from "spark-md5";
import { fail, type Failure } from "../errors";
import { openRow, openRowAsync, openText, resealTable, sealAsync, sealText, seal, tryOpen } from "../platform/seal";
import type { LockHolder, WorkspaceRecord } from "../workspaces/workspace.types";
import { deriveState, fromClient, resourcesUnknown, type ParsedState } from "./state.parse";

/** One stored chunk; also the most a blob read returns per RPC call (well under the 32 MiB RPC limit). */
export const CHUNK_BYTES = 1024 * 1024;
export const READ_PARTS_PER_CALL = 8;

export type BlobKind = "state" | "json";
/** Chunks of `json-state-outputs` as the client sent them inline (never served; read when the raw state is unreadable). */
const OUTPUTS = "outputs";

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
  /** The version a rollback copied (schema 8; null otherwise). */
  rollback_of: string | null;
  /** The run whose token wrote the version (schema 10; null otherwise): the `run` relationship. */
  run_id: string | null;
};

export interface StateVersionView extends Omit<StateVersionRow, "parsed"> {
  parsed: ParsedState | null;
}

/**
 * Schema 7: versions parsed before it are read again (in clear: the store predates sealing). The parser used to take any raw state it could not read
 * (OpenTofu's encrypted envelope, anything not JSON) for an empty one, so a version that showed no resources
 * may in truth hold some. Only those (a count of 0) are re-read, now with the client's JSON state beside them;
 * one whose blobs are gone can no longer be read at all and is unknown. The caller then brings the record in
 * line (`recount`).
 */
export function migrateReparse(sql: SqlStorage): void {
  const rows = sql
    .exec<{ id: string; parsed: string; json_present: number }>("SELECT id, parsed, json_present FROM state_versions WHERE parsed IS NOT NULL")
    .toArray();
  for (const row of rows) {
    const old = JSON.parse(row.parsed) as ParsedState;
    if (old.source !== undefined || old.resourceCount > 0) continue;
    const hasState = sql.exec<{ n: number }>("SELECT count(*) AS n FROM state_chunks WHERE sv_id = ? AND kind = 'state'", row.id).one().n > 0;
    const json = row.json_present === 1 ? clearText(sql, row.id, "json") : null;
    const next = hasState ? deriveState(clearText(sql, row.id, "state"), json, null) : fromClient(json, null);
    sql.exec("UPDATE state_versions SET parsed = ? WHERE id = ?", JSON.stringify(next), row.id);
  }
}

/** A blob read by the schema 7 step: a store older than sealing has no `sealed` flag yet, its chunks are all clear. */
function clearText(sql: SqlStorage, svId: string, kind: string): string {
  if (
    sql
      .exec<{ name: string }>("PRAGMA table_info(state_chunks)")
      .toArray()
      .some((c) => c.name === "sealed")
  )
    return textOfChunks(sql, svId, kind);
  const decoder = new TextDecoder();
  const rows = sql.exec<{ data: ArrayBuffer }>("SELECT data FROM state_chunks WHERE sv_id = ? AND kind = ? ORDER BY seq", svId, kind);
  return [...rows].map((r) => decoder.decode(r.data, { stream: true })).join("") + decoder.decode();
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

/** Where `parsed` sits, for its associated data (not the version's id: a rollback copies the sealed value as it is). */
const PARSED_AAD = "state_versions.parsed";

/** A stored row as readers see it: `parsed` opened. */
function rowOf(sql: SqlStorage, stored: StateVersionRow): StateVersionRow {
  const parsed = stored.parsed as string | ArrayBuffer | null;
  return parsed === null || typeof parsed === "string" ? stored : { ...stored, parsed: openText(sql, parsed, PARSED_AAD) };
}

const sealParsed = (sql: SqlStorage, parsed: ParsedState | null) => (parsed ? sealText(sql, JSON.stringify(parsed), PARSED_AAD) : null);

function rows(sql: SqlStorage, query: string, ...binds: SqlStorageValue[]): StateVersionRow[] {
  return sql
    .exec<StateVersionRow>(query, ...binds)
    .toArray()
    .map((r) => rowOf(sql, r));
}

export function view(row: StateVersionRow): StateVersionView {
  return { ...row, parsed: row.parsed ? (JSON.parse(row.parsed) as ParsedState) : null };
}

/** A page of the versions, newest first (only those of `status` when given). */
export function listVersions(sql: SqlStorage, input: { offset: number; limit: number; status?: string }): { items: StateVersionView[]; total: number } {
  const where = input.status ? "WHERE status = ?" : "";
  const binds = input.status ? [input.status] : [];
  const total = sql.exec<{ n: number }>(`SELECT count(*) AS n FROM state_versions ${where}`, ...binds).one().n;
  const items = rows(sql, `SELECT * FROM state_versions ${where} ORDER BY seq DESC LIMIT ? OFFSET ?`, ...binds, input.limit, input.offset).map(view);
  return { items, total };
}

export function getRow(sql: SqlStorage, id: string): StateVersionRow | null {
  return rows(sql, "SELECT * FROM state_versions WHERE id = ?", id)[0] ?? null;
}

/** The newest state version that was not superseded before its upload. */
export function latestRow(sql: SqlStorage): StateVersionRow | null {
  return rows(sql, "SELECT * FROM state_versions WHERE status <> 'discarded' ORDER BY seq DESC LIMIT 1")[0] ?? null;
}

function nextSeq(sql: SqlStorage): number {
  return (sql.exec<{ n: number | null }>("SELECT max(seq) AS n FROM state_versions").one().n ?? 0) + 1;
}

// ---- chunks ----

const staging = (kind: BlobKind, upload: string) => `${kind}~${upload}`;

/**
 * A chunk's associated data: its blob's kind (an upload's staging kind is renamed to it when complete) and its place in
 * the blob. Not the version's id: a rollback copies the sealed chunks as they are.
 */
const chunkAad = (kind: string, seq: number) => `state_chunks/${kind.split("~")[0]}/${seq}`;

/** Appends bytes after the chunks already stored under (svId, kind), in rows of at most CHUNK_BYTES, sealed. */
function appendChunks(sql: SqlStorage, svId: string, kind: string, bytes: Uint8Array): void {
  let seq = (sql.exec<{ n: number | null }>("SELECT max(seq) AS n FROM state_chunks WHERE sv_id = ? AND kind = ?", svId, kind).one().n ?? -1) + 1;
  for (let off = 0; off < bytes.byteLength; off += CHUNK_BYTES) {
    const data = seal(sql, bytes.subarray(off, off + CHUNK_BYTES), chunkAad(kind, seq));
    sql.exec("INSERT INTO state_chunks (sv_id, kind, seq, data, sealed) VALUES (?, ?, ?, ?, 1)", svId, kind, seq++, data);
  }
}

/** The blob's chunks in order, opened. */
function chunks(sql: SqlStorage, svId: string, kind: string): Iterable<Uint8Array> {
  const cursor = sql.exec<{ seq: number; data: ArrayBuffer; sealed: number }>(
    "SELECT seq, data, sealed FROM state_chunks WHERE sv_id = ? AND kind = ? ORDER BY seq",
    svId,
    kind,
  );
  return {
    *[Symbol.iterator]() {
      for (const row of cursor) yield openRow(sql, row.data, row.sealed, chunkAad(kind, row.seq));
    },
  };
}

/** Upgrade and rotation: every chunk and every `parsed` not sealed under the current key is sealed under it. */
export function resealStateVersions(sql: SqlStorage, keyId: Uint8Array): { resealed: number; failed: number } {
  const done = resealTable(sql, "state_chunks", ["sv_id", "kind", "seq"], "data", (k) => chunkAad(String(k.kind), Number(k.seq)));
  const stale = sql
    .exec<{ id: string }>("SELECT id FROM state_versions WHERE parsed IS NOT NULL AND (typeof(parsed) = 'text' OR substr(parsed, 1, 4) <> ?)", keyId)
    .toArray();
  for (const { id } of stale) {
    const parsed = tryOpen(() => getRow(sql, id)!.parsed!);
    if (parsed === null) done.failed++;
    else {
      sql.exec("UPDATE state_versions SET parsed = ? WHERE id = ?", sealText(sql, parsed, PARSED_AAD), id);
      done.resealed++;
    }
  }
  return done;
}

function clearChunks(sql: SqlStorage, svId: string, kind: string): void {
  sql.exec("DELETE FROM state_chunks WHERE sv_id = ? AND kind = ?", svId, kind);
}

/** Drops every unfinished upload of (svId, kind) (a finished one or a superseded version makes them moot). */
function clearStaging(sql: SqlStorage, svId: string, kind?: BlobKind): void {
  if (kind) sql.exec("DELETE FROM state_chunks WHERE sv_id = ? AND kind LIKE ?", svId, `${kind}~%`);
  else sql.exec("DELETE FROM state_chunks WHERE sv_id = ? AND kind LIKE '%~%'", svId);
}

/**
 * Up to READ_PARTS_PER_CALL chunks from `fromSeq`, and the seq to ask for next (null at the end). The rows are read in
 * one synchronous step and opened after it, through Web Crypto.
 */
export async function readParts(sql: SqlStorage, svId: string, kind: BlobKind, fromSeq: number): Promise<{ bytes: Uint8Array; next: number | null } | null> {
  const rows = sql
    .exec<{ seq: number; data: ArrayBuffer; sealed: number }>(
      "SELECT seq, data, sealed FROM state_chunks WHERE sv_id = ? AND kind = ? AND seq >= ? ORDER BY seq LIMIT ?",
      svId,
      kind,
      fromSeq,
      READ_PARTS_PER_CALL + 1,
    )
    .toArray();
  if (rows.length === 0 && fromSeq === 0) return null;
  const parts = await Promise.all(rows.slice(0, READ_PARTS_PER_CALL).map((p) => openRowAsync(sql, p.data, p.sealed, chunkAad(kind, p.seq))));
  const bytes = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let off = 0;
  for (const p of parts) {
    bytes.set(p, off);
    off += p.byteLength;
  }
  return { bytes, next: rows.length > READ_PARTS_PER_CALL ? rows[READ_PARTS_PER_CALL].seq : null };
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

/**
 * Brings the record's resource count and outputs in line with its current version as stored now (after the
 * version was read again: its JSON state arrived after its raw state, or the schema 7 migration). False when
 * they already agree, so nothing needs committing.
 */
export function recount(sql: SqlStorage, w: WorkspaceRecord): boolean {
  const row = w.currentStateVersionId ? getRow(sql, w.currentStateVersionId) : null;
  if (!row?.parsed) return false;
  const parsed = JSON.parse(row.parsed) as ParsedState;
  const outputIds = parsed.outputs.map((_, i) => outputId(row.id, i));
  if (w.resourceCount === parsed.resourceCount && (w.outputIds ?? []).join() === outputIds.join()) return false;
  w.resourceCount = parsed.resourceCount;
  w.outputIds = outputIds;
  return true;
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
  /** `json-state-outputs` as sent (it has no upload URL: only inline). */
  jsonOutputs?: Uint8Array | null;
  now: string;
  /** null: a run token's (it acts for no user). */
  createdBy: string | null;
}

/** Creating a state version, or rolling back to one, needs the caller's own lock (a 409 otherwise, as the real service). */
function notHeldBy(w: WorkspaceRecord, holder: LockHolder): Failure | null {
  const h = w.lock.holder;
  if (w.lock.locked && h && h.type === holder.type && h.id === holder.id) return null;
  return fail("conflict", "The workspace must be locked by the caller to create a state version");
}

/** A new version supersedes every still-pending one: a late upload to them can never replace newer state. */
function discardPending(sql: SqlStorage): void {
  for (const old of sql.exec<{ id: string }>("SELECT id FROM state_versions WHERE status = 'pending'").toArray()) clearStaging(sql, old.id);
  sql.exec("UPDATE state_versions SET status = 'discarded' WHERE status = 'pending'");
}

/**
 * Creates a state version under the caller's lock. A still-pending older version is superseded
 * (`discarded`), so a late upload to it can never replace newer state. With inline state the
 * version is finalized at once and, unless intermediate, becomes current.
 */
export function createVersion(sql: SqlStorage, w: WorkspaceRecord, input: CreateVersionInput): WorkspaceRecord | Failure {
  const unlocked = notHeldBy(w, input.holder);
  if (unlocked) return unlocked;
  const md5 = input.md5.toLowerCase();
  if (input.state && md5Hex(input.state) !== md5) {
    return fail("invalid_attribute", "md5 does not match the state", "/data/attributes/md5");
  }
  const text = (bytes: Uint8Array | null | undefined) => (bytes ? new TextDecoder().decode(bytes) : null);
  const parsed = input.state ? deriveState(text(input.state)!, text(input.jsonState), text(input.jsonOutputs)) : null;
  discardPending(sql);
  sql.exec(
    `INSERT INTO state_versions (id, seq, serial, md5, lineage, status, intermediate, created_at, size, parsed, json_present, created_by, run_id)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    input.id,
    nextSeq(sql),
    input.serial,
    md5,
    input.lineage,
    input.state ? "finalized" : "pending",
    input.intermediate ? 1 : 0,
    input.now,
    input.state?.byteLength ?? 0,
    sealParsed(sql, parsed),
    input.jsonState ? 1 : 0,
    input.createdBy,
    // A run's token holds the lock as the run: the version belongs to that run.
    input.holder.type === "runs" ? input.holder.id : null,
  );
  if (input.state) appendChunks(sql, input.id, "state", input.state);
  if (input.jsonState) appendChunks(sql, input.id, "json", input.jsonState);
  if (input.jsonOutputs) appendChunks(sql, input.id, OUTPUTS, input.jsonOutputs);
  // latest-change-at is the creation time of the latest state version.
  if (input.now > w.latestChangeAt) w.latestChangeAt = input.now;
  w.updatedAt = input.now;
  if (input.state && !input.intermediate) promote(sql, w, getRow(sql, input.id)!, input.now);
  return w;
}

export interface RollbackInput {
  id: string;
  /** The version to roll back to (`rollback-state-version`). */
  sourceId: string;
  holder: LockHolder;
  now: string;
  /** null: a run token's (it acts for no user). */
  createdBy: string | null;
}

/**
 * Rollback (the real API's `PATCH /workspaces/:id/state-versions`): a new version, current at once, holding a
 * copy of an older one: its bytes (so its serial and lineage), its JSON state and what was read of them. No
 * version is rewritten; the history keeps every one. Under the caller's lock, as a create. A version this
 * workspace does not have, or one without state (pending, discarded, backing data gone), is refused (422).
 */
export function rollbackVersion(sql: SqlStorage, w: WorkspaceRecord, input: RollbackInput): WorkspaceRecord | Failure {
  const unlocked = notHeldBy(w, input.holder);
  if (unlocked) return unlocked;
  const pointer = "/data/relationships/rollback-state-version/data/id";
  const src = getRow(sql, input.sourceId);
  if (!src) return fail("invalid_attribute", "State version not found", pointer);
  if (src.status !== "finalized" || !backingPresent(sql, src.id)) {
    return fail("invalid_attribute", "The state version has no state to roll back to (its state was never uploaded, or its data was deleted)", pointer);
  }
  discardPending(sql);
  sql.exec(
    `INSERT INTO state_versions (id, seq, serial, md5, lineage, status, intermediate, created_at, size, parsed, json_present, created_by, rollback_of)
     VALUES (?, ?, ?, ?, ?, 'finalized', 0, ?, ?, ?, ?, ?, ?)`,
    input.id,
    nextSeq(sql),
    src.serial,
    src.md5,
    src.lineage,
    input.now,
    src.size,
    sql.exec<{ parsed: SqlStorageValue }>("SELECT parsed FROM state_versions WHERE id = ?", src.id).one().parsed,
    src.json_present,
    input.createdBy,
    src.id,
  );
  // Complete blobs only (an unfinished upload's staging rows hold a `~`).
  sql.exec(
    "INSERT INTO state_chunks (sv_id, kind, seq, data, sealed) SELECT ?, kind, seq, data, sealed FROM state_chunks WHERE sv_id = ? AND kind NOT LIKE '%~%'",
    input.id,
    src.id,
  );
  if (input.now > w.latestChangeAt) w.latestChangeAt = input.now;
  promote(sql, w, getRow(sql, input.id)!, input.now);
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

/** An upload's piece sealed ahead of its critical section: the rows from seq `first` of its staging area. */
export interface SealedPiece {
  first: number;
  rows: Uint8Array[];
}

const nextChunkSeq = (sql: SqlStorage, svId: string, kind: string) =>
  (sql.exec<{ n: number | null }>("SELECT max(seq) AS n FROM state_chunks WHERE sv_id = ? AND kind = ?", svId, kind).one().n ?? -1) + 1;

/** Seals an upload's piece through Web Crypto as the rows after those its staging area holds (before the critical section). */
export async function sealPiece(sql: SqlStorage, svId: string, kind: BlobKind, upload: string, bytes: Uint8Array): Promise<SealedPiece> {
  const from = staging(kind, upload);
  const first = nextChunkSeq(sql, svId, from);
  const rows: Uint8Array[] = [];
  for (let off = 0; off < bytes.byteLength; off += CHUNK_BYTES) {
    rows.push(await sealAsync(sql, bytes.subarray(off, off + CHUNK_BYTES), chunkAad(from, first + rows.length)));
  }
  return { first, rows };
}

/** Stores a sealed piece, unless the staging area changed since it was sealed (false). */
function insertPiece(sql: SqlStorage, svId: string, kind: string, piece: SealedPiece): boolean {
  if (nextChunkSeq(sql, svId, kind) !== piece.first) return false;
  piece.rows.forEach((data, i) => {
    sql.exec("INSERT INTO state_chunks (sv_id, kind, seq, data, sealed) VALUES (?, ?, ?, ?, 1)", svId, kind, piece.first + i, data);
  });
  return true;
}

const uploadMoved = () => fail("conflict", "The upload changed while this piece was being stored");

/** Stores one piece of an upload in its own staging area (concurrent uploads never mix). */
export function appendUpload(sql: SqlStorage, svId: string, kind: BlobKind, upload: string, piece: SealedPiece): Failure | null {
  const refused = checkUploadable(getRow(sql, svId), kind);
  if (refused) return refused;
  return insertPiece(sql, svId, staging(kind, upload), piece) ? null : uploadMoved();
}

/** What a complete upload holds: its MD5, size and text, read through Web Crypto before the critical section. */
export interface UploadDigest {
  md5: string;
  size: number;
  text: string;
}

/** The staged rows before `piece` (opened one at a time) and the last piece's bytes, digested in one pass. */
export async function digestUpload(
  sql: SqlStorage,
  svId: string,
  kind: BlobKind,
  upload: string,
  piece: SealedPiece,
  last: Uint8Array,
): Promise<UploadDigest | null> {
  const from = staging(kind, upload);
  const hash = new SparkMD5.ArrayBuffer();
  const decoder = new TextDecoder();
  const parts: string[] = [];
  let size = 0;
  const add = (b: Uint8Array) => {
    hash.append(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer);
    size += b.byteLength;
    parts.push(decoder.decode(b, { stream: true }));
  };
  for (let seq = 0; seq < piece.first; seq++) {
    const row = sql
      .exec<{ data: ArrayBuffer; sealed: number }>("SELECT data, sealed FROM state_chunks WHERE sv_id = ? AND kind = ? AND seq = ?", svId, from, seq)
      .toArray()[0];
    if (!row) return null;
    add(await openRowAsync(sql, row.data, row.sealed, chunkAad(from, seq)));
  }
  add(last);
  parts.push(decoder.decode());
  return { md5: hash.end(), size, text: parts.join("") };
}

/** Drops the staged pieces of an upload that failed midway (too large, client gone). */
export function abortUpload(sql: SqlStorage, svId: string, kind: BlobKind, upload: string): void {
  clearChunks(sql, svId, staging(kind, upload));
}

/** The stored text of a blob, or null when there is none. */
function blobText(sql: SqlStorage, svId: string, kind: string): string | null {
  return sql.exec<{ n: number }>("SELECT count(*) AS n FROM state_chunks WHERE sv_id = ? AND kind = ?", svId, kind).one().n > 0
    ? textOfChunks(sql, svId, kind)
    : null;
}

/**
 * Completes an upload: the staged bytes replace the blob. For the raw state the md5 must match;
 * the version is then parsed (with the JSON state and outputs, if the raw state is unreadable) and
 * finalized: `promote` is the finalized row when it should become current (a non-intermediate state).
 * A JSON state arriving after an unreadable raw state is read in its place: `reread` then says the
 * version's resources changed (the record follows if it is current).
 */
export function completeUpload(
  sql: SqlStorage,
  svId: string,
  kind: BlobKind,
  upload: string,
  last: SealedPiece,
  digest: UploadDigest | null,
): { promote: StateVersionRow | null; reread: boolean } | Failure {
  const row = getRow(sql, svId);
  const refused = checkUploadable(row, kind);
  if (refused || !row) return refused ?? fail("not_found");
  const from = staging(kind, upload);
  if (!digest || !insertPiece(sql, svId, from, last)) return uploadMoved();
  let reread = false;
  if (kind === "state") {
    const { md5, size } = digest;
    if (md5 !== row.md5) {
      clearChunks(sql, svId, from);
      return fail("invalid_attribute", "md5 does not match the uploaded state", "/md5");
    }
    const json = row.json_present === 1 ? textOfChunks(sql, svId, "json") : null;
    const parsed = deriveState(digest.text, json, blobText(sql, svId, OUTPUTS));
    sql.exec("UPDATE state_versions SET status = 'finalized', size = ?, parsed = ? WHERE id = ?", size, sealParsed(sql, parsed), svId);
  } else {
    const parsed = row.parsed ? (JSON.parse(row.parsed) as ParsedState) : null;
    // The raw state came first and could not be read: its resources are the JSON state's.
    reread = resourcesUnknown(parsed);
    const next = reread ? sealParsed(sql, fromClient(digest.text, blobText(sql, svId, OUTPUTS))) : null;
    if (next) sql.exec("UPDATE state_versions SET json_present = 1, parsed = ? WHERE id = ?", next, svId);
    else sql.exec("UPDATE state_versions SET json_present = 1 WHERE id = ?", svId);
  }
  clearChunks(sql, svId, kind);
  sql.exec("UPDATE state_chunks SET kind = ? WHERE sv_id = ? AND kind = ?", kind, svId, from);
  clearStaging(sql, svId, kind);
  const done = getRow(sql, svId)!;
  return { promote: kind === "state" && done.intermediate === 0 ? done : null, reread };
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
  const candidate = rows(
    sql,
    "SELECT * FROM state_versions WHERE status = 'finalized' AND intermediate = 1 AND seq > ? ORDER BY seq DESC LIMIT 1",
    currentSeq,
  )[0];
  if (candidate) promote(sql, w, candidate, now);
  return w;
}

/** Whether the current version's resources could not be read (safe delete cannot tell the workspace manages none). */
export function currentResourcesUnknown(sql: SqlStorage, w: WorkspaceRecord): boolean {
  const row = w.currentStateVersionId ? getRow(sql, w.currentStateVersionId) : null;
  return !!row?.parsed && resourcesUnknown(JSON.parse(row.parsed) as ParsedState);
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
