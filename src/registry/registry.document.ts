/** The registry's list documents: the shared pagination envelope, with no pages at all for an empty list, as the real service answers its registry lists (go-tfe's registry tests check `total-pages: 0`). */
import type { Context } from "hono";
import { type Document, type Page, paginated, type Resource } from "../jsonapi/document";

export function registryPage(c: Context, data: Resource[], page: Page, total: number, extra: { included?: Resource[] } = {}): Document {
  const doc = paginated(c, data, page, total, extra);
  if (total === 0) (doc.meta?.pagination as Record<string, unknown>)["total-pages"] = 0;
  return doc;
}
