/** Agent pools (HCP Terraform API docs: Agent Pools): members read them; manage-agent-pools manages them. */
import { pageSlice } from "../jsonapi/document";
import { authorize } from "../auth/requirements";
import { loadOwned, requireOrgAccess, type OrgAccess } from "../auth/access";
import type { Caller } from "../caller";
import { ApiError } from "../errors";
import { newId, nowIso } from "../ids";
import type { Page } from "../jsonapi/document";
import {
  deleteUnusedPool,
  findPool,
  idByName,
  insertPool,
  isPoolSort,
  knownIds,
  listPools,
  poolUses,
  updatePoolColumns,
  workspacesUsing,
  type AgentPool,
  type PoolChanges,
} from "./agent-pools.d1";
import { containsText } from "../platform/text-match";

const NAME = /^[A-Za-z0-9_-]+$/;

type RefList = { data: Array<{ id: string }> } | undefined;
/** The pool's relationships as sent (allowed / excluded workspaces and projects). */
export type PoolRefs = { "allowed-workspaces"?: RefList; "allowed-projects"?: RefList; "excluded-workspaces"?: RefList } | undefined;

export interface PoolInput {
  name?: string;
  organizationScoped?: boolean;
  refs: PoolRefs;
}

/** A pool with the workspaces that name it (its `workspaces` relationship) and its organisation's name. */
export interface PoolWithUsers {
  pool: AgentPool;
  using: string[];
  organization: string;
}

export interface PoolListQuery {
  q?: string;
  sort?: string;
  allowedWorkspaceName?: string;
  allowedProjectName?: string;
}

const REF_FIELDS = [
  ["allowed-workspaces", "allowedWorkspaces"],
  ["allowed-projects", "allowedProjects"],
  ["excluded-workspaces", "excludedWorkspaces"],
] as const;

const idsOf = (list: RefList) => list?.data.map((d) => d.id) ?? [];

function uniqueViolation(err: unknown): never {
  if (String(err).includes("UNIQUE")) throw ApiError.of("invalid_attribute", { detail: "Name has already been taken", pointer: "/data/attributes/name" });
  throw err;
}

function checkName(name: string | undefined): void {
  if (name !== undefined && !NAME.test(name))
    throw ApiError.of("invalid_attribute", { detail: "Name may only contain letters, numbers, - and _", pointer: "/data/attributes/name" });
}

/** Allowed / excluded workspaces and projects must be in the pool's organisation (by id; 422 naming the first stranger). */
async function checkRefs(caller: Caller, org: string, r: PoolRefs): Promise<void> {
  const lists = [
    ["allowed-workspaces", "workspaces"],
    ["excluded-workspaces", "workspaces"],
    ["allowed-projects", "projects"],
  ] as const;
  for (const [rel, table] of lists) {
    const wanted = r?.[rel]?.data.map((d) => d.id) ?? [];
    if (wanted.length === 0) continue;
    const known = await knownIds(caller.db, table, org, wanted);
    const i = wanted.findIndex((id) => !known.has(id));
    if (i >= 0)
      throw ApiError.of("invalid_attribute", {
        detail: `${table === "workspaces" ? "Workspace" : "Project"} ${wanted[i]} not found in this organization`,
        pointer: `/data/relationships/${rel}/data/${i}`,
      });
  }
}

async function withUsers(caller: Caller, pool: AgentPool, access: OrgAccess): Promise<PoolWithUsers> {
  const using = (await workspacesUsing(caller.db, pool.organizationId, [pool.id])).get(pool.id) ?? [];
  return { pool, using, organization: access.organization.name };
}

export async function createPool(caller: Caller, organization: string, input: PoolInput & { name: string }): Promise<PoolWithUsers> {
  const access = await requireOrgAccess(caller, { name: organization });
  authorize(caller, "agent-pools.manage", { access });
  checkName(input.name);
  await checkRefs(caller, access.organization.externalId, input.refs);
  const r = input.refs;
  const pool: AgentPool = {
    id: newId("apool"),
    organizationId: access.organization.externalId,
    name: input.name,
    organizationScoped: input.organizationScoped !== false,
    allowedWorkspaces: idsOf(r?.["allowed-workspaces"]),
    allowedProjects: idsOf(r?.["allowed-projects"]),
    excludedWorkspaces: idsOf(r?.["excluded-workspaces"]),
    createdAt: nowIso(),
  };
  await insertPool(caller.db, pool).catch((err) => uniqueViolation(err));
  return withUsers(caller, pool, access);
}

/** One page of the organisation's pools matching the query, and how many match. */
export async function listOrgPools(caller: Caller, organization: string, query: PoolListQuery, page: Page): Promise<{ pools: PoolWithUsers[]; total: number }> {
  const access = await requireOrgAccess(caller, { name: organization });
  const org = access.organization.externalId;
  const q = query.q ?? "";
  const sort = query.sort ?? "name";
  if (!isPoolSort(sort)) throw ApiError.of("bad_request", { detail: "sort must be name, -name, created-at or -created-at", parameter: "sort" });
  const pools = await listPools(caller.db, org, sort);
  // Pools a named workspace / project may use: organisation-scoped ones, and those that allow it ("" when the name is unknown).
  const usable = async (name: string | undefined, table: "workspaces" | "projects") => (name ? ((await idByName(caller.db, table, org, name)) ?? "") : null);
  const wsId = await usable(query.allowedWorkspaceName, "workspaces");
  const prjId = await usable(query.allowedProjectName, "projects");
  const allows = (p: AgentPool, id: string | null, list: string[]) => id === null || p.organizationScoped || list.includes(id);
  const matching = pools.filter((p) => (!q || containsText(p.name, q)) && allows(p, wsId, p.allowedWorkspaces) && allows(p, prjId, p.allowedProjects));
  const slice = pageSlice(matching, page);
  const using = await workspacesUsing(
    caller.db,
    org,
    slice.map((p) => p.id),
  );
  return { pools: slice.map((pool) => ({ pool, using: using.get(pool.id) ?? [], organization: access.organization.name })), total: matching.length };
}

export async function showPool(caller: Caller, id: string): Promise<PoolWithUsers> {
  const { item: pool, access } = await loadOwned(caller, findPool, id);
  return withUsers(caller, pool, access);
}

export async function updatePool(caller: Caller, id: string, input: PoolInput): Promise<PoolWithUsers> {
  const { item: pool, access } = await loadOwned(caller, findPool, id);
  authorize(caller, "agent-pools.manage", { access });
  checkName(input.name);
  await checkRefs(caller, pool.organizationId, input.refs);
  // Only what the request names is written, so concurrent PATCHes of different fields both land.
  const changes: PoolChanges = { name: input.name };
  if (input.organizationScoped !== undefined) changes.organizationScoped = input.organizationScoped;
  for (const [rel, field] of REF_FIELDS) if (input.refs?.[rel]) changes[field] = idsOf(input.refs[rel]);
  await updatePoolColumns(caller.db, pool.id, changes).catch((err) => uniqueViolation(err));
  const updated = await findPool(caller.db, pool.id);
  if (!updated) throw ApiError.of("not_found"); // deleted concurrently
  return withUsers(caller, updated, access);
}

/**
 * Deletes an unused pool. Refused while anything names it (the real API leaves the status undocumented: 422, as for
 * any request that the pool's current references make invalid; no workspace is touched, the check reads D1 only).
 */
export async function removePool(caller: Caller, id: string): Promise<void> {
  const { item: pool, access } = await loadOwned(caller, findPool, id);
  authorize(caller, "agent-pools.manage", { access });
  if (await deleteUnusedPool(caller.db, pool)) return;
  const n = await poolUses(caller.db, pool);
  if (n.workspaces + n.organization + n.projects === 0) throw ApiError.of("not_found"); // deleted concurrently
  const uses = [
    n.organization > 0 ? "it is the organization's default agent pool" : null,
    n.projects > 0 ? `it is the default agent pool of ${n.projects} project(s)` : null,
    n.workspaces > 0 ? `${n.workspaces} workspace(s) use it` : null,
  ].filter(Boolean);
  throw ApiError.of("invalid_attribute", { detail: `Agent pool cannot be deleted while in use: ${uses.join("; ")}` });
}
