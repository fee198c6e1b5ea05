/** Site-admin endpoints: the consistency checker's pages. */
import { z } from "@hono/zod-openapi";
import { callerOf } from "../auth/caller.http";
import { jsonapi } from "../jsonapi/document";
import { listDocument, pageQuery } from "../jsonapi/schemas";
import { ok, router } from "../jsonapi/validation";
import { serializeConsistencyReport } from "./consistency.serialize";
import { consistencyReport } from "./consistency.service";
import { defineRoutes } from "../jsonapi/define-route";
import { consistencyDifferenceResource } from "./admin.schemas";

const defineRoute = defineRoutes({ tags: ["Admin"] });

export const admin = router();

admin.openapi(
  defineRoute({
    method: "get",
    path: "/admin/consistency",
    action: "site-admin",
    summary: "Compare each workspace's Durable Object with its D1 index row (site admins; paged by cursor)",
    // Paged by cursor: `page[size]` alone (1 to 100, default 50), the next page's cursor in `meta.next-cursor`.
    request: {
      query: pageQuery
        .pick({ "page[size]": true })
        .extend({ cursor: z.string().max(100).optional() })
        .passthrough(),
    },
    responses: ok("Differences found in this page", listDocument(consistencyDifferenceResource)),
  }),
  async (c) => {
    const q = c.req.valid("query");
    const size = Math.min(100, Math.max(1, Number(q["page[size]"] ?? "50") || 50));
    const result = await consistencyReport(callerOf(c), q.cursor ?? "", size);
    return jsonapi(c, serializeConsistencyReport(result));
  },
);
