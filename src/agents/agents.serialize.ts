/** The agent resource (the agents API reference: name, status, ip-address, last-ping-at). */
import type { Resource } from "../jsonapi/document";
import type { Agent } from "./agents.d1";
import { shownStatus } from "./agents.rules";

export function serializeAgent(a: Agent, nowMs = Date.now()): Resource {
  return {
    id: a.id,
    type: "agents",
    attributes: { name: a.name, status: shownStatus(a.status, a.lastPingAt, nowMs), "ip-address": a.ipAddress, "last-ping-at": a.lastPingAt },
    links: { self: `/api/v2/agents/${a.id}` },
  };
}
