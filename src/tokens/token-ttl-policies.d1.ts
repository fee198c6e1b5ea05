/** All SQL for organisation token TTL policies (D1 `token_ttl_policies`, migration 0018). */
import type { Db } from "../caller";
import { newId } from "../ids";
import { LIMITS } from "../limits";

/** The token types a policy names, in the order lists show them (go-tfe's TokenType values; note `audit_trails`). */
export const TTL_TOKEN_TYPES = ["organization", "team", "user", "audit_trails"] as const;
export type TtlTokenType = (typeof TTL_TOKEN_TYPES)[number];

interface TokenTtlPolicyRow {
  id: string;
  token_type: TtlTokenType;
  max_ttl_ms: number;
  created_at: string;
  updated_at: string;
}

export interface TokenTtlPolicy {
  id: string;
  tokenType: TtlTokenType;
  maxTtlMs: number;
  createdAt: string;
  updatedAt: string;
}

function toPolicy(row: TokenTtlPolicyRow): TokenTtlPolicy {
  return { id: row.id, tokenType: row.token_type, maxTtlMs: row.max_ttl_ms, createdAt: row.created_at, updatedAt: row.updated_at };
}

const COLUMNS = "id, token_type, max_ttl_ms, created_at, updated_at";
const ORDER = `ORDER BY CASE token_type ${TTL_TOKEN_TYPES.map((t, i) => `WHEN '${t}' THEN ${i}`).join(" ")} END`;

/**
 * Writes the default policy of every token type the organisation has none for, only while the organisation exists
 * (a request that lost a race with its delete leaves nothing behind).
 */
function defaultsStatements(db: Db, organizationId: string, now: string): D1PreparedStatement[] {
  return TTL_TOKEN_TYPES.map((type) =>
    db
      .prepare(
        `INSERT OR IGNORE INTO token_ttl_policies (organization_id, token_type, id, max_ttl_ms, created_at, updated_at)
         SELECT ?1, ?2, ?3, ?4, ?5, ?5 WHERE EXISTS (SELECT 1 FROM organizations WHERE external_id = ?1)`,
      )
      .bind(organizationId, type, newId("ottp"), LIMITS.tokenTtlPolicyDefaultMs, now),
  );
}

function selectStatement(db: Db, organizationId: string): D1PreparedStatement {
  return db.prepare(`SELECT ${COLUMNS} FROM token_ttl_policies WHERE organization_id = ? ${ORDER}`).bind(organizationId);
}

/** Every token type's policy, the defaults written on first use (one read once they exist). */
export async function listTokenTtlPolicies(db: Db, organizationId: string, now: string): Promise<TokenTtlPolicy[]> {
  const rows = (await selectStatement(db, organizationId).all<TokenTtlPolicyRow>()).results;
  if (rows.length === TTL_TOKEN_TYPES.length) return rows.map(toPolicy);
  const results = await db.batch([...defaultsStatements(db, organizationId, now), selectStatement(db, organizationId)]);
  return ((results[results.length - 1]?.results ?? []) as TokenTtlPolicyRow[]).map(toPolicy);
}

/** Sets the given types' maximums (the others keep theirs) and returns every policy, in one batch. */
export async function updateTokenTtlPolicies(
  db: Db,
  organizationId: string,
  items: { tokenType: TtlTokenType; maxTtlMs: number }[],
  now: string,
): Promise<TokenTtlPolicy[]> {
  const updates = items.map((i) =>
    db
      .prepare("UPDATE token_ttl_policies SET max_ttl_ms = ?, updated_at = ? WHERE organization_id = ? AND token_type = ?")
      .bind(i.maxTtlMs, now, organizationId, i.tokenType),
  );
  const results = await db.batch([...defaultsStatements(db, organizationId, now), ...updates, selectStatement(db, organizationId)]);
  return ((results[results.length - 1]?.results ?? []) as TokenTtlPolicyRow[]).map(toPolicy);
}

/** The organisation's maximum lifetime for tokens of the type, in ms (the default when none was written yet). */
export async function maxTtlMsOf(db: Db, organizationId: string, tokenType: TtlTokenType): Promise<number> {
  const row = await db
    .prepare("SELECT max_ttl_ms FROM token_ttl_policies WHERE organization_id = ? AND token_type = ?")
    .bind(organizationId, tokenType)
    .first<{ max_ttl_ms: number }>();
  return row?.max_ttl_ms ?? LIMITS.tokenTtlPolicyDefaultMs;
}
