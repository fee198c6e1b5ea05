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

async function serialize(db: D1DatabaseSession, p: PoolRow): Promise<Resource> {
  const using = await db.prepare("SELECT id FROM workspaces WHERE agent_pool_id = ? ORDER BY created_at").bind(p.id).all<{ id: string }>();
  return {
    id: p.id,
    type: "agent-pools",
    attributes: { name: p.name, "created-at": p.created_at, "organization-scoped": p.organization_scoped === 1, "agent-count": 0 },
    relationships: {
      organization: { data: { id: p.organization_name, type: "organizations" } },
      agents: { links: { related: `/api/v2/agent-pools/${p.id}/agents` } },
      "authentication-tokens": { links: { related: `/api/v2/agent-pools/${p.id}/authentication-tokens` } },
      workspaces: { data: using.results.map((w) => ({ id: w.id, type: "workspaces" })) },
      "allowed-workspaces": { data: ids(p.allowed_workspaces, "workspaces") },
      "allowed-projects": { data: ids(p.allowed_projects, "projects") },
      "excluded-workspaces": { data: ids(p.excluded_workspaces, "workspaces") },
    },
    links: { self: `/api/v2/agent-pools/${p.id}` },
  };
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
    return jsonapi(c, { data: await serialize(db, row) }, 201);
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
    return jsonapi(c, paginated(c, await Promise.all(slice.map((p) => serialize(db, p))), page, matching.length));
  },
);

agentPools.openapi(
  createRoute({ method: "get", path: "/agent-pools/{pool_id}", tags, summary: "Show an agent pool", request: { params: poolParam }, responses: { ...ok("The pool"), ...errorResponses } }),
  async (c) => jsonapi(c, { data: await serialize(primary(c), (await loadOwned<PoolRow>(c, "agent_pools", c.req.valid("param").pool_id)).row) }),
);

agentPools.openapi(
  createRoute({ method: "patch", path: "/agent-pools/{pool_id}", tags, summary: "Update an agent pool", request: { params: poolParam, body: jsonBody(updateBody) }, responses: { ...ok("The pool"), ...errorResponses } }),
  async (c) => {
    const { row, access } = await loadOwned<PoolRow>(c, "agent_pools", c.req.valid("param").pool_id);
    requireManage(access, "manage-agent-pools");
    const { attributes: a = {}, relationships: r } = c.req.valid("json").data;
    checkName(a.name);
    await checkRefs(primary(c), row.organization_name, r);
    const next: PoolRow = {
      ...row,
      name: a.name ?? row.name,
      organization_scoped: a["organization-scoped"] === undefined ? row.organization_scoped : a["organization-scoped"] ? 1 : 0,
      allowed_workspaces: r?.["allowed-workspaces"] ? JSON.stringify(r["allowed-workspaces"].data.map((d) => d.id)) : row.allowed_workspaces,
      allowed_projects: r?.["allowed-projects"] ? JSON.stringify(r["allowed-projects"].data.map((d) => d.id)) : row.allowed_projects,
      excluded_workspaces: r?.["excluded-workspaces"] ? JSON.stringify(r["excluded-workspaces"].data.map((d) => d.id)) : row.excluded_workspaces,
    };
    const db = primary(c);
    await db
      .prepare("UPDATE agent_pools SET name = ?, organization_scoped = ?, allowed_workspaces = ?, allowed_projects = ?, excluded_workspaces = ? WHERE id = ?")
      .bind(next.name, next.organization_scoped, next.allowed_workspaces, next.allowed_projects, next.excluded_workspaces, row.id)
      .run()
      .catch((err) => uniqueViolation(err));
    return jsonapi(c, { data: await serialize(db, next) });
  },
);

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
           AND NOT EXISTS (SELECT 1 FROM workspaces WHERE agent_pool_id = ?)
           AND NOT EXISTS (SELECT 1 FROM organizations WHERE default_agent_pool_id = ?)
           AND NOT EXISTS (SELECT 1 FROM projects WHERE default_agent_pool_id = ?)`,
      )
      .bind(row.id, row.id, row.id, row.id)
      .run();
    if (res.meta.changes === 0) {
      throw ApiError.of("invalid_attribute", { detail: "Agent pool is in use (by workspaces, by a project default or as the organization's default agent pool) and cannot be deleted" });
    }
    return noContent(c);
  },
);
