/**
 * D1 statements for the workspace list (GET /organizations/:org/workspaces) and its includes.
 *
 * One request is one `batch()`: the organisation row carrying the caller's teams and the organisation's deleted
 * tags, and a page statement that returns the total count, the page's rows and, per row, what
 * authorisation and serialisation need (the caller's grants, the project's execution defaults, whether
 * the SSH key still exists). Whether the caller reads every workspace of the organisation (owners,
 * site admin, organisation token, `manage-workspaces`, `read-workspaces`) is only known from the team
 * rows in that same batch, so the page statement comes twice: once for an organisation-wide reader
 * and once filtered to the caller's grants, each guarded in SQL by that condition (once the caller has listed the
 * organisation in this isolate, only the variant it used then: workspaces.list.service.ts). The guard sits in
 * the organisation key every index seek starts from, so the variant that does not apply seeks NULL
 * and costs a few index probes. The handler re-checks the condition with the pure permission model
 * (`workspace.read` of src/auth/requirements.ts on `access.base`) and re-runs the page with an explicit flag if the two ever disagree.
 *
 * Every filter has two equivalent forms: a set of workspace ids built from covering indexes (for
 * the count, and for sorting a small result), and a predicate on one row (for walking the sort's
 * index until a page is full). The page picks the cheaper of the two from the count: a small result
 * is sorted directly; a large one is found by walking the index in order, which stops after the page.
 * `total-count` without a filter (or with the project filter alone) comes from `workspace_counts`
 * (migration 0007), maintained by triggers; `search[tags]` with one key alone counts index ranges (`oneKeyCount`);
 * `search[name]` alone counts its matches in the trigram index within the organisation's rowid range (migration 0026);
 * other filters count the matching set, which costs time proportional to the matches (not to the organisation).
 */
import type { Principal } from "../auth/principal";
import {
  toAccessTeam,
  toGrant,
  toProjectDefaults,
  type AccessTeam,
  type AccessTeamRow,
  type Grant,
  type GrantRow,
  type ProjectDefaults,
  type ProjectDefaultsRow,
} from "../auth/access.d1";
import { ORGANIZATION_COLUMNS, toOrganization, type Organization, type OrganizationRow } from "../auth/organization.d1";
import { LIVE_ROW } from "../tags/tags.d1";
import { toProject, type Project, type ProjectRow } from "../projects/projects.d1";
import { toProjectBinding, type ProjectBinding, type ProjectBindingRow } from "../tags/project-tags.d1";
import { textMatchSql, type TextMatchMode } from "../platform/text-match";
import { holderNameSql } from "./lock.d1";
import type { WorkspaceRecord } from "./workspace.types";
import { parseDoc } from "./workspaces.d1";

export const SORTS = ["name", "-name", "current-run.created-at", "-current-run.created-at", "latest-change-at", "-latest-change-at"] as const;
export type SortParam = (typeof SORTS)[number];

/** A name condition: the name matches `literal` by `mode` (ASCII case-insensitively, src/platform/text-match.ts); every match contains it. */
export interface NameMatch {
  literal: string;
  mode: TextMatchMode;
}

export interface TagFilter {
  key: string;
  /** Empty or absent: any value. */
  value?: string;
}

export interface ListFilters {
  names: NameMatch[];
  /** search[tags]: every key, direct or inherited from the project. */
  tags: string[];
  /** search[exclude-tags]: none of the keys. */
  excludeTags: string[];
  projectId: string | null;
  runStatuses: string[];
  tagged: TagFilter[];
  /** A condition nothing can satisfy (e.g. a NUL byte in a search). */
  nothing: boolean;
}

export interface ListSpec {
  filters: ListFilters;
  sort: SortParam | null;
  limit: number;
  offset: number;
}

/** `scan`/`sort` force one of the two page plans (tests compare them); `auto` picks from the count. */
export type Strategy = "auto" | "scan" | "sort";

/** Numbered parameters (`?N`), so one value can appear in several places of a statement. */
class Params {
  readonly values: unknown[] = [];
  add(v: unknown): string {
    this.values.push(v);
    return `?${this.values.length}`;
  }
  /** The values up to the highest number `sql` uses (D1 refuses values the statement does not take). */
  for(sql: string): unknown[] {
    const used = Math.max(0, ...[...sql.matchAll(/\?(\d+)/g)].map((m) => Number(m[1])));
    return this.values.slice(0, used);
  }
}

/** One filter in its two forms: ids in the organisation `org` (an SQL expression of its id), and a predicate on `w`. */
interface Term {
  set(org: string): string;
  pred: string;
  /** An exact count without counting rows, when the term is the only filter. */
  counter?(org: string): string;
}

/** The size of each organisation's range of search row ids (migration 0026). */
const SEARCH_RANGE = 4294967296;

/** An FTS5 phrase: the literal as one quoted string (trigrams match it as a substring). */
function ftsPhrase(s: string): string {
  return `"${s.replace(/"/g, '""')}"`;
}

function projectTerm(P: Params, projectId: string): Term {
  const p = P.add(projectId);
  return {
    set: (org) => `SELECT w2.id AS id FROM workspaces w2 WHERE w2.organization_id = ${org} AND w2.project_id = ${p}`,
    pred: `w.project_id = ${p}`,
    counter: (org) => `(SELECT coalesce(sum(c.n), 0) FROM workspace_counts c WHERE c.organization_id = ${org} AND c.project_id = ${p})`,
  };
}

function runStatusTerm(P: Params, statuses: string[]): Term {
  const p = P.add(JSON.stringify(statuses));
  const cond = `IN (SELECT value FROM json_each(${p}))`;
  return {
    set: (org) => `SELECT w2.id AS id FROM workspaces w2 WHERE w2.organization_id = ${org} AND w2.current_run_status ${cond}`,
    pred: `w.current_run_status ${cond}`,
  };
}

/** Names through the trigram index when the literal has 3+ characters, else a scan of the organisation's names. */
function nameTerm(P: Params, m: NameMatch): Term {
  // One placeholder per value, shared by the set's recheck and the row predicate.
  const placed = new Map<string, string>();
  const bind = (v: string) => {
    const p = placed.get(v) ?? P.add(v);
    placed.set(v, p);
    return p;
  };
  const recheck = textMatchSql("s.name", m.literal, m.mode, bind);
  const pred = textMatchSql("w.name", m.literal, m.mode, bind);
  if ([...m.literal].length >= 3) {
    const q = P.add(ftsPhrase(m.literal));
    // An inactive variant (org NULL) matches the empty phrase, which finds nothing without reading the index. The
    // organisation's rowid range (migration 0026) keeps other organisations' matches out of the index scan.
    const matchAny = (org: string) => `workspace_search_fts MATCH (CASE WHEN ${org} IS NULL THEN '""' ELSE ${q} END)`;
    const match = (org: string) => `${matchAny(org)}
        AND workspace_search_fts.rowid BETWEEN (SELECT r.base FROM workspace_search_orgs r WHERE r.organization_id = ${org})
          AND (SELECT r.base + ${SEARCH_RANGE - 1} FROM workspace_search_orgs r WHERE r.organization_id = ${org})`;
    return {
      set: (org) => `SELECT s.workspace_id AS id FROM workspace_search_fts CROSS JOIN workspace_search s ON s.rid = workspace_search_fts.rowid
        WHERE ${matchAny(org)} AND s.organization_id = ${org} AND ${recheck}`,
      pred,
      // Names hold ASCII letters, digits, "-" and "_" alone (WORKSPACE_NAME), and the trigram index folds ASCII case as
      // LIKE does: for a printable ASCII literal searched anywhere in the name, the index's matches are exactly the term's, so
      // they are counted in the index alone, without reading each match's row (the count stays exact).
      counter: m.mode === "contains" && /^[ -~]+$/.test(m.literal) ? (org) => `(SELECT count(*) FROM workspace_search_fts WHERE ${match(org)})` : undefined,
    };
  }
  return {
    set: (org) => `SELECT s.workspace_id AS id FROM workspace_search s WHERE s.organization_id = ${org} AND ${recheck}`,
    pred,
  };
}

/**
 * `search[tags]` / `search[exclude-tags]`: the workspace carries key K as a flat tag (live) or a
 * binding key, directly or inherited from its project's bindings (either set).
 */
function keysSql(P: Params, keys: string[]): string {
  return keys.length === 1 ? `= ${P.add(keys[0])}` : `IN (SELECT value FROM json_each(${P.add(JSON.stringify(keys))}))`;
}

/**
 * `search[exclude-tags]`, and `search[tags]` with one key: the workspace carries one of the keys as a flat tag
 * (live) or a binding key, directly or inherited from its project's bindings (either set).
 */
function anyKeyTerm(P: Params, keys: string[]): Term {
  const k = keysSql(P, keys);
  const inherited = `SELECT pb.project_id FROM project_tag_bindings pb WHERE pb.key ${k}`;
  const set = (org: string) => `SELECT wt.workspace_id AS id FROM workspace_tags wt WHERE wt.organization_id = ${org} AND wt.key ${k} AND ${LIVE_ROW}
      UNION SELECT w2.id FROM workspaces w2 WHERE w2.organization_id = ${org} AND w2.project_id IN (${inherited})`;
  return {
    set,
    pred: `(EXISTS (SELECT 1 FROM workspace_tags wt WHERE wt.workspace_id = w.id AND wt.key ${k} AND ${LIVE_ROW}) OR w.project_id IN (${inherited}))`,
    counter: keys.length === 1 ? (org) => oneKeyCount(org, k, set(org)) : undefined,
  };
}

/**
 * The exact count of workspaces carrying key `k` (an SQL condition on it), without the union's temporary B-tree
 * (10,000 matches cost 6 ms that way, 0.7 ms this way). While the organisation has no deleted tag and none of its
 * projects binds the key, every flat row is live and nothing is inherited, so the count is the key's flat rows
 * plus its binding rows on workspaces without a flat row for it: each an index range, and a workspace has at most one
 * row of each kind per key (the table's unique key). Otherwise it counts the matching set `set`.
 */
function oneKeyCount(org: string, k: string, set: string): string {
  const exact = `(SELECT count(*) FROM (${set}))`;
  return `(CASE WHEN EXISTS (SELECT 1 FROM deleted_tags d WHERE d.organization_id = ${org})
      OR EXISTS (SELECT 1 FROM project_tag_bindings pb JOIN projects p ON p.id = pb.project_id WHERE pb.key ${k} AND p.organization_id = ${org})
    THEN ${exact}
    ELSE (SELECT count(*) FROM workspace_tags wt WHERE wt.organization_id = ${org} AND wt.key ${k} AND wt.kind = 'flat')
      + (SELECT count(*) FROM workspace_tags wt WHERE wt.organization_id = ${org} AND wt.key ${k} AND wt.kind = 'binding'
        AND NOT EXISTS (SELECT 1 FROM workspace_tags f WHERE f.workspace_id = wt.workspace_id AND f.kind = 'flat' AND f.key = wt.key)) END)`;
}

/**
 * `search[tags]`: the workspace carries every key, each as in `anyKeyTerm`. Several keys are one term that
 * counts the keys a workspace carries: a term per key made the statement too large for D1 (SQLITE_NOMEM,
 * "Expression tree is too large") long before LIMITS.listTagFiltersMax.
 */
function allKeysTerm(P: Params, list: string[]): Term {
  const keys = [...new Set(list)];
  if (keys.length === 1) return anyKeyTerm(P, keys);
  const json = P.add(JSON.stringify(keys));
  return {
    set: (org) => `SELECT t.id AS id FROM (
        SELECT wt.workspace_id AS id, wt.key AS key FROM workspace_tags wt
          WHERE wt.organization_id = ${org} AND wt.key IN (SELECT value FROM json_each(${json})) AND ${LIVE_ROW}
        UNION ALL SELECT w2.id, j.value FROM json_each(${json}) j CROSS JOIN workspaces w2
          WHERE w2.organization_id = ${org} AND w2.project_id IN (SELECT pb.project_id FROM project_tag_bindings pb WHERE pb.key = j.value)
      ) t GROUP BY t.id HAVING count(DISTINCT t.key) = ${keys.length}`,
    pred: `(SELECT count(*) FROM json_each(${json}) j
      WHERE EXISTS (SELECT 1 FROM workspace_tags wt WHERE wt.workspace_id = w.id AND wt.key = j.value AND ${LIVE_ROW})
        OR EXISTS (SELECT 1 FROM project_tag_bindings pb WHERE pb.project_id = w.project_id AND pb.key = j.value)) = ${keys.length}`,
  };
}

/** `filter[tagged]` without a value: the workspace has a binding for K, direct or inherited (never a flat tag). */
function bindingKeyTerm(P: Params, key: string): Term {
  const k = P.add(key);
  const inherited = `SELECT pb.project_id FROM project_tag_bindings pb WHERE pb.key = ${k}`;
  return {
    set: (org) => `SELECT wt.workspace_id AS id FROM workspace_tags wt WHERE wt.organization_id = ${org} AND wt.key = ${k} AND wt.kind = 'binding'
      UNION SELECT w2.id FROM workspaces w2 WHERE w2.organization_id = ${org} AND w2.project_id IN (${inherited})`,
    pred: `(EXISTS (SELECT 1 FROM workspace_tags wt WHERE wt.workspace_id = w.id AND wt.key = ${k} AND wt.kind = 'binding') OR w.project_id IN (${inherited}))`,
  };
}

/**
 * `filter[tagged]` with a value: the workspace's effective binding for K has value V — its own binding,
 * or the project's when it has no binding for K itself (its own wins, as in effective bindings; a
 * flat tag named K is not a binding and hides nothing).
 */
function keyValueTerm(P: Params, key: string, value: string): Term {
  const k = P.add(key);
  const v = P.add(value);
  const inherited = `SELECT pb.project_id FROM project_tag_bindings pb WHERE pb.key = ${k} AND pb.value = ${v}`;
  return {
    set: (
      org,
    ) => `SELECT wt.workspace_id AS id FROM workspace_tags wt WHERE wt.organization_id = ${org} AND wt.key = ${k} AND wt.kind = 'binding' AND wt.value = ${v}
      UNION SELECT id FROM (SELECT w2.id AS id FROM workspaces w2 WHERE w2.organization_id = ${org} AND w2.project_id IN (${inherited})
        EXCEPT SELECT wt.workspace_id FROM workspace_tags wt WHERE wt.organization_id = ${org} AND wt.key = ${k} AND wt.kind = 'binding')`,
    pred: `(EXISTS (SELECT 1 FROM workspace_tags wt WHERE wt.workspace_id = w.id AND wt.key = ${k} AND wt.kind = 'binding' AND wt.value = ${v})
      OR (w.project_id IN (${inherited}) AND NOT EXISTS (SELECT 1 FROM workspace_tags wt WHERE wt.workspace_id = w.id AND wt.key = ${k} AND wt.kind = 'binding')))`,
  };
}

/**
 * Every `filter[tagged]` condition: the workspace's effective binding for each key K exists (and has value V
 * when the condition has one), as in `keyValueTerm` / `bindingKeyTerm`. Several conditions are one term over one
 * JSON array of [K, V or null] that counts the conditions a workspace meets (see `allKeysTerm`).
 */
function taggedTerm(P: Params, conditions: TagFilter[]): Term {
  if (conditions.length === 1) {
    const [t] = conditions;
    return t.value ? keyValueTerm(P, t.key, t.value) : bindingKeyTerm(P, t.key);
  }
  const json = P.add(JSON.stringify(conditions.map((t) => [t.key, t.value || null])));
  const c = `(SELECT j.key AS i, json_extract(j.value, '$[0]') AS k, json_extract(j.value, '$[1]') AS v FROM json_each(${json}) j)`;
  const ownBinding = (what: string, ws: string) =>
    `SELECT ${what} FROM workspace_tags wt WHERE wt.workspace_id = ${ws} AND wt.kind = 'binding' AND wt.key = c.k`;
  // A condition with a value seeks it in the (key, value) indexes; one without matches any value of the key:
  // two arms each, for the kinds of condition present.
  const arms = (org: string, valued: boolean) => {
    const v = valued ? "c.v IS NOT NULL" : "c.v IS NULL";
    return [
      `SELECT wt.workspace_id AS id, c.i AS i FROM ${c} c CROSS JOIN workspace_tags wt
        WHERE ${v} AND wt.organization_id = ${org} AND wt.key = c.k AND wt.kind = 'binding'${valued ? " AND wt.value = c.v" : ""}`,
      `SELECT w2.id, c.i FROM ${c} c CROSS JOIN workspaces w2 WHERE ${v} AND w2.organization_id = ${org}
        AND w2.project_id IN (SELECT pb.project_id FROM project_tag_bindings pb WHERE pb.key = c.k${valued ? " AND pb.value = c.v" : ""})
        AND NOT EXISTS (${ownBinding("1", "w2.id")})`,
    ];
  };
  const kinds = [...new Set(conditions.map((t) => !!t.value))];
  return {
    set: (org) => `SELECT t.id AS id FROM (${kinds.flatMap((valued) => arms(org, valued)).join(" UNION ALL ")})
      t GROUP BY t.id HAVING count(DISTINCT t.i) = ${conditions.length}`,
    // Binding values are never NULL: a missing binding is NULL, and a condition without a value matches any other.
    pred: `(SELECT count(*) FROM (SELECT c.v AS want, coalesce((${ownBinding("wt.value", "w.id")}),
        (SELECT pb.value FROM project_tag_bindings pb WHERE pb.project_id = w.project_id AND pb.key = c.k)) AS got FROM ${c} c) e
      WHERE e.got = coalesce(e.want, e.got)) = ${conditions.length}`,
  };
}

/**
 * What a caller without organisation-wide read sees: workspaces its teams hold a grant on, and the
 * workspaces of projects its teams hold a grant on (every grant level includes read, permissions.ts).
 */
function readableTerm(): Term {
  const direct = "SELECT tw.workspace_id FROM team_workspaces tw WHERE tw.team_id IN (SELECT id FROM caller_teams)";
  const projects = "SELECT tp.project_id FROM team_projects tp WHERE tp.team_id IN (SELECT id FROM caller_teams)";
  return {
    set: (org) => `SELECT tw.workspace_id AS id FROM team_workspaces tw JOIN workspaces w3 ON w3.id = tw.workspace_id
        WHERE tw.team_id IN (SELECT id FROM caller_teams WHERE ${org} IS NOT NULL)
      UNION SELECT w2.id FROM workspaces w2 WHERE w2.organization_id = ${org} AND w2.project_id IN (${projects})`,
    pred: `(w.id IN (${direct}) OR w.project_id IN (${projects}))`,
  };
}

const NOTHING: Term = { set: () => "SELECT NULL AS id WHERE 0", pred: "0" };

/** The sort's keys, in the order of an index that serves them (migration 0007). */
function sortKeys(sort: SortParam | null): { keys: string[]; desc: boolean; collate: boolean } {
  const desc = sort?.startsWith("-") ?? false;
  switch (sort?.replace(/^-/, "")) {
    case "name":
      return { keys: ["w.name", "w.id"], desc, collate: true };
    case "latest-change-at":
      return { keys: ["w.latest_change_at", "w.id"], desc, collate: false };
    case "current-run.created-at":
      // Without a run last; `-` reverses the whole order (as a database sorting NULLs last does ascending).
      return { keys: ["w.current_run_created_at IS NULL", "w.current_run_created_at", "w.created_at", "w.id"], desc, collate: false };
    default:
      // No sort: creation order, stable across pages and calls.
      return { keys: ["w.created_at", "w.id"], desc: false, collate: false };
  }
}

const KEY_SLOTS = 4;

/**
 * The id of the organisation named by the SQL parameter `nameParam`. The request names the organisation; every
 * row names it by id (migration 0016), resolved inside each statement of the one batch, so a concurrent rename
 * is either wholly before the list or wholly after it.
 */
function orgIdOf(nameParam: string): string {
  return `(SELECT external_id FROM organizations WHERE name = ${nameParam})`;
}

/** The caller's teams in the organisation (`org`: an SQL expression of its id), as SQL for a `caller_teams(id)` CTE. */
function callerTeamsSql(P: Params, principal: Principal, org: string): string {
  switch (principal.kind) {
    case "user":
      return `SELECT m.team_id AS id FROM team_members m JOIN teams t ON t.id = m.team_id WHERE m.user_id = ${P.add(principal.userId)} AND t.organization_id = ${org}`;
    case "team":
      return `SELECT t.id AS id FROM teams t WHERE t.id = ${P.add(principal.teamId)} AND t.organization_id = ${org}`;
    case "organization":
      // An organisation token belongs to no team (the organisation parameter is still referenced: D1 counts them).
      return `SELECT t.id AS id FROM teams t WHERE 0 AND t.organization_id = ${org}`;
    case "run":
      // A run token belongs to no team either; its one workspace is read by id, never listed.
      return `SELECT t.id AS id FROM teams t WHERE 0 AND t.organization_id = ${org}`;
  }
}

/**
 * Mirrors `workspace.read` (src/auth/requirements.ts) on `orgWideCapabilities(standing)`: site admin, the
 * organisation's token, an owners team, or a team with manage-workspaces or read-workspaces. A condition on the
 * organisations row `o` (an organisation token is this organisation's when its organisation id is `o`'s).
 */
function orgWideReadSql(P: Params, principal: Principal): string {
  if (principal.kind === "user" && principal.isSiteAdmin) return "1";
  if (principal.kind === "organization") return `o.external_id = ${P.add(principal.organizationId)}`;
  return `EXISTS (SELECT 1 FROM teams t WHERE t.id IN (SELECT id FROM caller_teams) AND (t.is_owners = 1
    OR json_extract(t.organization_access, '$."manage-workspaces"') IS 1 OR json_extract(t.organization_access, '$."read-workspaces"') IS 1))`;
}

/** The list filters as terms (positive ones intersect; excluded ones are subtracted). */
function termsOf(P: Params, f: ListFilters, variant: Variant): { positive: Term[]; negative: Term[] } {
  const positive: Term[] = [];
  if (f.nothing) positive.push(NOTHING);
  if (variant === "grants") positive.push(readableTerm());
  if (f.projectId) positive.push(projectTerm(P, f.projectId));
  if (f.runStatuses.length) positive.push(runStatusTerm(P, f.runStatuses));
  for (const m of f.names) positive.push(nameTerm(P, m));
  // Each kind of tag condition is one term, however many conditions it has (LIMITS.listTagFiltersMax in all).
  if (f.tags.length) positive.push(allKeysTerm(P, f.tags));
  if (f.tagged.length) positive.push(taggedTerm(P, f.tagged));
  const negative = f.excludeTags.length ? [anyKeyTerm(P, f.excludeTags)] : [];
  return { positive, negative };
}

/** D1 allows at most 5 terms in one compound SELECT: larger unions nest. */
const COMPOUND_MAX = 5;

function union(sets: string[]): string {
  if (sets.length <= COMPOUND_MAX) return sets.map((s) => `SELECT id FROM (${s})`).join(" UNION ");
  const size = Math.ceil(sets.length / COMPOUND_MAX);
  const groups = Array.from({ length: Math.ceil(sets.length / size) }, (_, i) => union(sets.slice(i * size, (i + 1) * size)));
  return union(groups);
}

/** Ids matching every positive term and no negative one: the first set, probed against the others. */
function matching(positive: Term[], negative: Term[], org: string): string {
  const [first, ...rest] = positive;
  const conds = [...rest.map((t) => `m.id IN (${t.set(org)})`), ...negative.map((t) => `m.id NOT IN (${t.set(org)})`)];
  return `SELECT m.id AS id FROM (${first.set(org)}) m${conds.length ? ` WHERE ${conds.join(" AND ")}` : ""}`;
}

interface PageRow {
  kind: 0 | 1;
  total: number | null;
  org_total: number | null;
  doc: string | null;
  ws_grants: string | null;
  prj_grants: string | null;
  project: string | null;
  ssh_live: number | null;
  /** The lock holder's name (lock.d1.ts), for the UI's list; null when unlocked. */
  holder_name: string | null;
}

export type Variant = "org-wide" | "grants";

export interface Sql {
  sql: string;
  params: unknown[];
}

/** What every form of the page query shares: parameters, the caller's teams, the terms and the sort. */
function pageParts(principal: Principal, organization: string, spec: ListSpec, variant: Variant) {
  const P = new Params();
  const orgParam = P.add(organization);
  const L = P.add(spec.limit);
  const O = P.add(spec.offset);
  const teams = callerTeamsSql(P, principal, orgIdOf(orgParam));
  const { positive, negative } = termsOf(P, spec.filters, variant);
  const { keys, desc, collate } = sortKeys(spec.sort);
  const dir = desc ? " DESC" : "";
  const order = keys.map((k) => `${k}${dir}`).join(", ");
  const preds = [...positive.map((t) => t.pred), ...negative.map((t) => `NOT ${t.pred}`)];
  return { P, orgParam, L, O, teams, positive, negative, keys, dir, collate, order, preds };
}

/** The page statement of one variant; unguarded when the variant is known to apply. */
export function pageSql(principal: Principal, organization: string, spec: ListSpec, variant: Variant, guarded: boolean, strategy: Strategy): Sql {
  const { P, orgParam, L, O, teams, positive, negative, keys, dir, collate, order, preds } = pageParts(principal, organization, spec, variant);
  const wide = guarded ? orgWideReadSql(P, principal) : "";
  const guard = !guarded ? "" : variant === "org-wide" ? ` AND ${wide}` : ` AND NOT (${wide})`;

  // The organisation's id: every index row names it by id (migration 0016).
  const ORG = "(SELECT id FROM org)";
  const orgTotal = `(SELECT coalesce(sum(c.n), 0) FROM workspace_counts c WHERE c.organization_id = ${ORG})`;
  let count: string;
  if (positive.length === 0) {
    count = negative.length ? `${orgTotal} - (SELECT count(*) FROM (${union(negative.map((t) => t.set(ORG)))}))` : orgTotal;
  } else if (positive.length === 1 && negative.length === 0 && positive[0].counter) {
    count = positive[0].counter(ORG);
  } else {
    count = `(SELECT count(*) FROM (${matching(positive, negative, ORG)}))`;
  }

  const slots = Array.from({ length: KEY_SLOTS }, (_, i) => `${keys[i] ?? "NULL"} AS s${i + 1}`).join(", ");
  const outerOrder = Array.from({ length: KEY_SLOTS }, (_, i) => `s${i + 1}${i === 0 && collate ? " COLLATE NOCASE" : ""}${dir}`).join(", ");

  // Small results are sorted from their id set; large ones are found walking the sort's index (which
  // stops once the page is full): `sortsSmall` below. A page beyond the end costs neither. A forced strategy sends its
  // arm alone (each arm costs its preparation on every request, whether it runs or not).
  const small = positive.length === 0 || strategy === "scan" ? "0" : strategy === "sort" ? "1" : sortsSmallSql("k.n", "k.total", O, L);
  const scanOrg = `(SELECT org.id FROM org, k WHERE NOT ${small} AND ${O} < k.n)`;
  const sortOrg = `(SELECT org.id FROM org, k WHERE ${small} AND ${O} < k.n)`;
  const scanArm = `SELECT w.id AS id, ${slots} FROM workspaces w WHERE w.organization_id = ${scanOrg}${preds.map((p) => ` AND ${p}`).join("")}
    ORDER BY ${order} LIMIT ${L} OFFSET ${O}`;
  const arms = small === "1" ? [] : [`SELECT * FROM (${scanArm})`];
  if (positive.length > 0 && strategy !== "scan") {
    arms.push(`SELECT * FROM (SELECT w.id AS id, ${slots} FROM (${matching(positive, negative, sortOrg)}) c CROSS JOIN workspaces w ON w.id = c.id
      ORDER BY ${order} LIMIT ${L} OFFSET ${O})`);
  }

  const sql = `WITH caller_teams(id) AS (${teams}),
  org(id) AS (SELECT o.external_id FROM organizations o WHERE o.name = ${orgParam}${guard}),
  k(n, total) AS MATERIALIZED (SELECT ${count}, ${orgTotal}),
  page(id, s1, s2, s3, s4) AS (${arms.join(" UNION ALL ")})
SELECT 0 AS kind, k.n AS total, k.total AS org_total, NULL AS doc, NULL AS ws_grants, NULL AS prj_grants, NULL AS project, NULL AS ssh_live, NULL AS holder_name,
  NULL AS s1, NULL AS s2, NULL AS s3, NULL AS s4 FROM org, k
UNION ALL
SELECT 1, NULL, NULL, w.doc,
  (SELECT json_group_array(json_object('team_id', tw.team_id, 'target_id', tw.workspace_id, 'access', tw.access, 'perms', tw.perms))
     FROM team_workspaces tw WHERE tw.workspace_id = w.id AND tw.team_id IN (SELECT id FROM caller_teams)),
  (SELECT json_group_array(json_object('team_id', tp.team_id, 'target_id', tp.project_id, 'access', tp.access, 'perms', tp.perms))
     FROM team_projects tp WHERE tp.project_id = w.project_id AND tp.team_id IN (SELECT id FROM caller_teams)),
  (SELECT json_object('id', p.id, 'organization_id', p.organization_id, 'name', p.name, 'default_execution_mode', p.default_execution_mode,
     'default_agent_pool_id', p.default_agent_pool_id) FROM projects p WHERE p.id = w.project_id),
  (SELECT 1 FROM ssh_keys sk WHERE sk.id = w.ssh_key_id),
  CASE WHEN w.locked = 1 THEN ${holderNameSql("json_extract(w.doc, '$.lock.holder.type')", "json_extract(w.doc, '$.lock.holder.id')")} END,
  page.s1, page.s2, page.s3, page.s4
FROM page CROSS JOIN workspaces w ON w.id = page.id
ORDER BY kind, ${outerOrder}`;
  return { sql, params: P.for(sql) };
}

export interface ListBatch {
  statements: D1PreparedStatement[];
  /** Which variant each page statement is (in order after the first statement). */
  variants: Variant[];
  /** Where the project options' two statements are (projectOptionsStatements), when asked for. */
  projectOptionsAt?: number;
}

/**
 * The list's one batch: [organisation with the caller's teams and its deleted tags, page(org-wide), page(grants)].
 * With `orgWideRead` known, only that variant's page, unguarded; with a `guess`, only that variant's, guarded.
 */
export function listBatch(
  db: D1Database | D1DatabaseSession,
  principal: Principal,
  organization: string,
  spec: ListSpec,
  opts: { orgWideRead?: boolean; guess?: Variant; strategy?: Strategy; projectOptions?: boolean } = {},
): ListBatch {
  const P = new Params();
  const teams = callerTeamsSql(P, principal, orgIdOf(P.add(organization)));
  const strategy = opts.strategy ?? "auto";
  // Each page statement costs its preparation on every request (about as much as running it), so a likely variant
  // (`guess`) goes alone, still guarded: a wrong guess finds no head row and the caller asks again.
  const variants: Variant[] = opts.orgWideRead !== undefined ? [opts.orgWideRead ? "org-wide" : "grants"] : opts.guess ? [opts.guess] : ["org-wide", "grants"];
  const guarded = opts.orgWideRead === undefined;
  // The organisation, the caller's teams in it and its deleted tag ids: one statement (lists as JSON arrays).
  const statements = [
    db
      .prepare(
        `SELECT ${ORGANIZATION_COLUMNS},
           (SELECT json_group_array(json_object('id', t.id, 'is_owners', t.is_owners, 'organization_access', t.organization_access))
              FROM teams t WHERE t.id IN (${teams})) AS acc_teams,
           (SELECT json_group_array(d.id) FROM deleted_tags d WHERE d.organization_id = organizations.external_id) AS acc_dead_tags
         FROM organizations WHERE name = ?${P.values.length + 1}`,
      )
      .bind(...P.values, organization),
    ...variants.map((v) => {
      const q = pageSql(principal, organization, spec, v, guarded, strategy);
      return db.prepare(q.sql).bind(...q.params);
    }),
  ];
  if (!opts.projectOptions) return { statements, variants };
  return { statements: [...statements, ...projectOptionsStatements(db, principal, organization)], variants, projectOptionsAt: statements.length };
}

/** How many projects the UI's project filter offers. */
export const PROJECT_OPTIONS_MAX = 100;

/**
 * The UI list's project filter, in the list's own batch: the organisation's first projects by name (for callers
 * who read every project), and the projects the caller's teams reach (for the others) — the set
 * `teamReadableProjectIds` (src/projects/projects.d1.ts) computes, from the caller's teams in SQL. Which
 * of the two applies is decided after the batch by the permission model (`readsAllProjects`).
 */
function projectOptionsStatements(db: D1Database | D1DatabaseSession, principal: Principal, organization: string): D1PreparedStatement[] {
  const P = new Params();
  const org = orgIdOf(P.add(organization));
  const teams = callerTeamsSql(P, principal, org);
  const order = `ORDER BY p.name COLLATE NOCASE, p.id LIMIT ${PROJECT_OPTIONS_MAX}`;
  return [
    db.prepare(`SELECT p.id, p.name FROM projects p WHERE p.organization_id = ${orgIdOf("?")} ${order}`).bind(organization),
    // From the caller's grants to their workspaces (CROSS JOIN keeps that order: starting from the organisation's
    // workspaces made every page read all of them, 2.9× the JSON list at 100,000). The caller's teams are the
    // organisation's, so their grants are on its workspaces, and the outer query keeps its projects only.
    db
      .prepare(
        `WITH caller_teams(id) AS (${teams})
        SELECT p.id, p.name FROM projects p WHERE p.organization_id = ${org} AND (
          p.id IN (SELECT tp.project_id FROM team_projects tp WHERE tp.team_id IN (SELECT id FROM caller_teams))
          OR p.id IN (SELECT w.project_id FROM team_workspaces tw CROSS JOIN workspaces w ON w.id = tw.workspace_id
            WHERE tw.team_id IN (SELECT id FROM caller_teams))) ${order}`,
      )
      .bind(...P.values),
  ];
}

/** The two project option lists of a batch built with `projectOptions` (all, reachable). */
export function projectOptionsOf(results: D1Result[], batch: ListBatch): { all: ProjectOption[]; reachable: ProjectOption[] } {
  const at = batch.projectOptionsAt;
  const rows = (i: number) => (at === undefined ? [] : ((results[at + i]?.results ?? []) as ProjectOption[]));
  return { all: rows(0), reachable: rows(1) };
}

export interface ProjectOption {
  id: string;
  name: string;
}

/** A workspace of the page with what authorising and serialising it needs. */
export interface ListedWorkspace {
  record: WorkspaceRecord;
  /** The caller's teams' grants on the workspace and on its project. */
  grants: { workspaces: Grant[]; projects: Grant[] };
  /** Its project's execution defaults (null: the project row is gone). */
  project: ProjectDefaults | null;
  /** Whether its SSH key (if it names one) still exists. */
  sshKeyLive: boolean;
  /** The lock holder's name (lock.d1.ts), for the UI's list; null when unlocked. */
  holderName: string | null;
}

function toListed(row: PageRow): ListedWorkspace {
  return {
    record: parseDoc({ doc: row.doc ?? "{}" }),
    grants: {
      workspaces: (JSON.parse(row.ws_grants ?? "[]") as GrantRow[]).map(toGrant),
      projects: (JSON.parse(row.prj_grants ?? "[]") as GrantRow[]).map(toGrant),
    },
    project: row.project ? toProjectDefaults(JSON.parse(row.project) as ProjectDefaultsRow) : null,
    sshKeyLive: row.ssh_live === 1,
    holderName: row.holder_name,
  };
}

/**
 * The page plan the `auto` strategy picks, from the count of matches `n` and the organisation's `total`: walking the
 * sort's index costs about (offset + limit) · total / n entries, sorting the matches about n row reads, each a few
 * index entries' worth. The SQL of `pageSql` computes the same condition.
 */
export function sortsSmall(counts: { n: number; total: number }, spec: Pick<ListSpec, "offset" | "limit">): boolean {
  return counts.n * counts.n * SORT_ROW_COST <= WALK_ENTRY_COST * (spec.offset + spec.limit) * counts.total;
}

/** `sortsSmall` as an SQL condition on SQL expressions of the same four values. */
function sortsSmallSql(n: string, total: string, offset: string, limit: string): string {
  return `(${n} * ${n} * ${SORT_ROW_COST} <= ${WALK_ENTRY_COST} * (${offset} + ${limit}) * ${total})`;
}

/** The relative costs `sortsSmall` weighs: reading one matched row to sort it, and stepping one index entry. */
const SORT_ROW_COST = 5;
const WALK_ENTRY_COST = 2;

/** The active variant's total and workspaces, or null when no page statement of the batch applied. */
export function pageOf(results: D1Result[], batch: ListBatch): { variant: Variant; total: number; orgTotal: number; workspaces: ListedWorkspace[] } | null {
  for (let i = 0; i < batch.variants.length; i++) {
    const rows = (results[1 + i]?.results ?? []) as PageRow[];
    const head = rows.find((r) => r.kind === 0);
    if (head)
      return { variant: batch.variants[i], total: head.total ?? 0, orgTotal: head.org_total ?? 0, workspaces: rows.filter((r) => r.kind === 1).map(toListed) };
  }
  return null;
}

/** The batch's first statement: the organisation, the caller's teams in it and its deleted tag ids. */
export function listAccessOf(results: D1Result[]): { org: Organization | null; teams: AccessTeam[]; deadTags: Set<string> } {
  const org = (results[0]?.results?.[0] ?? null) as (OrganizationRow & { acc_teams: string; acc_dead_tags: string }) | null;
  if (!org) return { org: null, teams: [], deadTags: new Set() };
  return {
    org: toOrganization(org),
    teams: (JSON.parse(org.acc_teams) as AccessTeamRow[]).map(toAccessTeam),
    deadTags: new Set(JSON.parse(org.acc_dead_tags) as string[]),
  };
}

// ---- include: the related rows of a page, in one batch ----

export function includeProjectsStatement(db: D1Database | D1DatabaseSession, ids: string[]): D1PreparedStatement {
  return db
    .prepare(
      `SELECT p.*,
         coalesce((SELECT c.n FROM workspace_counts c WHERE c.organization_id = p.organization_id AND c.project_id = p.id), 0) AS workspace_count,
         (SELECT count(*) FROM team_projects tp WHERE tp.project_id = p.id) AS team_count
       FROM projects p WHERE p.id IN (SELECT value FROM json_each(?))`,
    )
    .bind(JSON.stringify(ids));
}

export function includeUsersStatement(db: D1Database | D1DatabaseSession, ids: string[]): D1PreparedStatement {
  return db
    .prepare("SELECT id, username, email, is_site_admin, is_service_account FROM users WHERE id IN (SELECT value FROM json_each(?))")
    .bind(JSON.stringify(ids));
}

export function includeTeamsStatement(db: D1Database | D1DatabaseSession, ids: string[]): D1PreparedStatement {
  // With the name of the team's organisation, joined in (rows name it by id).
  return db
    .prepare(
      `SELECT id, name, (SELECT o.name FROM organizations o WHERE o.external_id = teams.organization_id) AS organization_name
       FROM teams WHERE id IN (SELECT value FROM json_each(?))`,
    )
    .bind(JSON.stringify(ids));
}

export function includeAgentPoolsStatement(db: D1Database | D1DatabaseSession, ids: string[]): D1PreparedStatement {
  return db.prepare("SELECT id, name, organization_scoped, created_at FROM agent_pools WHERE id IN (SELECT value FROM json_each(?))").bind(JSON.stringify(ids));
}

export function includeProjectBindingsStatement(db: D1Database | D1DatabaseSession, projectIds: string[]): D1PreparedStatement {
  return db
    .prepare("SELECT * FROM project_tag_bindings WHERE project_id IN (SELECT value FROM json_each(?)) ORDER BY position, key")
    .bind(JSON.stringify(projectIds));
}

/** A user a lock names, as `include=locked_by` shows it. */
export interface IncludedUser {
  id: string;
  username: string;
  email: string | null;
  isSiteAdmin: boolean;
  isServiceAccount: boolean;
}

/** What the include statements above returned, mapped (each reader takes the result of its own statement). */
export const includedRows = {
  projects: (r: D1Result | undefined): Project[] => ((r?.results ?? []) as ProjectRow[]).map(toProject),
  users: (r: D1Result | undefined): IncludedUser[] =>
    ((r?.results ?? []) as Array<{ id: string; username: string; email: string | null; is_site_admin: number; is_service_account: number }>).map((u) => ({
      id: u.id,
      username: u.username,
      email: u.email,
      isSiteAdmin: u.is_site_admin === 1,
      isServiceAccount: u.is_service_account === 1,
    })),
  teams: (r: D1Result | undefined): Array<{ id: string; name: string; organizationName: string }> =>
    ((r?.results ?? []) as Array<{ id: string; name: string; organization_name: string }>).map((t) => ({
      id: t.id,
      name: t.name,
      organizationName: t.organization_name,
    })),
  agentPools: (r: D1Result | undefined): Array<{ id: string; name: string; organizationScoped: boolean; createdAt: string }> =>
    ((r?.results ?? []) as Array<{ id: string; name: string; organization_scoped: number; created_at: string }>).map((p) => ({
      id: p.id,
      name: p.name,
      organizationScoped: p.organization_scoped === 1,
      createdAt: p.created_at,
    })),
  projectBindings: (r: D1Result | undefined): ProjectBinding[] => ((r?.results ?? []) as ProjectBindingRow[]).map(toProjectBinding),
};
