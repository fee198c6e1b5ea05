/** `include` on workspace reads (spec §4.6): related resources in a top-level `included`. */
import type { Context } from "hono";
import { primary } from "../db";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";
import { Included, type Resource } from "../jsonapi/document";
import { serializeOrganization } from "../organizations/organizations.serialize";
import { projectBindingsOf } from "../tags/project-tags.index";
import { effectiveBindings } from "../tags/tags.serialize";
import type { WorkspaceRecord } from "./workspace.types";
import type { WorkspaceScope } from "./workspaces.service";
import { includeStateVersions } from "../state-versions/state-versions.include";

/** Every value the docs, go-tfe and the real API's OpenAPI document send. */
export const INCLUDE_VALUES = new Set([
  "current_configuration_version",
  "current_configuration_version.ingress_attributes",
  "current_run",
  "current_run.configuration_version",
  "current_run.configuration_version.ingress_attributes",
  "current_run.plan",
  "current_run.apply",
  "latest_run",
  "latest_run.plan",
  "latest_run.configuration_version",
  "latest_run.configuration_version.ingress_attributes",
  "locked_by",
  "organization",
  "outputs",
  "project",
  "readme",
  "effective_tag_bindings",
  "current_state_version",
  "current-state-version",
  "current_state_version.resources_processed",
  "current_assessment_result",
  "agent_pool",
  "vars",
  "no_code_module_version",
  "no_code_module_version.no_code_module",
  "no_code_module_version.no_code_module.latest_version",
]);

export function parseInclude(raw: string | undefined): string[] {
  if (!raw) return [];
  const values = raw.split(",").map((v) => v.trim()).filter((v) => v.length > 0);
  for (const v of values) {
    if (!INCLUDE_VALUES.has(v)) {
      throw ApiError.of("invalid_include", { detail: `Invalid include parameter: ${v}`, parameter: "include" });
    }
  }
  return values;
}

/**
 * Resolves includes for a set of workspaces (and their serialised resources, whose relationship data
 * is filled where an include needs it). Resources this service does not hold (runs, configuration
 * versions, readme, assessments, no-code modules) resolve to nothing.
 */
export async function includeFor(
  c: Context<AppEnv>,
  records: WorkspaceRecord[],
  scope: WorkspaceScope,
  raw: string | undefined,
  resources: Resource[] = [],
): Promise<{ included?: Resource[] }> {
  const values = new Set(parseInclude(raw));
  if (values.size === 0 || records.length === 0) return {};
  const included = new Included();
  const db = primary(c);
  if (values.has("organization")) included.add(serializeOrganization(scope.access.organization));
  if (values.has("project")) {
    const ids = [...new Set(records.map((r) => r.projectId))];
    const rows = await db
      .prepare("SELECT id, name, description, created_at FROM projects WHERE id IN (SELECT value FROM json_each(?))")
      .bind(JSON.stringify(ids))
      .all<{ id: string; name: string; description: string | null; created_at: string }>();
    for (const p of rows.results) {
      included.add({
        id: p.id,
        type: "projects",
        attributes: { name: p.name, description: p.description, "created-at": p.created_at },
        relationships: { organization: { data: { id: scope.access.organization.name, type: "organizations" } } },
        links: { self: `/api/v2/projects/${p.id}` },
      });
    }
  }
  if (values.has("locked_by")) await includeLockHolders(db, records, included);
  if (values.has("agent_pool")) {
    const ids = resources.map((r) => (r.relationships?.["agent-pool"] as { data: { id: string } | null } | undefined)?.data?.id).filter((x): x is string => !!x);
    if (ids.length) {
      const rows = await db
        .prepare("SELECT id, name, organization_scoped, created_at FROM agent_pools WHERE id IN (SELECT value FROM json_each(?))")
        .bind(JSON.stringify([...new Set(ids)]))
        .all<{ id: string; name: string; organization_scoped: number; created_at: string }>();
      for (const p of rows.results) {
        included.add({ id: p.id, type: "agent-pools", attributes: { name: p.name, "organization-scoped": p.organization_scoped === 1, "created-at": p.created_at, "agent-count": 0 }, links: { self: `/api/v2/agent-pools/${p.id}` } });
      }
    }
  }
  await includeStateVersions(c, records, scope, values, included);
  if (values.has("effective_tag_bindings")) {
    const inherited = await projectBindingsOf(db, records.map((r) => r.projectId));
    records.forEach((r, i) => {
      const bindings = effectiveBindings(r.tags, r.projectId, inherited.get(r.projectId) ?? []);
      const res = resources[i];
      if (res?.relationships) {
        res.relationships["effective-tag-bindings"] = {
          data: bindings.map((b) => ({ id: b.id, type: b.type })),
          links: { related: `/api/v2/workspaces/${r.id}/effective-tag-bindings` },
        };
      }
      for (const b of bindings) included.add(b);
    });
  }
  return included.items.length ? { included: included.items } : {};
}

/** The lock holders: users (including the service users of team and organisation tokens) and teams. */
async function includeLockHolders(db: D1DatabaseSession, records: WorkspaceRecord[], included: Included): Promise<void> {
  const holders = records.filter((r) => r.lock.locked).map((r) => r.lock.holder).filter((h): h is NonNullable<typeof h> => !!h);
  const users = holders.filter((h) => h.type === "users").map((h) => h.id);
  const teams = holders.filter((h) => h.type === "teams").map((h) => h.id);
  const [u, t] = await db.batch([
    db.prepare("SELECT id, username FROM users WHERE id IN (SELECT value FROM json_each(?))").bind(JSON.stringify(users)),
    db.prepare("SELECT id, name FROM teams WHERE id IN (SELECT value FROM json_each(?))").bind(JSON.stringify(teams)),
  ]);
  const names = new Map(((u?.results ?? []) as Array<{ id: string; username: string }>).map((r) => [r.id, r.username]));
  for (const id of users) {
    included.add({ id, type: "users", attributes: { username: names.get(id) ?? `api-${id}`, "is-service-account": !names.has(id) }, links: { self: `/api/v2/users/${id}` } });
  }
  for (const row of (t?.results ?? []) as Array<{ id: string; name: string }>) {
    included.add({ id: row.id, type: "teams", attributes: { name: row.name }, links: { self: `/api/v2/teams/${row.id}` } });
  }
}
