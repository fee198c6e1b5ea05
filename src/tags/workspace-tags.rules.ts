/**
 * Pure tag rules of a workspace (runs inside its Durable Object, and on create in the Worker).
 *
 * Two sets per workspace, as the real service keeps them: flat tags (names, each an
 * organisation tag carrying its id) and tag bindings (key → value, "" for a key-only binding). A
 * write to one set never touches the other: the `tfe` provider manages `tag_names` through the
 * flat-tag endpoints and `tags` through tag bindings, and reads each back separately.
 *
 * The 10-binding limit counts every direct binding, key-only ones included (go-tfe
 * expects a PATCH of 26 key-only bindings to be refused); flat tags never count. Terraform's
 * `cloud` block with a set of tags adds one key-only binding per tag, so sets of up to ten tags
 * work (docs/behaviour.md, "Limits").
 */
import { fail, type Failure } from "../errors";
import { newId } from "../ids";
import { LIMITS } from "../limits";
import type { BindingEntry, BindingInput, FlatInput, TagEntry } from "../workspaces/workspace.types";

/** Both sets of a workspace. */
export interface TagSets {
  tags: TagEntry[];
  tagBindings: BindingEntry[];
}

/** A change to one of a workspace's tag sets, applied serially by its Durable Object. */
export type TagChange =
  /** Flat tags: add by name (no limit). */
  | { op: "add-flat"; tags: FlatInput[] }
  /** Flat tags: remove names (unknown ones have no effect). */
  | { op: "remove-flat"; keys: string[] }
  /** Flat tags: replace the whole set (workspace update's `relationships.tags`). */
  | { op: "replace-flat"; tags: FlatInput[] }
  /** Bindings: add or update by key (PATCH tag-bindings); never removes. */
  | { op: "upsert-bindings"; bindings: BindingInput[]; pointerBase: string }
  /** Bindings: replace the whole set (`relationships.tag-bindings`; [] clears it). */
  | { op: "replace-bindings"; bindings: BindingInput[]; pointerBase: string };

export const LIMIT_DETAIL = `Tag bindings cannot exceed ${LIMITS.tagBindingsPerResource} per resource`;

/** Later duplicates of a key win (a request naming a key twice sets it once), in request order. */
export function dedupe<T extends { key: string; index: number }>(items: T[]): T[] {
  const byKey = new Map<string, T>();
  for (const t of items) {
    byKey.delete(t.key);
    byKey.set(t.key, t);
  }
  return [...byKey.values()].sort((a, b) => a.index - b.index);
}

function bindingOf(b: BindingInput, existing: BindingEntry | undefined, now: string): BindingEntry {
  return { key: b.key, value: b.value, id: existing?.id ?? newId("tb"), createdAt: existing?.createdAt ?? now };
}

function flatOf(t: FlatInput, existing: TagEntry | undefined, now: string): TagEntry {
  // The same organisation tag keeps its entry; another id for the name means the old tag was deleted
  // (ids are never reused), so the entry is new.
  return existing && existing.tagId === t.tagId ? existing : { key: t.key, tagId: t.tagId, createdAt: now };
}

/** The limit check of a binding write: points at the sent entry that takes the set over the limit. */
export function checkLimit(after: BindingEntry[], sent: BindingInput[], pointerBase: string): Failure | null {
  if (after.length <= LIMITS.tagBindingsPerResource) return null;
  const sentKeys = new Set(sent.map((s) => s.key));
  let count = after.filter((b) => !sentKeys.has(b.key)).length;
  for (const s of sent) {
    count++;
    if (count > LIMITS.tagBindingsPerResource) return fail("invalid_attribute", LIMIT_DETAIL, `${pointerBase}/${s.index}`);
  }
  return fail("invalid_attribute", LIMIT_DETAIL, pointerBase);
}

/** Organisation tag ids of the flat tags. */
export function keyOnlyTagIds(tags: TagEntry[]): string[] {
  return tags.flatMap((t) => (t.tagId ? [t.tagId] : []));
}

/** The flat tags that count: those of deleted organisation tags are dead (src/tags/tags.d1.ts). */
export function withoutDeadTags(tags: TagEntry[], dead: Set<string>): TagEntry[] {
  return dead.size === 0 ? tags : tags.filter((t) => t.tagId === null || !dead.has(t.tagId));
}

/**
 * Applies a change to one set; returns both sets (insertion order kept) or a failure. `purge`
 * lists deleted organisation tag ids: their flat tags are dropped first (ids are never reused, so
 * this can never drop an entry added meanwhile).
 */
export function applyTagChange(current: TagSets, change: TagChange, now: string, purge: string[] = []): TagSets | Failure {
  const tags = purge.length > 0 ? withoutDeadTags(current.tags, new Set(purge)) : current.tags;
  const bindings = current.tagBindings;
  switch (change.op) {
    case "add-flat": {
      const next = [...tags];
      for (const t of dedupe(change.tags)) {
        const i = next.findIndex((e) => e.key === t.key);
        if (i >= 0) next[i] = flatOf(t, next[i], now);
        else next.push(flatOf(t, undefined, now));
      }
      return { tags: next, tagBindings: bindings };
    }
    case "remove-flat": {
      const keys = new Set(change.keys);
      return { tags: tags.filter((t) => !keys.has(t.key)), tagBindings: bindings };
    }
    case "replace-flat":
      return {
        tags: dedupe(change.tags).map((t) =>
          flatOf(
            t,
            tags.find((e) => e.key === t.key),
            now,
          ),
        ),
        tagBindings: bindings,
      };
    case "upsert-bindings": {
      const sent = dedupe(change.bindings);
      const next = [...bindings];
      for (const b of sent) {
        const i = next.findIndex((e) => e.key === b.key);
        if (i >= 0) next[i] = bindingOf(b, next[i], now);
        else next.push(bindingOf(b, undefined, now));
      }
      const f = checkLimit(next, sent, change.pointerBase);
      return f ?? { tags, tagBindings: next };
    }
    case "replace-bindings": {
      const sent = dedupe(change.bindings);
      const next = sent.map((b) =>
        bindingOf(
          b,
          bindings.find((e) => e.key === b.key),
          now,
        ),
      );
      const f = checkLimit(next, sent, change.pointerBase);
      return f ?? { tags, tagBindings: next };
    }
  }
}

/** Whether two states of both sets are the same (a no-op change commits nothing). */
export function sameTags(a: TagSets, b: TagSets): boolean {
  return (
    a.tags.length === b.tags.length &&
    a.tags.every((t, i) => t.key === b.tags[i]!.key && t.tagId === b.tags[i]!.tagId) &&
    a.tagBindings.length === b.tagBindings.length &&
    a.tagBindings.every((t, i) => t.key === b.tagBindings[i]!.key && t.value === b.tagBindings[i]!.value)
  );
}

/** The bindings a binding write echoes: the keys sent, in the order sent. */
export function echoed(bindings: BindingEntry[], sent: BindingInput[]): BindingEntry[] {
  const byKey = new Map(bindings.map((t) => [t.key, t]));
  return dedupe(sent).flatMap((t) => {
    const e = byKey.get(t.key);
    return e ? [e] : [];
  });
}

/**
 * Splits a tag list written before the two sets (one set: `{key, value, id, tagId, createdAt}` with
 * value null for a key-only entry): valued entries become bindings, key-only entries flat tags.
 */
export function splitLegacyTags(entries: Array<{ key: string; value?: string | null; id?: string; tagId?: string | null; createdAt: string }>): TagSets {
  const tags: TagEntry[] = [];
  const tagBindings: BindingEntry[] = [];
  for (const e of entries) {
    if (e.value === undefined || e.value === null) tags.push({ key: e.key, tagId: e.tagId ?? null, createdAt: e.createdAt });
    else tagBindings.push({ key: e.key, value: e.value, id: e.id ?? newId("tb"), createdAt: e.createdAt });
  }
  return { tags, tagBindings };
}
