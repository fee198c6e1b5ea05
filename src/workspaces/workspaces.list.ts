/** GET /organizations/:org/workspaces — listing from the D1 index. */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { canRead } from "../auth/permissions";
import { listSession } from "../db";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";
import { jsonapi, paginated, readPage } from "../jsonapi/document";
import { includeFor, parseInclude } from "./workspaces.include";
import { parseDoc } from "./workspaces.index";
import { loadScope } from "./workspaces.service";

export const listQuery = z
  .object({
    "page[number]": z.string().max(20).optional(),
    "page[size]": z.string().max(20).optional(),
    "search[name]": z.string().max(255).optional(),
    include: z.string().max(2000).optional(),
    sort: z.string().max(64).optional(),
  })
  .passthrough();

export async function listWorkspaces(c: Context<AppEnv>, organization: string): Promise<Response> {
  const page = readPage(c);
  const include = c.req.query("include");
  parseInclude(include);
  const db = listSession(c);
  const rows = await db
    .prepare("SELECT doc FROM workspaces WHERE organization_name = ? ORDER BY created_at, id")
    .bind(organization)
    .all<{ doc: string }>();
  const records = rows.results.map(parseDoc);
  const scope = await loadScope(c, organization, records);
  if (!scope) throw ApiError.of("not_found");
  const readable = records.filter((r) => canRead(scope.capsOf(r)));
  const slice = readable.slice((page.number - 1) * page.size, page.number * page.size);
  const inc = await includeFor(c, slice, scope, include);
  return jsonapi(c, paginated(c, slice.map(scope.serialize), page, readable.length, inc));
}
