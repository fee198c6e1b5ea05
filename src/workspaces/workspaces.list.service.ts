/** Listing workspaces: one D1 batch that carries the page and the caller's access to it. */
import { buildOrgAccess, readsAllProjects, type Grant, type OrgAccess, type ProjectDefaults } from "../auth/access";
import { allows, authorize } from "../auth/requirements";
import { principalKey, type Principal } from "../auth/principal";
import type { Caller } from "../caller";
import { ApiError } from "../errors";
import type { WorkspaceRecord } from "./workspace.types";
import {
  listAccessOf,
  listBatch,
  pageOf,
  projectOptionsOf,
  type ListedWorkspace,
  type ListSpec,
  type ProjectOption,
  sortsSmall,
  type Strategy,
  type Variant,
} from "./workspaces.list.d1";
import { scopeFrom, type WorkspaceScope } from "./workspaces.service";

interface Loaded {
  access: OrgAccess;
  total: number;
  workspaces: ListedWorkspace[];
  deadTags: Set<string>;
  /** With `projectOptions`: the projects the caller may read, by name (at most PROJECT_OPTIONS_MAX). */
  projectOptions?: ProjectOption[];
}

/**
 * Which page variant each caller's last list of an organisation used, per isolate: the next batch sends that one
 * alone (guarded in SQL, and checked below against the permission model), not both. A stale entry costs one more
 * round trip, never a wrong page. Bounded: cleared when full.
 */
const VARIANT_GUESS = new Map<string, Variant>();
const MEMO_MAX = 10_000;

/**
 * The counts a filtered list's last page showed, per caller, organisation, filters and sort, per isolate: from them
 * the next page picks its plan (`sortsSmall`) and sends that arm alone, not both. Both plans answer the same page, so
 * stale counts can only cost time (a walk where a sort was cheaper, or the reverse), and the answer renews them.
 */
const PLAN_COUNTS = new Map<string, { n: number; total: number }>();

function remember<V>(map: Map<string, V>, key: string, value: V): void {
  if (map.size >= MEMO_MAX) map.clear();
  map.set(key, value);
}

/**
 * Runs the list's one batch (see workspaces.list.d1.ts) and checks the SQL's view of "reads every
 * workspace" against the permission model; if they disagree it asks again with the model's answer.
 * Exported for the listing test, which runs each strategy against the permission model.
 */
export async function loadListPage(
  db: D1DatabaseSession,
  principal: Principal,
  organization: string,
  spec: ListSpec,
  strategy: Strategy = "auto",
  opts: { projectOptions?: boolean } = {},
): Promise<Loaded | null> {
  const guessKey = `${principal.kind}:${principalKey(principal)}:${organization}`;
  const planKey = `${guessKey}\0${spec.sort ?? ""}\0${JSON.stringify(spec.filters)}`;
  const counts = strategy === "auto" ? PLAN_COUNTS.get(planKey) : undefined;
  const plan: Strategy = counts ? (sortsSmall(counts, spec) ? "sort" : "scan") : strategy;
  const batch = listBatch(db, principal, organization, spec, { strategy: plan, projectOptions: opts.projectOptions, guess: VARIANT_GUESS.get(guessKey) });
  const results = await db.batch(batch.statements);
  const { org, teams, deadTags } = listAccessOf(results);
  if (!org) return null;
  const access = buildOrgAccess(principal, org, teams);
  if (!access) return null;
  // The SQL's "reads every workspace" shortcut must agree with the requirement table's workspace.read.
  const wide = allows(principal, "workspace.read", { access, caps: access.base });
  remember(VARIANT_GUESS, guessKey, wide ? "org-wide" : "grants");
  let page = pageOf(results, batch);
  if (page?.variant !== (wide ? "org-wide" : "grants")) {
    const again = listBatch(db, principal, organization, spec, { orgWideRead: wide, strategy: plan });
    page = pageOf(await db.batch(again.statements), again);
  }
  if (page) remember(PLAN_COUNTS, planKey, { n: page.total, total: page.orgTotal });
  let projectOptions: ProjectOption[] | undefined;
  if (opts.projectOptions) {
    const options = projectOptionsOf(results, batch);
    projectOptions = readsAllProjects(access) ? options.all : options.reachable;
  }
  return { access, total: page?.total ?? 0, workspaces: page?.workspaces ?? [], deadTags, projectOptions };
}

export interface WorkspacePage {
  records: WorkspaceRecord[];
  scope: WorkspaceScope;
  total: number;
  /** Lock holders' names by workspace id (locked workspaces whose holder still exists). */
  holderNames: Map<string, string>;
  /** Asked for with `projectOptions` (the web UI's project filter): the projects the caller may read. */
  projectOptions?: ProjectOption[];
}

/**
 * One page of the organisation's workspaces the caller may read, with the scope to serialise them. The web
 * UI asks for `projectOptions` too: two more statements in the same batch, no further round trip.
 */
export async function listWorkspacePage(caller: Caller, organization: string, spec: ListSpec, opts: { projectOptions?: boolean } = {}): Promise<WorkspacePage> {
  // The nearest instance, fenced (docs/consistency.md); an organisation it does not know yet may be on the primary.
  const loaded =
    (await loadListPage(caller.near, caller.principal, organization, spec, "auto", opts)) ??
    (await loadListPage(caller.db, caller.principal, organization, spec, "auto", opts));
  authorize(caller, "organization.read", { access: loaded?.access ?? null });
  if (!loaded) throw ApiError.of("not_found");

  const records = loaded.workspaces.map((w) => w.record);
  const grants = { workspaces: [] as Grant[], projects: [] as Grant[] };
  const projects = new Map<string, ProjectDefaults>();
  const liveKeys = new Set<string>();
  for (const w of loaded.workspaces) {
    grants.workspaces.push(...w.grants.workspaces);
    grants.projects.push(...w.grants.projects);
    if (w.project) projects.set(w.project.id, w.project);
    if (w.record.sshKeyId && w.sshKeyLive) liveKeys.add(w.record.sshKeyId);
  }
  // A project's grants arrive once per row of the page; the permission model unites them, so duplicates are harmless.
  const scope = scopeFrom(caller.env, { access: loaded.access, grants, projects }, loaded.deadTags.size ? loaded.deadTags : null, liveKeys);
  const holderNames = new Map(loaded.workspaces.flatMap((w) => (w.holderName === null ? [] : [[w.record.id, w.holderName] as const])));
  return { records, scope, total: loaded.total, holderNames, projectOptions: loaded.projectOptions };
}
