/** `GET /organization/audit-trail` (HCP Terraform's audit trails API): the token's organisation's events, not JSON:API. */
import { z } from "@hono/zod-openapi";
import { callerOf } from "../auth/caller.http";
import { defineRoutes } from "../jsonapi/define-route";
import { router } from "../jsonapi/validation";
import { AUDIT_PAGE_MAX, listTokenAuditTrail } from "./audit.service";
import { serializeAuditTrail } from "./audit.serialize";

const defineRoute = defineRoutes({ tags: ["Audit trail"] });
export const auditTrail = router();

const pageValue = z.string().max(20).optional();
const auditQuery = z.object({ since: z.string().max(64).optional(), "page[number]": pageValue, "page[size]": pageValue });

/** A page parameter: unreadable or absent → the default; below 1 → 1; sizes above HCP's largest clamp to it. */
function pageParam(raw: string | undefined, fallback: number, max: number): number {
  const n = raw === undefined || raw.trim() === "" ? Number.NaN : Math.trunc(Number(raw));
  if (!Number.isFinite(n)) return fallback;
  return Math.min(Math.max(n, 1), max);
}

const eventSchema = z.strictObject({
  id: z.string(),
  version: z.string(),
  type: z.string(),
  timestamp: z.string(),
  auth: z.strictObject({
    accessor_id: z.string(),
    description: z.string(),
    type: z.string(),
    impersonator_id: z.string().nullable(),
    organization_id: z.string(),
  }),
  request: z.strictObject({ id: z.string() }),
  resource: z.strictObject({ id: z.string(), type: z.string(), action: z.string(), meta: z.record(z.string(), z.unknown()).nullable() }),
});
/** A component (a $ref in the path): HCP's audit trail document, closed. */
const trailSchema = z
  .strictObject({
    data: z.array(eventSchema),
    pagination: z.strictObject({
      current_page: z.number(),
      prev_page: z.number().nullable(),
      next_page: z.number().nullable(),
      total_pages: z.number(),
      total_count: z.number(),
    }),
  })
  .openapi("AuditTrail");

auditTrail.openapi(
  defineRoute({
    method: "get",
    path: "/organization/audit-trail",
    action: "organization.audit-trail",
    summary: "List the organisation's audit events (the organisation token or its audit-trails token; oldest first)",
    description: "Not JSON:API, as in HCP Terraform. `since`: only events after this ISO 8601 time. `page[size]`: 1000 when omitted, at most 1000.",
    request: { query: auditQuery },
    responses: { 200: { description: "A page of events", content: { "application/json": { schema: trailSchema } } } },
  }),
  async (c) => {
    const q = c.req.valid("query");
    const list = await listTokenAuditTrail(callerOf(c), {
      since: q.since,
      pageNumber: pageParam(q["page[number]"], 1, 1_000_000_000),
      pageSize: pageParam(q["page[size]"], AUDIT_PAGE_MAX, AUDIT_PAGE_MAX),
    });
    return c.json(serializeAuditTrail(list), 200);
  },
);
