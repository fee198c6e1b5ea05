import { PRJ_IMPLIED, WS_DEFAULT_CUSTOM, WS_IMPLIED } from "./team-access.rules";
/** The team access resources: `team-workspaces` and `team-projects`. */
import type { Resource } from "../jsonapi/document";
import type { TeamProject, TeamWorkspace } from "./team-access.d1";

export function serializeTw(r: TeamWorkspace): Resource {
  const implied = r.access === "custom" ? { ...WS_DEFAULT_CUSTOM, ...r.perms } : WS_IMPLIED[r.access as keyof typeof WS_IMPLIED];
  return {
    id: r.id,
    type: "team-workspaces",
    attributes: { access: r.access, ...implied },
    relationships: {
      team: { data: { id: r.teamId, type: "teams" }, links: { related: `/api/v2/teams/${r.teamId}` } },
      workspace: { data: { id: r.workspaceId, type: "workspaces" }, links: { related: `/api/v2/workspaces/${r.workspaceId}` } },
    },
    links: { self: `/api/v2/team-workspaces/${r.id}` },
  };
}

export function serializeTp(r: TeamProject): Resource {
  const perms = r.perms;
  // Rows written before a permission existed (variable-sets) show its implied value for their level.
  const projectAccess = { ...PRJ_IMPLIED[r.access]?.["project-access"], ...perms["project-access"] };
  return {
    id: r.id,
    type: "team-projects",
    attributes: { access: r.access, "project-access": projectAccess, "workspace-access": perms["workspace-access"] },
    relationships: {
      team: { data: { id: r.teamId, type: "teams" }, links: { related: `/api/v2/teams/${r.teamId}` } },
      project: { data: { id: r.projectId, type: "projects" }, links: { related: `/api/v2/projects/${r.projectId}` } },
    },
    links: { self: `/api/v2/team-projects/${r.id}` },
  };
}
