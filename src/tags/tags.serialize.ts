/** JSON:API views of tags: organisation tags, tag bindings and effective tag bindings. */
import type { Resource } from "../jsonapi/document";
import type { BindingEntry } from "../workspaces/workspace.types";
import type { ProjectBinding } from "./project-tags.d1";
import type { Tag } from "./tags.d1";

const API = "/api/v2";

export function serializeTag(tag: Tag, organization: string): Resource {
  return {
    id: tag.id,
    type: "tags",
    attributes: { name: tag.name, "created-at": tag.createdAt, "instance-count": tag.instanceCount },
    relationships: { organization: { data: { id: organization, type: "organizations" } } },
  };
}

/** A direct binding (value "" when key-only). */
export function serializeBinding(t: BindingEntry): Resource {
  return { id: t.id, type: "tag-bindings", attributes: { key: t.key, value: t.value, "created-at": t.createdAt } };
}

export function serializeProjectBinding(b: ProjectBinding): Resource {
  return { id: b.id, type: "tag-bindings", attributes: { key: b.key, value: b.value, "created-at": b.createdAt } };
}

/**
 * Effective bindings: direct bindings (flat tags are not bindings), then the project's bindings whose key the workspace does not
 * set itself (a direct binding wins over an inherited one with the same key). Inherited ones carry
 * `links.inherited-from` (go-tfe decodes it there) and the same URL as
 * `relationships.inherited-from.links.related` (the documented shape); direct ones carry no `links`
 * member at all, because go-tfe's tests require their decoded `Links` to be nil.
 */
export function effectiveBindings(direct: BindingEntry[], projectId: string | null, inherited: ProjectBinding[]): Resource[] {
  const own = new Set(direct.map((t) => t.key));
  const out: Resource[] = direct.map((t) => ({ id: t.id, type: "effective-tag-bindings", attributes: { key: t.key, value: t.value } }));
  if (projectId === null) return out;
  const url = `${API}/projects/${projectId}`;
  for (const b of inherited) {
    if (own.has(b.key)) continue;
    out.push({
      id: b.id,
      type: "effective-tag-bindings",
      attributes: { key: b.key, value: b.value },
      relationships: { "inherited-from": { data: { id: projectId, type: "projects" }, links: { related: url } } },
      links: { "inherited-from": url },
    });
  }
  return out;
}

/** A project's effective bindings: its own (projects inherit nothing), without links. */
export function projectEffectiveBindings(bindings: ProjectBinding[]): Resource[] {
  return bindings.map((b) => ({ id: b.id, type: "effective-tag-bindings", attributes: { key: b.key, value: b.value } }));
}
