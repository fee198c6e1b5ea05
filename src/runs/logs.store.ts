/**
 * Phase logs and plan artifacts inside the workspace's Durable Object (docs/runs.md).
 *
 * A phase's log is stored framed, as go-tfe's log reader reads it: STX (0x02) when an agent claims the phase, for an
 * apply the three-line preamble Terraform skips, the agent's bytes, and ETX (0x03) in the commit that makes the phase
 * terminal. The agent's `offset` counts only its own bytes (it never sees the framing), so a retried append is
 * recognised whatever the service added around it; readers' offsets count every byte of the framed stream.
 *
 * Both are sealed at rest (src/platform/seal.ts): `start` and sizes count the plain bytes.
 */
import { fail, type Failure } from "../errors";
import { LIMITS } from "../limits";
import { openRow, openRowAsync, plainLength, resealTable, seal, sealAsync } from "../platform/seal";
import { addAgentBytes, type JobRow } from "./jobs.store";
import type { ArtifactKind, Phase } from "./runs.types";

export const STX = 0x02;
export const ETX = 0x03;
/** Rows stay well below the 2 MB row limit of the object's SQLite. */
const PIECE_BYTES = 512 * 1024;

const encoder = new TextEncoder();

/** The lines Terraform discards at the head of an apply log (its testdata shows this shape). */
export function applyPreamble(terraformVersion: string): Uint8Array {
  return encoder.encode(`Terraform v${terraformVersion}\n\nInitializing plugins and modules...\n`);
}

const logAad = (runId: string, phase: string, start: number) => `run_logs/${runId}/${phase}/${start}`;

export function logSize(sql: SqlStorage, runId: string, phase: Phase): number {
  return sql.exec<{ n: number | null }>(`SELECT sum(${plainLength("bytes")}) AS n FROM run_logs WHERE run_id = ? AND phase = ?`, runId, phase).one().n ?? 0;
}

function write(sql: SqlStorage, runId: string, phase: Phase, bytes: Uint8Array, agent: boolean): void {
  let start = logSize(sql, runId, phase);
  for (let off = 0; off < bytes.byteLength; off += PIECE_BYTES) {
    const piece = bytes.subarray(off, Math.min(bytes.byteLength, off + PIECE_BYTES));
    const sealed = seal(sql, piece, logAad(runId, phase, start));
    sql.exec("INSERT INTO run_logs (run_id, phase, start, bytes, agent, sealed) VALUES (?, ?, ?, ?, ?, 1)", runId, phase, start, sealed, agent ? 1 : 0);
    start += piece.byteLength;
  }
}

/** The phase was claimed: the stream opens. */
export function openLog(sql: SqlStorage, runId: string, phase: Phase, preamble: Uint8Array | null): void {
  write(sql, runId, phase, Uint8Array.of(STX), false);
  if (preamble) write(sql, runId, phase, preamble, false);
}

/** The phase is terminal (same commit): an optional last line, then ETX. A log never opened is opened first. */
export function closeLog(sql: SqlStorage, runId: string, phase: Phase, line?: string): void {
  if (logSize(sql, runId, phase) === 0) write(sql, runId, phase, Uint8Array.of(STX), false);
  if (line) write(sql, runId, phase, encoder.encode(line), false);
  write(sql, runId, phase, Uint8Array.of(ETX), false);
}

/**
 * The agent's bytes at its `offset` (its own bytes so far). A retry of bytes already stored answers the size; bytes
 * partly stored add only their new tail; an offset past the end is a gap (409).
 */
export function appendAgentLog(sql: SqlStorage, job: JobRow, offset: number, bytes: Uint8Array): number | Failure {
  const size = job.agent_bytes;
  if (offset > size) return fail("log_gap", `The log has ${size} bytes; an append at offset ${offset} would leave a gap`);
  const fresh = bytes.subarray(Math.min(bytes.byteLength, size - offset));
  if (fresh.byteLength === 0) return size;
  // Past the phase's bound the agent's bytes are counted (its offsets go on) but no longer kept; the line that says
  // so is written once, where the bound is crossed.
  const room = Math.max(0, LIMITS.runLogPhaseBytes - size);
  if (room > 0) write(sql, job.run_id, job.phase, fresh.subarray(0, room), true);
  if (fresh.byteLength > room && size <= LIMITS.runLogPhaseBytes) write(sql, job.run_id, job.phase, encoder.encode(truncatedLine()), false);
  addAgentBytes(sql, job, fresh.byteLength);
  return size + fresh.byteLength;
}

/** The last line of a log cut at its bound (the phase itself runs on). */
export const truncatedLine = () =>
  `\nLog truncated: this phase's log reached its limit of ${LIMITS.runLogPhaseBytes} bytes; the rest of Terraform's output was not kept.\n`;

/** At most `limit` bytes of the framed stream from `offset` (empty before anything exists, or past the end). */
export function readLog(sql: SqlStorage, runId: string, phase: Phase, offset: number, limit: number): Uint8Array {
  const rows = sql
    .exec<{ start: number; bytes: ArrayBuffer; sealed: number }>(
      `SELECT start, bytes, sealed FROM run_logs WHERE run_id = ? AND phase = ? AND start + ${plainLength("bytes")} > ? AND start < ? ORDER BY start`,
      runId,
      phase,
      offset,
      offset + limit,
    )
    .toArray();
  const out: Uint8Array[] = [];
  let total = 0;
  for (const row of rows) {
    const bytes = openRow(sql, row.bytes, row.sealed, logAad(runId, phase, row.start));
    const from = Math.max(0, offset - row.start);
    const piece = bytes.subarray(from, Math.min(bytes.byteLength, from + (limit - total)));
    out.push(piece);
    total += piece.byteLength;
    if (total >= limit) break;
  }
  const result = new Uint8Array(total);
  let at = 0;
  for (const piece of out) {
    result.set(piece, at);
    at += piece.byteLength;
  }
  return result;
}

// ---- artifacts ----

/**
 * Uploads arrive in pieces (the Worker streams the request body in), staged under their own key until complete, so
 * two uploads of one artifact never mix and a broken one never replaces a stored artifact. A row is sealed for its
 * artifact's kind and place, not its staging key, so completing an upload only renames its rows.
 */
const stagingKind = (kind: ArtifactKind, upload: string) => `${kind}@${upload}`;
const artifactAad = (runId: string, kind: string, seq: number) => `run_artifacts/${runId}/${kind.split("@")[0]}/${seq}`;

/** A piece of an upload sealed for its rows' places, ready for `appendArtifactUpload`. */
export interface SealedPiece {
  firstSeq: number;
  rows: Uint8Array[];
  plainBytes: number;
}

function nextSeq(sql: SqlStorage, runId: string, kind: string): number {
  return (sql.exec<{ n: number | null }>("SELECT max(seq) AS n FROM run_artifacts WHERE run_id = ? AND kind = ?", runId, kind).one().n ?? -1) + 1;
}

/**
 * Seals a piece of an upload through Web Crypto before the critical section that stores it. `at`: where a part
 * request begins (its rows start there); otherwise the piece follows what is staged.
 */
export async function sealArtifactPiece(
  sql: SqlStorage,
  runId: string,
  kind: ArtifactKind,
  upload: string,
  bytes: Uint8Array,
  at?: number,
): Promise<SealedPiece> {
  const firstSeq = at !== undefined ? Math.floor(at / PIECE_BYTES) : nextSeq(sql, runId, stagingKind(kind, upload));
  const rows: Uint8Array[] = [];
  for (let off = 0; off < bytes.byteLength; off += PIECE_BYTES) {
    rows.push(await sealAsync(sql, bytes.subarray(off, off + PIECE_BYTES), artifactAad(runId, kind, firstSeq + rows.length)));
  }
  return { firstSeq, rows, plainBytes: bytes.byteLength };
}

/**
 * One piece of an upload, in its staging area. `at`: the upload's offset where a part request begins (an upload sent
 * in several requests); what was staged from there on (a retried part) is replaced, and a gap before it is refused.
 */
export function appendArtifactUpload(sql: SqlStorage, runId: string, kind: ArtifactKind, upload: string, piece: SealedPiece, at?: number): Failure | null {
  const staged = stagingKind(kind, upload);
  if (at !== undefined) {
    if (at % PIECE_BYTES !== 0) return fail("bad_request", `A part of an artifact starts at a multiple of ${PIECE_BYTES} bytes`);
    sql.exec("DELETE FROM run_artifacts WHERE run_id = ? AND kind = ? AND seq >= ?", runId, staged, at / PIECE_BYTES);
    const size =
      sql.exec<{ n: number | null }>(`SELECT sum(${plainLength("bytes")}) AS n FROM run_artifacts WHERE run_id = ? AND kind = ?`, runId, staged).one().n ?? 0;
    if (size !== at) return fail("bad_request", `The upload has ${size} bytes; a part at offset ${at} would leave a gap`);
  } else if (piece.rows.length > 0 && nextSeq(sql, runId, staged) !== piece.firstSeq) {
    // Another piece of the same upload landed while this one was sealed: the client sent two at once.
    return fail("bad_request", "Pieces of one artifact upload are sent one after another");
  }
  piece.rows.forEach((sealed, i) => {
    sql.exec("INSERT INTO run_artifacts (run_id, kind, seq, bytes, sealed) VALUES (?, ?, ?, ?, 1)", runId, staged, piece.firstSeq + i, sealed);
  });
  return null;
}

/** Drops an upload that failed midway (too large, client gone). */
export function abortArtifactUpload(sql: SqlStorage, runId: string, kind: ArtifactKind, upload: string): void {
  sql.exec("DELETE FROM run_artifacts WHERE run_id = ? AND kind = ?", runId, stagingKind(kind, upload));
}

/** The upload's last piece: the staged artifact replaces any stored one (an empty artifact keeps one empty row). */
export function completeArtifactUpload(sql: SqlStorage, runId: string, kind: ArtifactKind, upload: string, piece: SealedPiece, at?: number): Failure | null {
  const staged = stagingKind(kind, upload);
  const refused = appendArtifactUpload(sql, runId, kind, upload, piece, at);
  if (refused) return refused;
  sql.exec("DELETE FROM run_artifacts WHERE run_id = ? AND kind = ?", runId, kind);
  sql.exec("UPDATE run_artifacts SET kind = ? WHERE run_id = ? AND kind = ?", kind, runId, staged);
  const any = sql.exec<{ n: number }>("SELECT count(*) AS n FROM run_artifacts WHERE run_id = ? AND kind = ?", runId, kind).one().n;
  if (any === 0) {
    const empty = seal(sql, new Uint8Array(), artifactAad(runId, kind, 0));
    sql.exec("INSERT INTO run_artifacts (run_id, kind, seq, bytes, sealed) VALUES (?, ?, 0, ?, 1)", runId, kind, empty);
  }
  return null;
}

/** Pieces one part read answers (a few MiB per call). */
const PIECES_PER_PART = 8;

type StoredPiece = { seq: number; bytes: ArrayBuffer; sealed: number };

/** Rows read in one synchronous step, opened after it through Web Crypto, in order. */
async function openPieces(sql: SqlStorage, runId: string, kind: ArtifactKind, rows: StoredPiece[]): Promise<Uint8Array> {
  const opened = await Promise.all(rows.map((r) => openRowAsync(sql, r.bytes, r.sealed, artifactAad(runId, kind, r.seq))));
  const result = new Uint8Array(opened.reduce((n, r) => n + r.byteLength, 0));
  let at = 0;
  for (const r of opened) {
    result.set(r, at);
    at += r.byteLength;
  }
  return result;
}

/** Up to PIECES_PER_PART pieces of a stored artifact from `fromSeq`, and the seq to ask for next (null at the end). */
export async function readArtifactPart(
  sql: SqlStorage,
  runId: string,
  kind: ArtifactKind,
  fromSeq: number,
): Promise<{ bytes: Uint8Array; next: number | null } | null> {
  const rows = sql
    .exec<StoredPiece>(
      "SELECT seq, bytes, sealed FROM run_artifacts WHERE run_id = ? AND kind = ? AND seq >= ? ORDER BY seq LIMIT ?",
      runId,
      kind,
      fromSeq,
      PIECES_PER_PART + 1,
    )
    .toArray();
  if (rows.length === 0) return fromSeq === 0 ? null : { bytes: new Uint8Array(), next: null };
  const bytes = await openPieces(sql, runId, kind, rows.slice(0, PIECES_PER_PART));
  return { bytes, next: rows.length > PIECES_PER_PART ? rows[PIECES_PER_PART].seq : null };
}

/** The stored artifact's size in bytes (null: none). */
export function artifactSize(sql: SqlStorage, runId: string, kind: ArtifactKind): number | null {
  const row = sql
    .exec<{ n: number | null; c: number }>(
      `SELECT sum(${plainLength("bytes")}) AS n, count(*) AS c FROM run_artifacts WHERE run_id = ? AND kind = ?`,
      runId,
      kind,
    )
    .one();
  return row.c === 0 ? null : (row.n ?? 0);
}

/** An artifact's bytes: its rows read in one synchronous step, opened after it. */
export async function getArtifact(sql: SqlStorage, runId: string, kind: ArtifactKind): Promise<Uint8Array | null> {
  const rows = sql.exec<StoredPiece>("SELECT seq, bytes, sealed FROM run_artifacts WHERE run_id = ? AND kind = ? ORDER BY seq", runId, kind).toArray();
  return rows.length === 0 ? null : openPieces(sql, runId, kind, rows);
}

/** Upgrade and rotation: logs and artifacts not sealed under the current key are sealed under it. */
export function resealRunBlobs(sql: SqlStorage): { resealed: number; failed: number } {
  const logs = resealTable(sql, "run_logs", ["run_id", "phase", "start"], "bytes", (k) => logAad(String(k.run_id), String(k.phase), Number(k.start)));
  const artifacts = resealTable(sql, "run_artifacts", ["run_id", "kind", "seq"], "bytes", (k) => artifactAad(String(k.run_id), String(k.kind), Number(k.seq)));
  return { resealed: logs.resealed + artifacts.resealed, failed: logs.failed + artifacts.failed };
}
