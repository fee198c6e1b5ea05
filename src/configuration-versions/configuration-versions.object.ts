/**
 * The workspace object's configuration versions: the methods behind its configuration-version RPCs, on the tables it
 * makes on first use (CONFIGURATION_VERSION_TABLES), and its share of the index write (the configuration-version id →
 * workspace map). The SQL is in configuration-versions.store.ts.
 */
import { fail, ok, type Failure, type Result } from "../errors";
import type { Indexer } from "../workspaces/workspace.outbox";
import type { WorkspaceHost } from "../workspaces/workspace.host";
import { CONFIGURATION_VERSION_TABLES, ensure, metaValue, present, setMeta } from "../workspaces/workspace.migrations";
import { isFailure } from "../workspaces/workspace.rules";
import type { Guard, WorkspaceRecord } from "../workspaces/workspace.types";
import { cvIndexStatement, dropCvIndexStatement } from "./configuration-versions.d1";
import {
  abortCvUpload,
  appendCvUpload,
  archiveCv,
  completeCvUpload,
  createCv,
  eraseConfigurationVersions,
  getCv,
  listCvs,
  manageCvBackingData,
  promoteProvisional,
  readCvParts,
  resolveCvForRun,
  unindexedCvs,
  type CreateCvInput,
  type CvBackingAction,
} from "./configuration-versions.store";
import type { ConfigurationVersionRecord } from "./configuration-versions.types";

type Unindexed = ReturnType<typeof unindexedCvs>;

/** The run engine's hook for an upload that asked for `auto-queue-runs` (runs.object.ts `queueForUpload`). */
export type QueueRun = (w: WorkspaceRecord, cv: ConfigurationVersionRecord, now: string) => WorkspaceRecord | Failure;

export class ConfigurationVersions {
  /** The last version (by seq) the D1 map has: read from `meta` once per start of the object, kept here after. */
  private indexedSeq: number | null = null;

  constructor(
    private readonly host: WorkspaceHost,
    private readonly queueRun: QueueRun,
  ) {}

  private get made(): boolean {
    return present(this.host.sql, CONFIGURATION_VERSION_TABLES);
  }

  /** Creates a pending version, committed with the record (a non-provisional one becomes current) so the index flush carries it. */
  async create(input: CreateCvInput & { guard?: Guard }): Promise<Result<{ cv: ConfigurationVersionRecord; workspace: WorkspaceRecord }>> {
    const result = await this.host.mutate(input, (w) => createCv(ensure(this.host.sql, CONFIGURATION_VERSION_TABLES), w, input));
    return result.ok ? ok({ cv: getCv(this.host.sql, input.id)!, workspace: result.value }, result.bookmark) : result;
  }

  get(id: string): Result<{ cv: ConfigurationVersionRecord; workspace: WorkspaceRecord }> {
    const w = this.host.live();
    if (isFailure(w)) return w;
    const cv = this.made ? getCv(this.host.sql, id) : null;
    return cv ? ok({ cv, workspace: w }) : fail("not_found");
  }

  list(input: { offset: number; limit: number }): Result<{ items: ConfigurationVersionRecord[]; total: number }> {
    const w = this.host.live();
    if (isFailure(w)) return w;
    return ok(this.made ? listCvs(this.host.sql, input.offset, input.limit) : { items: [], total: 0 });
  }

  /** Archives an uploaded, non-current version with no unfinished run; the record is unchanged, so nothing is indexed. */
  archive(input: { id: string; now: string; guard?: Guard }): Result<ConfigurationVersionRecord> {
    const w = this.host.guarded(input.guard);
    if (isFailure(w)) return w;
    if (!this.made) return fail("not_found");
    const cv = archiveCv(this.host.sql, w, input.id, input.now);
    return isFailure(cv) ? cv : ok(cv);
  }

  /** Terraform Enterprise's backing-data actions on one version (the record's index row is unchanged). */
  manageBackingData(input: { id: string; action: CvBackingAction; guard?: Guard }): Result<null> {
    const w = this.host.guarded(input.guard);
    if (isFailure(w)) return w;
    if (!this.made) return fail("not_found");
    return manageCvBackingData(this.host.sql, w, input.id, input.action) ?? ok(null);
  }

  /** Stores one piece of an upload through a signed URL (pieces of one upload arrive in order). */
  appendUpload(input: { id: string; upload: string; bytes: Uint8Array }): Result<null> {
    if (this.host.load().kind !== "live" || !this.made) return fail("not_found");
    return appendCvUpload(this.host.sql, input.id, input.upload, input.bytes) ?? ok(null);
  }

  abortUpload(input: { id: string; upload: string }): Result<null> {
    if (this.made) abortCvUpload(this.host.sql, input.id, input.upload);
    return ok(null);
  }

  /**
   * Completes an upload with its last piece: the version is `uploaded`. Its first upload, when it asked for
   * `auto-queue-runs`, goes to the run engine's hook in the same critical section.
   */
  async completeUpload(input: { id: string; upload: string; bytes: Uint8Array; sha256: string; now: string }): Promise<Result<ConfigurationVersionRecord>> {
    if (this.host.load().kind !== "live" || !this.made) return fail("not_found");
    const done = completeCvUpload(this.host.sql, input);
    if (isFailure(done)) return done;
    if (done.first && done.cv.autoQueueRuns) {
      // The run is queued in the critical section that records the upload (no await since `completeCvUpload`).
      const queued = await this.host.mutate({}, (w) => this.queueRun(w, done.cv, input.now));
      if (!queued.ok) console.log(JSON.stringify({ level: "warn", msg: "auto-queue after upload failed", cv: input.id, code: queued.code }));
    }
    return ok(done.cv);
  }

  /** An uploaded archive in parts of a few MiB (an RPC result is limited to 32 MiB; archives may be larger). */
  async readPart(input: { id: string; fromSeq: number }): Promise<Result<{ bytes: Uint8Array; next: number | null }>> {
    if (this.host.load().kind !== "live" || !this.made) return fail("not_found");
    const part = await readCvParts(this.host.sql, input.id, input.fromSeq);
    return isFailure(part) ? part : ok(part);
  }

  // ---- for the run engine, inside its critical sections ----

  /** The version a new run uses: the one named, or the workspace's current one (resolveCvForRun). */
  forRun(cvId: string | null, currentId?: string | null): ConfigurationVersionRecord | Failure {
    // A workspace that never had a version gets its (empty) tables here, and the run is refused as for none.
    return resolveCvForRun(ensure(this.host.sql, CONFIGURATION_VERSION_TABLES), cvId, currentId);
  }

  /** A provisional version a run applied becomes current unless a newer one exists (promoteProvisional). */
  promoteProvisional(w: WorkspaceRecord, cvId: string): boolean {
    return this.made && promoteProvisional(this.host.sql, w, cvId);
  }

  /** Once D1 has the workspace's delete: nothing of its configuration survives. */
  erase(): void {
    if (this.made) eraseConfigurationVersions(this.host.sql);
  }

  /** The configuration-version id → workspace map in D1: the versions it does not have yet, or all of them dropped. */
  readonly indexer: Indexer<Unindexed> = {
    pending: () => (this.made ? unindexedCvs(this.host.sql, this.seq()) : []),
    statements: (session, { record, deleted }, cvs) => {
      if (deleted) return [dropCvIndexStatement(session, record.id)];
      return cvs?.length ? [cvIndexStatement(session, record, cvs)] : [];
    },
    indexed: (_entry, cvs) => {
      if (!cvs?.length) return;
      this.indexedSeq = cvs[cvs.length - 1]!.seq;
      setMeta(this.host.sql, "cv_indexed_seq", String(this.indexedSeq));
    },
  };

  private seq(): number {
    this.indexedSeq ??= Number(metaValue(this.host.sql, "cv_indexed_seq") ?? 0);
    return this.indexedSeq;
  }
}
