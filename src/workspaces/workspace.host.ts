/**
 * What the workspace's Durable Object gives each of its capabilities (`<resource>.object.ts`), and all they may reach
 * of it: its SQLite, the record and whether it is live, and the guarded mutation that commits a change with its outbox
 * entry and then writes the D1 index. A capability owns its tables and holds no other state of the object, as the
 * capabilities of `cloudflare/agents` (`packages/agents/src/capabilities/scheduler.ts`) reach their agent through a
 * narrow host; the object keeps the one alarm and the RPC methods (Workers RPC exposes class methods only).
 */
import type { AuditEvent } from "../audit/audit.rules";
import type { Failure, Result } from "../errors";
import type { Faults, Guard, WorkspaceRecord } from "./workspace.types";

export type Stored =
  | { kind: "absent" }
  | { kind: "live"; record: WorkspaceRecord }
  | { kind: "deleted"; record: WorkspaceRecord }
  /** A name lease was reclaimed before this workspace was ever created: it never will be. */
  | { kind: "abandoned" };

/** `bookmark`: the D1 session bookmark of the index write, for read-your-writes list reads. */
export type WorkspaceResult = Result<WorkspaceRecord>;

/** A change of the live record, computed with no await: the next record, or why there is none. */
export type Change = (current: WorkspaceRecord) => WorkspaceRecord | Failure;

export interface WorkspaceHost {
  /** The object's SQLite: every capability's tables, each set made on first use (workspace.migrations.ts). */
  readonly sql: SqlStorage;
  /** The stored record: absent, live, deleted (a tombstone) or abandoned. */
  load(): Stored;
  /** The live record, or `not_found`. */
  live(): WorkspaceRecord | Failure;
  /**
   * The live record, if the caller was authorised against what it still is: the Worker authorises from the D1 index
   * copy (no round trip to the object before the one that mutates), so the facts the permission depended on are
   * checked again here, in the synchronous section that writes.
   */
  guarded(guard: Guard | undefined): WorkspaceRecord | Failure;
  /**
   * Runs `change` on the guarded live record, commits the result as the next version with its outbox entry, then
   * writes the index. `index: "after"`: the answer does not wait for the index write, which starts at once and follows
   * it (docs/consistency.md, "lists and search"), for changes whose index fields only decorate lists; its answer then
   * carries no bookmark.
   */
  mutate(input: { guard?: Guard }, change: Change, index?: "before" | "after"): Promise<WorkspaceResult>;
  /** Writes the record, its outbox entry and the change's audit event, and arms the alarm that drains them, in one synchronous section. */
  commit(kind: "live" | "deleted", record: WorkspaceRecord, audit?: AuditEvent): void;
  /** The D1 bookmark of this object's last index write (null: none since it started). */
  readonly bookmark: string | null;
  /** Writes what was committed to the index (with the call's test faults unless `callFaults` is false); its bookmark. */
  index(callFaults?: boolean): Promise<string | null>;
  /** The test-only faults of the RPC call being made (FAULT_INJECTION=1), else undefined. */
  faults(): Faults | undefined;
}
