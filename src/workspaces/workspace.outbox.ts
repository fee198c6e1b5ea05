/**
 * The index follows the workspace's object through an outbox (docs/consistency.md). Every commit marks the record's
 * row as its outbox entry (`outbox`: what D1 lacks of it) and arms the alarm in the same synchronous section; the flush
 * then writes the record to D1 in one batch, whose statements come from a declared list of indexers (one per resource D1 mirrors, each living
 * with its resource), guarded by the record's version so an older write never lands over a newer one. A write that
 * fails is retried from the alarm with backoff until D1 has it.
 */
import { present, RECORD_TABLES } from "./workspace.migrations";
import type { Bindings } from "../env";
import type { Stored } from "./workspace.host";
import type { Faults, WorkspaceRecord } from "./workspace.types";

export const RETRY_BASE_MS = 1_000;
const RETRY_MAX_MS = 60_000;
/** When the alarm armed by every commit fires if the flush never finished (the process died). */
const CRASH_RETRY_MS = 5_000;

/** The outbox entry being written: the record, and whether it is the workspace's delete. */
export interface IndexEntry {
  record: WorkspaceRecord;
  deleted: boolean;
}

/** One resource's share of an index write. */
export interface Indexer<P> {
  /** What D1 lacks of the resource, read in the flush's synchronous section (a live workspace's flush only). */
  pending(): P;
  /** Its statements in the batch: `pending`'s rows, or for a delete (`pending` null) the drop of all the workspace's. */
  statements(session: D1DatabaseSession, entry: IndexEntry, pending: P | null): D1PreparedStatement[];
  /** D1 has the batch: what it carried is indexed. */
  indexed(entry: IndexEntry, pending: P | null): void;
}

/** What the outbox needs of the object. */
export interface OutboxHost {
  readonly sql: SqlStorage;
  readonly storage: DurableObjectStorage;
  readonly env: Bindings;
  /** The outbox drained: the object arms its one alarm for what else it waits on (or clears it). */
  drained(): void;
  /** D1 has the workspace's delete: the object erases all it held but the tombstone. */
  deleted(record: WorkspaceRecord): void;
}

export class Outbox {
  private chain: Promise<void> = Promise.resolve();
  private lastBookmark: string | null = null;
  /** Index writes to fail (fault injection, FAULT_INJECTION=1); tests set it directly. */
  faultBudget = 0;
  /** Test-only: the faults of the call `withFaults` is making, for the index write that call flushes. */
  callFaults: Faults | undefined;
  /** Bench and test only: the index writes the call `traced` is making started, each marked once it finished. */
  private callFlushes: { done: boolean }[] | undefined;

  constructor(
    private readonly host: OutboxHost,
    private readonly indexers: readonly Indexer<unknown>[],
  ) {}

  /** The flushes in flight, in order: settled once the last one started has finished. */
  get flushing(): Promise<void> {
    return this.chain;
  }

  /** The D1 bookmark of the last index write that landed. */
  get bookmark(): string | null {
    return this.lastBookmark;
  }

  /** The record's row is the entry for a commit, with the alarm that drains it (same synchronous section as the commit's other writes). */
  add(deleted: boolean): void {
    this.host.sql.exec("UPDATE workspace SET outbox = ?, attempts = 0 WHERE singleton = 1", deleted ? "delete" : "upsert");
    // Set with no await since the writes above, so it commits atomically with them: a kill before the flush reaches
    // D1 still leaves an alarm that will. A successful flush clears it again.
    void this.host.storage.setAlarm(Date.now() + CRASH_RETRY_MS);
  }

  /** Entries not in D1 yet: 1 or 0. */
  pending(): number {
    // An object that never committed (never created) has no record table yet.
    if (!present(this.host.sql, RECORD_TABLES)) return 0;
    return this.host.sql.exec<{ n: number }>("SELECT count(*) AS n FROM workspace WHERE outbox IS NOT NULL").one().n;
  }

  /**
   * Serialised flush: always writes the newest outbox entry, so an older one can never land last. `awaited`: the
   * call answers after it (the hop trace counts it as the call's own round trip).
   */
  flush(faults: Faults | undefined, awaited = true): Promise<void> {
    const env = this.host.env;
    if (faults?.failIndexWrites && env.FAULT_INJECTION === "1") this.faultBudget += faults.failIndexWrites;
    const delayMs = env.FAULT_INJECTION === "1" ? (faults?.delayIndexWritesMs ?? 0) : 0;
    const run = this.chain.then(() => this.flushOnce(delayMs));
    this.chain = run.catch(() => undefined);
    const traced = awaited && this.callFlushes && { done: false };
    if (traced) {
      this.callFlushes?.push(traced);
      // Attached before the caller awaits this flush, so it is marked before the caller can answer.
      void this.chain.then(() => {
        traced.done = true;
      });
    }
    return this.chain;
  }

  private async flushOnce(delayMs = 0): Promise<void> {
    // Fault injection: the committed write waits before D1 sees it (the crash test kills in this window).
    if (delayMs > 0) await scheduler.wait(delayMs);
    const sql = this.host.sql;
    if (!present(sql, RECORD_TABLES)) return;
    const latest = sql
      .exec<{ op: string | null; record: string; attempts: number }>("SELECT outbox AS op, record, attempts FROM workspace WHERE singleton = 1")
      .toArray()[0];
    if (!latest?.op) return;
    const entry: IndexEntry = { record: JSON.parse(latest.record) as WorkspaceRecord, deleted: latest.op === "delete" };
    const session = this.host.env.DB.withSession("first-primary");
    const pending = this.indexers.map((indexer) => (entry.deleted ? null : indexer.pending()));
    const statements = this.indexers.flatMap((indexer, i) => indexer.statements(session, entry, pending[i]));
    try {
      if (this.faultBudget > 0) {
        this.faultBudget--;
        throw new Error("injected index write failure");
      }
      await session.batch(statements);
      this.lastBookmark = session.getBookmark();
    } catch (err) {
      sql.exec("UPDATE workspace SET attempts = attempts + 1 WHERE singleton = 1");
      const delay = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.min(latest.attempts, 6));
      await this.host.storage.setAlarm(Date.now() + delay);
      console.log(JSON.stringify({ level: "warn", msg: "index write failed; alarm will retry", workspace: entry.record.id, error: String(err) }));
      return;
    }
    // A commit made while D1 was written is a newer entry, which the next flush writes: this one is done only if it is still the newest.
    sql.exec("UPDATE workspace SET outbox = NULL, attempts = 0 WHERE singleton = 1 AND json_extract(record, '$.version') = ?", entry.record.version);
    for (const [i, indexer] of this.indexers.entries()) indexer.indexed(entry, pending[i]);
    // Nothing left to drain: the alarm armed by the commit is moot (same synchronous section as the check).
    this.host.drained();
    if (entry.deleted) this.host.deleted(entry.record);
  }

  /** After the alarm's flush: entries still pending keep an alarm for their retry. True while any are left. */
  async retryLeft(): Promise<boolean> {
    if (this.pending() === 0) return false;
    if ((await this.host.storage.getAlarm()) === null) await this.host.storage.setAlarm(Date.now() + RETRY_BASE_MS);
    return true;
  }

  /** The record as the index should hold it (for the consistency checker); a pending entry without an alarm gets one. */
  async state(s: Stored): Promise<{ kind: Stored["kind"]; record: WorkspaceRecord | null; pending: number; armed: boolean }> {
    const pending = this.pending();
    let armed = false;
    if (pending > 0 && (await this.host.storage.getAlarm()) === null) {
      await this.host.storage.setAlarm(Date.now());
      armed = true;
    }
    return { kind: s.kind, record: "record" in s ? s.record : null, pending, armed };
  }

  /**
   * Runs `call` with the RPC's test-only `faults` (FAULT_INJECTION=1) applied to the index write it flushes. A mutation
   * flushes in the synchronous section that commits it, before its first await, so clearing them once the call has
   * returned its promise confines them to this call.
   */
  withFaults(faults: Faults, call: () => unknown): Promise<unknown> {
    this.callFaults = faults;
    try {
      return Promise.resolve(call());
    } finally {
      this.callFaults = undefined;
    }
  }

  /**
   * Runs `call` and says how many index writes it waited for before it answered (a write that follows the answer is not
   * its round trip). Flushes start in the call's synchronous section (as `withFaults` relies on), so all are seen here.
   */
  async traced(call: () => Promise<unknown>): Promise<{ value: unknown; indexWrites: number }> {
    const flushes: { done: boolean }[] = [];
    this.callFlushes = flushes;
    let answer: Promise<unknown>;
    try {
      answer = call();
    } finally {
      this.callFlushes = undefined;
    }
    const value = await answer;
    return { value, indexWrites: flushes.filter((f) => f.done).length };
  }
}
