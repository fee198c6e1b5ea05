/** The agent resource (the agents API reference: name, status, ip-address, last-ping-at). */
import type { Resource } from "../jsonapi/document";
import type { Agent } from "./agents.d1";
import { shownStatus } from "./agents.rules";

/** `pool`: with the `agent-pool` relationship (null for the operator's default pool), for the site admin's list. */
export function serializeAgent(a: Agent, nowMs = Date.now(), opts: { pool?: boolean } = {}): Resource {
  return {
    id: a.id,
    type: "agents",
    attributes: { name: a.name, status: shownStatus(a.status, a.lastPingAt, nowMs), "ip-address": a.ipAddress, "last-ping-at": a.lastPingAt },
    ...(opts.pool ? { relationships: { "agent-pool": { data: a.agentPoolId ? { id: a.agentPoolId, type: "agent-pools" } : null } } } : {}),
    // The default pool's agents are no organisation's: `GET /agents/:id` does not show them.
    ...(a.agentPoolId ? { links: { self: `/api/v2/agents/${a.id}` } } : {}),
  };
}
