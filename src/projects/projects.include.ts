/** `include=effective_tag_bindings` on project reads. */
import type { Db } from "../caller";
import { ApiError } from "../errors";
import type { Resource } from "../jsonapi/document";
import { projectBindingsOf } from "../tags/project-tags.d1";
import { projectEffectiveBindings } from "../tags/tags.serialize";

/** Relationship data on each project plus the bindings in `included`. */
export async function withBindings(db: Db, data: Resource[], raw: string | undefined): Promise<{ included?: Resource[] }> {
  const values = (raw ?? "")
    .split(",")
    .map((v) => v.trim())
    .filter(Boolean);
  for (const v of values)
    if (v !== "effective_tag_bindings") throw ApiError.of("invalid_include", { detail: `Invalid include parameter: ${v}`, parameter: "include" });
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
