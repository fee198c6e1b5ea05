/** All SQL of agents (D1 `agents`, migration 0022). */
import type { Db } from "../caller";
import type { Page } from "../jsonapi/document";

interface AgentRow {
  id: string;
  agent_pool_id: string | null;
  organization_id: string | null;
  name: string;
  version: string | null;
  status: string;
  ip_address: string | null;
  last_ping_at: string;
  created_at: string;
}

export type AgentStatus = "idle" | "busy" | "exited" | "errored" | "unknown";

export interface Agent {
  id: string;
  /** null: the operator's default pool. */
  agentPoolId: string | null;
  /** The pool's organisation (null with the default pool). */
  organizationId: string | null;
  name: string;
  version: string | null;
  /** As the agent last reported it (the API shows `unknown` once its pings stop: agents.rules.ts). */
  status: AgentStatus;
  ipAddress: string | null;
  lastPingAt: string;
  createdAt: string;
}

function toAgent(row: AgentRow): Agent {
  return {
    id: row.id,
    agentPoolId: row.agent_pool_id,
    organizationId: row.organization_id,
    name: row.name,
    version: row.version,
    status: row.status as AgentStatus,
    ipAddress: row.ip_address,
    lastPingAt: row.last_ping_at,
    createdAt: row.created_at,
  };
}

const COLUMNS = "id, agent_pool_id, organization_id, name, version, status, ip_address, last_ping_at, created_at";

/** Inserts a pool's agent only while the pool exists (one statement, so a concurrent pool delete wins); false when it is gone. */
export async function insertAgent(db: Db, a: Agent): Promise<boolean> {
  const res = await db
    .prepare(
      `INSERT INTO agents (${COLUMNS}) SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?
       WHERE ?2 IS NULL OR EXISTS (SELECT 1 FROM agent_pools WHERE id = ?2)`,
    )
    .bind(a.id, a.agentPoolId, a.organizationId, a.name, a.version, a.status, a.ipAddress, a.lastPingAt, a.createdAt)
    .run();
  return res.meta.changes > 0;
}

export async function findAgent(db: Db, id: string): Promise<Agent | null> {
  const row = await db.prepare(`SELECT ${COLUMNS} FROM agents WHERE id = ?`).bind(id).first<AgentRow>();
  return row ? toAgent(row) : null;
}

/** Records a ping: the reported status (when given), the address it came from, the time. */
export async function touchAgent(db: Db, id: string, ping: { status?: AgentStatus; ipAddress: string | null; at: string }): Promise<void> {
  await db
    .prepare("UPDATE agents SET status = coalesce(?, status), ip_address = coalesce(?, ip_address), last_ping_at = ? WHERE id = ?")
    .bind(ping.status ?? null, ping.ipAddress, ping.at, id)
    .run();
}

/** One page of a pool's agents, oldest first, optionally only those that pinged at or after `since`; and how many match. */
export async function poolAgents(db: Db, poolId: string, since: string | null, page: Page): Promise<{ agents: Agent[]; total: number }> {
  const where = "agent_pool_id = ?1 AND (?2 IS NULL OR last_ping_at >= ?2)";
  const [total, rows] = await db.batch([
    db.prepare(`SELECT count(*) AS n FROM agents WHERE ${where}`).bind(poolId, since),
    db
      .prepare(`SELECT ${COLUMNS} FROM agents WHERE ${where} ORDER BY created_at, id LIMIT ?3 OFFSET ?4`)
      .bind(poolId, since, page.size, (page.number - 1) * page.size),
  ]);
  return { agents: ((rows?.results ?? []) as AgentRow[]).map(toAgent), total: ((total?.results?.[0] ?? { n: 0 }) as { n: number }).n };
}
