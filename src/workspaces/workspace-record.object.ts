/**
 * The workspace object's record: its settings, name, lock, tags, remote-state consumers, SSH key and retention policy,
 * the name claims it settles, its delete, and its share of the index write (the workspace row with its tag rows and
 * name, and the project hold of a create or move). It owns the `workspace` table (RECORD_TABLES, made by the first
 * commit); the host reads and writes the record through `load` and `store`.
 */
import { settledRefsStatement } from "../projects/projects.d1";
import { fail, ok, type Result } from "../errors";
import { applyTagChange, sameTags, type TagChange } from "../tags/workspace-tags.rules";
import type { Runs } from "../runs/runs.object";
import type { StateVersions } from "../state-versions/state-versions.object";
import { changeConsumers, setRetention, setSshKey, type ConsumerChange } from "./consumers.rules";
import { checkSafeDelete, forceUnlock, lock, unlock } from "./lock.rules";
import type { Stored, WorkspaceHost, WorkspaceResult } from "./workspace.host";
import { ensure, present, RECORD_TABLES } from "./workspace.migrations";
import type { Indexer } from "./workspace.outbox";
import { initialRecord, upgradeRecord } from "./workspace.record";
import { applySettings, checkName, isFailure } from "./workspace.rules";
import type { CreateInput, DataRetentionPolicy, Guard, LockHolder, UpdateInput, WorkspaceRecord } from "./workspace.types";
import { indexDeleteStatements, indexUpsertStatements, tagRowsJson } from "./workspaces.d1";

export class WorkspaceRecords {
  /**
   * The tag rows and name this object's last successful index write carried (null after a start: the next write
   * sends them all). Only this object writes them for its workspace, so while they are unchanged they are not resent.
   */
  private indexed: { tags: string; name: string } | null = null;

  constructor(
    private readonly host: WorkspaceHost,
    private readonly states: Pick<StateVersions, "onUnlock" | "blocksSafeDelete">,
    private readonly runs: Pick<Runs, "advance">,
  ) {}

  // ---- the table ----

  load(): Stored {
    if (!present(this.host.sql, RECORD_TABLES)) return { kind: "absent" };
    const row = this.host.sql.exec<{ kind: string; record: string | null }>("SELECT kind, record FROM workspace WHERE singleton = 1").toArray()[0];
    if (!row) return { kind: "absent" };
    if (row.kind === "abandoned") return { kind: "abandoned" };
    const record = upgradeRecord(JSON.parse(row.record ?? "null") as WorkspaceRecord);
    return row.kind === "deleted" ? { kind: "deleted", record } : { kind: "live", record };
  }

  /** Writes the record (the host commits it with its outbox entry); its table is made with the first. */
  store(kind: "live" | "deleted", text: string): void {
    ensure(this.host.sql, RECORD_TABLES).exec(
      `INSERT INTO workspace (singleton, kind, record) VALUES (1, ?, ?)
       ON CONFLICT(singleton) DO UPDATE SET kind = excluded.kind, record = excluded.record`,
      kind,
      text,
    );
  }

  private disowned(): Record<string, number> {
    const row = this.host.sql.exec<{ disowned: string }>("SELECT disowned FROM workspace WHERE singleton = 1").toArray()[0];
    return row ? (JSON.parse(row.disowned) as Record<string, number>) : {};
  }

  // ---- the RPC methods' logic ----

  async create(input: CreateInput): Promise<WorkspaceResult> {
    const s = this.load();
    if (s.kind !== "absent") return fail("conflict", "Workspace id is already in use; retry the request");
    const nameFailure = checkName(input.name);
    if (nameFailure) return nameFailure;
    const record = initialRecord(input);
    const fault = this.host.faults()?.failCreate;
    if (fault === "result") return fail("internal");
    if (fault === "throw") throw new Error("injected fault: create failed before its commit");
    this.host.commit("live", record, input.audit);
    const bookmark = await this.host.index();
    if (fault === "throw-after-commit") throw new Error("injected fault: create failed after its commit");
    return ok(record, bookmark);
  }

  get(): WorkspaceResult {
    const r = this.host.live();
    return isFailure(r) ? r : ok(r);
  }

  update(input: UpdateInput): Promise<WorkspaceResult> {
    return this.host.mutate(input, (w) => {
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
    const current = this.host.live();
    if (isFailure(current)) return current;
    const sets = applyTagChange(current, input.change, input.now, input.purge);
    if (isFailure(sets)) return sets;
    if (sameTags(sets, current)) return ok(current, this.host.bookmark);
    return this.host.mutate(input, (w) => {
      w.tags = sets.tags;
      w.tagBindings = sets.tagBindings;
      w.updatedAt = input.now;
      return w;
    });
  }

  changeConsumers(input: { change: ConsumerChange; now: string; guard?: Guard }): Promise<WorkspaceResult> {
    return this.host.mutate(input, (w) => changeConsumers(w, input.change));
  }

  setSshKey(input: { keyId: string | null; now: string; guard?: Guard }): Promise<WorkspaceResult> {
    return this.host.mutate(input, (w) => {
      w.updatedAt = input.now;
      return setSshKey(w, input.keyId);
    });
  }

  setRetention(input: { policy: DataRetentionPolicy | null; guard?: Guard }): Promise<WorkspaceResult> {
    return this.host.mutate(input, (w) => setRetention(w, input.policy));
  }

  // ---- locking; serialised here so N racing lockers end as a serial order would ----

  lock(input: { holder: LockHolder; reason: string; now: string; guard?: Guard }): Promise<WorkspaceResult> {
    return this.host.mutate(input, (w) => lock(w, input.holder, input.reason, input.now), "after");
  }

  /**
   * Unlock: only the holder (or, forced, anyone allowed to); a user's unlock is refused with 503 while the latest
   * state version is still pending, a forced one is not. The latest finalized intermediate state version becomes
   * current, and the head of the run queue starts, in the same commit.
   */
  unlock(input: { holder?: LockHolder; now?: string; guard?: Guard }, force: boolean): Promise<WorkspaceResult> {
    const now = input.now ?? new Date().toISOString();
    const release = (w: WorkspaceRecord) => {
      const next = force ? forceUnlock(w) : unlock(w, input.holder!);
      if (isFailure(next)) return next;
      const after = this.states.onUnlock(next, now, { force });
      if (!isFailure(after)) this.runs.advance(after, now);
      return after;
    };
    return this.host.mutate(input, release, "after");
  }

  /**
   * Delete: a permanent tombstone; the data is dropped once D1 has the delete. With `safe`, the
   * safe-delete conditions are checked in the same synchronous section as the delete.
   */
  async remove(opts: { safe?: boolean; guard?: Guard }): Promise<Result<null>> {
    const current = this.host.guarded(opts.guard);
    if (isFailure(current)) return current;
    if (opts.safe) {
      const blocks = this.states.blocksSafeDelete(current);
      const refused = checkSafeDelete(current, blocks.pending, blocks.unknown);
      if (refused) return refused;
    }
    this.host.commit("deleted", { ...current, version: current.version + 1 }, opts.guard?.audit);
    return ok(null, await this.host.index());
  }

  /**
   * Asked by a request that found this workspace's name claim stale. Decides, serialised with
   * every create and rename of this workspace, whether the claim may be taken over.
   */
  async releaseName(name: string, now: number): Promise<Result<{ released: boolean }>> {
    const s = this.load();
    const sql = this.host.sql;
    if (s.kind === "absent") {
      ensure(sql, RECORD_TABLES).exec("INSERT INTO workspace (singleton, kind, record) VALUES (1, 'abandoned', NULL)");
      return ok({ released: true });
    }
    if (s.kind === "live" && s.record.name.toLowerCase() === name.toLowerCase()) {
      await this.host.index(false); // the index write must have failed: repair it now
      return ok({ released: false });
    }
    if (s.kind === "live") {
      const disowned = this.disowned();
      disowned[name.toLowerCase()] = now;
      sql.exec("UPDATE workspace SET disowned = ? WHERE singleton = 1", JSON.stringify(disowned));
    }
    return ok({ released: true });
  }

  /** Once D1 has the delete: only the tombstone is kept, so the id can never be recreated. */
  erase(record: WorkspaceRecord): void {
    this.host.sql.exec(
      "UPDATE workspace SET record = ? WHERE singleton = 1 AND kind = 'deleted'",
      JSON.stringify({ ...record, tags: [], remoteStateConsumers: [], settings: record.settings }),
    );
  }

  /** The workspace's row in D1 with its tag rows and name (version-guarded), and the end of its project hold. */
  readonly indexer: Indexer<null> = {
    pending: () => null,
    statements: (session, { record, deleted }) => [
      ...(deleted ? indexDeleteStatements(session, record) : indexUpsertStatements(session, record, this.indexed)),
      // The project hold of a create or move ends once the index row carries it.
      settledRefsStatement(session, record.id, deleted),
    ],
    indexed: ({ record, deleted }) => {
      this.indexed = deleted ? null : { tags: tagRowsJson(record), name: record.name };
    },
  };
}
