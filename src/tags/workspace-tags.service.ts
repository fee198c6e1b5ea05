/** Worker-side tag operations: resolve request entries to org tag ids, then one DO call. */
import type { Context } from "hono";
import { primary } from "../db";
import type { AppEnv } from "../env";
import { ApiError, unwrap } from "../errors";
import { isFailure } from "../workspaces/workspace.rules";
import type { TagEntry, WorkspaceRecord } from "../workspaces/workspace.types";
import { acknowledge, faultsOf, workspaceStub } from "../workspaces/workspaces.service";
import { bindingValue, checkBindings, checkFlatTagName, type BindingInput } from "./tags.rules";
import { deadTagIds, ensureTagIds, tagNotFound, tagsById } from "./tags.index";
import { applyTagChange, keyOnlyTagIds, withoutDeadTags, type TagChange, type TagInput } from "./workspace-tags.logic";

/** A flat tag reference as sent: `{type: "tags", id?}` or `{type: "tags", attributes: {name}}`. */
export interface FlatTagRef {
  id?: string;
  attributes?: { name?: string };
}

function raise(f: { code: Parameters<typeof ApiError.of>[0]; detail?: string; pointer?: string }): never {
  throw ApiError.of(f.code, { detail: f.detail, pointer: f.pointer });
}

/** One of id or attributes.name is required (spec §4.12); an empty id counts as absent. */
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
export async function resolveFlatAdds(c: Context<AppEnv>, organization: string, refs: FlatTagRef[], pointerBase: string, now: string): Promise<TagInput[]> {
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
  const db = primary(c);
  const [byName, byId] = await Promise.all([ensureTagIds(db, organization, names, now), tagsById(db, organization, ids, true)]);
  return parsed.map((p, index) => {
    if ("name" in p) return { key: p.name, value: null, tagId: byName.get(p.name)!, index };
    const name = byId.get(p.id);
    if (name === undefined) throw tagNotFound(`${pointerBase}/${index}/id`, p.id);
    return { key: name, value: null, tagId: p.id, index };
  });
}

/** Keys to remove: names as given (unknown ones have no effect); ids must be tags this organisation has had. */
export async function resolveFlatRemovals(c: Context<AppEnv>, organization: string, refs: FlatTagRef[], pointerBase: string): Promise<string[]> {
  const parsed = refs.map((r, i) => refOf(r, `${pointerBase}/${i}`));
  const ids = parsed.flatMap((p) => ("id" in p ? [p.id] : []));
  const byId = await tagsById(primary(c), organization, ids, false);
  return parsed.map((p, i) => {
    if ("name" in p) return p.name;
    const name = byId.get(p.id);
    if (name === undefined) throw tagNotFound(`${pointerBase}/${i}/id`, p.id);
    return name;
  });
}

/** Tag bindings as sent → validated inputs; key-only ones get (or create) their organisation tag. */
export async function resolveBindings(c: Context<AppEnv>, organization: string, bindings: BindingInput[], pointerBase: string, now: string): Promise<TagInput[]> {
  const f = checkBindings(bindings, pointerBase);
  if (f) raise(f);
  const inputs = bindings.map((b, index) => ({ key: b.key, value: bindingValue(b.value), tagId: null as string | null, index }));
  const keyOnly = inputs.filter((t) => t.value === null).map((t) => t.key);
  const ids = await ensureTagIds(primary(c), organization, keyOnly, now);
  for (const t of inputs) if (t.value === null) t.tagId = ids.get(t.key)!;
  return inputs;
}

/**
 * The tag set of a new workspace: flat tags (`relationships.tags`, as go-tfe sends them) then
 * tag bindings (`relationships.tag-bindings`), a binding overriding a flat tag of the same key.
 * The binding limit applies as to any binding write (flat tags do not count).
 */
export async function createTagEntries(
  c: Context<AppEnv>,
  organization: string,
  rel: { tags?: { data: FlatTagRef[] }; "tag-bindings"?: { data: Array<{ attributes: BindingInput }> } } | undefined,
  now: string,
): Promise<TagEntry[]> {
  const flat = rel?.tags?.data.length ? await resolveFlatAdds(c, organization, rel.tags.data, "/data/relationships/tags/data", now) : [];
  let tags = applyTagChange([], { op: "upsert", tags: flat }, now);
  const sent = rel?.["tag-bindings"]?.data.map((d) => d.attributes);
  if (sent && !isFailure(tags)) {
    const pointerBase = "/data/relationships/tag-bindings/data";
    const bindings = await resolveBindings(c, organization, sent, pointerBase, now);
    tags = applyTagChange(tags, { op: "upsert", tags: bindings, limit: { pointerBase } }, now);
  }
  if (isFailure(tags)) raise(tags);
  return tags;
}

/** The workspace's entries that count (dead key-only entries of deleted organisation tags dropped). */
export async function liveTags(c: Context<AppEnv>, record: WorkspaceRecord): Promise<TagEntry[]> {
  return keyOnlyTagIds(record.tags).length ? withoutDeadTags(record.tags, await deadTagIds(primary(c), record.organization)) : record.tags;
}

/**
 * Applies a tag change in the workspace's Durable Object (serialised there) and returns the record.
 * Dead entries the Worker saw in `seen` are purged in the same change.
 */
export async function changeTags(c: Context<AppEnv>, seen: WorkspaceRecord, change: TagChange, now: string): Promise<WorkspaceRecord> {
  const ids = keyOnlyTagIds(seen.tags);
  const dead = ids.length ? await deadTagIds(primary(c), seen.organization) : new Set<string>();
  const purge = ids.filter((id) => dead.has(id));
  const result = await workspaceStub(c.env, seen.id).changeTags({ change, purge, now, faults: faultsOf(c) });
  if (!result.ok) unwrap(result);
  const done = result as { workspace: WorkspaceRecord; bookmark?: string | null };
  acknowledge(c, done);
  return done.workspace;
}
