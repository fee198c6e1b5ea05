/** The run trigger resource: the two workspaces by name and as relationships (`sourceable` is always a workspace). */
import type { Resource } from "../jsonapi/document";
import type { RunTrigger } from "./run-triggers.d1";

export const serializeRunTrigger = (t: RunTrigger): Resource => ({
  id: t.id,
  type: "run-triggers",
  attributes: { "workspace-name": t.workspaceName, "sourceable-name": t.sourceableName, "created-at": t.createdAt },
  relationships: {
    workspace: { data: { id: t.workspaceId, type: "workspaces" } },
    sourceable: { data: { id: t.sourceableId, type: "workspaces" } },
  },
  links: { self: `/api/v2/run-triggers/${t.id}` },
});
