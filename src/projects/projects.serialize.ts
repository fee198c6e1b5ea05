/** The `projects` resource (the sample in the HCP Terraform API docs' Projects page plus the attributes go-tfe's `Project` decodes). */
import type { OrgAccess } from "../auth/access";
import { allows } from "../auth/requirements";
import type { Resource } from "../jsonapi/document";
import type { Project } from "./projects.d1";

/**
 * While a project inherits (no own mode), it reports the organisation's current default mode and pool,
 * which is also what its workspaces inherit (`defaultsFor`), with its overwrite flags false.
 */
export function serializeProject(p: Project, access: OrgAccess): Resource {
  const manage = allows(access.principal, "projects.manage", { access });
  const own = p.defaultExecutionMode !== null;
  const mode = own ? p.defaultExecutionMode : access.organization.defaultExecutionMode;
  const pool = own ? p.defaultAgentPoolId : mode === "agent" ? access.organization.defaultAgentPoolId : null;
  // The row names its organisation by id; the name is the one the caller's access read, so a rename never touches project rows.
  const org = access.organization.name;
  return {
    id: p.id,
    type: "projects",
    attributes: {
      name: p.name,
      description: p.description,
      "created-at": p.createdAt,
      "workspace-count": p.workspaceCount,
      "team-count": p.teamCount,
      "default-execution-mode": mode,
      "auto-destroy-activity-duration": p.autoDestroyActivityDuration,
      "setting-overwrites": {
        "execution-mode": own,
        "agent-pool": own,
        "default-execution-mode": own,
        "default-agent-pool": own,
      },
      permissions: {
        "can-read": true,
        "can-update": manage,
        "can-destroy": manage && !p.isDefault,
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
