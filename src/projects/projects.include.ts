/** `include=effective_tag_bindings` on project reads. */
import { includesOf } from "../jsonapi/validation";
import type { Db } from "../caller";
import type { Resource } from "../jsonapi/document";
import { projectBindingsOf } from "../tags/project-tags.d1";
import { projectEffectiveBindings } from "../tags/tags.serialize";

/** Relationship data on each project plus the bindings in `included`. */
export async function withBindings(db: Db, data: Resource[], raw: string | undefined): Promise<{ included?: Resource[] }> {
  const values = includesOf(raw, ["effective_tag_bindings"]);
  if (!values.length || !data.length) return {};
  const bindings = await projectBindingsOf(
    db,
    data.map((p) => p.id),
  );
  const included: Resource[] = [];
  for (const p of data) {
    const eff = projectEffectiveBindings(bindings.get(p.id) ?? []);
    p.relationships!["effective-tag-bindings"] = {
      data: eff.map((b) => ({ id: b.id, type: b.type })),
      links: { related: `/api/v2/projects/${p.id}/effective-tag-bindings` },
    };
    included.push(...eff);
  }
  return included.length ? { included } : {};
}
