import type { Context } from "hono";
import { JSONAPI } from "../errors";

export interface ResourceIdentifier {
  id: string;
  type: string;
}

export interface Resource extends ResourceIdentifier {
  attributes?: Record<string, unknown>;
  relationships?: Record<string, unknown>;
  links?: Record<string, unknown> | null;
  meta?: Record<string, unknown>;
}

export interface Document {
  data: Resource | Resource[] | null;
  included?: Resource[];
  links?: Record<string, string | null>;
  meta?: Record<string, unknown>;
}

/** A JSON:API response with the JSON:API media type. */
export function jsonapi(c: Context, doc: Document | Record<string, unknown>, status: 200 | 201 = 200): Response {
  return c.body(JSON.stringify(doc), status, { "Content-Type": JSONAPI });
}

export function noContent(c: Context): Response {
  return c.body(null, 204);
}

export interface Page {
  number: number;
  size: number;
}

/** The page's items of a list read whole. */
export function pageSlice<T>(all: readonly T[], page: Page): T[] {
  return all.slice((page.number - 1) * page.size, page.number * page.size);
}

/** The pagination envelope of a list read whole: the page's items serialised, the whole list counted. */
export function paginatedList<T>(c: Context, all: readonly T[], page: Page, serialize: (item: T) => Resource): Document {
  return paginated(c, pageSlice(all, page).map(serialize), page, all.length);
}

/** The pagination envelope: absolute links and meta.pagination (HCP Terraform API docs: Pagination). */
export function paginated(
  c: Context,
  data: Resource[],
  page: Page,
  totalCount: number,
  extra: { included?: Resource[]; meta?: Record<string, unknown> } = {},
): Document {
  const totalPages = Math.max(1, Math.ceil(totalCount / page.size));
  const link = (n: number) => {
    const url = new URL(c.req.url);
    url.searchParams.set("page[number]", String(n));
    url.searchParams.set("page[size]", String(page.size));
    return url.toString();
  };
  const doc: Document = {
    data,
    links: {
      self: link(page.number),
      first: link(1),
      prev: page.number > 1 ? link(Math.min(page.number - 1, totalPages)) : null,
      next: page.number < totalPages ? link(page.number + 1) : null,
      last: link(totalPages),
    },
    meta: {
      ...extra.meta,
      pagination: {
        "current-page": page.number,
        "page-size": page.size,
        "prev-page": page.number > 1 ? Math.min(page.number - 1, totalPages) : null,
        "next-page": page.number < totalPages ? page.number + 1 : null,
        "total-pages": totalPages,
        "total-count": totalCount,
      },
    },
  };
  if (extra.included && extra.included.length > 0) doc.included = extra.included;
  return doc;
}

/** Appends resources to `included` once each, keyed by (type, id). */
export class Included {
  private readonly seen = new Set<string>();
  readonly items: Resource[] = [];
  add(r: Resource | null | undefined): void {
    if (!r) return;
    const key = `${r.type}/${r.id}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.items.push(r);
  }
}
