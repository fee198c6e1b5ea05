/**
 * The query of GET /organizations/:org/projects (HCP Terraform API docs, Projects: List projects), read once for the API route and the web
 * UI's projects page, so the same URL parameters give the same projects in both.
 */
import { validationError } from "../jsonapi/validation";
import { listProjectsQuery } from "./projects.schemas";
import type { ProjectQuery } from "./projects.service";

const TAGGED = /^filter\[tagged\]\[(\d{1,3})\]\[(key|value)\]$/;

/** `q`, `filter[names]`, `filter[tagged][i][key|value]` and `sort`; bad values are the API's 400. */
export function parseProjectQuery(query: Record<string, unknown>): ProjectQuery {
  const parsed = listProjectsQuery.safeParse(query);
  if (!parsed.success) throw validationError(parsed.error, "query");
  const { q, "filter[names]": names, sort } = parsed.data;
  // filter[tagged][i][key|value]: AND across i over the project's bindings; an empty value means any.
  const tagged = new Map<string, { key?: string; value?: string }>();
  for (const [k, raw] of Object.entries(parsed.data)) {
    const m = TAGGED.exec(k);
    const v = [raw].flat().at(-1);
    if (m && typeof v === "string") tagged.set(m[1], { ...tagged.get(m[1]), [m[2]]: v });
  }
  return {
    q: q || undefined,
    names:
      names !== undefined
        ? names
            .split(",")
            .map((n) => n.trim())
            .filter(Boolean)
        : undefined,
    tagged: [...tagged.values()].filter((t): t is { key: string; value?: string } => !!t.key),
    sort,
  };
}
