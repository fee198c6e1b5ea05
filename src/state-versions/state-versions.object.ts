/**
 * The workspace object's state versions: the methods behind its state-version RPCs, on the tables it makes on first use
 * (STATE_VERSION_TABLES), and its share of the index write (the state-version id → workspace map). The SQL is in
 * state-versions.store.ts; the object reaches nothing of it but through this class.
 */
import { fail, ok, type Failure, type Result } from "../errors";
import type { Indexer } from "../workspaces/workspace.outbox";
import type { WorkspaceHost } from "../workspaces/workspace.host";
import { ensure, metaValue, present, setMeta, STATE_VERSION_TABLES } from "../workspaces/workspace.migrations";
import { isFailure } from "../workspaces/workspace.rules";
import type { Guard, WorkspaceRecord } from "../workspaces/workspace.types";
import { dropStateVersionIndexStatement, stateVersionIndexStatement } from "./state-versions.d1";
import {
  abortUpload,
  appendUpload,
  backingPresent,
  completeUpload,
  digestUpload,
  createVersion,
  currentResourcesUnknown,
  eraseAll,
  getRow,
  latestPending,
  listVersions,
  makeCurrent,
  manageBackingData,
  onUnlock,
  readParts,
  recount,
  rollbackVersion,
  sealPiece,
  unindexedVersions,
  view,
  type BackingAction,
  type BlobKind,
  type CreateVersionInput,
  type RollbackInput,
  type StateVersionView,
} from "./state-versions.store";

type Unindexed = ReturnType<typeof unindexedVersions>;

export class StateVersions {
  /** The last version (by seq) the D1 map has: read from `meta` once per start of the object, kept here after. */
  private indexedSeq: number | null = null;

  constructor(private readonly host: WorkspaceHost) {}

  private get made(): boolean {
    return present(this.host.sql, STATE_VERSION_TABLES);
  }

  /** The tables, made if this is the workspace's first state version (inside the change that writes it). */
  private make(): SqlStorage {
    return ensure(this.host.sql, STATE_VERSION_TABLES);
  }

  /** Creates a state version; the caller must hold the lock. With inline state it is finalized at once. */
  async create(input: CreateVersionInput & { guard?: Guard }): Promise<Result<StateVersionView>> {
    const result = await this.host.mutate(input, (w) => createVersion(this.make(), w, input), "after");
    return result.ok ? ok(view(getRow(this.host.sql, input.id)!), result.bookmark) : result;
  }

  /** A new current version copying an older one of this workspace (under the caller's lock). */
  async rollback(input: RollbackInput & { guard?: Guard }): Promise<Result<StateVersionView>> {
    const result = await this.host.mutate(input, (w) => rollbackVersion(this.make(), w, input), "after");
    return result.ok ? ok(view(getRow(this.host.sql, input.id)!), result.bookmark) : result;
  }

  /** Stores one piece of an upload through a signed URL (pieces of one upload arrive in order). */
  async appendBlob(input: { id: string; kind: BlobKind; upload: string; bytes: Uint8Array }): Promise<Result<null>> {
    if (this.host.load().kind !== "live" || !this.made) return fail("not_found");
    // Sealed before the critical section (Web Crypto awaits); `appendUpload` checks nothing moved meanwhile.
    const piece = await sealPiece(this.host.sql, input.id, input.kind, input.upload, input.bytes);
    return appendUpload(this.host.sql, input.id, input.kind, input.upload, piece) ?? ok(null);
  }

  abortBlob(input: { id: string; kind: BlobKind; upload: string }): Result<null> {
    if (this.made) abortUpload(this.host.sql, input.id, input.kind, input.upload);
    return ok(null);
  }

  /** Completes an upload with its last piece: md5 verified, parsed, finalized and (unless intermediate) made current. */
  async completeBlob(input: { id: string; kind: BlobKind; upload: string; bytes: Uint8Array; now: string; guard?: Guard }): Promise<Result<null>> {
    const sql = this.host.sql;
    if (this.host.load().kind !== "live" || !this.made) return fail("not_found");
    // The last piece sealed and the whole upload read (MD5, text) before the critical section, through Web Crypto.
    const last = await sealPiece(sql, input.id, input.kind, input.upload, input.bytes);
    const digest = await digestUpload(sql, input.id, input.kind, input.upload, last, input.bytes);
    const done = completeUpload(sql, input.id, input.kind, input.upload, last, digest);
    if (isFailure(done)) return done;
    const row = done.promote;
    if (row) {
      const result = await this.host.mutate(input, (w) => makeCurrent(sql, w, row, input.now), "after");
      if (!result.ok) return result;
    }
    // A JSON state read in place of an unreadable raw state: the record follows if that version is current.
    const current = this.host.live();
    if (done.reread && !isFailure(current) && recount(sql, structuredClone(current))) {
      const change = (w: WorkspaceRecord) => {
        recount(sql, w);
        return w;
      };
      const result = await this.host.mutate(input, change, "after");
      if (!result.ok) return result;
    }
    return ok(null);
  }

  get(id: string): Result<{ stateVersion: StateVersionView; workspace: WorkspaceRecord }> {
    const w = this.host.live();
    if (isFailure(w)) return w;
    const row = this.made ? getRow(this.host.sql, id) : null;
    return row ? ok({ stateVersion: view(row), workspace: w }) : fail("not_found");
  }

  list(input: { offset: number; limit: number; status?: string }): Result<{ items: StateVersionView[]; total: number }> {
    const w = this.host.live();
    if (isFailure(w)) return w;
    return ok(this.made ? listVersions(this.host.sql, input) : { items: [], total: 0 });
  }

  /** A blob in pieces of a few MiB (an RPC result is limited to 32 MiB; states may be larger). */
  async readBlobPart(input: { id: string; kind: BlobKind; fromSeq: number }): Promise<Result<{ bytes: Uint8Array; next: number | null }>> {
    if (this.host.load().kind !== "live" || !this.made || !backingPresent(this.host.sql, input.id)) return fail("not_found");
    const part = await readParts(this.host.sql, input.id, input.kind, input.fromSeq);
    return part ? ok(part) : fail("not_found");
  }

  /** Terraform Enterprise's backing-data actions on one state version (no index change: the record is untouched). */
  manageBackingData(input: { id: string; action: BackingAction; guard?: Guard }): Result<null> {
    const w = this.host.guarded(input.guard);
    if (isFailure(w)) return w;
    if (!this.made) return fail("not_found");
    return manageBackingData(this.host.sql, input.id, input.action, w.currentStateVersionId) ?? ok(null);
  }

  // ---- for the other capabilities, inside their critical sections ----

  /**
   * On unlock: refused while the latest version is still pending; otherwise the newest finalized intermediate
   * version newer than the current one becomes current.
   */
  onUnlock(w: WorkspaceRecord, now: string, opts: { force: boolean }): WorkspaceRecord | Failure {
    return this.made ? onUnlock(this.host.sql, w, now, opts) : w;
  }

  /** Safe delete's questions: is the latest version's state still to come, are the current one's resources unknown? */
  blocksSafeDelete(w: WorkspaceRecord): { pending: boolean; unknown: boolean } {
    if (!this.made) return { pending: false, unknown: false };
    return { pending: latestPending(this.host.sql), unknown: currentResourcesUnknown(this.host.sql, w) };
  }

  /** Once D1 has the workspace's delete: nothing of its state survives. */
  erase(): void {
    if (this.made) eraseAll(this.host.sql);
  }

  /** The state-version id → workspace map in D1: the versions it does not have yet, or all of them dropped. */
  readonly indexer: Indexer<Unindexed> = {
    pending: () => (this.made ? unindexedVersions(this.host.sql, this.seq()) : []),
    statements: (session, { record, deleted }, versions) => {
      if (deleted) return [dropStateVersionIndexStatement(session, record.id)];
      return versions?.length ? [stateVersionIndexStatement(session, record.id, versions)] : [];
    },
    indexed: (_entry, versions) => {
      if (!versions?.length) return;
      this.indexedSeq = versions[versions.length - 1]!.seq;
      setMeta(this.host.sql, "sv_indexed_seq", String(this.indexedSeq));
    },
  };

  private seq(): number {
    this.indexedSeq ??= Number(metaValue(this.host.sql, "sv_indexed_seq") ?? 0);
    return this.indexedSeq;
  }
}
