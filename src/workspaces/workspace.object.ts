import { DurableObject } from "cloudflare:workers";
import type { Bindings } from "../env";
import { fail, ok, type Failure, type Result } from "../errors";
import { applySettings, checkName, isFailure } from "./workspace.rules";
import { indexDeleteStatements, indexUpsertStatements, inheritedExecution, tagRowsJson } from "./workspaces.d1";
import { autoDestroyDue, fireAutoDestroy } from "./auto-destroy";
import type { CreateInput, Faults, Guard, LockHolder, UpdateInput, WorkspaceRecord, DataRetentionPolicy } from "./workspace.types";
import { checkSafeDelete, forceUnlock, lock, unlock } from "./lock.rules";
import { initialRecord, upgradeRecord } from "./workspace.record";
import { changeConsumers, setRetention, setSshKey, type ConsumerChange } from "./consumers.rules";
import {
  abortUpload,
  appendUpload,
  completeUpload,
  createVersion,
  currentResourcesUnknown,
  eraseAll,
  getRow,
  latestPending,
  makeCurrent,
  migrateStateVersions,
  onUnlock,
  readParts,
  unindexedVersions,
  backingPresent,
  manageBackingData,
  migrateBackingData,
  migrateReparse,
  migrateRollback,
  migrateStateVersionRuns,
  recount,
  rollbackVersion,
  type BackingAction,
  type RollbackInput,
  view,
  type BlobKind,
  type CreateVersionInput,
  type StateVersionRow,
  type StateVersionView,
} from "../state-versions/state-versions.store";
import { settledRefsStatement } from "../projects/projects.d1";
import { dropStateVersionIndexStatement, stateVersionIndexStatement } from "../state-versions/state-versions.d1";
import { applyTagChange, sameTags, type TagChange } from "../tags/workspace-tags.rules";
import { deleteVariable, eraseVariables, getVariable, insertVariable, listVariables, migrateVariables, updateVariable } from "../variables/variables.store";
import type { StoredVariable, VariablePatch } from "../variables/variables.types";
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
  migrateConfigurationVersions,
  readCvParts,
  unindexedCvs,
  type CreateCvInput,
  type CvBackingAction,
} from "../configuration-versions/configuration-versions.store";
import type { ConfigurationVersionRecord } from "../configuration-versions/configuration-versions.types";
import { cvIndexStatement, dropCvIndexStatement } from "../configuration-versions/configuration-versions.d1";
import { eraseRuns, getComment, getRun, listEvents, listRuns, markIndexed, migrateRuns, unindexedRuns } from "../runs/runs.store";
import { addComment, advance, appendLog, claimJob, createRun, expireLeases, finishJob, queueRunForUpload, runAction, touchJob } from "../runs/runs.engine";
import { earliestLease, expiredJobs } from "../runs/jobs.store";
import { getArtifact, putArtifact, readLog } from "../runs/logs.store";
import { dropRunIndexStatements, runIndexStatements } from "../runs/runs.d1";
import type {
  Actor,
  ArtifactKind,
  CancelSignal,
  ClaimInput,
  CreateRunInput,
  FinishInput,
  Job,
  Phase,
  RunActionInput,
  RunComment,
  RunEvent,
  RunRecord,
  RunsRpc,
} from "../runs/runs.types";

type Stored =
  | { kind: "absent" }
  | { kind: "live"; record: WorkspaceRecord }
  | { kind: "deleted"; record: WorkspaceRecord }
  /** A name lease was reclaimed before this workspace was ever created: it never will be. */
  | { kind: "abandoned" };

/** `bookmark`: the D1 session bookmark of the index write, for read-your-writes list reads. */
export type WorkspaceResult = Result<WorkspaceRecord>;
export type VariableResult = Result<{ workspace: WorkspaceRecord; variable: StoredVariable }>;

const SCHEMA_VERSION = 10;
const RETRY_BASE_MS = 1_000;
const RETRY_MAX_MS = 60_000;
/** When the alarm armed by every commit fires if the flush never finished (the process died). */
const CRASH_RETRY_MS = 5_000;

/**
 * One SQLite-backed Durable Object per workspace (named by its id): the single writer of that
 * workspace. Every mutation is read-check-write with no await in between, commits together with
 * an outbox row, then upserts the D1 index; the alarm retries the outbox until D1 has it.
 */
export class WorkspaceObject extends DurableObject<Bindings> implements RunsRpc {
  private flushChain: Promise<void> = Promise.resolve();
  /**
   * The tag rows and name this object's last successful index write carried (null after a start: the next write
   * sends them all). Only this object writes them for its workspace, so while they are unchanged they are not resent.
   */
  private indexed: { tags: string; name: string } | null = null;
  private bookmark: string | null = null;
  /** `indexedSeqs`' copy of the two meta rows (null until first read after a start). */
  private seqs: { sv: number; cv: number } | null = null;
  private faultBudget = 0;
  /** Test-only: the faults of the call `withFaults` is making, for the index write that call flushes. */
  private callFaults: Faults | undefined;
  /** Bench and test only: the index writes the call `traced` is making started, each marked once it finished. */
  private callFlushes: { done: boolean }[] | undefined;

  constructor(ctx: DurableObjectState, env: Bindings) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      this.migrate();
    });
  }

  private migrate(): void {
    const sql = this.ctx.storage.sql;
    sql.exec("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
    const row = sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = 'schema_version'").toArray()[0];
    const current = row ? Number(row.value) : 0;
    if (current < 1) {
      sql.exec(`CREATE TABLE IF NOT EXISTS workspace (
        singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
        kind TEXT NOT NULL,
        record TEXT,
        disowned TEXT NOT NULL DEFAULT '{}')`);
      sql.exec(`CREATE TABLE IF NOT EXISTS outbox (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        version INTEGER NOT NULL,
        op TEXT NOT NULL,
        record TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0)`);
    }
    if (current < 2) migrateStateVersions(sql);
    if (current < 3) this.splitTagSets();
    if (current < 4) migrateVariables(sql);
    if (current < 5) migrateBackingData(sql);
    if (current < 6) this.dropOrganizationName();
    if (current < 7) this.reparseStates();
    if (current < 8) migrateRollback(sql);
    if (current < 9) {
      migrateConfigurationVersions(sql);
      migrateRuns(sql);
    }
    if (current < 10) migrateStateVersionRuns(sql);
    // Every start of the object runs this: a current schema costs two reads and no write.
    if (current < SCHEMA_VERSION) sql.exec("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)", String(SCHEMA_VERSION));
  }

  /**
   * Schema 6: the record names its organisation by its immutable id (`organizationId`) alone, so an
   * organisation rename never has to visit it; the name it also kept is dropped from the stored record and from
   * pending outbox entries. Nothing else changes, so no new version is committed: D1 migration 0016 drops the name
   * from the index documents in the same way, and readers ignore it wherever it is left (`upgradeRecord`).
   */
  private dropOrganizationName(): void {
    const sql = this.ctx.storage.sql;
    const upgraded = (text: string): string | null => {
      const stored = JSON.parse(text) as WorkspaceRecord;
      const next = upgradeRecord(stored);
      return next === stored ? null : JSON.stringify(next);
    };
    const row = sql.exec<{ record: string | null }>("SELECT record FROM workspace WHERE singleton = 1").toArray()[0];
    const record = row?.record ? upgraded(row.record) : null;
    if (record !== null) sql.exec("UPDATE workspace SET record = ? WHERE singleton = 1", record);
    for (const entry of sql.exec<{ seq: number; record: string }>("SELECT seq, record FROM outbox").toArray()) {
      const next = upgraded(entry.record);
      if (next !== null) sql.exec("UPDATE outbox SET record = ? WHERE seq = ?", next, entry.seq);
    }
  }

  /**
   * Schema 7: state versions read again (see `migrateReparse`). A version once taken for empty may
   * now be unknown (safe delete refuses it; the record is unchanged) or show the resources and outputs of its
   * JSON state: a live record then follows its current version, committed as a new version with its outbox
   * entry so the index has the new count on the alarm's flush.
   */
  private reparseStates(): void {
    const sql = this.ctx.storage.sql;
    migrateReparse(sql);
    const s = this.load();
    if (s.kind !== "live") return;
    const next = structuredClone(s.record);
    if (!recount(sql, next)) return;
    this.commit("live", { ...next, version: s.record.version + 1 });
    void this.ctx.storage.setAlarm(Date.now());
  }

  /**
   * Schema 3: the one stored tag set becomes two — valued entries become bindings,
   * key-only entries flat tags (nothing is lost). A live record is committed as a new version with
   * its outbox entry, so the index (doc and workspace_tags rows) follows on the alarm's flush.
   */
  private splitTagSets(): void {
    const sql = this.ctx.storage.sql;
    const row = sql.exec<{ kind: string; record: string | null }>("SELECT kind, record FROM workspace WHERE singleton = 1").toArray()[0];
    if (!row?.record || (row.kind !== "live" && row.kind !== "deleted")) return;
    const stored = JSON.parse(row.record) as WorkspaceRecord;
    const upgraded = upgradeRecord(stored);
    if (upgraded === stored) return;
    if (row.kind === "deleted") {
      // A tombstone is never indexed again: only its shape changes.
      sql.exec("UPDATE workspace SET record = ? WHERE singleton = 1", JSON.stringify(upgraded));
      return;
    }
    this.commit("live", { ...upgraded, version: stored.version + 1 });
    void this.ctx.storage.setAlarm(Date.now());
  }

  // ---- storage helpers (synchronous) ----

  private load(): Stored {
    const row = this.ctx.storage.sql.exec<{ kind: string; record: string | null }>("SELECT kind, record FROM workspace WHERE singleton = 1").toArray()[0];
    if (!row) return { kind: "absent" };
    if (row.kind === "abandoned") return { kind: "abandoned" };
    const record = upgradeRecord(JSON.parse(row.record ?? "null") as WorkspaceRecord);
    return row.kind === "deleted" ? { kind: "deleted", record } : { kind: "live", record };
  }

  private disowned(): Record<string, number> {
    const row = this.ctx.storage.sql.exec<{ disowned: string }>("SELECT disowned FROM workspace WHERE singleton = 1").toArray()[0];
    return row ? (JSON.parse(row.disowned) as Record<string, number>) : {};
  }

  /** Writes the record and its outbox entry in one implicit transaction (no await in between). */
  private commit(kind: "live" | "deleted", record: WorkspaceRecord): void {
    const sql = this.ctx.storage.sql;
    const text = JSON.stringify(record);
    sql.exec(
      `INSERT INTO workspace (singleton, kind, record) VALUES (1, ?, ?)
       ON CONFLICT(singleton) DO UPDATE SET kind = excluded.kind, record = excluded.record`,
      kind,
      text,
    );
    sql.exec("INSERT INTO outbox (version, op, record) VALUES (?, ?, ?)", record.version, kind === "live" ? "upsert" : "delete", text);
    // The alarm that drains the outbox is set in this same synchronous section (no
    // await since the writes above), so it commits atomically with them: a kill before the flush
    // below reaches D1 still leaves an alarm that will. A successful flush clears it again.
    void this.ctx.storage.setAlarm(Date.now() + CRASH_RETRY_MS);
  }

  private live(): WorkspaceRecord | Failure {
    const s = this.load();
    return s.kind === "live" ? s.record : fail("not_found");
  }

  /**
   * The live record, if the caller was authorised against what it still is: the Worker authorises
   * from the D1 index copy (no DO round trip before the one that mutates), so the facts the
   * permission depended on are re-checked here, in the same synchronous section as the write.
   */
  private guarded(guard: Guard | undefined): WorkspaceRecord | Failure {
    const current = this.live();
    if (isFailure(current) || !guard) return current;
    return current.projectId === guard.projectId && current.organizationId === guard.organizationId ? current : fail("stale_authorization");
  }

  /**
   * Runs a synchronous mutation of a live workspace, commits it, then flushes the index. `index: "after"`: the
   * answer does not wait for the index write, which starts at once and follows it (docs/consistency.md, "lists and
   * search"); for changes whose index fields only decorate lists (lock, holder, current state, resource count), so a
   * far D1 primary is not in the acknowledgement's path. Its answer carries no bookmark: none covers the write yet.
   */
  protected async mutate(
    input: { guard?: Guard },
    change: (current: WorkspaceRecord) => WorkspaceRecord | Failure,
    index: "before" | "after" = "before",
  ): Promise<WorkspaceResult> {
    const current = this.guarded(input.guard);
    if (isFailure(current)) return current;
    const next = change(structuredClone(current));
    if (isFailure(next)) return next;
    next.version = current.version + 1;
    this.commit("live", next);
    if (index === "after") {
      // The commit armed the alarm: should this write fail or the object stop, the alarm retries it.
      void this.flush(this.callFaults, false);
      return ok(next, null);
    }
    await this.flush(this.callFaults);
    return ok(next, this.bookmark);
  }

  // ---- RPC methods ----

  async create(input: CreateInput): Promise<WorkspaceResult> {
    const s = this.load();
    if (s.kind !== "absent") return fail("conflict", "Workspace id is already in use; retry the request");
    const nameFailure = checkName(input.name);
    if (nameFailure) return nameFailure;
    const record = initialRecord(input);
    const fault = this.env.FAULT_INJECTION === "1" ? this.callFaults?.failCreate : undefined;
    if (fault === "result") return fail("internal");
    if (fault === "throw") throw new Error("injected fault: create failed before its commit");
    this.commit("live", record);
    await this.flush(this.callFaults);
    if (fault === "throw-after-commit") throw new Error("injected fault: create failed after its commit");
    return ok(record, this.bookmark);
  }

  async get(): Promise<WorkspaceResult> {
    const r = this.live();
    return isFailure(r) ? r : ok(r);
  }

  async update(input: UpdateInput): Promise<WorkspaceResult> {
    return this.mutate(input, (w) => {
      if (input.name !== undefined && input.name !== w.name) {
        const disownedAt = this.disowned()[input.name.toLowerCase()];
        if (disownedAt !== undefined && input.nameClaimedAt !== undefined && disownedAt >= input.nameClaimedAt) {
          return fail("conflict", "The name lease for this rename expired; retry the request");
        }
        w.name = input.name;
      }
      const settings = applySettings(w.settings, input.attributes);
      if (isFailure(settings)) return settings;
      w.settings = settings;
      if (input.projectId !== undefined) w.projectId = input.projectId;
      // `relationships.tags` replaces the flat tags, `relationships.tag-bindings` the bindings
      // ([] clears them); neither touches the other set.
      if (input.tags !== undefined) {
        const sets = applyTagChange(w, { op: "replace-flat", tags: input.tags }, input.now);
        if (isFailure(sets)) return sets;
        w.tags = sets.tags;
      }
      if (input.tagBindings !== undefined) {
        const sets = applyTagChange(
          w,
          { op: "replace-bindings", bindings: input.tagBindings, pointerBase: "/data/relationships/tag-bindings/data" },
          input.now,
        );
        if (isFailure(sets)) return sets;
        w.tagBindings = sets.tagBindings;
      }
      w.updatedAt = input.now;
      return w;
    });
  }

  /**
   * One serialised change of the flat tags or of the bindings (two sets; a change touches
   * one); computed and committed with no await in between; a no-op commits nothing.
   */
  async changeTags(input: { change: TagChange; purge?: string[]; now: string; guard?: Guard }): Promise<WorkspaceResult> {
    const current = this.live();
    if (isFailure(current)) return current;
    const sets = applyTagChange(current, input.change, input.now, input.purge);
    if (isFailure(sets)) return sets;
    if (sameTags(sets, current)) return ok(current, this.bookmark);
    return this.mutate(input, (w) => {
      w.tags = sets.tags;
      w.tagBindings = sets.tagBindings;
      w.updatedAt = input.now;
      return w;
    });
  }

  // ---- remote-state consumers, SSH key, retention policy ----

  async changeConsumers(input: { change: ConsumerChange; now: string; guard?: Guard }): Promise<WorkspaceResult> {
    return this.mutate(input, (w) => changeConsumers(w, input.change));
  }

  async setSshKey(input: { keyId: string | null; now: string; guard?: Guard }): Promise<WorkspaceResult> {
    return this.mutate(input, (w) => {
      w.updatedAt = input.now;
      return setSshKey(w, input.keyId);
    });
  }

  async setRetention(input: { policy: DataRetentionPolicy | null; guard?: Guard }): Promise<WorkspaceResult> {
    return this.mutate(input, (w) => setRetention(w, input.policy));
  }

  // ---- variables (logic in src/variables/variables.store.ts): values arrive sealed ----

  /** Creates a variable; the key check and the insert are one critical section, so racing creates serialise. */
  async createVariable(input: { variable: StoredVariable; guard?: Guard }): Promise<VariableResult> {
    const result = await this.mutate(input, (w) => insertVariable(this.ctx.storage.sql, w, input.variable));
    return result.ok ? ok({ workspace: result.value, variable: input.variable }, result.bookmark) : result;
  }

  /** Updates a variable; the workspace record (its list of variable ids) is unchanged, so nothing is indexed. */
  async updateVariable(input: { id: string; patch: VariablePatch; guard?: Guard }): Promise<VariableResult> {
    const w = this.guarded(input.guard);
    if (isFailure(w)) return w;
    const variable = updateVariable(this.ctx.storage.sql, input.id, input.patch);
    return isFailure(variable) ? variable : ok({ workspace: w, variable });
  }

  async deleteVariable(input: { id: string; guard?: Guard }): Promise<WorkspaceResult> {
    return this.mutate(input, (w) => deleteVariable(this.ctx.storage.sql, w, input.id));
  }

  async listVariables(): Promise<Result<{ workspace: WorkspaceRecord; variables: StoredVariable[] }>> {
    const w = this.live();
    return isFailure(w) ? w : ok({ workspace: w, variables: listVariables(this.ctx.storage.sql) });
  }

  async getVariable(id: string): Promise<VariableResult> {
    const w = this.live();
    if (isFailure(w)) return w;
    const variable = getVariable(this.ctx.storage.sql, id);
    return variable ? ok({ workspace: w, variable }) : fail("not_found");
  }

  // ---- locking; serialised here so N racing lockers end as a serial order would ----

  async lock(input: { holder: LockHolder; reason: string; now: string; guard?: Guard }): Promise<WorkspaceResult> {
    return this.mutate(input, (w) => lock(w, input.holder, input.reason, input.now), "after");
  }

  /**
   * Unlock: only the holder; refused with 503 while the latest state version is still
   * pending; promotes the latest finalized intermediate state version to current.
   */
  async unlock(input: { holder: LockHolder; now?: string; guard?: Guard }): Promise<WorkspaceResult> {
    const now = input.now ?? new Date().toISOString();
    return this.mutate(
      input,
      (w) => {
        const next = unlock(w, input.holder);
        return isFailure(next) ? next : this.afterUnlock(onUnlock(this.ctx.storage.sql, next, now, { force: false }), now);
      },
      "after",
    );
  }

  /** Force-unlock works while a state version is pending; a finalized intermediate one still becomes current. */
  async forceUnlock(input: { now?: string; guard?: Guard } = {}): Promise<WorkspaceResult> {
    const now = input.now ?? new Date().toISOString();
    return this.mutate(
      input,
      (w) => {
        const next = forceUnlock(w);
        return isFailure(next) ? next : this.afterUnlock(onUnlock(this.ctx.storage.sql, next, now, { force: true }), now);
      },
      "after",
    );
  }

  /** The workspace is unlocked: the head of the run queue starts in the same commit. */
  private afterUnlock(w: WorkspaceRecord | Failure, now: string): WorkspaceRecord | Failure {
    if (!isFailure(w)) advance(this.ctx.storage.sql, w, now);
    return w;
  }

  // ---- state versions (logic in src/state-versions/state-versions.store.ts) ----

  /** Creates a state version; the caller must hold the lock. With inline state it is finalized at once. */
  async createStateVersion(input: CreateVersionInput & { guard?: Guard }): Promise<Result<StateVersionView>> {
    const sql = this.ctx.storage.sql;
    const result = await this.mutate(input, (w) => createVersion(sql, w, input), "after");
    if (!result.ok) return result;
    return ok(view(getRow(sql, input.id)!), result.bookmark);
  }

  /**
   * Rollback: a new current version copying an older one of this workspace (the caller must hold the lock).
   * A version id of another workspace is simply not found here.
   */
  async rollbackStateVersion(input: RollbackInput & { guard?: Guard }): Promise<Result<StateVersionView>> {
    const sql = this.ctx.storage.sql;
    const result = await this.mutate(input, (w) => rollbackVersion(sql, w, input), "after");
    if (!result.ok) return result;
    return ok(view(getRow(sql, input.id)!), result.bookmark);
  }

  /** Stores one piece of an upload through a signed URL (pieces of one upload arrive in order). */
  async appendBlob(input: { id: string; kind: BlobKind; upload: string; bytes: Uint8Array }): Promise<Result<null>> {
    if (this.load().kind !== "live") return fail("not_found");
    return appendUpload(this.ctx.storage.sql, input.id, input.kind, input.upload, input.bytes) ?? ok(null);
  }

  async abortBlob(input: { id: string; kind: BlobKind; upload: string }): Promise<Result<null>> {
    abortUpload(this.ctx.storage.sql, input.id, input.kind, input.upload);
    return ok(null);
  }

  /** Completes an upload with its last piece: md5 verified, parsed, finalized and (unless intermediate) made current. */
  async completeBlob(input: { id: string; kind: BlobKind; upload: string; bytes: Uint8Array; now: string; guard?: Guard }): Promise<Result<null>> {
    const sql = this.ctx.storage.sql;
    if (this.load().kind !== "live") return fail("not_found");
    const done = completeUpload(sql, input.id, input.kind, input.upload, input.bytes);
    if (isFailure(done)) return done;
    const row = done.promote;
    if (row) {
      const result = await this.mutate(input, (w) => makeCurrent(sql, w, row, input.now), "after");
      if (!result.ok) return result;
    }
    // A JSON state read in place of an unreadable raw state: the record follows if that version is current.
    const current = this.live();
    if (done.reread && !isFailure(current) && recount(sql, structuredClone(current))) {
      const result = await this.mutate(
        input,
        (w) => {
          recount(sql, w);
          return w;
        },
        "after",
      );
      if (!result.ok) return result;
    }
    return ok(null);
  }

  async getStateVersion(id: string): Promise<Result<{ stateVersion: StateVersionView; workspace: WorkspaceRecord }>> {
    const w = this.live();
    if (isFailure(w)) return w;
    const row = getRow(this.ctx.storage.sql, id);
    return row ? ok({ stateVersion: view(row), workspace: w }) : fail("not_found");
  }

  async listStateVersions(input: { offset: number; limit: number; status?: string }): Promise<Result<{ items: StateVersionView[]; total: number }>> {
    const w = this.live();
    if (isFailure(w)) return w;
    const sql = this.ctx.storage.sql;
    const where = input.status ? "WHERE status = ?" : "";
    const binds = input.status ? [input.status] : [];
    const total = sql.exec<{ n: number }>(`SELECT count(*) AS n FROM state_versions ${where}`, ...binds).one().n;
    const items = sql
      .exec<StateVersionRow>(`SELECT * FROM state_versions ${where} ORDER BY seq DESC LIMIT ? OFFSET ?`, ...binds, input.limit, input.offset)
      .toArray()
      .map(view);
    return ok({ items, total });
  }

  /** A blob in pieces of a few MiB (an RPC result is limited to 32 MiB; states may be larger). */
  async readBlobPart(input: { id: string; kind: BlobKind; fromSeq: number }): Promise<Result<{ bytes: Uint8Array; next: number | null }>> {
    if (this.load().kind !== "live" || !backingPresent(this.ctx.storage.sql, input.id)) return fail("not_found");
    const part = readParts(this.ctx.storage.sql, input.id, input.kind, input.fromSeq);
    return part ? ok(part) : fail("not_found");
  }

  /** Terraform Enterprise's backing-data actions on one state version (no index change: the record is untouched). */
  async manageBackingData(input: { id: string; action: BackingAction; guard?: Guard }): Promise<Result<null>> {
    const w = this.guarded(input.guard);
    if (isFailure(w)) return w;
    return manageBackingData(this.ctx.storage.sql, input.id, input.action, w.currentStateVersionId) ?? ok(null);
  }

  // ---- configuration versions (logic in src/configuration-versions/configuration-versions.store.ts) ----

  /** Creates a pending configuration version; committed with the record (a non-provisional one becomes current) so the index flush carries it. */
  async createConfigurationVersion(input: CreateCvInput & { guard?: Guard }): Promise<Result<{ cv: ConfigurationVersionRecord; workspace: WorkspaceRecord }>> {
    const sql = this.ctx.storage.sql;
    const result = await this.mutate(input, (w) => createCv(sql, w, input));
    if (!result.ok) return result;
    return ok({ cv: getCv(sql, input.id)!, workspace: result.value }, result.bookmark);
  }

  async getConfigurationVersion(id: string): Promise<Result<{ cv: ConfigurationVersionRecord; workspace: WorkspaceRecord }>> {
    const w = this.live();
    if (isFailure(w)) return w;
    const cv = getCv(this.ctx.storage.sql, id);
    return cv ? ok({ cv, workspace: w }) : fail("not_found");
  }

  async listConfigurationVersions(input: { offset: number; limit: number }): Promise<Result<{ items: ConfigurationVersionRecord[]; total: number }>> {
    const w = this.live();
    if (isFailure(w)) return w;
    return ok(listCvs(this.ctx.storage.sql, input.offset, input.limit));
  }

  /** Archives an uploaded, non-current version with no unfinished run; the record is unchanged, so nothing is indexed. */
  async archiveConfigurationVersion(input: { id: string; now: string; guard?: Guard }): Promise<Result<ConfigurationVersionRecord>> {
    const w = this.guarded(input.guard);
    if (isFailure(w)) return w;
    const cv = archiveCv(this.ctx.storage.sql, w, input.id, input.now);
    return isFailure(cv) ? cv : ok(cv);
  }

  /** Terraform Enterprise's backing-data actions on one configuration version (the record's index row is unchanged). */
  async manageCvBackingData(input: { id: string; action: CvBackingAction; guard?: Guard }): Promise<Result<null>> {
    const w = this.guarded(input.guard);
    if (isFailure(w)) return w;
    return manageCvBackingData(this.ctx.storage.sql, w, input.id, input.action) ?? ok(null);
  }

  /** Stores one piece of an upload through a signed URL (pieces of one upload arrive in order). */
  async appendCvUpload(input: { id: string; upload: string; bytes: Uint8Array }): Promise<Result<null>> {
    if (this.load().kind !== "live") return fail("not_found");
    return appendCvUpload(this.ctx.storage.sql, input.id, input.upload, input.bytes) ?? ok(null);
  }

  async abortCvUpload(input: { id: string; upload: string }): Promise<Result<null>> {
    abortCvUpload(this.ctx.storage.sql, input.id, input.upload);
    return ok(null);
  }

  /**
   * Completes an upload with its last piece: the version is `uploaded`. Its first upload, when it asked for
   * `auto-queue-runs`, goes to the run engine's hook in the same critical section.
   */
  async completeCvUpload(input: { id: string; upload: string; bytes: Uint8Array; sha256: string; now: string }): Promise<Result<ConfigurationVersionRecord>> {
    const sql = this.ctx.storage.sql;
    if (this.load().kind !== "live") return fail("not_found");
    const done = completeCvUpload(sql, input);
    if (isFailure(done)) return done;
    if (done.first && done.cv.autoQueueRuns) {
      // The run is queued in the critical section that records the upload (no await since `completeCvUpload`).
      const queued = await this.mutate({}, (w) => queueRunForUpload(sql, w, done.cv, input.now));
      if (!queued.ok) console.log(JSON.stringify({ level: "warn", msg: "auto-queue after upload failed", cv: input.id, code: queued.code }));
    }
    return ok(done.cv);
  }

  /** An uploaded archive in parts of a few MiB (an RPC result is limited to 32 MiB; archives may be larger). */
  async readCvPart(input: { id: string; fromSeq: number }): Promise<Result<{ bytes: Uint8Array; next: number | null }>> {
    if (this.load().kind !== "live") return fail("not_found");
    const part = readCvParts(this.ctx.storage.sql, input.id, input.fromSeq);
    return isFailure(part) ? part : ok(part);
  }

  /**
   * Delete: a permanent tombstone; the data is dropped once D1 has the delete. With `safe`, the
   * safe-delete conditions are checked in the same synchronous section as the delete.
   */
  async remove(opts: { safe?: boolean; guard?: Guard } = {}): Promise<Result<null>> {
    const current = this.guarded(opts.guard);
    if (isFailure(current)) return current;
    if (opts.safe) {
      const sql = this.ctx.storage.sql;
      const refused = checkSafeDelete(current, latestPending(sql), currentResourcesUnknown(sql, current));
      if (refused) return refused;
    }
    const tomb = { ...current, version: current.version + 1 };
    this.commit("deleted", tomb);
    await this.flush(this.callFaults);
    return ok(null, this.bookmark);
  }

  /**
   * Asked by a request that found this workspace's name claim stale. Decides, serialised with
   * every create and rename of this workspace, whether the claim may be taken over.
   */
  async releaseName(name: string, now: number): Promise<Result<{ released: boolean }>> {
    const s = this.load();
    if (s.kind === "absent") {
      this.ctx.storage.sql.exec("INSERT INTO workspace (singleton, kind, record) VALUES (1, 'abandoned', NULL)");
      return ok({ released: true });
    }
    if (s.kind === "live" && s.record.name.toLowerCase() === name.toLowerCase()) {
      await this.flush(undefined); // the index write must have failed: repair it now
      return ok({ released: false });
    }
    if (s.kind === "live") {
      const disowned = this.disowned();
      disowned[name.toLowerCase()] = now;
      this.ctx.storage.sql.exec("UPDATE workspace SET disowned = ? WHERE singleton = 1", JSON.stringify(disowned));
    }
    return ok({ released: true });
  }

  /** The record as the index should hold it (for the consistency checker). */
  async indexState(): Promise<Result<{ kind: Stored["kind"]; record: WorkspaceRecord | null; pending: number; armed: boolean }>> {
    const s = this.load();
    const pending = this.ctx.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM outbox").one().n;
    // Outbox rows without an alarm would wait forever: arm one, and say so.
    let armed = false;
    if (pending > 0 && (await this.ctx.storage.getAlarm()) === null) {
      await this.ctx.storage.setAlarm(Date.now());
      armed = true;
    }
    return ok({ kind: s.kind, record: "record" in s ? s.record : null, pending, armed });
  }

  // ---- runs (logic in src/runs/runs.engine.ts; the contract is RunsRpc in src/runs/runs.types.ts) ----

  /** One run change committed with the workspace record (and its outbox entry), then flushed to the index. */
  private async runChange<T>(
    guard: Guard | undefined,
    change: (sql: SqlStorage, w: WorkspaceRecord) => T | Failure,
  ): Promise<Result<{ value: T; workspace: WorkspaceRecord }>> {
    let value: T | undefined;
    const result = await this.mutate({ guard }, (w) => {
      const r = change(this.ctx.storage.sql, w);
      if (isFailure(r)) return r;
      value = r;
      return w;
    });
    return result.ok ? ok({ value: value as T, workspace: result.value }, result.bookmark) : result;
  }

  /** A run of this workspace, read in this object (a run id of another workspace is simply not found). */
  private readRun<T>(runId: string, read: (sql: SqlStorage, run: RunRecord, w: WorkspaceRecord) => Result<T>): Result<T> {
    const w = this.live();
    if (isFailure(w)) return w;
    const run = getRun(this.ctx.storage.sql, runId);
    return run ? read(this.ctx.storage.sql, run, w) : fail("not_found");
  }

  async createRun(input: CreateRunInput): Promise<Result<{ run: RunRecord; workspace: WorkspaceRecord }>> {
    const r = await this.runChange(input.guard, (sql, w) => createRun(sql, w, input));
    return r.ok ? ok({ run: r.value.value, workspace: r.value.workspace }, r.bookmark) : r;
  }

  async getRun(runId: string): Promise<Result<{ run: RunRecord; workspace: WorkspaceRecord }>> {
    return this.readRun(runId, (_sql, run, workspace) => ok({ run, workspace }));
  }

  async listRuns(input: { offset: number; limit: number; includePlanOnly: boolean }): Promise<Result<{ items: RunRecord[]; total: number }>> {
    const w = this.live();
    return isFailure(w) ? w : ok(listRuns(this.ctx.storage.sql, input));
  }

  async runAction(input: RunActionInput): Promise<Result<{ run: RunRecord }>> {
    const r = await this.runChange(input.guard, (sql, w) => runAction(sql, w, input));
    return r.ok ? ok({ run: r.value.value }, r.bookmark) : r;
  }

  async listRunEvents(runId: string): Promise<Result<RunEvent[]>> {
    return this.readRun(runId, (sql) => ok(listEvents(sql, runId)));
  }

  async getComment(id: string): Promise<Result<RunComment>> {
    const w = this.live();
    if (isFailure(w)) return w;
    const comment = getComment(this.ctx.storage.sql, id);
    return comment ? ok(comment) : fail("not_found");
  }

  async addComment(input: { runId: string; id: string; body: string; now: string; actor: Actor | null }): Promise<Result<RunComment>> {
    const r = await this.runChange(undefined, (sql, w) => addComment(sql, w, input));
    return r.ok ? ok(r.value.value, r.bookmark) : r;
  }

  async readLog(input: { runId: string; phase: Phase; offset: number; limit: number }): Promise<Result<{ bytes: Uint8Array }>> {
    return this.readRun(input.runId, (sql) => ok({ bytes: readLog(sql, input.runId, input.phase, input.offset, input.limit) }));
  }

  async claimJob(input: ClaimInput): Promise<Result<Job>> {
    const r = await this.runChange(undefined, (sql, w) => claimJob(sql, w, input));
    if (!r.ok) return r;
    const { job, run } = r.value.value;
    return ok({
      runId: run.id,
      phase: input.phase,
      claimId: job.claim_id!,
      leaseUntil: new Date(job.lease_until!).toISOString(),
      run,
      workspace: r.value.workspace,
    });
  }

  /** Lease renewals change no record: nothing is committed for the index. */
  async heartbeat(input: { runId: string; phase: Phase; claimId: string; now: string }): Promise<Result<{ signal: CancelSignal }>> {
    if (this.load().kind !== "live") return fail("job_lost");
    const r = touchJob(this.ctx.storage.sql, input);
    return isFailure(r) ? r : ok({ signal: r.signal });
  }

  async appendLog(input: {
    runId: string;
    phase: Phase;
    claimId: string;
    offset: number;
    bytes: Uint8Array;
    now: string;
  }): Promise<Result<{ size: number; signal: CancelSignal }>> {
    if (this.load().kind !== "live") return fail("job_lost");
    const r = appendLog(this.ctx.storage.sql, input);
    return isFailure(r) ? r : ok(r);
  }

  async putArtifact(input: { runId: string; claimId: string; kind: ArtifactKind; bytes: Uint8Array }): Promise<Result<null>> {
    if (this.load().kind !== "live") return fail("job_lost");
    const sql = this.ctx.storage.sql;
    const r = touchJob(sql, { runId: input.runId, phase: "plan", claimId: input.claimId, now: new Date().toISOString() });
    if (isFailure(r)) return r;
    putArtifact(sql, input.runId, input.kind, input.bytes);
    return ok(null);
  }

  async getArtifact(input: { runId: string; kind: ArtifactKind }): Promise<Result<{ bytes: Uint8Array }>> {
    return this.readRun(input.runId, (sql) => {
      const bytes = getArtifact(sql, input.runId, input.kind);
      return bytes ? ok({ bytes }) : fail("not_found");
    });
  }

  async finishJob(input: FinishInput): Promise<Result<{ run: RunRecord }>> {
    const r = await this.runChange(undefined, (sql, w) => finishJob(sql, w, input));
    return r.ok ? ok({ run: r.value.value }, r.bookmark) : r;
  }

  /** The alarm's part for runs: jobs whose lease ran out end errored (one commit for all of them). */
  private async expireJobLeases(): Promise<void> {
    const nowMs = Date.now();
    if (expiredJobs(this.ctx.storage.sql, nowMs).length === 0) return;
    await this.mutate({}, (w) => {
      expireLeases(this.ctx.storage.sql, w, nowMs);
      return w;
    });
  }

  // ---- test-only ----

  /**
   * Fault injection (FAULT_INJECTION=1): makes RPC call `method(...args)` with `faults` applied to the index write it
   * flushes. The Worker's stub wrapper (`countedNamespace`, src/platform/hops.ts) calls this in place of the method when the
   * request carries X-Fault-* headers, so no method's input names them. A mutation flushes in the synchronous section
   * that commits it, before its first await, so clearing them once the call has returned its promise confines them to
   * this call.
   */
  withFaults(faults: Faults, method: string, args: unknown[]): Promise<unknown> {
    const fn = (this as unknown as Record<string, unknown>)[method];
    if (method === "withFaults" || typeof fn !== "function") throw new Error(`withFaults: no RPC method ${method}`);
    this.callFaults = faults;
    try {
      return Promise.resolve(fn.apply(this, args));
    } finally {
      this.callFaults = undefined;
    }
  }

  /**
   * The hop trace (EXPOSE_HOPS=1, src/platform/hops.ts): makes RPC call `method(...args)` (through `withFaults` when `faults`)
   * and says how many index writes it waited for before it answered (a write that follows the answer is not its
   * round trip). Flushes start in the call's synchronous section (as `withFaults` relies on), so they are all seen here.
   */
  async traced(faults: Faults | null, method: string, args: unknown[]): Promise<{ value: unknown; indexWrites: number }> {
    const fn = (this as unknown as Record<string, unknown>)[method];
    if (method === "traced" || method === "withFaults" || typeof fn !== "function") throw new Error(`traced: no RPC method ${method}`);
    const flushes: { done: boolean }[] = [];
    this.callFlushes = flushes;
    let answer: Promise<unknown>;
    try {
      answer = faults ? this.withFaults(faults, method, args) : Promise.resolve(fn.apply(this, args));
    } finally {
      this.callFlushes = undefined;
    }
    const value = await answer;
    return { value, indexWrites: flushes.filter((f) => f.done).length };
  }

  // ---- outbox ----

  /**
   * The last state version and configuration version (by seq) the D1 index has. Only `flushOnce` writes them, so
   * they are read from storage once per start of the object and kept here after (each flush read both before).
   */
  private indexedSeqs(): { sv: number; cv: number } {
    if (this.seqs) return this.seqs;
    const rows = this.ctx.storage.sql
      .exec<{ key: string; value: string }>("SELECT key, value FROM meta WHERE key IN ('sv_indexed_seq', 'cv_indexed_seq')")
      .toArray();
    const of = (key: string) => Number(rows.find((r) => r.key === key)?.value ?? 0);
    this.seqs = { sv: of("sv_indexed_seq"), cv: of("cv_indexed_seq") };
    return this.seqs;
  }

  /**
   * Serialised flush: always writes the newest outbox entry, so an older one can never land last. `awaited`: the
   * call answers after it (the hop trace counts it as the call's own round trip).
   */
  protected flush(faults: Faults | undefined, awaited = true): Promise<void> {
    if (faults?.failIndexWrites && this.env.FAULT_INJECTION === "1") this.faultBudget += faults.failIndexWrites;
    const delayMs = this.env.FAULT_INJECTION === "1" ? (faults?.delayIndexWritesMs ?? 0) : 0;
    const run = this.flushChain.then(() => this.flushOnce(delayMs));
    this.flushChain = run.catch(() => undefined);
    const traced = awaited && this.callFlushes && { done: false };
    if (traced) {
      this.callFlushes?.push(traced);
      // Attached before the caller awaits this flush, so it is marked before the caller can answer.
      void this.flushChain.then(() => {
        traced.done = true;
      });
    }
    return this.flushChain;
  }

  private async flushOnce(delayMs = 0): Promise<void> {
    // Fault injection: the committed write waits before D1 sees it (the crash test kills in this window).
    if (delayMs > 0) await scheduler.wait(delayMs);
    const sql = this.ctx.storage.sql;
    const latest = sql
      .exec<{ seq: number; op: string; record: string; attempts: number }>("SELECT seq, op, record, attempts FROM outbox ORDER BY seq DESC LIMIT 1")
      .toArray()[0];
    if (!latest) return;
    const record = JSON.parse(latest.record) as WorkspaceRecord;
    const session = this.env.DB.withSession("first-primary");
    const statements = latest.op === "delete" ? indexDeleteStatements(session, record) : indexUpsertStatements(session, record, this.indexed);
    // The project hold of a create or move ends once the index row carries it.
    statements.push(settledRefsStatement(session, record.id, latest.op === "delete"));
    // The state-version id → workspace map is this DO's to write too, in the same batch.
    const seqs = this.indexedSeqs();
    const versions = latest.op === "delete" ? [] : unindexedVersions(sql, seqs.sv);
    if (latest.op === "delete") statements.push(dropStateVersionIndexStatement(session, record.id));
    else if (versions.length) statements.push(stateVersionIndexStatement(session, record.id, versions));
    // So is the configuration-version id → workspace map.
    const cvs = latest.op === "delete" ? [] : unindexedCvs(sql, seqs.cv);
    if (latest.op === "delete") statements.push(dropCvIndexStatement(session, record.id));
    else if (cvs.length) statements.push(cvIndexStatement(session, record, cvs));
    // So are the run and job rows of the runs changed since the last flush.
    const runs = latest.op === "delete" ? [] : unindexedRuns(sql);
    if (latest.op === "delete") statements.push(...dropRunIndexStatements(session, record.id));
    else statements.push(...runIndexStatements(session, runs));
    try {
      if (this.faultBudget > 0) {
        this.faultBudget--;
        throw new Error("injected index write failure");
      }
      await session.batch(statements);
      this.bookmark = session.getBookmark();
      this.indexed = latest.op === "delete" ? null : { tags: tagRowsJson(record), name: record.name };
    } catch (err) {
      sql.exec("UPDATE outbox SET attempts = attempts + 1 WHERE seq = ?", latest.seq);
      const delay = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.min(latest.attempts, 6));
      await this.ctx.storage.setAlarm(Date.now() + delay);
      console.log(JSON.stringify({ level: "warn", msg: "index write failed; alarm will retry", workspace: record.id, error: String(err) }));
      return;
    }
    sql.exec("DELETE FROM outbox WHERE seq <= ?", latest.seq);
    if (versions.length) {
      seqs.sv = versions[versions.length - 1]!.seq;
      sql.exec("INSERT OR REPLACE INTO meta (key, value) VALUES ('sv_indexed_seq', ?)", String(seqs.sv));
    }
    if (cvs.length) {
      seqs.cv = cvs[cvs.length - 1]!.seq;
      sql.exec("INSERT OR REPLACE INTO meta (key, value) VALUES ('cv_indexed_seq', ?)", String(seqs.cv));
    }
    markIndexed(
      sql,
      runs.map((r) => ({ id: r.row.id, version: r.row.version })),
    );
    // Nothing left to drain: the alarm armed by the commit is moot (same synchronous section as the check), unless
    // a job's lease or an automatic destroy needs it.
    this.armForLeases(latest.op === "delete" ? null : record);
    if (latest.op === "delete") {
      // D1 has the delete: keep only the tombstone so the id can never be recreated.
      sql.exec(
        "UPDATE workspace SET record = ? WHERE singleton = 1 AND kind = 'deleted'",
        JSON.stringify({ ...record, tags: [], remoteStateConsumers: [], settings: record.settings }),
      );
      eraseAll(sql);
      eraseVariables(sql);
      eraseConfigurationVersions(sql);
      eraseRuns(sql);
    }
  }

  /**
   * With the outbox drained, the alarm serves the earliest job lease or automatic destroy (or nothing). While index
   * writes are pending the flush owns the alarm: it fires before any lease runs out or soon after, and this runs again
   * once it drains. `record`: the workspace as last committed (read when not given).
   */
  private armForLeases(record?: WorkspaceRecord | null): void {
    const sql = this.ctx.storage.sql;
    if (sql.exec<{ n: number }>("SELECT count(*) AS n FROM outbox").one().n > 0) return;
    const lease = earliestLease(sql);
    const w = record === undefined ? this.live() : record;
    const due = w && !isFailure(w) ? autoDestroyDue(w) : null;
    const at = lease === null ? due : due === null ? lease : Math.min(lease, due);
    if (at === null) void this.ctx.storage.deleteAlarm();
    else void this.ctx.storage.setAlarm(at);
  }

  /** The alarm's part for automatic destroy (src/workspaces/auto-destroy.ts), with the execution defaults it inherits. */
  private async autoDestroy(): Promise<void> {
    const w = this.live();
    if (isFailure(w) || (autoDestroyDue(w) ?? Number.POSITIVE_INFINITY) > Date.now()) return;
    // An organisation gone (its workspaces answer 404) runs nothing: the due time is only marked as acted on.
    const defaults = (await inheritedExecution(this.env.DB, w.organizationId, w.projectId)) ?? { executionMode: "local" as const, agentPoolId: null };
    await this.mutate({}, (current) => fireAutoDestroy(this.ctx.storage.sql, current, defaults, Date.now()));
  }

  async alarm(): Promise<void> {
    await this.flush(undefined);
    await this.expireJobLeases();
    await this.autoDestroy();
    const left = this.ctx.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM outbox").one().n;
    if (left > 0 && (await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now() + RETRY_BASE_MS);
    else if (left === 0) this.armForLeases();
  }
}
