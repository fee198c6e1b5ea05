/**
 * The organisation as every request reads it: its row's columns, the mapper into `Organization`, and how a request
 * names it (`OrgRef`). Authorisation reads it on every request (src/auth/access.d1.ts); the organisations service
 * writes it (src/organizations/organizations.d1.ts).
 */
import type { Db } from "../caller";
import { LIMITS } from "../limits";

/** An organisation's subscription: the plan assigned to it and the contract's terms. */
export interface Subscription {
  id: string;
  featureSetId: string;
  startAt: string;
  runsCeiling: number;
  agentsCeiling: number;
  contractStartAt: string | null;
  endAt: string | null;
  contractUserLimit: number | null;
  contractApplyLimit: number | null;
  contractManagedResourcesLimit: number | null;
}

export interface OrganizationRow {
  name: string;
  external_id: string;
  email: string;
  created_at: string;
  attrs: string;
  default_execution_mode: string;
  default_agent_pool_id: string | null;
  allow_force_delete_workspaces: number;
  default_project_id: string;
  /** JSON of the assigned Subscription (hosted edition), NULL when none (migration 0015). */
  subscription: string | null;
  /** Read with `ORGANIZATION_COLUMNS` only: see `Organization.userTokenTtlMs`. */
  user_token_ttl_ms?: number | null;
}

/**
 * An organisations row's columns for reads that authorise (`SELECT ${ORGANIZATION_COLUMNS} FROM organizations`): every
 * column, and the user token TTL policy's maximum when the organisation enforces its policies (`max-ttl-enabled`).
 */
export const ORGANIZATION_COLUMNS = `*, ${userTokenTtlColumn()}`;

/** As ORGANIZATION_COLUMNS, in a statement that joins `organizations` to other tables (its columns alone). */
export const JOINED_ORGANIZATION_COLUMNS = `organizations.*, ${userTokenTtlColumn()}`;

function userTokenTtlColumn(): string {
  return `CASE WHEN json_extract(organizations.attrs, '$."max-ttl-enabled"') = 1 THEN coalesce(
  (SELECT p.max_ttl_ms FROM token_ttl_policies p WHERE p.organization_id = organizations.external_id AND p.token_type = 'user'),
  ${LIMITS.tokenTtlPolicyDefaultMs}) END AS user_token_ttl_ms`;
}

export interface Organization {
  name: string;
  externalId: string;
  email: string;
  createdAt: string;
  attrs: Record<string, unknown>;
  defaultExecutionMode: "remote" | "local" | "agent";
  defaultAgentPoolId: string | null;
  allowForceDeleteWorkspaces: boolean;
  defaultProjectId: string;
  /** The plan a site admin assigned (hosted edition); null: none. */
  subscription: Subscription | null;
  /**
   * How long a user token may access the organisation's resources, counted from its creation (ms), when the
   * organisation enforces its token TTL policies; null or absent: no limit (src/tokens/token-ttl-policies.service.ts).
   */
  userTokenTtlMs?: number | null;
}

export function toOrganization(row: OrganizationRow): Organization {
  return {
    name: row.name,
    externalId: row.external_id,
    email: row.email,
    createdAt: row.created_at,
    attrs: JSON.parse(row.attrs) as Record<string, unknown>,
    defaultExecutionMode: row.default_execution_mode as Organization["defaultExecutionMode"],
    defaultAgentPoolId: row.default_agent_pool_id,
    allowForceDeleteWorkspaces: row.allow_force_delete_workspaces === 1,
    defaultProjectId: row.default_project_id,
    subscription: row.subscription ? (JSON.parse(row.subscription) as Subscription) : null,
    userTokenTtlMs: row.user_token_ttl_ms ?? null,
  };
}

/**
 * An organisation as a request names it (`name`, from a URL: case-insensitive, and changed by a rename) or as a
 * stored row names it (`id`: its immutable external id, `org-…`, which every other table keys by; migration 0016).
 */
export type OrgRef = { name: string } | { id: string };

/** The organisation's id as a SQL expression with its bindings: the id itself, or looked up from the name. */
export function orgIdSql(ref: OrgRef): { sql: string; binds: unknown[] } {
  return "id" in ref ? { sql: "?", binds: [ref.id] } : { sql: "(SELECT external_id FROM organizations WHERE name = ?)", binds: [ref.name] };
}

/** The WHERE condition that selects the organisations row of `ref`. */
export function orgWhere(ref: OrgRef): { sql: string; binds: unknown[] } {
  return "id" in ref ? { sql: "external_id = ?", binds: [ref.id] } : { sql: "name = ?", binds: [ref.name] };
}

/** The organisation's name by its id; null when it is gone. */
export async function organizationName(db: Db, id: string): Promise<string | null> {
  return (await db.prepare("SELECT name FROM organizations WHERE external_id = ?").bind(id).first<{ name: string }>())?.name ?? null;
}
