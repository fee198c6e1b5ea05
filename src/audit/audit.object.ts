/**
 * The workspace object's share of the audit trail: an event about one of its changes (handed in with the call's
 * guard, `Guard.audit`) is stored in the synchronous section that commits the change, beside its outbox entry, and
 * written to D1 by the flush that indexes that entry (an indexer of workspace.outbox.ts). So an event is in the trail
 * exactly when its change committed: a refused change stores none, and a write D1 missed is retried with the outbox.
 */
import type { Indexer } from "../workspaces/workspace.outbox";
import { ensure, present, type TableSet } from "../workspaces/workspace.migrations";
import { auditStatements } from "./audit.d1";
import type { AuditEvent } from "./audit.rules";

/** Events committed and not yet in D1 (made by the first audited commit; no schema step: older stores lack it). */
export const AUDIT_TABLES: TableSet = {
  since: 11,
  tables: ["audit_outbox"],
  create(sql) {
    sql.exec("CREATE TABLE IF NOT EXISTS audit_outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, event TEXT NOT NULL)");
  },
};

interface Pending {
  upTo: number;
  events: AuditEvent[];
}

export class AuditLog {
  constructor(private readonly sql: SqlStorage) {}

  /** Stores the event of the change being committed (call in the commit's synchronous section). */
  add(event: AuditEvent | undefined): void {
    if (!event) return;
    ensure(this.sql, AUDIT_TABLES).exec("INSERT INTO audit_outbox (event) VALUES (?)", JSON.stringify(event));
  }

  private unwritten(): Pending | null {
    if (!present(this.sql, AUDIT_TABLES)) return null;
    const rows = this.sql.exec<{ seq: number; event: string }>("SELECT seq, event FROM audit_outbox ORDER BY seq").toArray();
    if (rows.length === 0) return null;
    return { upTo: rows[rows.length - 1].seq, events: rows.map((r) => JSON.parse(r.event) as AuditEvent) };
  }

  /** What the flush writes; the workspace's delete writes its events too (its own event among them). */
  private inFlight: Pending | null = null;

  readonly indexer: Indexer<Pending | null> = {
    pending: () => this.unwritten(),
    statements: (session, _entry, pending) => {
      // A delete's flush passes no pending share (indexers drop their rows then); the events are still written.
      this.inFlight = pending ?? this.unwritten();
      return this.inFlight ? auditStatements(session, this.inFlight.events) : [];
    },
    indexed: () => {
      if (this.inFlight) this.sql.exec("DELETE FROM audit_outbox WHERE seq <= ?", this.inFlight.upTo);
      this.inFlight = null;
    },
  };
}
