/**
 * The workspace object's share of the audit trail: an event about one of its changes (handed in with the call's
 * guard, `Guard.audit`) is stored in the synchronous section that commits the change, in the record's row beside its
 * outbox entry (the `audit` column, a JSON array), and written to D1 by the flush that indexes that entry (an indexer
 * of workspace.outbox.ts). So an event is in the trail exactly when its change committed: a refused change stores
 * none, and a write D1 missed is retried with the outbox.
 */
import type { Indexer } from "../workspaces/workspace.outbox";
import { present, RECORD_TABLES } from "../workspaces/workspace.migrations";
import { auditStatements } from "./audit.d1";
import type { AuditEvent } from "./audit.rules";

export class AuditLog {
  constructor(private readonly sql: SqlStorage) {}

  /** Appends the event of the change being committed (call in the commit's synchronous section, after the record's write). */
  add(event: AuditEvent | undefined): void {
    if (!event) return;
    this.sql.exec("UPDATE workspace SET audit = json_insert(coalesce(audit, '[]'), '$[#]', json(?)) WHERE singleton = 1", JSON.stringify(event));
  }

  private unwritten(): AuditEvent[] | null {
    if (!present(this.sql, RECORD_TABLES)) return null;
    const text = this.sql.exec<{ audit: string | null }>("SELECT audit FROM workspace WHERE singleton = 1").toArray()[0]?.audit;
    return text ? (JSON.parse(text) as AuditEvent[]) : null;
  }

  /** What the flush writes; the workspace's delete writes its events too (its own event among them). */
  private inFlight: AuditEvent[] | null = null;

  readonly indexer: Indexer<AuditEvent[] | null> = {
    pending: () => this.unwritten(),
    statements: (session, _entry, pending) => {
      // A delete's flush passes no pending share (indexers drop their rows then); the events are still written.
      this.inFlight = pending ?? this.unwritten();
      return this.inFlight ? auditStatements(session, this.inFlight) : [];
    },
    indexed: () => {
      const written = this.inFlight?.length ?? 0;
      this.inFlight = null;
      if (written === 0) return;
      // Events appended while D1 was written stay for the next flush.
      const left = this.unwritten()?.slice(written) ?? [];
      this.sql.exec("UPDATE workspace SET audit = ? WHERE singleton = 1", left.length > 0 ? JSON.stringify(left) : null);
    },
  };
}
