/** D1 queries for organisations (SQL for this resource lives only here). */
import type { Subscription } from "../subscriptions/feature-sets";

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
  };
}

export function selectOrganization(db: D1Database | D1DatabaseSession, name: string): D1PreparedStatement {
  return db.prepare("SELECT * FROM organizations WHERE name = ?").bind(name);
}

export async function findOrganization(db: D1Database | D1DatabaseSession, name: string): Promise<Organization | null> {
  const row = await selectOrganization(db, name).first<OrganizationRow>();
  return row ? toOrganization(row) : null;
}
