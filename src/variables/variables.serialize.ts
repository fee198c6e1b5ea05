/** The `vars` resource (workspace and variable-set variables): a sensitive value is never shown. */
import type { Resource } from "../jsonapi/document";
import type { VariableView } from "./variables.types";

const API = "/api/v2";

export function serializeVariable(v: VariableView): Resource {
  const attributes = {
    key: v.key,
    // A sensitive value is never opened (the view carries null), so no response can carry it.
    value: v.sensitive ? null : v.value,
    description: v.description,
    sensitive: v.sensitive,
    category: v.category,
    hcl: v.hcl,
    "created-at": v.createdAt,
    "version-id": v.versionId,
  };
  if (v.owner.kind === "workspace") {
    const ws = v.owner;
    return {
      id: v.id,
      type: "vars",
      attributes,
      relationships: {
        configurable: { data: { id: ws.id, type: "workspaces" }, links: { related: `${API}/organizations/${ws.organization}/workspaces/${ws.name}` } },
      },
      links: { self: `${API}/workspaces/${ws.id}/vars/${v.id}` },
    };
  }
  // Only `varset`: go-tfe decodes `configurable` as a workspace and refuses any other type there.
  const set = v.owner.id;
  return {
    id: v.id,
    type: "vars",
    attributes,
    relationships: { varset: { data: { id: set, type: "varsets" }, links: { related: `${API}/varsets/${set}` } } },
    links: { self: `${API}/varsets/${set}/relationships/vars/${v.id}` },
  };
}
