/**
 * `include` on variable-set reads: `vars` (values redacted as everywhere), and the `workspaces` and `projects`
 * the sets are applied to, each as its own endpoint shows it to the caller (a workspace's permissions, a
 * project's). Only for callers who see the sets' whole scope (`full`): a reader who reaches a set through one
 * workspace sees counts, not which workspaces. Of those, only the ones the caller may read are included (a
 * project's set reader may not read a workspace that has since left the project).
 */
import type { OrgAccess } from "../auth/access";
import { readsAllProjects } from "../auth/access";
import { allows } from "../auth/requirements";
import type { Caller } from "../caller";
import { Included, type Resource } from "../jsonapi/document";
import { teamReadableProjectIds, toProject, type ProjectRow } from "../projects/projects.d1";
import { serializeProject } from "../projects/projects.serialize";
import { serializeVariable } from "../variables/variables.serialize";
import { viewOf } from "../variables/variables.service";
import { parseDoc, workspaceDocsByIds } from "../workspaces/workspaces.d1";
import { includeProjectsStatement } from "../workspaces/workspaces.list.d1";
import { loadScope } from "../workspaces/workspaces.service";
import * as repo from "./varsets.d1";
import type { Varset } from "./varsets.d1";

const unique = (xs: string[]) => [...new Set(xs)];

/** The included resources for `values` (already validated) of sets of one organisation, read with `access`. */
export async function includeForSets(caller: Caller, access: OrgAccess, sets: Varset[], values: string[], full: boolean): Promise<Resource[]> {
  if (sets.length === 0 || values.length === 0) return [];
  const included = new Included();
  const [vars, workspaces, projects] = await Promise.all([
    values.includes("vars") ? variablesOf(caller, sets) : [],
    full && values.includes("workspaces") ? workspacesOf(caller, access, unique(sets.flatMap((s) => s.workspaceIds))) : [],
    full && values.includes("projects") ? projectsOf(caller, access, unique(sets.flatMap((s) => s.projectIds))) : [],
  ]);
  for (const r of [...vars, ...workspaces, ...projects]) included.add(r);
  return included.items;
}

async function variablesOf(caller: Caller, sets: Varset[]): Promise<Resource[]> {
  const bySet = await repo.listVariablesOfVarsets(
    caller.db,
    sets.map((s) => s.id),
  );
  const views = await Promise.all(sets.flatMap((s) => (bySet.get(s.id) ?? []).map((v) => viewOf(caller.env, v, { kind: "varset", id: s.id }))));
  return views.map(serializeVariable);
}

/** The workspaces the caller may read (`workspace.read`), serialised with its permissions on each. */
async function workspacesOf(caller: Caller, access: OrgAccess, ids: string[]): Promise<Resource[]> {
  if (ids.length === 0) return [];
  const organizationId = access.organization.externalId;
  const records = (await workspaceDocsByIds(caller.db, organizationId, ids)).map(parseDoc);
  const scope = records.length ? await loadScope(caller, organizationId, records) : null;
  if (!scope) return [];
  return records.filter((r) => allows(caller.principal, "workspace.read", { access: scope.access, caps: scope.capsOf(r) })).map((r) => scope.serialize(r));
}

/** The projects the caller may read, as GET /projects/:id shows them. */
async function projectsOf(caller: Caller, access: OrgAccess, ids: string[]): Promise<Resource[]> {
  if (ids.length === 0) return [];
  const [rows, readable] = await Promise.all([
    includeProjectsStatement(caller.db, ids).all<ProjectRow>(),
    readsAllProjects(access) ? null : teamReadableProjectIds(caller.db, access.organization.externalId, access.teamIds),
  ]);
  return rows.results
    .map(toProject)
    .filter((p) => p.organizationId === access.organization.externalId && (readable === null || readable.has(p.id)))
    .map((p) => serializeProject(p, access));
}
