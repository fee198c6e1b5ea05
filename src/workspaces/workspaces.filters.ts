/** The query of GET /organizations/:org/workspaces (and the UI's list page): search, filters, sort and page, parsed once. */
import { z } from "@hono/zod-openapi";
import type { Page } from "../jsonapi/document";
import { includeQuery, pageOf, pageQuery } from "../jsonapi/schemas";
import { validationError } from "../jsonapi/validation";
import { LIMITS } from "../limits";
import { SORTS, type ListFilters, type ListSpec, type NameMatch, type TagFilter } from "./workspaces.list.d1";

const text = z.string().max(LIMITS.genericStringMax).optional();
const TAGGED = /^filter\[tagged\]\[(\d{1,3})\]\[(key|value)\]$/;

/**
 * The documented parameters, and `filter[tagged][i][key]` / `[value]` among the rest; anything else (go-tfe
 * sends junk such as `TagBindings=...`) is ignored. The route's validator runs it, so its output is the list's
 * page, filters and sort; bad values are a 400 naming the parameter.
 */
export const listQuery = z
  .object({
    ...pageQuery.shape,
    ...includeQuery.shape,
    "search[name]": text,
    "search[wildcard-name]": text,
    "search[tags]": text,
    "search[exclude-tags]": text,
    "filter[project][id]": text,
    "filter[current-run][status]": text,
    // Empty: the default order.
    sort: z.enum([...SORTS, ""]).optional(),
  })
  .passthrough()
  .transform((q, ctx): ListQuery => {
    const page = pageOf(q);
    const tagged = taggedFilters(q, ctx);
    const filters: ListFilters = {
      names: [],
      tags: csv(q["search[tags]"]),
      // No tag contains NUL: such a key excludes nothing (dropped here; SQLite would cut it short).
      excludeTags: csv(q["search[exclude-tags]"]).filter((k) => !k.includes("\u0000")),
      projectId: q["filter[project][id]"] || null,
      runStatuses: csv(q["filter[current-run][status]"]),
      tagged,
      // No name or tag contains NUL (SQLite would cut a pattern there): such a search matches nothing.
      // search[exclude-tags] is not such a search: it can only narrow by what it names.
      nothing: Object.entries(q).some(
        ([k, v]) => /^(search|filter)\[/.test(k) && k !== "search[exclude-tags]" && [v].flat().some((s) => typeof s === "string" && s.includes("\u0000")),
      ),
    };
    const name = q["search[name]"];
    if (name) filters.names.push({ literal: name, mode: "contains" });
    const wildcard = q["search[wildcard-name]"];
    const w = wildcard ? wildcardMatch(wildcard) : null;
    if (w) filters.names.push(w);
    // Each kind of tag condition is one SQL term and one bound value (workspaces.list.d1.ts), whatever their number.
    if (filters.tags.length + filters.excludeTags.length + filters.tagged.length > LIMITS.listTagFiltersMax) {
      ctx.addIssue({
        code: "custom",
        path: ["search[tags]"],
        message: `at most ${LIMITS.listTagFiltersMax} tag conditions (search[tags], search[exclude-tags] and filter[tagged] together)`,
      });
    }
    const spec: ListSpec = { filters, sort: q.sort || null, limit: page.size, offset: (page.number - 1) * page.size };
    return { spec, page, include: q.include };
  });

/** What the list query asks for: the list's spec, its page and its `include`. */
export interface ListQuery {
  spec: ListSpec;
  page: Page;
  include: string | undefined;
}

const csv = (raw: string | undefined) => [
  ...new Set(
    (raw ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s.length > 0),
  ),
];

/** `search[wildcard-name]`: `*` only as prefix and/or suffix; every other character (a middle `*` too) is literal. */
function wildcardMatch(raw: string): NameMatch | null {
  const lead = raw.startsWith("*");
  const trail = raw.length > 1 && raw.endsWith("*");
  const core = raw.slice(lead ? 1 : 0, trail ? -1 : undefined);
  if (core === "" && (lead || trail)) return null; // `*` or `**`: every name
  return { literal: core, mode: lead && trail ? "contains" : lead ? "suffix" : trail ? "prefix" : "exact" };
}

/**
 * `filter[tagged][i][key]` / `[value]`: a value pairs with the key of the same index; an empty value means any.
 * A parameter sent twice counts once, its last value (as a query string read in order would).
 */
function taggedFilters(q: Record<string, unknown>, ctx: z.RefinementCtx): TagFilter[] {
  const byIndex = new Map<number, { key?: string; value?: string }>();
  for (const [k, raw] of Object.entries(q)) {
    const m = TAGGED.exec(k);
    const v = [raw].flat().at(-1);
    if (!m || typeof v !== "string") continue;
    const entry = byIndex.get(Number(m[1])) ?? {};
    entry[m[2] as "key" | "value"] = v;
    byIndex.set(Number(m[1]), entry);
  }
  const out: TagFilter[] = [];
  for (const [i, f] of [...byIndex].sort((a, b) => a[0] - b[0])) {
    if (!f.key) {
      if (f.value) ctx.addIssue({ code: "custom", path: [`filter[tagged][${i}][key]`], message: `required with filter[tagged][${i}][value]` });
      continue;
    }
    out.push({ key: f.key, value: f.value || undefined });
  }
  return out;
}

/**
 * The parameters of the real API's "List workspaces" (HCP Terraform API docs, Workspaces) (URLSearchParams decodes brackets sent percent-encoded or not).
 * Bad values are a 400 naming the parameter.
 */
export function parseListQuery(query: Record<string, string | string[]>): ListQuery {
  const parsed = listQuery.safeParse(query);
  if (!parsed.success) throw validationError(parsed.error, "query");
  return parsed.data;
}
