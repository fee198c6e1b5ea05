/** The agent pool's path parameter and response schema (src/agent-pools/agent-pools.routes.ts, agent-tokens.routes.ts, src/agents/agents.routes.ts). */
import { z } from "@hono/zod-openapi";
import { attr, resourceSchema } from "../jsonapi/schemas";

export const poolIdParam = z.object({ pool_id: z.string().regex(/^apool-[A-Za-z0-9]{1,64}$/) });

export const agentPoolResource = resourceSchema("AgentPool", "agent-pools", {
  name: attr.string,
  "created-at": attr.time,
  "organization-scoped": attr.boolean,
  "agent-count": attr.int,
});
