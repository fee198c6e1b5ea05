/**
 * Pure tag-set logic of a workspace (runs inside its Durable Object, and on create in the Worker).
 *
 * One tag set per workspace (issue 6): every entry is a key with an optional value. A key without
 * a value is a flat tag (an organisation tag, so it carries the org tag's id); `tag-names` lists
 * every key; the tag-binding views show every entry (a key-only one with value ""). The flat-tag
 * endpoints and key-only tag bindings are two ways to write the same thing.
 *
 * The 10-binding limit (spec §2.4, §8) is checked on tag-binding writes only (PATCH tag-bindings,
 * `relationships.tag-bindings` on create/update): the bindings with a value after the write plus
 * the key-only tags the write newly adds must not exceed 10. Key-only tags already on the
 * workspace, and flat tags added through the tags endpoints, do not count. So Terraform's set
 * strategy keeps working with more than ten tags (it creates them as flat tags and later PATCHes
 * only what is missing), while a PATCH of 26 new keys (go-tfe's test) is refused.
 */
import { fail, type Failure } from "../errors";
import { newId } from "../ids";
import { LIMITS } from "../limits";
import type { TagEntry } from "../workspaces/workspace.types";

/** One tag to set, resolved by the Worker. `value` null: key-only (flat), with its org tag id. */
export interface TagInput {
  key: string;
  value: string | null;
  tagId: string | null;
  /** Index of the entry in the request body (for `source.pointer`). */
  index: number;
}

/** A change to a workspace's tag set, applied serially by its Durable Object. */
export type TagChange =
  /** Adds or updates by key; `limit` marks a tag-binding write (flat-tag adds have no limit). */
  | { op: "upsert"; tags: TagInput[]; limit?: { pointerBase: string } }
  /** Replaces the whole set (workspace update's `relationships.tag-bindings`; [] clears it). */
  | { op: "replace"; tags: TagInput[]; pointerBase: string }
  /** Removes keys; `valuelessOnly` removes only key-only entries (deleting an organisation tag). */
  | { op: "remove"; keys: string[]; valuelessOnly?: boolean };

export const LIMIT_DETAIL = `Tag bindings cannot exceed ${LIMITS.tagBindingsPerResource} per resource`;

/** Later duplicates of a key win (a request naming a key twice sets it once). */
export function dedupe(tags: TagInput[]): TagInput[] {
  const byKey = new Map<string, TagInput>();
  for (const t of tags) {
    byKey.delete(t.key);
    byKey.set(t.key, t);
  }
  return [...byKey.values()].sort((a, b) => a.index - b.index);
}

function entryOf(t: TagInput, existing: TagEntry | undefined, now: string): TagEntry {
  return {
    key: t.key,
    value: t.value,
    id: existing?.id ?? newId("tb"),
    tagId: t.value === null ? t.tagId : null,
    createdAt: existing?.createdAt ?? now,
  };
}

/** The limit check of a tag-binding write; points at the entry that goes over. */
export function checkLimit(before: TagEntry[], after: TagEntry[], sent: TagInput[], pointerBase: string): Failure | null {
  const had = new Set(before.map((t) => t.key));
  const sentKeys = new Set(sent.map((t) => t.key));
  let count = after.filter((t) => t.value !== null && !sentKeys.has(t.key)).length;
  for (const t of sent) {
    if (t.value !== null || !had.has(t.key)) count++;
    if (count > LIMITS.tagBindingsPerResource) return fail("invalid_attribute", LIMIT_DETAIL, `${pointerBase}/${t.index}`);
  }
  return null;
}

/** Organisation tag ids of the key-only entries. */
export function keyOnlyTagIds(tags: TagEntry[]): string[] {
  return tags.flatMap((t) => (t.value === null && t.tagId ? [t.tagId] : []));
}

/** The entries that count: key-only entries of deleted organisation tags are dead (src/tags/tags.index.ts). */
export function withoutDeadTags(tags: TagEntry[], dead: Set<string>): TagEntry[] {
  return dead.size === 0 ? tags : tags.filter((t) => t.value !== null || t.tagId === null || !dead.has(t.tagId));
}

/**
 * Applies a change; returns the new tag list (insertion order kept) or a failure. `purge` lists
 * deleted organisation tag ids: their entries are dropped first (ids are never reused, so this can
 * never drop an entry added meanwhile).
 */
export function applyTagChange(current: TagEntry[], change: TagChange, now: string, purge: string[] = []): TagEntry[] | Failure {
  if (purge.length > 0) {
    const dead = new Set(purge);
    current = current.filter((t) => t.value !== null || t.tagId === null || !dead.has(t.tagId));
  }
  switch (change.op) {
    case "upsert": {
      const sent = dedupe(change.tags);
      const next = current.map((t) => ({ ...t }));
      for (const t of sent) {
        const i = next.findIndex((e) => e.key === t.key);
        if (i >= 0) next[i] = entryOf(t, next[i], now);
        else next.push(entryOf(t, undefined, now));
      }
      if (change.limit) {
        const f = checkLimit(current, next, sent, change.limit.pointerBase);
        if (f) return f;
      }
      return next;
    }
    case "replace": {
      const sent = dedupe(change.tags);
      const next = sent.map((t) => entryOf(t, current.find((e) => e.key === t.key), now));
      const f = checkLimit(current, next, sent, change.pointerBase);
      return f ?? next;
    }
    case "remove": {
      const keys = new Set(change.keys);
      return current.filter((t) => !keys.has(t.key) || (change.valuelessOnly === true && t.value !== null));
    }
  }
}

/** Whether two tag lists are the same set in the same order (a no-op change commits nothing). */
export function sameTags(a: TagEntry[], b: TagEntry[]): boolean {
  return a.length === b.length && a.every((t, i) => t.key === b[i]!.key && t.value === b[i]!.value && t.tagId === b[i]!.tagId);
}

/** The entries a binding write echoes: the keys sent, in the order sent. */
export function echoed(tags: TagEntry[], sent: TagInput[]): TagEntry[] {
  const byKey = new Map(tags.map((t) => [t.key, t]));
  return dedupe(sent).flatMap((t) => {
    const e = byKey.get(t.key);
    return e ? [e] : [];
  });
}
