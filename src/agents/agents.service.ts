/**
 * Agents in the public API (the agents API reference): a pool's members read them as they read the pool. Agents of
 * the operator's default pool belong to no organisation, and no API caller sees them; an agent gone for a day
 * (agents.rules.ts) is not shown.
 */
import { loadOwned, requireOrgAccess } from "../auth/access";
import { authorize } from "../auth/requirements";
import type { Caller } from "../caller";
import { ApiError } from "../errors";
import type { Page } from "../jsonapi/document";
import { findPool } from "../agent-pools/agent-pools.d1";
import { LIMITS } from "../limits";
import { allAgents, findPresentAgent, heldJobs, type HeldJob, poolAgents, type Agent } from "./agents.d1";
import { goneBefore } from "./agents.rules";

/** `since`: `filter[last-ping-since]`, an ISO 8601 time (400 otherwise). */
export async function listPoolAgents(caller: Caller, poolId: string, since: string | undefined, page: Page): Promise<{ agents: Agent[]; total: number }> {
  let sinceIso: string | null = null;
  if (since !== undefined) {
    const ms = Date.parse(since);
    if (!/^\d{4}-\d{2}-\d{2}T/.test(since) || Number.isNaN(ms))
      throw ApiError.of("bad_request", { detail: "filter[last-ping-since] must be an ISO 8601 time", parameter: "filter[last-ping-since]" });
    // Stored times have milliseconds: compare in the same shape.
    sinceIso = new Date(ms).toISOString();
  }
  const { access } = await loadOwned(caller, findPool, poolId);
  authorize(caller, "organization.read", { access });
  // An agent gone for a day is not shown, whatever the filter asks.
  const gone = goneBefore(Date.now());
  return poolAgents(caller.db, poolId, sinceIso !== null && sinceIso > gone ? sinceIso : gone, page);
}

export async function showAgent(caller: Caller, id: string): Promise<Agent> {
  const agent = await findPresentAgent(caller.db, id, goneBefore(Date.now()));
  if (!agent?.organizationId) throw ApiError.of("not_found");
  await requireOrgAccess(caller, { id: agent.organizationId });
  return agent;
}

/**
 * Every pool's agents, the operator's default pool included (its agents serve every organisation and belong to none):
 * the site admin's view (`GET /api/v2/admin/agents`).
 */
export async function listAllAgents(caller: Caller, page: Page): Promise<{ agents: Agent[]; total: number }> {
  authorize(caller, "site-admin");
  return allAgents(caller.db, goneBefore(Date.now()), page);
}

/** A pool's agents with the jobs each holds now, for the pool's page: an organisation's pool, or (null) the default pool. */
export interface PoolAgents {
  pool: { id: string | null; name: string; organizationId: string | null };
  agents: Agent[];
  jobs: HeldJob[];
}

export async function poolAgentsPage(caller: Caller, poolId: string | null): Promise<PoolAgents> {
  let pool: PoolAgents["pool"];
  if (poolId === null) {
    authorize(caller, "site-admin");
    pool = { id: null, name: "Default agent pool", organizationId: null };
  } else {
    const { item, access } = await loadOwned(caller, findPool, poolId);
    authorize(caller, "organization.read", { access });
    pool = { id: item.id, name: item.name, organizationId: item.organizationId };
  }
  const { agents } = await poolAgents(caller.db, pool.id, goneBefore(Date.now()), { number: 1, size: LIMITS.agentsPerPool });
  return {
    pool,
    agents,
    jobs: await heldJobs(
      caller.db,
      agents.map((a) => a.id),
    ),
  };
}
