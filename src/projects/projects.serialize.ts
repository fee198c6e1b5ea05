/** The `projects` resource (tfe-api-notes §2.2 sample plus the OAS attributes go-tfe decodes). */
import type { OrgAccess } from "../auth/access";
import { allows } from "../auth/requirements";
import type { Resource } from "../jsonapi/document";
import type { ProjectRow } from "./projects.d1";

/**
 * While a project inherits (no own mode), it reports the organisation's current default mode and pool,
 * which is also what its workspaces inherit (`defaultsFor`), with its overwrite flags false.
 */
export function serializeProject(p: ProjectRow, access: OrgAccess): Resource {
  const manage = allows(access.principal, "projects.manage", { access });
  const attrs = JSON.parse(p.attrs) as Record<string, unknown>;
  const own = p.default_execution_mode !== null;
  const mode = own ? p.default_execution_mode : access.organization.defaultExecutionMode;
  const pool = own ? p.default_agent_pool_id : mode === "agent" ? access.organization.defaultAgentPoolId : null;
  // The row names its organisation by id; the name is the one the caller's access read (issue 19: renames).
  const org = access.organization.name;
  return {
    id: p.id,
    type: "projects",
    attributes: {
      name: p.name,
      description: p.description,
      "created-at": p.created_at,
      "workspace-count": p.workspace_count,
      "team-count": p.team_count,
      "default-execution-mode": mode,
      "auto-destroy-activity-duration": attrs["auto-destroy-activity-duration"] ?? null,
      "setting-overwrites": {
        "execution-mode": own,
        "agent-pool": own,
        "default-execution-mode": own,
        "default-agent-pool": own,
      },
      permissions: {
        "can-read": true,
        "can-update": manage,
        "can-destroy": manage && p.is_default !== 1,
        "can-create-workspace": allows(access.principal, "workspaces.manage", { access }),
        "can-move-workspace": manage,
        "can-manage-tags": manage,
        "can-manage-teams": manage,
      },
    },
    relationships: {
      organization: { data: { id: org, type: "organizations" }, links: { related: `/api/v2/organizations/${org}` } },
      "default-agent-pool": { data: pool ? { id: pool, type: "agent-pools" } : null },
      "tag-bindings": { links: { related: `/api/v2/projects/${p.id}/tag-bindings` } },
      "effective-tag-bindings": { links: { related: `/api/v2/projects/${p.id}/effective-tag-bindings` } },
    },
    links: { self: `/api/v2/projects/${p.id}` },
  };
}
