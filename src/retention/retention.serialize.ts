/** A data retention policy resource, of a workspace or of an organisation (its default). */
import type { Resource } from "../jsonapi/document";
import type { DataRetentionPolicy } from "../workspaces/workspace.types";

/** `asType`: the type to answer with (the deprecated `data-retention-policies` request is answered in kind). */
export function serializePolicy(p: DataRetentionPolicy, target: { id: string; type: string }, asType?: string): Resource {
  return {
    id: p.id,
    type: asType ?? p.type,
    attributes: p.type === "data-retention-policy-delete-olders" ? { "delete-older-than-n-days": p.deleteOlderThanNDays } : {},
    relationships: { target: { data: target } },
  };
}
