/** Response schema of agent pools (src/agent-pools/agent-pools.routes.ts). */
import { attr, resourceSchema } from "../jsonapi/schemas";

export const agentPoolResource = resourceSchema("AgentPool", "agent-pools", {
  name: attr.string,
  "created-at": attr.time,
  "organization-scoped": attr.boolean,
  "agent-count": attr.int,
});
