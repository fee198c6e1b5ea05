/** GET /organizations/:org/workspaces — listing, search, filters and sort over the D1 index. */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { callerOf } from "../auth/caller.http";
import { exposeBookmark } from "../db";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";
import { jsonapi, paginated, readPage, type Page } from "../jsonapi/document";
import { LIMITS } from "../limits";
import { includeFor, parseInclude } from "./workspaces.include";
import { likeLiteral, SORTS, type ListFilters, type ListSpec, type NameMatch, type SortParam, type TagFilter } from "./workspaces.list.d1";
import { listWorkspacePage } from "./workspaces.list.service";

const text = z.string().max(LIMITS.genericStringMax).optional();
/** The documented parameters; anything else (go-tfe sends junk such as `TagBindings=...`) is ignored. */
export const listQuery = z
  .object({
    "page[number]": text,
    "page[size]": text,
    "search[name]": text,
    "search[wildcard-name]": text,
    "search[tags]": text,
    "search[exclude-tags]": text,
    "filter[project][id]": text,
    "filter[current-run][status]": text,
    sort: text,
    include: text,
  })
  .passthrough();

const csv = (raw: string | null) => [
  ...new Set(
    (raw ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s.length > 0),
  ),
];

const badRequest = (parameter: string, detail: string) => ApiError.of("bad_request", { detail, parameter });

/** `search[wildcard-name]`: `*` only as prefix and/or suffix; every other character (a middle `*` too) is literal. */
function wildcardMatch(raw: string): NameMatch | null {
  const lead = raw.startsWith("*");
  const trail = raw.length > 1 && raw.endsWith("*");
  const core = raw.slice(lead ? 1 : 0, trail ? -1 : undefined);
  if (core === "" && (lead || trail)) return null; // `*` or `**`: every name
  return { literal: core, like: `${lead ? "%" : ""}${likeLiteral(core)}${trail ? "%" : ""}` };
}

/** `filter[tagged][i][key]` / `[value]`: a value pairs with the key of the same index; an empty value means any. */
function taggedFilters(params: URLSearchParams): TagFilter[] {
  const byIndex = new Map<number, { key?: string; value?: string }>();
  for (const [k, v] of params) {
    const m = /^filter\[tagged\]\[(\d{1,3})\]\[(key|value)\]$/.exec(k);
    if (!m) continue;
    const entry = byIndex.get(Number(m[1])) ?? {};
    entry[m[2] as "key" | "value"] = v;
    byIndex.set(Number(m[1]), entry);
  }
  const out: TagFilter[] = [];
  for (const [i, f] of [...byIndex].sort((a, b) => a[0] - b[0])) {
    if (!f.key) {
      if (f.value) throw badRequest(`filter[tagged][${i}][key]`, `filter[tagged][${i}][value] needs filter[tagged][${i}][key]`);
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
export function parseListQuery(params: URLSearchParams, page: Page): ListSpec {
  const sort = params.get("sort") || null;
  if (sort !== null && !(SORTS as readonly string[]).includes(sort)) throw badRequest("sort", `sort must be one of ${SORTS.join(", ")}`);
  const filters: ListFilters = {
    names: [],
    tags: csv(params.get("search[tags]")),
    // No tag contains NUL: such a key excludes nothing (dropped here; SQLite would cut it short).
    excludeTags: csv(params.get("search[exclude-tags]")).filter((k) => !k.includes("\u0000")),
    projectId: params.get("filter[project][id]") || null,
    runStatuses: csv(params.get("filter[current-run][status]")),
    tagged: taggedFilters(params),
    // No name or tag contains NUL (SQLite would cut a pattern there): such a search matches nothing.
    // search[exclude-tags] is not such a search: it can only narrow by what it names.
    nothing: [...params].some(([k, v]) => /^(search|filter)\[/.test(k) && k !== "search[exclude-tags]" && v.includes("\u0000")),
  };
  const name = params.get("search[name]");
  if (name) filters.names.push({ literal: name, like: `%${likeLiteral(name)}%` });
  const wildcard = params.get("search[wildcard-name]");
  const w = wildcard ? wildcardMatch(wildcard) : null;
  if (w) filters.names.push(w);
  // Each tag condition is one or two bound values; D1 binds at most 100 per statement.
  if (filters.tags.length + filters.excludeTags.length + filters.tagged.length > LIMITS.listTagFiltersMax) {
    throw badRequest("search[tags]", `at most ${LIMITS.listTagFiltersMax} tag conditions (search[tags], search[exclude-tags] and filter[tagged] together)`);
  }
  return { filters, sort: sort as SortParam | null, limit: page.size, offset: (page.number - 1) * page.size };
}

export async function listWorkspaces(c: Context<AppEnv>, organization: string): Promise<Response> {
  const params = new URL(c.req.url).searchParams;
  const page = readPage(c);
  const include = params.get("include") ?? undefined;
  parseInclude(include);
  const spec = parseListQuery(params, page);

  // Authorisation data travels in the same batch, so the whole list reads the primary (brief: auth on the primary).
  const caller = callerOf(c);
  let result: Awaited<ReturnType<typeof listWorkspacePage>>;
  try {
    result = await listWorkspacePage(caller, organization, spec);
  } finally {
    exposeBookmark(c, caller.db);
  }
  const data = result.records.map(result.scope.serialize);
  const inc = await includeFor(caller, new URL(c.req.url).origin, result.records, result.scope, include, data);
  return jsonapi(c, paginated(c, data, page, result.total, inc));
}
