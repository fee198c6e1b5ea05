/** All SQL for the audit trail (D1 `audit_events`, migration 0036). Rows are only ever inserted, or pruned by retention. */
import type { Db } from "../caller";
import { nowIso } from "../ids";
import { AUDIT_EVENT_TYPE, type AuditEvent } from "./audit.rules";

interface EventRow {
  id: string;
  organization_id: string;
  timestamp: string;
  accessor_id: string;
  description: string;
  auth_type: AuditEvent["auth"]["type"];
  impersonator_id: string | null;
  request_id: string;
  resource_id: string;
  resource_type: AuditEvent["resource"]["type"];
  action: string;
  meta: string | null;
}

function toEvent(r: EventRow): AuditEvent {
  return {
    id: r.id,
    organizationId: r.organization_id,
    timestamp: r.timestamp,
    auth: { accessorId: r.accessor_id, description: r.description, type: r.auth_type, impersonatorId: r.impersonator_id },
    requestId: r.request_id,
    resource: { id: r.resource_id, type: r.resource_type, action: r.action, meta: r.meta ? JSON.parse(r.meta) : null },
  };
}

/**
 * The insert of one event; a retried write of the same event (same id) inserts nothing. `ifChanged`: only when the
 * batch's statement just before it changed a row (SQLite's `changes()`), so a delete of nothing records nothing.
 */
export function insertAuditEventStatement(db: Db, e: AuditEvent, ifChanged = false): D1PreparedStatement {
  return db
    .prepare(
      `INSERT OR IGNORE INTO audit_events (id, organization_id, timestamp, type, accessor_id, description, auth_type, impersonator_id,
         request_id, resource_id, resource_type, action, meta) SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?${ifChanged ? " WHERE changes() > 0" : ""}`,
    )
    .bind(
      e.id,
      e.organizationId,
      e.timestamp,
      AUDIT_EVENT_TYPE,
      e.auth.accessorId,
      e.auth.description,
      e.auth.type,
      e.auth.impersonatorId,
      e.requestId,
      e.resource.id,
      e.resource.type,
      e.resource.action,
      e.resource.meta ? JSON.stringify(e.resource.meta) : null,
    );
}

/**
 * The organisation's retention: drops its events older than its data retention policy keeps (a delete-older policy,
 * src/retention/); none without one. Rides every batch that records an event, so the trail never needs a sweep.
 */
export function pruneAuditEventsStatement(db: Db, organizationId: string): D1PreparedStatement {
  return db
    .prepare(
      `DELETE FROM audit_events WHERE organization_id = ?1 AND timestamp < (
         SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-' || delete_older_than_n_days || ' days') FROM organization_retention_policies
         WHERE organization_id = ?1 AND type = 'data-retention-policy-delete-olders' AND delete_older_than_n_days IS NOT NULL)`,
    )
    .bind(organizationId);
}

/** Events' statements: their inserts (see `insertAuditEventStatement` for `ifChanged`) and their organisations' retention. */
export function auditStatements(db: Db, events: readonly AuditEvent[], ifChanged = false): D1PreparedStatement[] {
  const orgs = [...new Set(events.map((e) => e.organizationId))];
  return [...events.map((e) => insertAuditEventStatement(db, e, ifChanged)), ...orgs.map((o) => pruneAuditEventsStatement(db, o))];
}

/**
 * A user's sign-in (`method`: password, sso, token, terraform_login), recorded once in each organisation the user is
 * an active member of (a sign-in is the user's own; each of its organisations' owners see it). The user's name is
 * read in the statement, so the batch that starts the session needs no read before it.
 */
export function signInStatement(db: Db, userId: string, method: string, requestId: string | undefined): D1PreparedStatement {
  const eventId = crypto.randomUUID();
  return db
    .prepare(
      `INSERT OR IGNORE INTO audit_events (id, organization_id, timestamp, type, accessor_id, description, auth_type, impersonator_id,
         request_id, resource_id, resource_type, action, meta)
       SELECT ?1 || '-' || m.organization_id, m.organization_id, ?2, ?3, ?4, coalesce(u.username, ?4), 'Client', NULL, ?5, ?4, 'user_session', 'create', ?6
       FROM organization_memberships m LEFT JOIN users u ON u.id = ?4 WHERE m.user_id = ?4 AND m.status = 'active'`,
    )
    .bind(eventId, nowIso(), AUDIT_EVENT_TYPE, userId, requestId ?? crypto.randomUUID(), JSON.stringify({ method }));
}

/** A page of the organisation's events, oldest first (`newestFirst`: the owners' page), after `since` when given; with the count of all that match. */
export async function listAuditEvents(
  db: Db,
  organizationId: string,
  q: { since: string | null; limit: number; offset: number; newestFirst?: boolean },
): Promise<{ events: AuditEvent[]; total: number }> {
  const order = q.newestFirst ? "timestamp DESC, seq DESC" : "timestamp, seq";
  const where = q.since ? "organization_id = ?1 AND timestamp > ?2" : "organization_id = ?1";
  const binds = q.since ? [organizationId, q.since] : [organizationId];
  const n = binds.length;
  const [rows, count] = await db.batch([
    db
      .prepare(
        `SELECT id, organization_id, timestamp, accessor_id, description, auth_type, impersonator_id, request_id, resource_id, resource_type,
           action, meta FROM audit_events WHERE ${where} ORDER BY ${order} LIMIT ?${n + 1} OFFSET ?${n + 2}`,
      )
      .bind(...binds, q.limit, q.offset),
    db.prepare(`SELECT count(*) AS n FROM audit_events WHERE ${where}`).bind(...binds),
  ]);
  return { events: (rows.results as EventRow[]).map(toEvent), total: (count.results[0] as { n: number }).n };
}
