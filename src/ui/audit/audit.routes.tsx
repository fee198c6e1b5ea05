/** @jsxImportSource hono/jsx */
/** The organisation's audit trail page (owners), through the service the API's audit trail reads. */
import { Hono } from "hono";
import { listOrganizationAuditTrail } from "../../audit/audit.service";
import type { AppEnv } from "../../env";
import { pageOf } from "../../jsonapi/schemas";
import { callerOf } from "../context";
import { definePage } from "../define-page";
import { AuditTrailPage } from "./audit.view";

export const auditUi = new Hono<AppEnv>();

definePage(auditUi, "get", "/:organization/settings/audit-trail", "organization.owner", async (c) => {
  const page = pageOf({ "page[number]": c.req.query("page[number]"), "page[size]": c.req.query("page[size]") ?? "50" });
  const list = await listOrganizationAuditTrail(callerOf(c), c.req.param("organization"), { pageNumber: page.number, pageSize: page.size, newestFirst: true });
  const query = new URLSearchParams();
  if (c.req.query("page[size]")) query.set("page[size]", String(page.size));
  return c.html(<AuditTrailPage access={list.access} events={list.events} total={list.total} page={list.page} query={query} />);
});
