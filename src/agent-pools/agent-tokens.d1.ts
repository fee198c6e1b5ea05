/** All SQL for agent tokens (D1 `agent_tokens`, migration 0019): only the SHA-256 of a secret is stored. */
import type { Db } from "../caller";
import { offsetOf, pageWithTotal } from "../platform/paging";
import type { Page } from "../jsonapi/document";

interface AgentTokenRow {
  id: string;
  agent_pool_id: string;
  organization_id: string;
  description: string;
  created_by: string | null;
  created_at: string;
  last_used_at: string | null;
}

/** An agent pool's token (never its secret). */
export interface AgentToken {
  id: string;
  agentPoolId: string;
  organizationId: string;
  description: string;
  createdBy: string | null;
  createdAt: string;
  lastUsedAt: string | null;
}

function toAgentToken(row: AgentTokenRow): AgentToken {
  return {
    id: row.id,
    agentPoolId: row.agent_pool_id,
    organizationId: row.organization_id,
    description: row.description,
    createdBy: row.created_by,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
  };
}

/** Every column but the secret's hash, which no read returns. */
const COLUMNS = "id, agent_pool_id, organization_id, description, created_by, created_at, last_used_at";

/** The list's `sort` values (docs: by creation time, ties by id in the same direction). */
const ORDERS = {
  "created-at": "created_at ASC, id ASC",
  "-created-at": "created_at DESC, id DESC",
} as const;
export type AgentTokenSort = keyof typeof ORDERS;
export const isAgentTokenSort = (s: string): s is AgentTokenSort => Object.hasOwn(ORDERS, s);

/** Inserts the token only while its pool exists (one statement, so a concurrent pool delete wins); false when the pool is gone. */
export async function insertAgentToken(db: Db, token: AgentToken, tokenHash: string): Promise<boolean> {
  const res = await db
    .prepare(
      `INSERT INTO agent_tokens (id, token_hash, agent_pool_id, organization_id, description, created_by, created_at, last_used_at)
       SELECT ?, ?, ?, ?, ?, ?, ?, NULL WHERE EXISTS (SELECT 1 FROM agent_pools WHERE id = ?)`,
    )
    .bind(token.id, tokenHash, token.agentPoolId, token.organizationId, token.description, token.createdBy, token.createdAt, token.agentPoolId)
    .run();
  return res.meta.changes > 0;
}

/** One page of a pool's tokens (oldest first unless sorted otherwise) and how many it has. */
export async function poolTokens(db: Db, poolId: string, sort: AgentTokenSort | null, page: Page): Promise<{ tokens: AgentToken[]; total: number }> {
  const { rows, total } = await pageWithTotal<AgentTokenRow>(
    db,
    db
      .prepare(`SELECT ${COLUMNS} FROM agent_tokens WHERE agent_pool_id = ? ORDER BY ${ORDERS[sort ?? "created-at"]} LIMIT ? OFFSET ?`)
      .bind(poolId, page.size, offsetOf(page)),
    db.prepare("SELECT count(*) AS n FROM agent_tokens WHERE agent_pool_id = ?").bind(poolId),
  );
  return { tokens: rows.map(toAgentToken), total };
}

export async function findAgentToken(db: Db, id: string): Promise<AgentToken | null> {
  const row = await db.prepare(`SELECT ${COLUMNS} FROM agent_tokens WHERE id = ?`).bind(id).first<AgentTokenRow>();
  return row ? toAgentToken(row) : null;
}

/** False when the token was already gone. */
export async function deleteAgentToken(db: Db, id: string): Promise<boolean> {
  return (await db.prepare("DELETE FROM agent_tokens WHERE id = ?").bind(id).run()).meta.changes > 0;
}

/** The pool an agent token (by the SHA-256 of its secret) joins agents to; null when no such token exists. */
export async function agentTokenByHash(
  db: Db,
  hash: string,
): Promise<{ id: string; agentPoolId: string; organizationId: string; lastUsedAt: string | null } | null> {
  const row = await db
    .prepare("SELECT id, agent_pool_id, organization_id, last_used_at FROM agent_tokens WHERE token_hash = ?")
    .bind(hash)
    .first<{ id: string; agent_pool_id: string; organization_id: string; last_used_at: string | null }>();
  return row ? { id: row.id, agentPoolId: row.agent_pool_id, organizationId: row.organization_id, lastUsedAt: row.last_used_at } : null;
}

export async function touchAgentToken(db: Db, id: string, at: string): Promise<void> {
  await db.prepare("UPDATE agent_tokens SET last_used_at = ? WHERE id = ?").bind(at, id).run();
}
