/** All SQL of agents (D1 `agents`, migrations 0022 and 0028) and of the pools' turns (`agent_pool_turns`, 0029). */
import type { Db } from "../caller";
import type { Page } from "../jsonapi/document";
import { LIMITS } from "../limits";

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

/**
 * Registers an agent, in one batch (a transaction): removes every agent gone since `goneBefore`, makes room in a
 * full pool by removing its longest-exited agents, and inserts the new one only while the pool exists (a concurrent
 * pool delete wins) and has fewer than `cap` agents. `inserted` false: the pool is gone, or `count` says it is full.
 * Without bounds: the pool's cap, and nothing removed for its silence.
 */
export async function insertAgent(
  db: Db,
  a: Agent,
  bounds: { cap: number; goneBefore: string } = { cap: LIMITS.agentsPerPool, goneBefore: "" },
): Promise<{ inserted: boolean; count: number }> {
  const count = "(SELECT count(*) FROM agents WHERE agent_pool_id IS ?1)";
  const [, , insert, after] = await db.batch([
    db.prepare("DELETE FROM agents WHERE last_ping_at < ?").bind(bounds.goneBefore),
    db
      .prepare(
        `DELETE FROM agents WHERE id IN (SELECT id FROM agents WHERE agent_pool_id IS ?1 AND status = 'exited'
         ORDER BY last_ping_at, id LIMIT max(0, ${count} - ?2 + 1))`,
      )
      .bind(a.agentPoolId, bounds.cap),
    db
      .prepare(
        `INSERT INTO agents (${COLUMNS}) SELECT ?3, ?1, ?4, ?5, ?6, ?7, ?8, ?9, ?10
         WHERE (?1 IS NULL OR EXISTS (SELECT 1 FROM agent_pools WHERE id = ?1)) AND ${count} < ?2`,
      )
      .bind(a.agentPoolId, bounds.cap, a.id, a.organizationId, a.name, a.version, a.status, a.ipAddress, a.lastPingAt, a.createdAt),
    db.prepare(`SELECT ${count} AS n`).bind(a.agentPoolId),
  ]);
  return { inserted: (insert?.meta.changes ?? 0) > 0, count: ((after?.results?.[0] ?? { n: 0 }) as { n: number }).n };
}

/** The agent, whatever its last ping (the protocol: an agent back from a long silence carries on while its row is there). */
export async function findAgent(db: Db, id: string): Promise<Agent | null> {
  const row = await db.prepare(`SELECT ${COLUMNS} FROM agents WHERE id = ?`).bind(id).first<AgentRow>();
  return row ? toAgent(row) : null;
}

/** The agent unless it is gone (pinged last before `goneBefore`): what the API shows. */
export async function findPresentAgent(db: Db, id: string, goneBefore: string): Promise<Agent | null> {
  const row = await db.prepare(`SELECT ${COLUMNS} FROM agents WHERE id = ? AND last_ping_at >= ?`).bind(id, goneBefore).first<AgentRow>();
  return row ? toAgent(row) : null;
}

/**
 * A claim: the agent is busy with the job (its current jobs, migration 0031), and the pool has served the job's
 * organisation now (its turn, migration 0029).
 */
export async function recordClaim(
  db: Db,
  claim: { agentId: string; poolId: string | null; organizationId: string; at: string; job: { runId: string; phase: string; workspaceId: string } },
): Promise<void> {
  await db.batch([
    db.prepare("UPDATE agents SET status = 'busy', last_ping_at = ? WHERE id = ?").bind(claim.at, claim.agentId),
    db
      .prepare(
        `INSERT INTO agent_jobs (agent_id, run_id, phase, workspace_id, organization_id, claimed_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (agent_id, run_id, phase) DO UPDATE SET claimed_at = excluded.claimed_at`,
      )
      .bind(claim.agentId, claim.job.runId, claim.job.phase, claim.job.workspaceId, claim.organizationId, claim.at),
    db
      .prepare(
        `INSERT INTO agent_pool_turns (pool_key, organization_id, last_claimed_at) VALUES (coalesce(?, ''), ?, ?)
         ON CONFLICT (pool_key, organization_id) DO UPDATE SET last_claimed_at = max(last_claimed_at, excluded.last_claimed_at)`,
      )
      .bind(claim.poolId, claim.organizationId, claim.at),
  ]);
}

/** Records a ping: the reported status (when given), the address it came from, the time. Idle or exited: it holds no job. */
export async function touchAgent(db: Db, id: string, ping: { status?: AgentStatus; ipAddress: string | null; at: string }): Promise<void> {
  const update = db
    .prepare("UPDATE agents SET status = coalesce(?, status), ip_address = coalesce(?, ip_address), last_ping_at = ? WHERE id = ?")
    .bind(ping.status ?? null, ping.ipAddress, ping.at, id);
  if (ping.status === "idle" || ping.status === "exited") {
    await db.batch([update, db.prepare("DELETE FROM agent_jobs WHERE agent_id = ?").bind(id)]);
  } else await update.run();
}

/** The job's phase ended (its finish was reported): no agent holds it any more. */
export async function releaseJob(db: Db, runId: string, phase: string): Promise<void> {
  await db.prepare("DELETE FROM agent_jobs WHERE run_id = ? AND phase = ?").bind(runId, phase).run();
}

/** A job an agent holds now, with the names its run page is found by (null when the workspace is gone). */
export interface HeldJob {
  agentId: string;
  runId: string;
  phase: string;
  workspaceId: string;
  organizationId: string;
  claimedAt: string;
  workspaceName: string | null;
  organizationName: string | null;
}

/** The jobs these agents hold now, oldest claim first. */
export async function heldJobs(db: Db, agentIds: string[]): Promise<HeldJob[]> {
  if (agentIds.length === 0) return [];
  const rows = await db
    .prepare(
      `SELECT j.agent_id, j.run_id, j.phase, j.workspace_id, j.organization_id, j.claimed_at, w.name AS workspace_name, o.name AS organization_name
       FROM agent_jobs j LEFT JOIN workspaces w ON w.id = j.workspace_id LEFT JOIN organizations o ON o.external_id = j.organization_id
       WHERE j.agent_id IN (SELECT value FROM json_each(?)) ORDER BY j.claimed_at, j.run_id`,
    )
    .bind(JSON.stringify(agentIds))
    .all<{
      agent_id: string;
      run_id: string;
      phase: string;
      workspace_id: string;
      organization_id: string;
      claimed_at: string;
      workspace_name: string | null;
      organization_name: string | null;
    }>();
  return rows.results.map((r) => ({
    agentId: r.agent_id,
    runId: r.run_id,
    phase: r.phase,
    workspaceId: r.workspace_id,
    organizationId: r.organization_id,
    claimedAt: r.claimed_at,
    workspaceName: r.workspace_name,
    organizationName: r.organization_name,
  }));
}

/**
 * One page of a pool's agents, oldest first, those that pinged at or after `since` (at least: not gone); and how
 * many match.
 */
export async function poolAgents(db: Db, poolId: string | null, since: string, page: Page): Promise<{ agents: Agent[]; total: number }> {
  // `IS`: the default pool's agents have no pool id.
  const where = "agent_pool_id IS ?1 AND last_ping_at >= ?2";
  const [total, rows] = await db.batch([
    db.prepare(`SELECT count(*) AS n FROM agents WHERE ${where}`).bind(poolId, since),
    db
      .prepare(`SELECT ${COLUMNS} FROM agents WHERE ${where} ORDER BY created_at, id LIMIT ?3 OFFSET ?4`)
      .bind(poolId, since, page.size, (page.number - 1) * page.size),
  ]);
  return { agents: ((rows?.results ?? []) as AgentRow[]).map(toAgent), total: ((total?.results?.[0] ?? { n: 0 }) as { n: number }).n };
}

/** One page of every pool's agents (the default pool's first), those that pinged at or after `since`; and how many. */
export async function allAgents(db: Db, since: string, page: Page): Promise<{ agents: Agent[]; total: number }> {
  const [total, rows] = await db.batch([
    db.prepare("SELECT count(*) AS n FROM agents WHERE last_ping_at >= ?1").bind(since),
    db
      .prepare(`SELECT ${COLUMNS} FROM agents WHERE last_ping_at >= ?1 ORDER BY agent_pool_id IS NOT NULL, agent_pool_id, created_at, id LIMIT ?2 OFFSET ?3`)
      .bind(since, page.size, (page.number - 1) * page.size),
  ]);
  return { agents: ((rows?.results ?? []) as AgentRow[]).map(toAgent), total: ((total?.results?.[0] ?? { n: 0 }) as { n: number }).n };
}
