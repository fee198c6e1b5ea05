/** GET /organizations/:org/workspaces — listing, search, filters and sort over the D1 index (spec §4.4). */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { loadAccessBatch } from "../auth/access";
import { canRead } from "../auth/permissions";
import { exposeBookmark, listSession, primary } from "../db";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";
import { jsonapi, paginated, readPage } from "../jsonapi/document";
import { excludeTagsSql, searchTagsSql, taggedFilterSql } from "../tags/tags.index";
import { includeFor, parseInclude } from "./workspaces.include";
import { parseDoc } from "./workspaces.index";
import { loadScope } from "./workspaces.service";

const param = z.string().max(1000).optional();
/** The documented parameters; anything else (go-tfe sends junk such as `TagBindings=...`) is ignored. */
export const listQuery = z
  .object({
    "page[number]": z.string().max(20).optional(),
    "page[size]": z.string().max(20).optional(),
    "search[name]": param,
    "search[wildcard-name]": param,
    "search[tags]": param,
    "search[exclude-tags]": param,
    "filter[project][id]": z.string().max(64).optional(),
    "filter[current-run][status]": param,
    sort: z.string().max(64).optional(),
    include: z.string().max(2000).optional(),
  })
  .passthrough();

const SORTS: Record<string, string> = {
  name: "w.name ASC, w.id ASC",
  "-name": "w.name DESC, w.id DESC",
  "current-run.created-at": "w.current_run_created_at IS NULL, w.current_run_created_at ASC, w.created_at ASC, w.id ASC",
  "-current-run.created-at": "w.current_run_created_at IS NULL, w.current_run_created_at DESC, w.created_at DESC, w.id DESC",
  "latest-change-at": "w.latest_change_at ASC, w.id ASC",
  "-latest-change-at": "w.latest_change_at DESC, w.id DESC",
};
/** Without `sort`, creation order: stable across pages and calls. */
const DEFAULT_ORDER = "w.created_at ASC, w.id ASC";

/** LIKE-escapes a literal (every character but our own `%` is matched as itself). */
function likeLiteral(s: string): string {
  return s.replace(/[\\%_]/g, (m) => `\\${m}`);
}

const csv = (raw: string | undefined) => (raw ?? "").split(",").map((s) => s.trim()).filter((s) => s.length > 0);

interface Where {
  sql: string[];
  binds: unknown[];
}

/** Builds the WHERE clause from the query; brackets arrive percent-encoded or not (URLSearchParams decodes both). */
export function listFilters(params: URLSearchParams): Where {
  const where: Where = { sql: [], binds: [] };
  // No name or tag contains NUL, and SQLite would cut the pattern there: such a search matches nothing.
  for (const [k, v] of params) if (/^(search|filter)\[/.test(k) && v.includes("\u0000")) where.sql.push("0");
  const add = (sql: string, ...binds: unknown[]) => {
    where.sql.push(sql);
    where.binds.push(...binds);
  };
  const name = params.get("search[name]");
  if (name) add("w.name LIKE ? ESCAPE '\\'", `%${likeLiteral(name)}%`);
  const wildcard = params.get("search[wildcard-name]");
  if (wildcard) {
    // `*` only as prefix and/or suffix; every other character (including `*` inside) is literal.
    const lead = wildcard.startsWith("*");
    const trail = wildcard.length > 1 && wildcard.endsWith("*");
    const core = wildcard.slice(lead ? 1 : 0, trail ? -1 : undefined);
    add("w.name LIKE ? ESCAPE '\\'", `${lead ? "%" : ""}${likeLiteral(core)}${trail ? "%" : ""}`);
  }
  const tags = csv(params.get("search[tags]") ?? undefined);
  if (tags.length) {
    const t = searchTagsSql(tags);
    add(t.sql, ...t.binds);
  }
  const exclude = csv(params.get("search[exclude-tags]") ?? undefined);
  if (exclude.length) {
    const t = excludeTagsSql(exclude);
    add(t.sql, ...t.binds);
  }
  const project = params.get("filter[project][id]");
  if (project) add("w.project_id = ?", project);
  const statuses = csv(params.get("filter[current-run][status]") ?? undefined);
  if (statuses.length) add("w.current_run_status IN (SELECT value FROM json_each(?))", JSON.stringify(statuses));
  const tagged = taggedFilters(params);
  if (tagged.length) {
    const t = taggedFilterSql(tagged);
    add(t.sql, ...t.binds);
  }
  return where;
}

/** `filter[tagged][i][key]` / `[value]`: a value pairs with the key of the same index; empty value = any. */
function taggedFilters(params: URLSearchParams): Array<{ key: string; value?: string }> {
  const byIndex = new Map<number, { key?: string; value?: string }>();
  for (const [k, v] of params) {
    const m = /^filter\[tagged\]\[(\d{1,3})\]\[(key|value)\]$/.exec(k);
    if (!m) continue;
    const entry = byIndex.get(Number(m[1])) ?? {};
    entry[m[2] as "key" | "value"] = v;
    byIndex.set(Number(m[1]), entry);
  }
  const out: Array<{ key: string; value?: string }> = [];
  for (const [i, f] of [...byIndex].sort((a, b) => a[0] - b[0])) {
    if (!f.key) {
      if (f.value) throw ApiError.of("bad_request", { detail: `filter[tagged][${i}][value] needs filter[tagged][${i}][key]`, parameter: `filter[tagged][${i}][key]` });
      continue;
    }
    out.push({ key: f.key, value: f.value || undefined });
  }
  return out;
}

export async function listWorkspaces(c: Context<AppEnv>, organization: string): Promise<Response> {
  const page = readPage(c);
  const params = new URL(c.req.url).searchParams;
  const include = params.get("include") ?? undefined;
  parseInclude(include);
  const sortParam = params.get("sort");
  const order = sortParam ? SORTS[sortParam] : DEFAULT_ORDER;
  if (!order) throw ApiError.of("bad_request", { detail: `sort must be one of ${Object.keys(SORTS).join(", ")}`, parameter: "sort" });
  const where = listFilters(params);

  const loaded = await loadAccessBatch(primary(c), c.get("principal"), organization, [], []);
  if (!loaded) throw ApiError.of("not_found");
  const { access } = loaded;
  // Callers without organisation-wide read see only workspaces their teams hold grants on (total-count too).
  if (!canRead(access.base)) {
    const teams = JSON.stringify(access.teamIds);
    where.sql.push(
      `(w.id IN (SELECT workspace_id FROM team_workspaces WHERE team_id IN (SELECT value FROM json_each(?)))
        OR w.project_id IN (SELECT project_id FROM team_projects WHERE team_id IN (SELECT value FROM json_each(?))))`,
    );
    where.binds.push(teams, teams);
  }
  const clause = ["w.organization_name = ?", ...where.sql].join(" AND ");
  const binds = [access.organization.name, ...where.binds];
  const db = listSession(c);
  const [countRes, rowsRes] = await db.batch([
    db.prepare(`SELECT count(*) AS n FROM workspaces w WHERE ${clause}`).bind(...binds),
    db.prepare(`SELECT w.doc FROM workspaces w WHERE ${clause} ORDER BY ${order} LIMIT ? OFFSET ?`).bind(...binds, page.size, (page.number - 1) * page.size),
  ]);
  exposeBookmark(c, db);
  const total = (countRes?.results?.[0] as { n: number } | undefined)?.n ?? 0;
  const records = ((rowsRes?.results ?? []) as Array<{ doc: string }>).map(parseDoc);
  const scope = await loadScope(c, organization, records);
  if (!scope) throw ApiError.of("not_found");
  const data = records.map(scope.serialize);
  const inc = await includeFor(c, records, scope, include, data);
  return jsonapi(c, paginated(c, data, page, total, inc));
}
