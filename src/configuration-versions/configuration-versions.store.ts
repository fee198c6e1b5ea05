/**
 * The SQL of the configuration-version tables in the workspace's object (CONFIGURATION_VERSION_TABLES in
 * src/workspaces/workspace.migrations.ts, docs/runs.md): one row per version (its record as JSON) and the uploaded
 * tar.gz in pieces below the 2 MB row limit. Synchronous helpers its capability (configuration-versions.object.ts) and
 * the run engine call in their critical sections: none of them awaits.
 */
import { nextSeq } from "../platform/sql-records";
import { fail, type Failure } from "../errors";
import { openRowAsync, plainLength, resealTable, seal } from "../platform/seal";
import type { WorkspaceRecord } from "../workspaces/workspace.types";
import type { RunActor } from "../runs/runs.types";
import type { ConfigurationVersionRecord, IngressAttributes } from "./configuration-versions.types";

/** One stored piece; also the granularity of reads (8 pieces per RPC, well under the 32 MiB RPC limit). */
export const CV_PART_BYTES = 1024 * 1024;
export const CV_PARTS_PER_READ = 8;

type Row = { id: string; seq: number; record: string };

const parse = (row: Row): ConfigurationVersionRecord => JSON.parse(row.record) as ConfigurationVersionRecord;

export function getCv(sql: SqlStorage, id: string): ConfigurationVersionRecord | null {
  const row = sql.exec<Row>("SELECT id, seq, record FROM configuration_versions WHERE id = ?", id).toArray()[0];
  return row ? parse(row) : null;
}

function seqOf(sql: SqlStorage, id: string): number | null {
  return sql.exec<{ seq: number }>("SELECT seq FROM configuration_versions WHERE id = ?", id).toArray()[0]?.seq ?? null;
}

function save(sql: SqlStorage, cv: ConfigurationVersionRecord): void {
  sql.exec("UPDATE configuration_versions SET record = ? WHERE id = ?", JSON.stringify(cv), cv.id);
}

/** A page of the workspace's configuration versions, newest first. */
export function listCvs(sql: SqlStorage, offset: number, limit: number): { items: ConfigurationVersionRecord[]; total: number } {
  const total = sql.exec<{ n: number }>("SELECT count(*) AS n FROM configuration_versions").one().n;
  const items = sql.exec<Row>("SELECT id, seq, record FROM configuration_versions ORDER BY seq DESC LIMIT ? OFFSET ?", limit, offset).toArray().map(parse);
  return { items, total };
}

/** Configuration versions after `afterSeq` (the last one the D1 index has), for the next outbox flush. */
export function unindexedCvs(sql: SqlStorage, afterSeq: number): Array<{ id: string; seq: number }> {
  return sql.exec<{ id: string; seq: number }>("SELECT id, seq FROM configuration_versions WHERE seq > ? ORDER BY seq", afterSeq).toArray();
}

export interface CreateCvInput {
  id: string;
  now: string;
  source: string;
  speculative: boolean;
  provisional: boolean;
  autoQueueRuns: boolean;
  creator: RunActor;
  /** The agent pool the run its upload queues goes to, as the service resolved the execution mode (null: default pool). */
  agentPoolId?: string | null;
  /** The commit of a version made from a repository. */
  ingress?: IngressAttributes;
}

/**
 * Creates a pending configuration version. A non-provisional one becomes the workspace's current configuration
 * version at once, uploaded or not (go-tfe's provisional test relies on a never-uploaded one counting as current).
 */
export function createCv(sql: SqlStorage, w: WorkspaceRecord, input: CreateCvInput): WorkspaceRecord {
  const cv: ConfigurationVersionRecord = {
    id: input.id,
    workspaceId: w.id,
    status: "pending",
    source: input.source,
    speculative: input.speculative,
    provisional: input.provisional,
    autoQueueRuns: input.autoQueueRuns,
    error: null,
    errorMessage: null,
    statusTimestamps: {},
    createdAt: input.now,
    size: null,
    sha256: null,
    creator: input.creator,
    ...(input.agentPoolId !== undefined ? { agentPoolId: input.agentPoolId } : {}),
    ...(input.ingress ? { ingress: input.ingress } : {}),
  };
  const seq = nextSeq(sql, "configuration_versions");
  sql.exec("INSERT INTO configuration_versions (id, seq, record) VALUES (?, ?, ?)", cv.id, seq, JSON.stringify(cv));
  if (!input.provisional) w.currentConfigurationVersionId = cv.id;
  return w;
}

// ---- runs that use a configuration version (the runs table is the run engine's: docs/runs.md) ----

const FINAL_RUN_STATUSES = ["applied", "planned_and_finished", "discarded", "errored", "canceled", "force_canceled", "policy_soft_failed"];

/**
 * How many runs use the configuration version, and how many of those are not final. Reads the run engine's `runs`
 * table through the record fields docs/runs.md names (`configurationVersionId`, `status`); none while it is absent.
 */
function runsUsing(sql: SqlStorage, cvId: string): { all: number; active: number } {
  const table = sql.exec<{ n: number }>("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'runs'").one().n;
  if (table === 0) return { all: 0, active: 0 };
  const columns = sql.exec<{ name: string }>("PRAGMA table_info(runs)").toArray();
  if (!columns.some((c) => c.name === "record")) return { all: 0, active: 0 };
  const placeholders = FINAL_RUN_STATUSES.map(() => "?").join(", ");
  return sql
    .exec<{ all: number; active: number | null }>(
      `SELECT count(*) AS "all",
              sum(CASE WHEN json_extract(record, '$.status') NOT IN (${placeholders}) THEN 1 ELSE 0 END) AS active
       FROM runs WHERE json_extract(record, '$.configurationVersionId') = ?`,
      ...FINAL_RUN_STATUSES,
      cvId,
    )
    .toArray()
    .map((r) => ({ all: r.all, active: r.active ?? 0 }))[0]!;
}

// ---- upload ----

/** Refuses pieces for a version that no longer takes an upload: archived, errored, or already used by a run. */
function checkUploadable(sql: SqlStorage, cv: ConfigurationVersionRecord | null): Failure | null {
  if (!cv) return fail("not_found");
  if (cv.status === "pending") return null;
  if (cv.status === "uploaded") {
    // go-tfe uploads twice to one URL (TestConfigurationVersionsUploadTarGzip): a new archive replaces the old one
    // until a run has used it, so a run never sees its configuration change under it.
    return runsUsing(sql, cv.id).all === 0 ? null : fail("cv_upload_closed", "A run already uses this configuration version; create a new one");
  }
  return fail("cv_upload_closed");
}

/** Stores one piece of an upload in its own staging area (concurrent uploads never mix). */
export function appendCvUpload(sql: SqlStorage, cvId: string, upload: string, bytes: Uint8Array): Failure | null {
  const refused = checkUploadable(sql, getCv(sql, cvId));
  if (refused) return refused;
  appendParts(sql, cvId, upload, bytes);
  return null;
}

/** Drops the staged pieces of an upload that failed midway (too large, client gone). */
export function abortCvUpload(sql: SqlStorage, cvId: string, upload: string): void {
  sql.exec("DELETE FROM cv_parts WHERE cv_id = ? AND upload = ?", cvId, upload);
}

/**
 * Completes an upload with its last piece: the staged archive replaces any earlier one, and the version is
 * `uploaded`. `sha256` is the archive's digest, computed by the Worker as the bytes streamed through it. `first`
 * says whether the version was pending until now (only the first upload queues a run).
 */
export function completeCvUpload(
  sql: SqlStorage,
  input: { id: string; upload: string; bytes: Uint8Array; sha256: string; now: string },
): { cv: ConfigurationVersionRecord; first: boolean } | Failure {
  const cv = getCv(sql, input.id);
  const refused = checkUploadable(sql, cv);
  if (refused || !cv) {
    abortCvUpload(sql, input.id, input.upload);
    return refused ?? fail("not_found");
  }
  appendParts(sql, input.id, input.upload, input.bytes);
  const size =
    sql.exec<{ n: number | null }>(`SELECT sum(${plainLength("data")}) AS n FROM cv_parts WHERE cv_id = ? AND upload = ?`, input.id, input.upload).one().n ?? 0;
  const first = cv.status === "pending";
  sql.exec("DELETE FROM cv_parts WHERE cv_id = ? AND upload = ''", input.id);
  sql.exec("UPDATE cv_parts SET upload = '' WHERE cv_id = ? AND upload = ?", input.id, input.upload);
  const next: ConfigurationVersionRecord = {
    ...cv,
    status: "uploaded",
    size,
    sha256: input.sha256,
    statusTimestamps: { ...cv.statusTimestamps, "started-at": cv.statusTimestamps["started-at"] ?? input.now, "finished-at": input.now },
  };
  save(sql, next);
  return { cv: next, first };
}

/** A part's associated data: its archive and place (not the upload: a complete one is renamed to ''). */
const partAad = (cvId: string, seq: number) => `cv_parts/${cvId}/${seq}`;

/** Upgrade and rotation: archive parts not sealed under the current key are sealed under it. */
export function resealCvParts(sql: SqlStorage): { resealed: number; failed: number } {
  return resealTable(sql, "cv_parts", ["cv_id", "upload", "seq"], "data", (k) => partAad(String(k.cv_id), Number(k.seq)));
}

function appendParts(sql: SqlStorage, cvId: string, upload: string, bytes: Uint8Array): void {
  let seq = (sql.exec<{ n: number | null }>("SELECT max(seq) AS n FROM cv_parts WHERE cv_id = ? AND upload = ?", cvId, upload).one().n ?? -1) + 1;
  for (let off = 0; off < bytes.byteLength; off += CV_PART_BYTES) {
    const sealed = seal(sql, bytes.subarray(off, off + CV_PART_BYTES), partAad(cvId, seq));
    sql.exec("INSERT INTO cv_parts (cv_id, upload, seq, data, sealed) VALUES (?, ?, ?, ?, 1)", cvId, upload, seq++, sealed);
  }
}

/** Up to CV_PARTS_PER_READ pieces of an uploaded archive from `fromSeq`, and the seq to ask for next (null at the end). */
export async function readCvParts(sql: SqlStorage, cvId: string, fromSeq: number): Promise<{ bytes: Uint8Array; next: number | null } | Failure> {
  if (!hasArchive(getCv(sql, cvId))) return fail("not_found");
  const rows = sql
    .exec<{ seq: number; data: ArrayBuffer; sealed: number }>(
      "SELECT seq, data, sealed FROM cv_parts WHERE cv_id = ? AND upload = '' AND seq >= ? ORDER BY seq LIMIT ?",
      cvId,
      fromSeq,
      CV_PARTS_PER_READ + 1,
    )
    .toArray();
  // Read in one synchronous step, opened after it through Web Crypto.
  const parts = await Promise.all(rows.slice(0, CV_PARTS_PER_READ).map((p) => openRowAsync(sql, p.data, p.sealed, partAad(cvId, p.seq))));
  const bytes = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let off = 0;
  for (const p of parts) {
    bytes.set(p, off);
    off += p.byteLength;
  }
  return { bytes, next: rows.length > CV_PARTS_PER_READ ? rows[CV_PARTS_PER_READ]!.seq : null };
}

/** Whether a version's uploaded archive can be read: uploaded, its backing data neither soft deleted nor gone. */
export function hasArchive(cv: ConfigurationVersionRecord | null): boolean {
  return cv?.status === "uploaded" && !cv.backing;
}

// ---- backing data (Terraform Enterprise's data retention) ----

export type CvBackingAction = "soft_delete_backing_data" | "restore_backing_data" | "permanently_delete_backing_data";

/**
 * The backing-data transitions of an uploaded version, as for state versions: present → soft deleted → present
 * again, or soft deleted → deleted for good (its pieces erased). The workspace's current version, and one an
 * unfinished run uses, keep their data.
 */
export function manageCvBackingData(sql: SqlStorage, w: WorkspaceRecord, cvId: string, action: CvBackingAction): Failure | null {
  const cv = getCv(sql, cvId);
  if (!cv) return fail("not_found");
  if (cv.status !== "uploaded") return fail("transition_not_allowed", `transition not allowed: the configuration version is ${cv.status}`);
  if (w.currentConfigurationVersionId === cvId) {
    return fail("transition_not_allowed", "transition not allowed: the workspace's current configuration version keeps its backing data");
  }
  if (runsUsing(sql, cvId).active > 0) return fail("transition_not_allowed", "transition not allowed: a run using the configuration version is in progress");
  const present = cv.backing ?? "present";
  const [from, to] = (
    {
      soft_delete_backing_data: ["present", "soft_deleted"],
      restore_backing_data: ["soft_deleted", "present"],
      permanently_delete_backing_data: ["soft_deleted", "deleted"],
    } as const
  )[action];
  if (present === to) return null; // already there: repeating the request changes nothing
  if (present !== from) return fail("transition_not_allowed");
  const { backing: _, ...rest } = cv;
  save(sql, to === "present" ? rest : { ...rest, backing: to });
  if (to === "deleted") sql.exec("DELETE FROM cv_parts WHERE cv_id = ?", cvId);
  return null;
}

// ---- archive ----

/**
 * Archives an uploaded version (its archive is dropped): not the workspace's current one, and not while a run using
 * it is unfinished (HCP Terraform API docs: Archive a Configuration Version).
 */
export function archiveCv(sql: SqlStorage, w: WorkspaceRecord, cvId: string, now: string): ConfigurationVersionRecord | Failure {
  const cv = getCv(sql, cvId);
  if (!cv) return fail("not_found");
  if (w.currentConfigurationVersionId === cvId) return fail("cv_archive_current");
  if (cv.status !== "uploaded") return fail("cv_archive_not_allowed", `configuration could not be archived because it is ${cv.status}`);
  if (runsUsing(sql, cvId).active > 0) return fail("cv_archive_not_allowed", "configuration could not be archived because a run using it is in progress");
  sql.exec("DELETE FROM cv_parts WHERE cv_id = ?", cvId);
  const next: ConfigurationVersionRecord = { ...cv, status: "archived", statusTimestamps: { ...cv.statusTimestamps, "archived-at": now } };
  save(sql, next);
  return next;
}

// ---- for the run engine (called inside its critical sections) ----

/**
 * The configuration version a new run uses: the one named, or (null) the workspace's current one (`currentId`, the
 * record's `currentConfigurationVersionId`; without it, the newest non-provisional version). Only an uploaded
 * version can start a run.
 */
export function resolveCvForRun(sql: SqlStorage, cvId: string | null, currentId?: string | null): ConfigurationVersionRecord | Failure {
  const pointer = "/data/relationships/configuration-version/data/id";
  let id = cvId;
  if (id === null) {
    id =
      currentId ??
      sql
        .exec<Row>("SELECT id, seq, record FROM configuration_versions ORDER BY seq DESC")
        .toArray()
        .map(parse)
        .find((cv) => !cv.provisional)?.id ??
      null;
    if (id === null) return fail("cv_none", undefined, pointer);
  }
  const cv = getCv(sql, id);
  if (!cv) return fail("cv_not_found", undefined, pointer);
  if (cv.status !== "uploaded") return fail("cv_not_uploaded", undefined, pointer);
  if (cv.backing) return fail("cv_not_uploaded", "The configuration version's archive was deleted (data retention): it cannot start a run", pointer);
  return cv;
}

/**
 * A provisional version becomes the workspace's current one when a run using it applies, unless a newer version
 * exists (then the newer configuration stays the default). The engine calls this in the critical section that
 * records the apply; it changes `w` in place and says whether it did.
 */
export function promoteProvisional(sql: SqlStorage, w: WorkspaceRecord, cvId: string): boolean {
  const cv = getCv(sql, cvId);
  const seq = seqOf(sql, cvId);
  if (!cv?.provisional || seq === null || w.currentConfigurationVersionId === cvId) return false;
  const newer = sql.exec<{ n: number }>("SELECT count(*) AS n FROM configuration_versions WHERE seq > ?", seq).one().n;
  if (newer > 0) return false;
  w.currentConfigurationVersionId = cvId;
  return true;
}

/** Once D1 has a workspace's delete: nothing of its configuration survives. */
export function eraseConfigurationVersions(sql: SqlStorage): void {
  sql.exec("DELETE FROM cv_parts");
  sql.exec("DELETE FROM configuration_versions");
}
