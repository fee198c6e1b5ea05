/**
 * Agent tokens: what agents join an agent pool with. Managing them follows the pool's management permission
 * (manage-agent-pools); their secrets exist in clear only in the create response. They are never API callers:
 * authentication reads `tokens` alone (src/tokens/tokens.d1.ts), and these live in `agent_tokens`.
 */
import { loadOwned, requireOrgAccess } from "../auth/access";
import type { Principal } from "../auth/principal";
import { authorize } from "../auth/requirements";
import type { Caller } from "../caller";
import { ApiError } from "../errors";
import { newId, newTokenSecret, nowIso, sha256Hex } from "../ids";
import type { Page } from "../jsonapi/document";
import { findPool, type PoolRow } from "./agent-pools.d1";
import { deleteAgentToken, findAgentToken, insertAgentToken, isAgentTokenSort, poolTokens, type AgentTokenRow } from "./agent-tokens.d1";

/** A new agent token with its secret, which exists in clear only here. */
export interface MintedAgentToken {
  row: AgentTokenRow;
  secret: string;
}

/** The pool, when the caller may manage its tokens (404 otherwise, as the docs say: "Agent Pool not found, or user unauthorized"). */
async function poolForTokens(caller: Caller, poolId: string): Promise<PoolRow> {
  const { row, access } = await loadOwned(caller, findPool, poolId);
  authorize(caller, "agent-pools.manage", { access });
  return row;
}

const creatorId = (p: Principal): string => (p.kind === "user" ? p.userId : p.serviceUserId);

/** One page of the pool's tokens; `sort`: `created-at` or `-created-at` (400 otherwise). */
export async function listPoolTokens(caller: Caller, poolId: string, sort: string | undefined, page: Page): Promise<{ rows: AgentTokenRow[]; total: number }> {
  const pool = await poolForTokens(caller, poolId);
  if (sort !== undefined && !isAgentTokenSort(sort)) throw ApiError.of("bad_request", { detail: "sort must be created-at or -created-at", parameter: "sort" });
  return poolTokens(caller.db, pool.id, sort ?? null, page);
}

/** Mints a token for the pool; its description is required. */
export async function createPoolToken(caller: Caller, poolId: string, description: string): Promise<MintedAgentToken> {
  const pool = await poolForTokens(caller, poolId);
  if (description.trim() === "") throw ApiError.of("invalid_attribute", { detail: "Description can't be blank", pointer: "/data/attributes/description" });
  const secret = newTokenSecret();
  const row: AgentTokenRow = {
    id: newId("at"),
    agent_pool_id: pool.id,
    organization_id: pool.organization_id,
    description,
    created_by: creatorId(caller.principal),
    created_at: nowIso(),
    last_used_at: null,
  };
  if (!(await insertAgentToken(caller.db, row, await sha256Hex(secret)))) throw ApiError.of("not_found"); // the pool was deleted concurrently
  return { row, secret };
}

/**
 * An agent token by id, for GET /authentication-tokens/:id (src/tokens/tokens.service.ts hands over the ids it does
 * not know). That route is declared `token.manage`, whose rule for an agent token is the pool's management permission.
 */
export async function showAgentToken(caller: Caller, id: string): Promise<AgentTokenRow> {
  const row = await findAgentToken(caller.db, id);
  if (!row) throw ApiError.of("not_found");
  const access = await requireOrgAccess(caller, { id: row.organization_id });
  authorize(caller, "token.manage", { access, agentPool: { id: row.agent_pool_id } });
  return row;
}

/** Deletes an agent token `showAgentToken` returned (so the caller was authorised); 404 when a concurrent delete won. */
export async function deleteShownAgentToken(caller: Caller, row: AgentTokenRow): Promise<void> {
  if (!(await deleteAgentToken(caller.db, row.id))) throw ApiError.of("not_found");
}
