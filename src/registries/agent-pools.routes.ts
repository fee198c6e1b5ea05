/** Agent pools (tfe-api-notes §2.7): what workspaces in `agent` execution mode name. */
import { createRoute, z } from "@hono/zod-openapi";
import { requireOrgAccess } from "../auth/access";
import { primary } from "../db";
import { ApiError } from "../errors";
import { newId, nowIso } from "../ids";
import { jsonapi, noContent, paginated, readPage, type Resource } from "../jsonapi/document";
import { errorResponses, jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import { loadOwned, requireManage, uniqueViolation } from "./registry.common";

const tags = ["Agent pools"];
export const agentPools = router();

interface PoolRow {
  id: string;
  organization_name: string;
  name: string;
  organization_scoped: number;
  allowed_workspaces: string;
  allowed_projects: string;
  excluded_workspaces: string;
  created_at: string;
}

const NAME = /^[A-Za-z0-9_-]+$/;
const orgParam = z.object({ organization_name: z.string().min(1).max(255) });
const poolParam = z.object({ pool_id: z.string().regex(/^apool-[A-Za-z0-9]{1,64}$/) });
const refs = (type: string) => z.object({ data: z.array(z.object({ type: z.literal(type), id: z.string().max(64) })).max(1000) }).optional();
const relationships = z.object({ "allowed-workspaces": refs("workspaces"), "allowed-projects": refs("projects"), "excluded-workspaces": refs("workspaces") }).optional();
const attributes = z.object({ name: z.string().min(1).max(255).optional(), "organization-scoped": z.boolean().optional() });
const createBody = z.object({ data: z.object({ type: z.literal("agent-pools"), attributes: attributes.extend({ name: z.string().min(1).max(255) }), relationships }) }).openapi("AgentPoolCreate");
const updateBody = z.object({ data: z.object({ type: z.literal("agent-pools"), attributes: attributes.optional(), relationships }) }).openapi("AgentPoolUpdate");

const ids = (json: string, type: string) => (JSON.parse(json) as string[]).map((id) => ({ id, type }));

/** Workspaces naming each pool (the index's `agent_pool_id`), in one query for a whole page. */
async function workspacesUsing(db: D1DatabaseSession, organization: string, poolIds: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>(poolIds.map((id) => [id, []]));
  if (poolIds.length === 0) return out;
  const rows = await db
    .prepare(
      `SELECT id, agent_pool_id FROM workspaces
         WHERE organization_name = ? AND agent_pool_id IN (SELECT value FROM json_each(?)) ORDER BY created_at, id`,
    )
    .bind(organization, JSON.stringify(poolIds))
    .all<{ id: string; agent_pool_id: string }>();
  for (const r of rows.results) out.get(r.agent_pool_id)?.push(r.id);
  return out;
}

function serialize(p: PoolRow, using: string[]): Resource {
  return {
    id: p.id,
    type: "agent-pools",
    attributes: { name: p.name, "created-at": p.created_at, "organization-scoped": p.organization_scoped === 1, "agent-count": 0 },
    relationships: {
      organization: { data: { id: p.organization_name, type: "organizations" } },
      agents: { links: { related: `/api/v2/agent-pools/${p.id}/agents` } },
      "authentication-tokens": { links: { related: `/api/v2/agent-pools/${p.id}/authentication-tokens` } },
      workspaces: { data: using.map((id) => ({ id, type: "workspaces" })) },
      "allowed-workspaces": { data: ids(p.allowed_workspaces, "workspaces") },
      "allowed-projects": { data: ids(p.allowed_projects, "projects") },
      "excluded-workspaces": { data: ids(p.excluded_workspaces, "workspaces") },
    },
    links: { self: `/api/v2/agent-pools/${p.id}` },
  };
}

async function serializeOne(db: D1DatabaseSession, p: PoolRow): Promise<Resource> {
  return serialize(p, (await workspacesUsing(db, p.organization_name, [p.id])).get(p.id) ?? []);
}

type Refs = z.infer<typeof relationships>;

/** Allowed / excluded workspaces and projects must be in the pool's organisation (422 naming the first stranger). */
async function checkRefs(db: D1DatabaseSession, org: string, r: Refs): Promise<void> {
  const lists = [
    ["allowed-workspaces", "workspaces"],
    ["excluded-workspaces", "workspaces"],
    ["allowed-projects", "projects"],
  ] as const;
  for (const [rel, table] of lists) {
    const wanted = r?.[rel]?.data.map((d) => d.id) ?? [];
    if (wanted.length === 0) continue;
    const found = await db
      .prepare(`SELECT id FROM ${table} WHERE organization_name = ? AND id IN (SELECT value FROM json_each(?))`)
      .bind(org, JSON.stringify(wanted))
      .all<{ id: string }>();
    const known = new Set(found.results.map((f) => f.id));
    const i = wanted.findIndex((id) => !known.has(id));
    if (i >= 0) throw ApiError.of("invalid_attribute", { detail: `${table === "workspaces" ? "Workspace" : "Project"} ${wanted[i]} not found in this organization`, pointer: `/data/relationships/${rel}/data/${i}` });
  }
}

function checkName(name: string | undefined): void {
  if (name !== undefined && !NAME.test(name)) throw ApiError.of("invalid_attribute", { detail: "Name may only contain letters, numbers, - and _", pointer: "/data/attributes/name" });
}

agentPools.openapi(
  createRoute({ method: "post", path: "/organizations/{organization_name}/agent-pools", tags, summary: "Create an agent pool", request: { params: orgParam, body: jsonBody(createBody) }, responses: { ...ok("The pool", 201), ...errorResponses } }),
  async (c) => {
    const db = primary(c);
    const access = await requireOrgAccess(db, c.get("principal"), c.req.valid("param").organization_name);
    requireManage(access, "manage-agent-pools");
    const { attributes: a, relationships: r } = c.req.valid("json").data;
    checkName(a.name);
    await checkRefs(db, access.organization.name, r);
    const row: PoolRow = {
      id: newId("apool"),
      organization_name: access.organization.name,
      name: a.name,
      organization_scoped: a["organization-scoped"] === false ? 0 : 1,
      allowed_workspaces: JSON.stringify(r?.["allowed-workspaces"]?.data.map((d) => d.id) ?? []),
      allowed_projects: JSON.stringify(r?.["allowed-projects"]?.data.map((d) => d.id) ?? []),
      excluded_workspaces: JSON.stringify(r?.["excluded-workspaces"]?.data.map((d) => d.id) ?? []),
      created_at: nowIso(),
    };
    await db
      .prepare("INSERT INTO agent_pools (id, organization_name, name, organization_scoped, allowed_workspaces, allowed_projects, excluded_workspaces, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
      .bind(row.id, row.organization_name, row.name, row.organization_scoped, row.allowed_workspaces, row.allowed_projects, row.excluded_workspaces, row.created_at)
      .run()
      .catch((err) => uniqueViolation(err));
    return jsonapi(c, { data: await serializeOne(db, row) }, 201);
  },
);

agentPools.openapi(
  createRoute({ method: "get", path: "/organizations/{organization_name}/agent-pools", tags, summary: "List agent pools", request: {
      params: orgParam,
      query: z
        .object({
          q: z.string().max(255).optional(),
          sort: z.string().max(32).optional(),
          "filter[allowed_workspaces][name]": z.string().max(255).optional(),
          "filter[allowed_projects][name]": z.string().max(255).optional(),
        })
        .passthrough(),
    }, responses: { ...ok("A page of pools"), ...errorResponses } }),
  async (c) => {
    const db = primary(c);
    const access = await requireOrgAccess(db, c.get("principal"), c.req.valid("param").organization_name);
    const page = readPage(c);
    const query = c.req.valid("query");
    const q = (query.q ?? "").toLowerCase();
    const order = { name: "name COLLATE NOCASE ASC", "-name": "name COLLATE NOCASE DESC", "created-at": "created_at ASC", "-created-at": "created_at DESC" }[query.sort ?? "name"];
    if (!order) throw ApiError.of("bad_request", { detail: "sort must be name, -name, created-at or -created-at", parameter: "sort" });
    const rows = await db.prepare(`SELECT * FROM agent_pools WHERE organization_name = ? ORDER BY ${order}, id`).bind(access.organization.name).all<PoolRow>();
    // Pools a named workspace / project may use: organisation-scoped ones, and those that allow it.
    const usable = async (name: string | undefined, table: "workspaces" | "projects") => {
      if (!name) return null;
      const row = await db.prepare(`SELECT id FROM ${table} WHERE organization_name = ? AND name = ?`).bind(access.organization.name, name).first<{ id: string }>();
      return row?.id ?? "";
    };
    const wsId = await usable(query["filter[allowed_workspaces][name]"], "workspaces");
    const prjId = await usable(query["filter[allowed_projects][name]"], "projects");
    const allows = (p: PoolRow, id: string | null, list: string) => id === null || p.organization_scoped === 1 || (JSON.parse(list) as string[]).includes(id);
    const matching = rows.results.filter(
      (p) => (!q || p.name.toLowerCase().includes(q)) && allows(p, wsId, p.allowed_workspaces) && allows(p, prjId, p.allowed_projects),
    );
    const slice = matching.slice((page.number - 1) * page.size, page.number * page.size);
    const using = await workspacesUsing(db, access.organization.name, slice.map((p) => p.id));
    return jsonapi(c, paginated(c, slice.map((p) => serialize(p, using.get(p.id) ?? [])), page, matching.length));
  },
);

agentPools.openapi(
  createRoute({ method: "get", path: "/agent-pools/{pool_id}", tags, summary: "Show an agent pool", request: { params: poolParam }, responses: { ...ok("The pool"), ...errorResponses } }),
  async (c) => jsonapi(c, { data: await serializeOne(primary(c), (await loadOwned<PoolRow>(c, "agent_pools", c.req.valid("param").pool_id)).row) }),
);

agentPools.openapi(
  createRoute({ method: "patch", path: "/agent-pools/{pool_id}", tags, summary: "Update an agent pool", request: { params: poolParam, body: jsonBody(updateBody) }, responses: { ...ok("The pool"), ...errorResponses } }),
  async (c) => {
    const { row, access } = await loadOwned<PoolRow>(c, "agent_pools", c.req.valid("param").pool_id);
    requireManage(access, "manage-agent-pools");
    const { attributes: a = {}, relationships: r } = c.req.valid("json").data;
    checkName(a.name);
    await checkRefs(primary(c), row.organization_name, r);
    // Only what the request names is written, so concurrent PATCHes of different fields both land.
    const sets: [string, unknown][] = [];
    if (a.name !== undefined) sets.push(["name = ?", a.name]);
    if (a["organization-scoped"] !== undefined) sets.push(["organization_scoped = ?", a["organization-scoped"] ? 1 : 0]);
    for (const [rel, column] of [["allowed-workspaces", "allowed_workspaces"], ["allowed-projects", "allowed_projects"], ["excluded-workspaces", "excluded_workspaces"]] as const) {
      const given = r?.[rel];
      if (given) sets.push([`${column} = ?`, JSON.stringify(given.data.map((d) => d.id))]);
    }
    const db = primary(c);
    if (sets.length > 0) {
      await db
        .prepare(`UPDATE agent_pools SET ${sets.map(([s]) => s).join(", ")} WHERE id = ?`)
        .bind(...sets.map(([, v]) => v), row.id)
        .run()
        .catch((err) => uniqueViolation(err));
    }
    const updated = await db.prepare("SELECT * FROM agent_pools WHERE id = ?").bind(row.id).first<PoolRow>();
    if (!updated) throw ApiError.of("not_found"); // deleted concurrently
    return jsonapi(c, { data: await serializeOne(db, updated) });
  },
);

/**
 * Why a delete was refused, for the detail (issue 2 leaves the status to us: 422, as for any request that
 * the pool's current references make invalid; no workspace is touched, the check reads D1 only).
 */
async function inUse(db: D1DatabaseSession, row: PoolRow): Promise<ApiError> {
  const [ws, org, prj] = await db.batch<{ n: number }>([
    db.prepare("SELECT count(*) AS n FROM workspaces WHERE organization_name = ? AND agent_pool_id = ?").bind(row.organization_name, row.id),
    db.prepare("SELECT count(*) AS n FROM organizations WHERE name = ? AND default_agent_pool_id = ?").bind(row.organization_name, row.id),
    db.prepare("SELECT count(*) AS n FROM projects WHERE organization_name = ? AND default_agent_pool_id = ?").bind(row.organization_name, row.id),
  ]);
  const n = (r: D1Result<{ n: number }> | undefined) => r?.results[0]?.n ?? 0;
  if (n(ws) + n(org) + n(prj) === 0) return ApiError.of("not_found"); // deleted concurrently
  const uses = [
    n(org) > 0 ? "it is the organization's default agent pool" : null,
    n(prj) > 0 ? `it is the default agent pool of ${n(prj)} project(s)` : null,
    n(ws) > 0 ? `${n(ws)} workspace(s) use it` : null,
  ].filter(Boolean);
  return ApiError.of("invalid_attribute", { detail: `Agent pool cannot be deleted while in use: ${uses.join("; ")}` });
}

agentPools.openapi(
  createRoute({ method: "delete", path: "/agent-pools/{pool_id}", tags, summary: "Delete an unused agent pool", request: { params: poolParam }, responses: { ...noContentResponse, ...errorResponses } }),
  async (c) => {
    const { row, access } = await loadOwned<PoolRow>(c, "agent_pools", c.req.valid("param").pool_id);
    requireManage(access, "manage-agent-pools");
    const db = primary(c);
    // Refused while anything names the pool; decided in the delete statement itself.
    const res = await db
      .prepare(
        `DELETE FROM agent_pools WHERE id = ?
           AND NOT EXISTS (SELECT 1 FROM workspaces WHERE organization_name = ? AND agent_pool_id = ?)
           AND NOT EXISTS (SELECT 1 FROM organizations WHERE name = ? AND default_agent_pool_id = ?)
           AND NOT EXISTS (SELECT 1 FROM projects WHERE organization_name = ? AND default_agent_pool_id = ?)`,
      )
      .bind(row.id, row.organization_name, row.id, row.organization_name, row.id, row.organization_name, row.id)
      .run();
    if (res.meta.changes === 0) throw await inUse(db, row);
    return noContent(c);
  },
);
