/** The `varsets` resource. Create, show and list share this shape (go-tfe compares them field by field). */
import type { Resource } from "../jsonapi/document";
import type { Varset } from "./varsets.d1";

const API = "/api/v2";

/**
 * `full`: whether the caller may see the set's whole scope; a reader who reaches the set only through one
 * workspace's variables sees how many workspaces and projects it is applied to, not which.
 */
export function serializeVarset(v: Varset, full: boolean): Resource {
  const list = (ids: string[], type: string) => (full ? { data: ids.map((id) => ({ id, type })) } : { meta: { count: ids.length } });
  return {
    id: v.id,
    type: "varsets",
    attributes: {
      name: v.name,
      description: v.description,
      global: v.global,
      priority: v.priority,
      "updated-at": v.updatedAt,
      "var-count": v.varIds.length,
      "workspace-count": v.workspaceIds.length,
      "project-count": v.projectIds.length,
    },
    relationships: {
      organization: { data: { id: v.organization, type: "organizations" } },
      parent: { data: v.projectId ? { id: v.projectId, type: "projects" } : { id: v.organization, type: "organizations" } },
      workspaces: list(v.workspaceIds, "workspaces"),
      projects: list(v.projectIds, "projects"),
      vars: { data: v.varIds.map((id) => ({ id, type: "vars" })) },
    },
    links: { self: `${API}/varsets/${v.id}` },
  };
}
