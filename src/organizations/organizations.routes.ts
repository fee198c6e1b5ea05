import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { requireOrgAccess } from "../auth/access";
import { primary } from "../db";
import { edition, type AppEnv } from "../env";
import { ApiError } from "../errors";
import { newId, nowIso } from "../ids";
import { LIMITS } from "../limits";
import { jsonapi, noContent, paginated, readPage } from "../jsonapi/document";
import { errorResponses, jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import { findOrganization, toOrganization, type OrganizationRow } from "./organizations.index";
import { serializeEntitlements, serializeOrganization } from "./organizations.serialize";

const tags = ["Organizations"];
export const organizations = router();

export const ORG_NAME = /^[A-Za-z0-9_-]+$/;
const orgParam = z.object({ organization_name: z.string().min(1).max(255) });

const orgAttributes = z.object({
  name: z.string().max(LIMITS.organizationNameMax).optional(),
  email: z.string().max(255).optional(),
  "session-timeout": z.number().int().min(1).max(1_000_000).nullable().optional(),
  "session-remember": z.number().int().min(1).max(1_000_000).nullable().optional(),
  "collaborator-auth-policy": z.enum(["password", "two_factor_mandatory"]).optional(),
  "cost-estimation-enabled": z.boolean().optional(),
  "send-passing-statuses-for-untriggered-speculative-plans": z.boolean().optional(),
  "aggregated-commit-status-enabled": z.boolean().optional(),
  "speculative-plan-management-enabled": z.boolean().optional(),
  "owners-team-saml-role-id": z.string().max(255).nullable().optional(),
  "assessments-enforced": z.boolean().optional(),
  "allow-force-delete-workspaces": z.boolean().optional(),
  "default-execution-mode": z.enum(["remote", "local", "agent"]).optional(),
  "default-agent-pool-id": z.string().max(64).nullable().optional(),
  "user-tokens-enabled": z.boolean().optional(),
  "stacks-enabled": z.boolean().optional(),
});
const orgRelationships = z
  .object({
    "default-agent-pool": z.object({ data: z.object({ type: z.literal("agent-pools"), id: z.string().max(64) }).nullable() }).optional(),
  })
  .optional();
const orgCreateBody = z
  .object({
    data: z.object({
      type: z.literal("organizations"),
      attributes: orgAttributes.extend({ name: z.string().max(LIMITS.organizationNameMax), email: z.string().max(255) }),
      relationships: orgRelationships,
    }),
  })
  .openapi("OrganizationCreate");
const orgUpdateBody = z
  .object({
    data: z.object({ type: z.literal("organizations"), attributes: orgAttributes.optional(), relationships: orgRelationships }),
  })
  .openapi("OrganizationUpdate");

const STORED_ATTRS = [
  "session-timeout", "session-remember", "collaborator-auth-policy", "cost-estimation-enabled",
  "send-passing-statuses-for-untriggered-speculative-plans", "aggregated-commit-status-enabled",
  "speculative-plan-management-enabled", "owners-team-saml-role-id", "assessments-enforced",
  "user-tokens-enabled", "stacks-enabled",
] as const;

function orgPermissions(owner: boolean): Record<string, boolean> {
  const keys = [
    "can-update", "can-destroy", "can-access-via-teams", "can-create-module", "can-create-team", "can-create-workspace",
    "can-manage-users", "can-manage-subscription", "can-manage-sso", "can-update-oauth", "can-update-sentinel",
    "can-update-ssh-keys", "can-update-api-token", "can-traverse", "can-start-trial", "can-update-agent-pools",
    "can-manage-tags", "can-manage-public-modules", "can-manage-public-providers", "can-manage-run-tasks",
    "can-read-run-tasks", "can-create-provider", "can-create-project",
  ];
  return Object.fromEntries(keys.map((k) => [k, owner || k === "can-access-via-teams" || k === "can-traverse"]));
}

function checkEmail(email: string): void {
  if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw ApiError.of("invalid_attribute", { detail: "Email is invalid", pointer: "/data/attributes/email" });
}

async function checkDefaultPool(c: Context<AppEnv>, org: string, poolId: string | null | undefined): Promise<void> {
  if (!poolId) return;
  const row = await primary(c).prepare("SELECT id FROM agent_pools WHERE id = ? AND organization_name = ?").bind(poolId, org).first();
  if (!row) throw ApiError.of("invalid_attribute", { detail: "Agent pool not found", pointer: "/data/relationships/default-agent-pool/data/id" });
}

organizations.openapi(
  createRoute({
    method: "post",
    path: "/organizations",
    tags,
    summary: "Create an organisation (its owners team and Default Project come with it)",
    request: { body: jsonBody(orgCreateBody) },
    responses: { ...ok("The organisation", 201), ...errorResponses },
  }),
  async (c) => {
    const principal = c.get("principal");
    if (principal.kind !== "user") throw ApiError.of("not_found");
    const { attributes: a, relationships } = c.req.valid("json").data;
    if (!ORG_NAME.test(a.name)) {
      throw ApiError.of("invalid_attribute", { detail: "Name is invalid: use letters, numbers, - and _", pointer: "/data/attributes/name" });
    }
    checkEmail(a.email);
    if (a["default-execution-mode"] === "agent") {
      throw ApiError.of("invalid_attribute", { detail: "A new organisation has no agent pool to default to", pointer: "/data/attributes/default-execution-mode" });
    }
    const db = primary(c);
    const now = nowIso();
    const projectId = newId("prj");
    const ownersId = newId("team");
    const stored: Record<string, unknown> = {};
    for (const k of STORED_ATTRS) if (a[k] !== undefined) stored[k] = a[k];
    void relationships;
    const insert = await db
      .prepare(
        `INSERT INTO organizations (name, external_id, email, created_at, attrs, default_execution_mode, allow_force_delete_workspaces, default_project_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(name) DO NOTHING`,
      )
      .bind(a.name, newId("org"), a.email, now, JSON.stringify(stored), a["default-execution-mode"] ?? "remote", a["allow-force-delete-workspaces"] ? 1 : 0, projectId)
      .run();
    if (insert.meta.changes !== 1) throw ApiError.of("invalid_attribute", { detail: "Name has already been taken", pointer: "/data/attributes/name" });
    await db.batch([
      db
        .prepare("INSERT INTO projects (id, organization_name, name, is_default, created_at) VALUES (?, ?, 'Default Project', 1, ?)")
        .bind(projectId, a.name, now),
      db
        .prepare(
          "INSERT INTO teams (id, organization_name, name, is_owners, visibility, organization_access, service_user_id, created_at) VALUES (?, ?, 'owners', 1, 'organization', '{}', ?, ?)",
        )
        .bind(ownersId, a.name, newId("user"), now),
      db.prepare("INSERT INTO team_members (team_id, user_id) VALUES (?, ?)").bind(ownersId, principal.userId),
      db
        .prepare("INSERT INTO organization_memberships (id, organization_name, user_id, created_at) VALUES (?, ?, ?, ?)")
        .bind(newId("ou"), a.name, principal.userId, now),
    ]);
    const org = await findOrganization(db, a.name);
    if (!org) throw ApiError.of("internal");
    return jsonapi(c, { data: serializeOrganization(org, orgPermissions(true)) }, 201);
  },
);

organizations.openapi(
  createRoute({
    method: "get",
    path: "/organizations",
    tags,
    summary: "List the organisations the caller belongs to",
    request: { query: z.object({ "page[number]": z.string().max(20).optional(), "page[size]": z.string().max(20).optional(), q: z.string().max(255).optional() }).passthrough() },
    responses: { ...ok("A page of organisations"), ...errorResponses },
  }),
  async (c) => {
    const principal = c.get("principal");
    const page = readPage(c);
    const q = c.req.query("q") ?? c.req.query("q[name]") ?? "";
    const userId = principal.kind === "user" ? principal.userId : "";
    const db = primary(c);
    const like = `%${q.replace(/[\\%_]/g, (m) => `\\${m}`)}%`;
    // `q` matches the name or the email (go-tfe queries by either); q[email] / q[name] narrow it.
    let where = "WHERE (o.name LIKE ? ESCAPE '\\' OR o.email LIKE ? ESCAPE '\\')";
    const binds: unknown[] = [like, like];
    const email = c.req.query("q[email]");
    if (email) {
      where += " AND o.email = ?";
      binds.push(email);
    }
    if (principal.kind === "user" && !principal.isSiteAdmin) {
      where += " AND o.name IN (SELECT t.organization_name FROM team_members m JOIN teams t ON t.id = m.team_id WHERE m.user_id = ?)";
      binds.push(principal.userId);
    } else if (principal.kind !== "user") {
      where += " AND o.name = ?";
      binds.push(principal.organization);
    }
    const [countRes, rowsRes] = await db.batch([
      db.prepare(`SELECT count(*) AS n FROM organizations o ${where}`).bind(...binds),
      db
        .prepare(
          `SELECT o.*, EXISTS (SELECT 1 FROM team_members m JOIN teams t ON t.id = m.team_id
             WHERE t.organization_name = o.name AND t.is_owners = 1 AND m.user_id = ?) AS is_owner
           FROM organizations o ${where} ORDER BY o.name LIMIT ? OFFSET ?`,
        )
        .bind(userId, ...binds, page.size, (page.number - 1) * page.size),
    ]);
    const total = (countRes?.results?.[0] as { n: number } | undefined)?.n ?? 0;
    // Same permissions as show, so a listed organisation equals the one returned by create and read.
    const owner = (r: { is_owner: number }) => r.is_owner === 1 || (principal.kind === "user" && principal.isSiteAdmin) || principal.kind === "organization";
    const data = ((rowsRes?.results ?? []) as Array<OrganizationRow & { is_owner: number }>).map((r) => serializeOrganization(toOrganization(r), orgPermissions(owner(r))));
    return jsonapi(c, paginated(c, data, page, total));
  },
);

organizations.openapi(
  createRoute({
    method: "get",
    path: "/organizations/{organization_name}",
    tags,
    summary: "Show an organisation",
    request: { params: orgParam },
    responses: { ...ok("The organisation"), ...errorResponses },
  }),
  async (c) => {
    const access = await requireOrgAccess(primary(c), c.get("principal"), c.req.valid("param").organization_name);
    return jsonapi(c, { data: serializeOrganization(access.organization, orgPermissions(access.isOwner || access.isOrgToken)) });
  },
);

organizations.openapi(
  createRoute({
    method: "get",
    path: "/organizations/{organization_name}/entitlement-set",
    tags,
    summary: "Show an organisation's entitlements (operations: false, so Terraform runs locally)",
    request: { params: orgParam },
    responses: { ...ok("The entitlement set"), ...errorResponses },
  }),
  async (c) => {
    const access = await requireOrgAccess(primary(c), c.get("principal"), c.req.valid("param").organization_name);
    return jsonapi(c, { data: serializeEntitlements(access.organization) });
  },
);

organizations.openapi(
  createRoute({
    method: "patch",
    path: "/organizations/{organization_name}",
    tags,
    summary: "Update an organisation",
    request: { params: orgParam, body: jsonBody(orgUpdateBody) },
    responses: { ...ok("The organisation"), ...errorResponses },
  }),
  async (c) => {
    const db = primary(c);
    const access = await requireOrgAccess(db, c.get("principal"), c.req.valid("param").organization_name, { ownerSettings: true });
    if (!access.isOwner && !access.isOrgToken) throw ApiError.of("not_found");
    const org = access.organization;
    const { attributes: a = {}, relationships } = c.req.valid("json").data;
    if (a.name !== undefined && a.name !== org.name) {
      // Workspaces carry their organisation's name; renaming would touch every one of them.
      throw ApiError.of("invalid_attribute", { detail: "Renaming an organization is not supported by this service", pointer: "/data/attributes/name" });
    }
    if (a.email !== undefined) checkEmail(a.email);
    const poolId = relationships?.["default-agent-pool"] !== undefined ? (relationships["default-agent-pool"].data?.id ?? null) : a["default-agent-pool-id"];
    await checkDefaultPool(c, org.name, poolId);
    const mode = a["default-execution-mode"] ?? org.defaultExecutionMode;
    const nextPool = poolId !== undefined ? poolId : org.defaultAgentPoolId;
    if (mode !== "agent" && poolId) {
      throw ApiError.of("invalid_attribute", { detail: "Default agent pool must not be specified unless using 'agent' execution mode", pointer: "/data/relationships/default-agent-pool" });
    }
    if (mode === "agent" && !nextPool) {
      throw ApiError.of("invalid_attribute", { detail: "Default agent pool must be specified when using 'agent' execution mode", pointer: "/data/relationships/default-agent-pool" });
    }
    const stored = { ...org.attrs };
    for (const k of STORED_ATTRS) if (a[k] !== undefined) stored[k] = a[k];
    await db
      .prepare(
        `UPDATE organizations SET email = ?, attrs = ?, default_execution_mode = ?, default_agent_pool_id = ?, allow_force_delete_workspaces = ? WHERE name = ?`,
      )
      .bind(
        a.email ?? org.email,
        JSON.stringify(stored),
        mode,
        mode === "agent" ? nextPool : null,
        (a["allow-force-delete-workspaces"] ?? org.allowForceDeleteWorkspaces) ? 1 : 0,
        org.name,
      )
      .run();
    const updated = await findOrganization(db, org.name);
    if (!updated) throw ApiError.of("not_found");
    void edition;
    return jsonapi(c, { data: serializeOrganization(updated, orgPermissions(true)) });
  },
);

organizations.openapi(
  createRoute({
    method: "delete",
    path: "/organizations/{organization_name}",
    tags,
    summary: "Delete an organisation and everything in it",
    request: { params: orgParam },
    responses: { ...noContentResponse, ...errorResponses },
  }),
  async (c) => {
    const db = primary(c);
    const access = await requireOrgAccess(db, c.get("principal"), c.req.valid("param").organization_name, { ownerSettings: true });
    if (!access.isOwner) throw ApiError.of("not_found");
    await deleteOrganization(db, access.organization.name);
    return noContent(c);
  },
);

/**
 * Deletes an organisation in one D1 batch. Its workspaces' Durable Objects are not visited (no
 * fan-out): their index rows go now, and each DO's record is treated as gone at read time because
 * its organisation (by external id) no longer exists.
 */
export async function deleteOrganization(db: D1DatabaseSession | D1Database, name: string): Promise<void> {
  const teamIds = "(SELECT id FROM teams WHERE organization_name = ?)";
  await db.batch([
    db.prepare(`DELETE FROM team_members WHERE team_id IN ${teamIds}`).bind(name),
    db.prepare("DELETE FROM invitation_teams WHERE membership_id IN (SELECT id FROM organization_memberships WHERE organization_name = ?)").bind(name),
    db.prepare(`DELETE FROM team_workspaces WHERE team_id IN ${teamIds}`).bind(name),
    db.prepare(`DELETE FROM team_projects WHERE team_id IN ${teamIds}`).bind(name),
    db.prepare(`DELETE FROM tokens WHERE team_id IN ${teamIds} OR organization_name = ?`).bind(name, name),
    db.prepare("DELETE FROM teams WHERE organization_name = ?").bind(name),
    db.prepare("DELETE FROM project_tag_bindings WHERE project_id IN (SELECT id FROM projects WHERE organization_name = ?)").bind(name),
    db.prepare("DELETE FROM projects WHERE organization_name = ?").bind(name),
    db.prepare("DELETE FROM organization_memberships WHERE organization_name = ?").bind(name),
    db.prepare("DELETE FROM agent_pools WHERE organization_name = ?").bind(name),
    db.prepare("DELETE FROM oauth_tokens WHERE organization_name = ?").bind(name),
    db.prepare("DELETE FROM oauth_clients WHERE organization_name = ?").bind(name),
    db.prepare("DELETE FROM ssh_keys WHERE organization_name = ?").bind(name),
    db.prepare("DELETE FROM tags WHERE organization_name = ?").bind(name),
    db.prepare("DELETE FROM workspace_tags WHERE organization_name = ?").bind(name),
    db.prepare("DELETE FROM workspace_names WHERE organization_name = ?").bind(name),
    db.prepare("DELETE FROM workspaces WHERE organization_name = ?").bind(name),
    db.prepare("DELETE FROM organization_retention_policies WHERE organization_name = ?").bind(name),
    db.prepare("DELETE FROM organizations WHERE name = ?").bind(name),
  ]);
}
