/**
 * The audit trail in HCP Terraform's shape, which is not JSON:API (the docs: "Unlike other APIs, the Audit Trails API
 * does not use the JSON API specification"): `data` events with snake-case keys and a top-level `pagination`, as
 * go-tfe's `AuditTrailList` decodes them.
 */
import { AUDIT_EVENT_TYPE, AUDIT_EVENT_VERSION, type AuditEvent } from "./audit.rules";

export function serializeAuditEvent(e: AuditEvent) {
  return {
    id: e.id,
    version: AUDIT_EVENT_VERSION,
    type: AUDIT_EVENT_TYPE,
    timestamp: e.timestamp,
    auth: {
      accessor_id: e.auth.accessorId,
      description: e.auth.description,
      type: e.auth.type,
      impersonator_id: e.auth.impersonatorId,
      organization_id: e.organizationId,
    },
    request: { id: e.requestId },
    resource: { id: e.resource.id, type: e.resource.type, action: e.resource.action, meta: e.resource.meta },
  };
}

export function serializeAuditTrail(list: { events: AuditEvent[]; total: number; page: { number: number; size: number } }) {
  const totalPages = Math.max(1, Math.ceil(list.total / list.page.size));
  const n = list.page.number;
  return {
    data: list.events.map(serializeAuditEvent),
    pagination: {
      current_page: n,
      prev_page: n > 1 ? n - 1 : null,
      next_page: n < totalPages ? n + 1 : null,
      total_pages: totalPages,
      total_count: list.total,
    },
  };
}
