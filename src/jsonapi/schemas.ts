/**
 * Schemas every route shares: the organisation path parameter, the page and include query parameters, and
 * the builders of response documents (a resource's type, id and attribute keys), so openapi.json describes
 * each response as precisely as each request.
 */
import { z } from "@hono/zod-openapi";
import { LIMITS } from "../limits";
import type { Page } from "./document";

// ---- parameters ----

/** `{organization_name}`: the organisation's name. */
export const orgParam = z.object({ organization_name: z.string().min(1).max(255) });

const pageValue = z.string().max(20).optional();
/** `page[number]` and `page[size]` of every paginated list; read with `pageOf`. */
export const pageQuery = z.object({ "page[number]": pageValue, "page[size]": pageValue });

/** `include`: a comma-separated list, checked against the endpoint's own values by its handler. */
export const includeQuery = z.object({ include: z.string().max(2000).optional() });

/** The page a list query asks for: below 1 → 1; unreadable → the default; sizes above the maximum clamp to it. */
export function pageOf(query: { "page[number]"?: string; "page[size]"?: string }): Page {
  const num = positiveInt(query["page[number]"]) ?? 1;
  const size = positiveInt(query["page[size]"]) ?? LIMITS.pageSizeDefault;
  return { number: num, size: Math.min(size, LIMITS.pageSizeMax) };
}

function positiveInt(raw: string | undefined): number | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n)) return undefined;
  const i = Math.trunc(n);
  if (i < 1) return 1;
  return Math.min(i, 1_000_000_000);
}
