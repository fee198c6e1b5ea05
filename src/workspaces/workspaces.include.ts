/** `include` on workspace reads (HCP Terraform API docs, Workspaces: Available Related Resources): related resources in a top-level `included`, each once. */
import { includesOf } from "../jsonapi/validation";
import type { Caller } from "../caller";
import { Included, type Resource } from "../jsonapi/document";
import { serializeOrganization } from "../organizations/organizations.serialize";
import { serializeProject } from "../projects/projects.serialize";
import { includeCurrentRuns } from "../runs/runs.include";
import { includeStateVersions } from "../state-versions/state-versions.include";
import { includeConfigurationVersions } from "../configuration-versions/configuration-versions.include";
import type { ProjectBinding } from "../tags/project-tags.d1";
import { effectiveBindings } from "../tags/tags.serialize";
import { includeVariables } from "../variables/variables.include";
import { serializeUser, serializeUserRow } from "../users/users.serialize";
import type { WorkspaceRecord } from "./workspace.types";
import {
  includeAgentPoolsStatement,
  includeProjectBindingsStatement,
  includeProjectsStatement,
  includeTeamsStatement,
  includeUsersStatement,
  includedRows,
} from "./workspaces.list.d1";
import type { WorkspaceScope } from "./workspaces.service";

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
  return includesOf(raw, INCLUDE_VALUES);
}

const unique = <T>(xs: T[]) => [...new Set(xs)];

/**
 * Resolves includes for a set of workspaces and their serialised resources (relationship data is
 * filled where an include needs it). The D1 lookups of every requested include go in one batch.
 * Resources this service does not hold (readme, assessments, no-code modules) resolve to nothing.
 */
export async function includeFor(
  caller: Caller,
  /** The request's origin, for the download URLs of included state versions. */
  origin: string,
  records: WorkspaceRecord[],
  scope: WorkspaceScope,
  raw: string | undefined,
  resources: Resource[] = [],
): Promise<{ included?: Resource[] }> {
  const values = new Set(parseInclude(raw));
  if (values.size === 0 || records.length === 0) return {};
  const db = caller.db;
  const organization = scope.access.organization;
  const holders = records.filter((r) => r.lock.locked && r.lock.holder).map((r) => r.lock.holder!);
  const userIds = unique(holders.filter((h) => h.type === "users").map((h) => h.id));
  const teamIds = unique(holders.filter((h) => h.type === "teams").map((h) => h.id));
  const poolIds = unique(
    resources.map((r) => (r.relationships?.["agent-pool"] as { data: { id: string } | null } | undefined)?.data?.id).filter((x): x is string => !!x),
  );
  const projectIds = unique(records.map((r) => r.projectId));

  // One statement list, one round trip; each reader takes its results by position.
  const statements: D1PreparedStatement[] = [];
  const at = (s: D1PreparedStatement) => statements.push(s) - 1;
  const slot = {
    projects: values.has("project") ? at(includeProjectsStatement(db, projectIds)) : -1,
    users: values.has("locked_by") && userIds.length ? at(includeUsersStatement(db, userIds)) : -1,
    teams: values.has("locked_by") && teamIds.length ? at(includeTeamsStatement(db, teamIds)) : -1,
    pools: values.has("agent_pool") && poolIds.length ? at(includeAgentPoolsStatement(db, poolIds)) : -1,
    bindings: values.has("effective_tag_bindings") ? at(includeProjectBindingsStatement(db, projectIds)) : -1,
  };
  const results = statements.length ? await db.batch(statements) : [];
  const result = (i: number) => (i < 0 ? undefined : results[i]);

  const included = new Included();
  if (values.has("organization")) included.add(serializeOrganization(organization));
  for (const p of includedRows.projects(result(slot.projects))) included.add(serializeProject(p, scope.access));
  if (values.has("locked_by")) {
    const users = new Map(includedRows.users(result(slot.users)).map((u) => [u.id, u]));
    for (const id of userIds) {
      const u = users.get(id);
      // Not a stored user: the service user of the organisation's token (lockHolderOf).
      included.add(
        u
          ? serializeUserRow(u)
          : serializeUser({
              id,
              username: `api-org-${organization.name}`,
              email: null,
              isSiteAdmin: false,
              isService: true,
              authenticated: { id: organization.name, type: "organizations" },
              unconfirmedEmail: null,
            }),
      );
    }
    for (const t of includedRows.teams(result(slot.teams))) {
      included.add({
        id: t.id,
        type: "teams",
        attributes: { name: t.name },
        relationships: { organization: { data: { id: t.organizationName, type: "organizations" } } },
        links: { self: `/api/v2/teams/${t.id}` },
      });
    }
  }
  for (const p of includedRows.agentPools(result(slot.pools))) {
    included.add({
      id: p.id,
      type: "agent-pools",
      attributes: { name: p.name, "organization-scoped": p.organizationScoped, "created-at": p.createdAt, "agent-count": 0 },
      relationships: { organization: { data: { id: organization.name, type: "organizations" } } },
      links: { self: `/api/v2/agent-pools/${p.id}` },
    });
  }
  if (values.has("effective_tag_bindings")) {
    const inherited = new Map<string, ProjectBinding[]>();
    for (const b of includedRows.projectBindings(result(slot.bindings))) inherited.set(b.projectId, [...(inherited.get(b.projectId) ?? []), b]);
    records.forEach((r, i) => {
      // Bindings only: flat tags are not bindings, so deleted organisation tags do not matter here.
      const bindings = effectiveBindings(r.tagBindings, r.projectId, inherited.get(r.projectId) ?? []);
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
  // Outputs and the current state version live in each workspace's Durable Object (state-version issue).
  await includeStateVersions(caller.env, origin, records, scope, values, included);
  // So do their configuration versions.
  await includeConfigurationVersions(caller.env, records, scope, values, included);
  // The workspaces' own variables live in their Durable Objects too, shown only to readers of variables.
  if (values.has("vars")) await includeVariables(caller.env, records, scope, included);
  // Current runs too (docs/runs.md), shown to readers of the workspace's runs.
  await includeCurrentRuns(caller, origin, records, scope, values, included);
  return included.items.length ? { included: included.items } : {};
}
