/**
 * The organisation audit trail: the events services record with their changes, and the list HCP Terraform's
 * `GET /organization/audit-trail` answers to the organisation's token or its audit-trails token (and the owners' page).
 */
import { requireOrgAccess } from "../auth/access";
import { authorize } from "../auth/requirements";
import type { Caller } from "../caller";
import { ApiError } from "../errors";
import type { Guard } from "../workspaces/workspace.types";
import { auditStatements, listAuditEvents } from "./audit.d1";
import { auditAuthOf, auditEvent, type AuditEvent, type AuditResource } from "./audit.rules";

/** The caller's event about `resource` in the organisation (by its id). */
export function auditOf(caller: Caller, organizationId: string, resource: AuditResource): AuditEvent {
  return auditEvent(organizationId, auditAuthOf(caller.principal), caller.requestId, resource);
}

/** A workspace object's guard carrying the change's event: the object commits it with the change (audit.object.ts). */
export function audited(caller: Caller, guard: Guard, resource: AuditResource): Guard {
  return { ...guard, audit: auditOf(caller, guard.organizationId, resource) };
}

/**
 * The statements recording the caller's event, for the D1 batch that makes the change, after its statement.
 * `ifChanged`: recorded only if that statement changed a row (a delete or update of nothing records nothing).
 */
export function auditStatementsOf(caller: Caller, organizationId: string, resource: AuditResource, ifChanged = false): D1PreparedStatement[] {
  return auditStatements(caller.db, [auditOf(caller, organizationId, resource)], ifChanged);
}

/** HCP's default and largest page (the docs: 1000 events per page when omitted). */
export const AUDIT_PAGE_MAX = 1000;

export interface AuditTrailQuery {
  since?: string;
  pageNumber: number;
  pageSize: number;
  newestFirst?: boolean;
}

/**
 * `since` as the stored timestamps compare (ISO 8601 in UTC, milliseconds), or a 400 naming the parameter. A time
 * given to the second (go-tfe sends RFC 3339 without fractions) names that whole second: events after it, as a
 * service timing events to the second answers (an event later in the same second may precede the caller's instant).
 */
function sinceOf(since: string | undefined): string | null {
  if (since === undefined || since === "") return null;
  const t = Date.parse(since);
  if (Number.isNaN(t)) throw ApiError.of("bad_request", { detail: "since must be an ISO 8601 time", parameter: "since" });
  const wholeSecond = !/T\d{2}:\d{2}:\d{2}[.,]\d/.test(since);
  return new Date(wholeSecond ? t + 999 : t).toISOString();
}

/** A page of the organisation's events (oldest first unless `newestFirst`) and the count of all that match. */
export async function listAuditTrail(
  caller: Caller,
  organizationId: string,
  q: AuditTrailQuery,
): Promise<{ events: AuditEvent[]; total: number; page: { number: number; size: number } }> {
  const since = sinceOf(q.since);
  const { events, total } = await listAuditEvents(caller.db, organizationId, {
    since,
    limit: q.pageSize,
    offset: (q.pageNumber - 1) * q.pageSize,
    newestFirst: q.newestFirst,
  });
  return { events, total, page: { number: q.pageNumber, size: q.pageSize } };
}

/** The API: the organisation is the token's own (an organisation token, or its audit-trails token). */
export async function listTokenAuditTrail(caller: Caller, q: AuditTrailQuery) {
  const p = caller.principal;
  const access = p.kind === "organization" ? await requireOrgAccess(caller, { id: p.organizationId }) : null;
  authorize(caller, "organization.audit-trail", { access });
  return listAuditTrail(caller, access!.organization.externalId, q);
}

/** The owners' page: an organisation by name, for its owners (users; not the organisation token). */
export async function listOrganizationAuditTrail(caller: Caller, organization: string, q: AuditTrailQuery) {
  const access = await requireOrgAccess(caller, { name: organization }, { ownerSettings: true });
  authorize(caller, "organization.owner", { access });
  return { ...(await listAuditTrail(caller, access.organization.externalId, q)), access };
}
