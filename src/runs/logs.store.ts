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
const artifactAad = (runId: string, kind: string, seq: number) => `run_artifacts/${runId}/${kind}/${seq}`;

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
  write(sql, job.run_id, job.phase, fresh, true);
  addAgentBytes(sql, job, fresh.byteLength);
  return size + fresh.byteLength;
}

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

/** An artifact's rows, sealed through Web Crypto before the critical section that stores them (their places are fixed). */
export async function sealArtifact(sql: SqlStorage, runId: string, kind: ArtifactKind, bytes: Uint8Array): Promise<Uint8Array[]> {
  const rows: Uint8Array[] = [];
  for (let off = 0; off < bytes.byteLength || rows.length === 0; off += PIECE_BYTES) {
    rows.push(await sealAsync(sql, bytes.subarray(off, off + PIECE_BYTES), artifactAad(runId, kind, rows.length)));
  }
  return rows;
}

/** Stores (or replaces) an artifact of the run's plan, its rows sealed by `sealArtifact`. */
export function putArtifact(sql: SqlStorage, runId: string, kind: ArtifactKind, rows: Uint8Array[]): void {
  sql.exec("DELETE FROM run_artifacts WHERE run_id = ? AND kind = ?", runId, kind);
  rows.forEach((sealed, seq) => {
    sql.exec("INSERT INTO run_artifacts (run_id, kind, seq, bytes, sealed) VALUES (?, ?, ?, ?, 1)", runId, kind, seq, sealed);
  });
}

/** An artifact's bytes: its rows read in one synchronous step, opened after it through Web Crypto. */
export async function getArtifact(sql: SqlStorage, runId: string, kind: ArtifactKind): Promise<Uint8Array | null> {
  const stored = sql
    .exec<{ seq: number; bytes: ArrayBuffer; sealed: number }>(
      "SELECT seq, bytes, sealed FROM run_artifacts WHERE run_id = ? AND kind = ? ORDER BY seq",
      runId,
      kind,
    )
    .toArray();
  const rows = await Promise.all(stored.map((r) => openRowAsync(sql, r.bytes, r.sealed, artifactAad(runId, kind, r.seq))));
  if (rows.length === 0) return null;
  const result = new Uint8Array(rows.reduce((n, r) => n + r.byteLength, 0));
  let at = 0;
  for (const r of rows) {
    result.set(r, at);
    at += r.byteLength;
  }
  return result;
}

/** Upgrade and rotation: logs and artifacts not sealed under the current key are sealed under it. */
export function resealRunBlobs(sql: SqlStorage): { resealed: number; failed: number } {
  const logs = resealTable(sql, "run_logs", ["run_id", "phase", "start"], "bytes", (k) => logAad(String(k.run_id), String(k.phase), Number(k.start)));
  const artifacts = resealTable(sql, "run_artifacts", ["run_id", "kind", "seq"], "bytes", (k) => artifactAad(String(k.run_id), String(k.kind), Number(k.seq)));
  return { resealed: logs.resealed + artifacts.resealed, failed: logs.failed + artifacts.failed };
}
