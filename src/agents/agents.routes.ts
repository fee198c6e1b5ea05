/** Agents (the agents API reference): list a pool's agents, show one. The private protocol: agent-protocol.routes.ts. */
import { z } from "@hono/zod-openapi";
import { callerOf } from "../auth/caller.http";
import { jsonapi, paginated } from "../jsonapi/document";
import { defineRoutes } from "../jsonapi/define-route";
import { listDocument, pageOf, pageQuery, resourceDocument } from "../jsonapi/schemas";
import { ok, router } from "../jsonapi/validation";
import { poolIdParam } from "../agent-pools/agent-pools.schemas";
import { agentIdParam, agentResource } from "./agents.schemas";
import { serializeAgent } from "./agents.serialize";
import { listAllAgents, listPoolAgents, showAgent } from "./agents.service";

const defineRoute = defineRoutes({ tags: ["Agents"] });
export const agents = router();

agents.openapi(
  defineRoute({
    method: "get",
    path: "/agent-pools/{pool_id}/agents",
    action: "organization.read",
    summary: "List a pool's agents",
    request: { params: poolIdParam, query: pageQuery.extend({ "filter[last-ping-since]": z.string().max(64).optional() }).passthrough() },
    responses: ok("A page of agents", listDocument(agentResource)),
  }),
  async (c) => {
    const query = c.req.valid("query");
    const page = pageOf(query);
    const { agents: list, total } = await listPoolAgents(callerOf(c), c.req.valid("param").pool_id, query["filter[last-ping-since]"], page);
    const now = Date.now();
    return jsonapi(
      c,
      paginated(
        c,
        list.map((a) => serializeAgent(a, now)),
        page,
        total,
      ),
    );
  },
);

agents.openapi(
  defineRoute({
    method: "get",
    path: "/agents/{agent_id}",
    action: "organization.read",
    summary: "Show an agent",
    request: { params: agentIdParam },
    responses: ok("The agent", resourceDocument(agentResource)),
  }),
  async (c) => jsonapi(c, { data: serializeAgent(await showAgent(callerOf(c), c.req.valid("param").agent_id)) }),
);

// Every pool's agents for the site admin, the operator's default pool included: that pool has no id in the API (it
// is not an organisation's), so its agents are listed here, with an `agent-pool` relationship of null
// (docs/running.md, "Agents").
agents.openapi(
  defineRoute({
    method: "get",
    path: "/admin/agents",
    action: "site-admin",
    summary: "List every pool's agents, the default pool's first (site admins)",
    request: { query: pageQuery.passthrough() },
    responses: ok("A page of agents", listDocument(agentResource)),
  }),
  async (c) => {
    const page = pageOf(c.req.valid("query"));
    const { agents: list, total } = await listAllAgents(callerOf(c), page);
    const now = Date.now();
    return jsonapi(
      c,
      paginated(
        c,
        list.map((a) => serializeAgent(a, now, { pool: true })),
        page,
        total,
      ),
    );
  },
);
