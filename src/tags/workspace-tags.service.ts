/** Worker-side tag operations: resolve request entries to org tag ids, then one DO call. */
import type { Caller } from "../caller";
import { ApiError, unwrap } from "../errors";
import { isFailure } from "../workspaces/workspace.rules";
import type { BindingInput, FlatInput, WorkspaceRecord } from "../workspaces/workspace.types";
import { bindingValue, checkBindings, checkFlatTagName, type BindingInput as SentBinding } from "./tags.rules";
import { deadTagIds, ensureTagIds, tagNotFound, tagsById } from "./tags.d1";
import { applyTagChange, keyOnlyTagIds, type TagChange, type TagSets } from "./workspace-tags.rules";
import { workspaceObject } from "../workspaces/workspace.stub";

/** A flat tag reference as sent: `{type: "tags", id?}` or `{type: "tags", attributes: {name}}`. */
export interface FlatTagRef {
  id?: string;
  attributes?: { name?: string };
}

function raise(f: { code: Parameters<typeof ApiError.of>[0]; detail?: string; pointer?: string }): never {
  throw ApiError.of(f.code, { detail: f.detail, pointer: f.pointer });
}

/** One of id or attributes.name is required; an empty id counts as absent. */
function refOf(ref: FlatTagRef, pointer: string): { id: string } | { name: string } {
  if (ref.id) return { id: ref.id };
  const name = ref.attributes?.name;
  if (name !== undefined && name !== "") return { name };
  throw ApiError.of("invalid_attribute", { detail: "Each tag needs an id or attributes.name", pointer });
}

/**
 * Flat tags to add: names must be valid flat tag names and get (or create) their organisation tag;
 * ids must be tags that currently exist in this organisation.
 */
export async function resolveFlatAdds(caller: Caller, organizationId: string, refs: FlatTagRef[], pointerBase: string, now: string): Promise<FlatInput[]> {
  const parsed = refs.map((r, i) => refOf(r, `${pointerBase}/${i}`));
  const names: string[] = [];
  const ids: string[] = [];
  parsed.forEach((p, i) => {
    if ("name" in p) {
      const f = checkFlatTagName(p.name, `${pointerBase}/${i}/attributes/name`);
      if (f) raise(f);
      names.push(p.name);
    } else ids.push(p.id);
  });
  const db = caller.db;
  const [byName, byId] = await Promise.all([ensureTagIds(db, organizationId, names, now), tagsById(db, organizationId, ids, true)]);
  return parsed.map((p, index) => {
    if ("name" in p) return { key: p.name, tagId: byName.get(p.name)!, index };
    const name = byId.get(p.id);
    if (name === undefined) throw tagNotFound(`${pointerBase}/${index}/id`, p.id);
    return { key: name, tagId: p.id, index };
  });
}

/** Keys to remove: names as given (unknown ones have no effect); ids must be tags this organisation has had. */
export async function resolveFlatRemovals(caller: Caller, organizationId: string, refs: FlatTagRef[], pointerBase: string): Promise<string[]> {
  const parsed = refs.map((r, i) => refOf(r, `${pointerBase}/${i}`));
  const ids = parsed.flatMap((p) => ("id" in p ? [p.id] : []));
  const byId = await tagsById(caller.db, organizationId, ids, false);
  return parsed.map((p, i) => {
    if ("name" in p) return p.name;
    const name = byId.get(p.id);
    if (name === undefined) throw tagNotFound(`${pointerBase}/${i}/id`, p.id);
    return name;
  });
}

/** Tag bindings as sent → validated inputs (bindings are not organisation tags: nothing to resolve). */
export function resolveBindings(bindings: SentBinding[], pointerBase: string): BindingInput[] {
  const f = checkBindings(bindings, pointerBase);
  if (f) raise(f);
  return bindings.map((b, index) => ({ key: b.key, value: bindingValue(b.value), index }));
}

/**
 * Both tag sets of a new workspace: flat tags from `relationships.tags` (as go-tfe and the `tfe`
 * provider send them) and bindings from `relationships.tag-bindings`; neither affects the other.
 */
export async function createTagEntries(
  caller: Caller,
  organizationId: string,
  rel: { tags?: { data: FlatTagRef[] }; "tag-bindings"?: { data: Array<{ attributes: SentBinding }> } } | undefined,
  now: string,
): Promise<TagSets> {
  const sent = rel?.["tag-bindings"]?.data.map((d) => d.attributes) ?? [];
  const pointerBase = "/data/relationships/tag-bindings/data";
  const bindings = resolveBindings(sent, pointerBase); // validated before any organisation tag is created
  const flat = rel?.tags?.data.length ? await resolveFlatAdds(caller, organizationId, rel.tags.data, "/data/relationships/tags/data", now) : [];
  let sets: TagSets | ReturnType<typeof applyTagChange> = applyTagChange({ tags: [], tagBindings: [] }, { op: "add-flat", tags: flat }, now);
  if (!isFailure(sets)) sets = applyTagChange(sets, { op: "replace-bindings", bindings, pointerBase }, now);
  if (isFailure(sets)) raise(sets);
  return sets;
}

/**
 * Applies a tag change in the workspace's Durable Object (serialised there) and returns the record
 * with the index write's bookmark. Dead flat tags the Worker saw in `seen` are purged in the same change.
 */
export async function changeTags(
  caller: Caller,
  seen: WorkspaceRecord,
  change: TagChange,
  now: string,
): Promise<{ workspace: WorkspaceRecord; bookmark?: string | null }> {
  const ids = keyOnlyTagIds(seen.tags);
  const dead = ids.length ? await deadTagIds(caller.db, seen.organizationId) : new Set<string>();
  const purge = ids.filter((id) => dead.has(id));
  const result = await workspaceObject(caller.env, seen.id).changeTags({ change, purge, now });
  const done = unwrap(result);
  return { workspace: done.value as WorkspaceRecord, bookmark: done.bookmark };
}
