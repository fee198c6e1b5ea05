/** The agent pool resource. */
import type { Resource } from "../jsonapi/document";
import type { PoolWithUsers } from "./agent-pools.service";

const refs = (ids: string[], type: string) => ids.map((id) => ({ id, type }));

/** `using`: the workspaces that name the pool; `organization`: its organisation's name. */
export function serializeAgentPool({ pool: p, using, organization }: PoolWithUsers): Resource {
  return {
    id: p.id,
    type: "agent-pools",
    attributes: { name: p.name, "created-at": p.createdAt, "organization-scoped": p.organizationScoped, "agent-count": 0 },
    relationships: {
      organization: { data: { id: organization, type: "organizations" } },
      agents: { links: { related: `/api/v2/agent-pools/${p.id}/agents` } },
      "authentication-tokens": { links: { related: `/api/v2/agent-pools/${p.id}/authentication-tokens` } },
      workspaces: { data: refs(using, "workspaces") },
      "allowed-workspaces": { data: refs(p.allowedWorkspaces, "workspaces") },
      "allowed-projects": { data: refs(p.allowedProjects, "projects") },
      "excluded-workspaces": { data: refs(p.excludedWorkspaces, "workspaces") },
    },
    links: { self: `/api/v2/agent-pools/${p.id}` },
  };
}
