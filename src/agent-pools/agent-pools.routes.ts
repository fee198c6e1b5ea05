/** Agent pools (HCP Terraform API docs: Agent Pools): what workspaces in `agent` execution mode name. */
import { z } from "@hono/zod-openapi";
import { callerOf } from "../auth/caller.http";
import { jsonapi, noContent, paginated } from "../jsonapi/document";
import { listDocument, orgParam, pageOf, pageQuery, resourceDocument } from "../jsonapi/schemas";
import { jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import { serializeAgentPool } from "./agent-pools.serialize";
import { createPool, listOrgPools, removePool, showPool, updatePool } from "./agent-pools.service";
import { defineRoutes } from "../jsonapi/define-route";
import { agentPoolResource, poolIdParam } from "./agent-pools.schemas";

const defineRoute = defineRoutes({ tags: ["Agent pools"] });
export const agentPools = router();

const refs = (type: string) => z.object({ data: z.array(z.object({ type: z.literal(type), id: z.string().max(64) })).max(1000) }).optional();
const relationships = z
  .object({ "allowed-workspaces": refs("workspaces"), "allowed-projects": refs("projects"), "excluded-workspaces": refs("workspaces") })
  .optional();
const attributes = z.object({ name: z.string().min(1).max(255).optional(), "organization-scoped": z.boolean().optional() });
const createBody = z
  .object({ data: z.object({ type: z.literal("agent-pools"), attributes: attributes.extend({ name: z.string().min(1).max(255) }), relationships }) })
  .openapi("AgentPoolCreate");
const updateBody = z
  .object({ data: z.object({ type: z.literal("agent-pools"), attributes: attributes.optional(), relationships }) })
  .openapi("AgentPoolUpdate");

agentPools.openapi(
  defineRoute({
    method: "post",
    path: "/organizations/{organization_name}/agent-pools",
    action: "agent-pools.manage",
    summary: "Create an agent pool",
    request: { params: orgParam, body: jsonBody(createBody) },
    responses: ok("The pool", resourceDocument(agentPoolResource), 201),
  }),
  async (c) => {
    const { attributes: a, relationships } = c.req.valid("json").data;
    const created = await createPool(callerOf(c), c.req.valid("param").organization_name, {
      name: a.name,
      organizationScoped: a["organization-scoped"],
      refs: relationships,
    });
    return jsonapi(c, { data: serializeAgentPool(created) }, 201);
  },
);

agentPools.openapi(
  defineRoute({
    method: "get",
    path: "/organizations/{organization_name}/agent-pools",
    action: "organization.read",
    summary: "List agent pools",
    request: {
      params: orgParam,
      query: pageQuery
        .extend({
          q: z.string().max(255).optional(),
          sort: z.string().max(32).optional(),
          "filter[allowed_workspaces][name]": z.string().max(255).optional(),
          "filter[allowed_projects][name]": z.string().max(255).optional(),
        })
        .passthrough(),
    },
    responses: ok("A page of pools", listDocument(agentPoolResource)),
  }),
  async (c) => {
    const query = c.req.valid("query");
    const page = pageOf(query);
    const { pools, total } = await listOrgPools(
      callerOf(c),
      c.req.valid("param").organization_name,
      {
        q: query.q,
        sort: query.sort,
        allowedWorkspaceName: query["filter[allowed_workspaces][name]"],
        allowedProjectName: query["filter[allowed_projects][name]"],
      },
      page,
    );
    return jsonapi(c, paginated(c, pools.map(serializeAgentPool), page, total));
  },
);

agentPools.openapi(
  defineRoute({
    method: "get",
    path: "/agent-pools/{pool_id}",
    action: "organization.read",
    summary: "Show an agent pool",
    request: { params: poolIdParam },
    responses: ok("The pool", resourceDocument(agentPoolResource)),
  }),
  async (c) => jsonapi(c, { data: serializeAgentPool(await showPool(callerOf(c), c.req.valid("param").pool_id)) }),
);

agentPools.openapi(
  defineRoute({
    method: "patch",
    path: "/agent-pools/{pool_id}",
    action: "agent-pools.manage",
    summary: "Update an agent pool",
    request: { params: poolIdParam, body: jsonBody(updateBody) },
    responses: ok("The pool", resourceDocument(agentPoolResource)),
  }),
  async (c) => {
    const { attributes: a = {}, relationships } = c.req.valid("json").data;
    const updated = await updatePool(callerOf(c), c.req.valid("param").pool_id, {
      name: a.name,
      organizationScoped: a["organization-scoped"],
      refs: relationships,
    });
    return jsonapi(c, { data: serializeAgentPool(updated) });
  },
);

agentPools.openapi(
  defineRoute({
    method: "delete",
    path: "/agent-pools/{pool_id}",
    action: "agent-pools.manage",
    summary: "Delete an unused agent pool",
    request: { params: poolIdParam },
    responses: noContentResponse,
  }),
  async (c) => {
    await removePool(callerOf(c), c.req.valid("param").pool_id);
    return noContent(c);
  },
);
