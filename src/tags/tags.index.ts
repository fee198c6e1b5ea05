/** D1 statements for organisation (flat) tags. */
import type { Context } from "hono";
import { primary } from "../db";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";
import { newId } from "../ids";
import type { TagEntry } from "../workspaces/workspace.types";
import { checkFlatTagName } from "./tags.rules";

export interface FlatTagRef {
  id?: string;
  attributes?: { name?: string };
}

/**
 * Resolves flat tags given by name (creating missing organisation tags; concurrent creators of
 * one name end with one id, decided by D1's unique index) or by id (must exist in the organisation).
 */
export async function ensureFlatTags(
  c: Context<AppEnv>,
  organization: string,
  refs: FlatTagRef[],
  pointerBase: string,
  now: string,
): Promise<TagEntry[]> {
  const db = primary(c);
  const names: string[] = [];
  const ids: string[] = [];
  for (const [i, ref] of refs.entries()) {
    if (ref.id) ids.push(ref.id);
    else if (ref.attributes?.name !== undefined) {
      const f = checkFlatTagName(ref.attributes.name, `${pointerBase}/${i}/attributes/name`);
      if (f) throw ApiError.of(f.code, { detail: f.detail, pointer: f.pointer });
      names.push(ref.attributes.name);
    } else {
      throw ApiError.of("invalid_attribute", { detail: "Each tag needs an id or attributes.name", pointer: `${pointerBase}/${i}` });
    }
  }
  const stmts: D1PreparedStatement[] = names.map((name) =>
    db.prepare("INSERT INTO tags (id, organization_name, name, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING").bind(newId("tag"), organization, name, now),
  );
  stmts.push(
    db
      .prepare(
        `SELECT id, name FROM tags WHERE organization_name = ? AND (name IN (SELECT value FROM json_each(?)) OR id IN (SELECT value FROM json_each(?)))`,
      )
      .bind(organization, JSON.stringify(names), JSON.stringify(ids)),
  );
  const results = await db.batch(stmts);
  const rows = (results[results.length - 1]?.results ?? []) as Array<{ id: string; name: string }>;
  const byName = new Map(rows.map((r) => [r.name, r]));
  const byId = new Map(rows.map((r) => [r.id, r]));
  const out: TagEntry[] = [];
  const seen = new Set<string>();
  for (const [i, ref] of refs.entries()) {
    const row = ref.id ? byId.get(ref.id) : byName.get(ref.attributes!.name!);
    if (!row) throw ApiError.of("not_found", { detail: `Tag not found: ${ref.id}`, pointer: `${pointerBase}/${i}/id` });
    if (seen.has(row.name)) continue;
    seen.add(row.name);
    out.push({ key: row.name, value: null, id: newId("tb"), tagId: row.id, createdAt: now });
  }
  return out;
}
