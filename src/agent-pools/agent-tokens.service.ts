/**
 * Agent tokens: what agents join an agent pool with. Managing them follows the pool's management permission
 * (manage-agent-pools); their secrets exist in clear only in the create response. They are never API callers:
 * authentication reads `tokens` alone (src/tokens/tokens.d1.ts), and these live in `agent_tokens`.
 */
import { loadOwned, requireOrgAccess } from "../auth/access";
import { actingUserId, type Principal } from "../auth/principal";
import { authorize } from "../auth/requirements";
import type { Caller } from "../caller";
import { ApiError } from "../errors";
import { newId, newTokenSecret, nowIso, sha256Hex } from "../ids";
import type { Page } from "../jsonapi/document";
import { findPool, type AgentPool } from "./agent-pools.d1";
import { deleteAgentToken, findAgentToken, insertAgentToken, isAgentTokenSort, poolTokens, type AgentToken } from "./agent-tokens.d1";

/** A new agent token with its secret, which exists in clear only here. */
export interface MintedAgentToken {
  token: AgentToken;
  secret: string;
}

/** The pool, when the caller may manage its tokens (404 otherwise, as the docs say: "Agent Pool not found, or user unauthorized"). */
async function poolForTokens(caller: Caller, poolId: string): Promise<AgentPool> {
  const { item: pool, access } = await loadOwned(caller, findPool, poolId);
  authorize(caller, "agent-pools.manage", { access });
  return pool;
}

const creatorId = (p: Principal): string | null => actingUserId(p);

/** One page of the pool's tokens; `sort`: `created-at` or `-created-at` (400 otherwise). */
export async function listPoolTokens(caller: Caller, poolId: string, sort: string | undefined, page: Page): Promise<{ tokens: AgentToken[]; total: number }> {
  const pool = await poolForTokens(caller, poolId);
  if (sort !== undefined && !isAgentTokenSort(sort)) throw ApiError.of("bad_request", { detail: "sort must be created-at or -created-at", parameter: "sort" });
  return poolTokens(caller.db, pool.id, sort ?? null, page);
}

/** Mints a token for the pool; its description is required. */
export async function createPoolToken(caller: Caller, poolId: string, description: string): Promise<MintedAgentToken> {
  const pool = await poolForTokens(caller, poolId);
  if (description.trim() === "") throw ApiError.of("invalid_attribute", { detail: "Description can't be blank", pointer: "/data/attributes/description" });
  const secret = newTokenSecret();
  const token: AgentToken = {
    id: newId("at"),
    agentPoolId: pool.id,
    organizationId: pool.organizationId,
    description,
    createdBy: creatorId(caller.principal),
    createdAt: nowIso(),
    lastUsedAt: null,
  };
  if (!(await insertAgentToken(caller.db, token, await sha256Hex(secret)))) throw ApiError.of("not_found"); // the pool was deleted concurrently
  return { token, secret };
}

/**
 * An agent token by id, for GET /authentication-tokens/:id (src/tokens/tokens.service.ts hands over the ids it does
 * not know). That route is declared `token.manage`, whose rule for an agent token is the pool's management permission.
 */
export async function showAgentToken(caller: Caller, id: string): Promise<AgentToken> {
  const token = await findAgentToken(caller.db, id);
  if (!token) throw ApiError.of("not_found");
  const access = await requireOrgAccess(caller, { id: token.organizationId });
  authorize(caller, "token.manage", { access, agentPool: { id: token.agentPoolId } });
  return token;
}

/** Deletes an agent token `showAgentToken` returned (so the caller was authorised); 404 when a concurrent delete won. */
export async function deleteShownAgentToken(caller: Caller, token: AgentToken): Promise<void> {
  if (!(await deleteAgentToken(caller.db, token.id))) throw ApiError.of("not_found");
}
