/**
 * The structured plan a run page shows, from the redacted JSON plan (agent/redact.ts; Terraform's JSON output format:
 * `resource_changes[].change.{actions, before, after, after_unknown, before_sensitive, after_sensitive}` and
 * `output_changes`). Each changed resource with its action and the attributes that change, before → after; a value
 * Terraform marked sensitive (before or after) is shown as `(sensitive value)` whatever the plan holds there, one it
 * will learn at apply as `(known after apply)`. Secrets the redactor replaced are already stand-ins in the bytes. Pure.
 */

export interface AttributeChange {
  /** `tags.Name`, `ingress[0].cidr_blocks[1]`, or `` for a value that is not an object. */
  path: string;
  /** Rendered as HCL-like literals; null: absent on that side. */
  before: string | null;
  after: string | null;
  /** A change here is why the resource is replaced (the plan's `replace_paths`). */
  forcesReplacement?: true;
}

export interface ResourceChange {
  address: string;
  /** create, update, delete, replace, read, import, forget, … */
  action: string;
  /** The attributes that change (all of them for a create or a delete). */
  attributes: AttributeChange[];
}

export interface OutputChange {
  name: string;
  action: string;
  before: string | null;
  after: string | null;
}

export interface PlanView {
  /** The page shown (from 1): the one asked for, or the last one when that is past the end. */
  page: number;
  /** This page's changes. */
  changes: ResourceChange[];
  /** Every changed resource of the plan. */
  total: number;
  outputs: OutputChange[];
}

const SENSITIVE = "(sensitive value)";
const UNKNOWN = "(known after apply)";
/** The most attributes shown for one resource; the rest are counted, never dropped silently. */
const ATTRIBUTES_MAX = 200;

/** The action a change's `actions` list means; null: nothing happens to the resource. */
function actionOf(actions: unknown, importing: boolean): string | null {
  if (!Array.isArray(actions) || !actions.every((a) => typeof a === "string")) return null;
  const key = actions.join(",");
  if (key === "delete,create" || key === "create,delete") return "replace";
  if (key === "no-op" || key === "") return importing ? "import" : null;
  return key;
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const isObject = (v: unknown): v is Record<string, Json> => typeof v === "object" && v !== null && !Array.isArray(v);

/** A leaf as a literal: strings quoted, lists and objects of leaves inline. */
function literal(v: Json | undefined): string {
  if (v === undefined) return "null";
  if (typeof v === "string") return JSON.stringify(v);
  return JSON.stringify(v);
}

/** The mask (`before_sensitive`, `after_sensitive`, `after_unknown`) at `key` of `mask`. */
function child(mask: unknown, key: string | number): unknown {
  if (mask === true) return true;
  if (Array.isArray(mask) && typeof key === "number") return mask[key];
  if (isObject(mask) && typeof key === "string") return mask[key];
  return undefined;
}

/**
 * Flattens a value to path → rendered leaf, under its masks: a subtree a mask marks whole becomes one entry. An empty
 * object or list is a leaf (`{}`, `[]`).
 */
function flatten(
  value: Json | undefined,
  masks: { sensitive: unknown; unknown?: unknown },
  path: string,
  out: Map<string, string>,
  hidden: Map<string, string> = new Map(),
): void {
  if (masks.sensitive === true) {
    out.set(path, SENSITIVE);
    // Kept apart, never shown: whether a sensitive value changed.
    hidden.set(path, JSON.stringify(value ?? null));
    return;
  }
  if (masks.unknown === true) {
    out.set(path, UNKNOWN);
    return;
  }
  if (Array.isArray(value) && value.length > 0) {
    for (const [i, v] of value.entries()) flatten(v, { sensitive: child(masks.sensitive, i), unknown: child(masks.unknown, i) }, `${path}[${i}]`, out, hidden);
    // An unknown element beyond what the plan lists (a list growing at apply).
    if (Array.isArray(masks.unknown)) for (const [i, u] of masks.unknown.entries()) if (i >= value.length && u === true) out.set(`${path}[${i}]`, UNKNOWN);
    return;
  }
  if (isObject(value) && Object.keys(value).length > 0) {
    for (const [k, v] of Object.entries(value)) {
      flatten(v, { sensitive: child(masks.sensitive, k), unknown: child(masks.unknown, k) }, path ? `${path}.${k}` : k, out, hidden);
    }
    if (isObject(masks.unknown)) {
      for (const [k, u] of Object.entries(masks.unknown)) if (!(k in value) && u === true) out.set(path ? `${path}.${k}` : k, UNKNOWN);
    }
    return;
  }
  if (value === undefined) {
    // Only the masks know this part (an attribute unknown until apply, absent from `after`).
    if (isObject(masks.unknown)) for (const [k, u] of Object.entries(masks.unknown)) if (u === true) out.set(path ? `${path}.${k}` : k, UNKNOWN);
    return;
  }
  out.set(path, literal(value));
}

/** `["ingress", 0, "cidr"]` → `ingress[0].cidr`, the paths `flatten` writes; null: not a path. */
function pathOf(steps: unknown): string | null {
  if (!Array.isArray(steps)) return null;
  let out = "";
  for (const s of steps) {
    if (typeof s === "number") out += `[${s}]`;
    else if (typeof s === "string") out += out ? `.${s}` : s;
    else return null;
  }
  return out;
}

function attributeChanges(change: Record<string, unknown>, action: string): AttributeChange[] {
  const before = new Map<string, string>();
  const after = new Map<string, string>();
  const beforeHidden = new Map<string, string>();
  const afterHidden = new Map<string, string>();
  if (action !== "create" && change.before !== null && change.before !== undefined) {
    flatten(change.before as Json, { sensitive: change.before_sensitive }, "", before, beforeHidden);
  }
  if (action !== "delete") {
    const masks = { sensitive: change.after_sensitive, unknown: change.after_unknown };
    flatten((change.after ?? undefined) as Json | undefined, masks, "", after, afterHidden);
  }
  const replacing = (Array.isArray(change.replace_paths) ? change.replace_paths : []).map(pathOf).filter((p): p is string => p !== null);
  const forces = (path: string) => replacing.some((r) => path === r || r === "" || path.startsWith(`${r}.`) || path.startsWith(`${r}[`));
  const paths = [...new Set([...before.keys(), ...after.keys()])].sort();
  const out: AttributeChange[] = [];
  for (const path of paths) {
    const b = before.get(path) ?? null;
    const a = after.get(path) ?? null;
    // An update shows what changes; a sensitive value only that it changed, as Terraform's plan does.
    if (b === a && (b !== SENSITIVE || beforeHidden.get(path) === afterHidden.get(path))) continue;
    // A null attribute created or destroyed is no change, and Terraform's plan leaves it out too.
    if ((b === null && a === "null") || (b === "null" && a === null)) continue;
    out.push({ path, before: b, after: a, ...(forces(path) ? { forcesReplacement: true as const } : {}) });
  }
  return out;
}

function outputChanges(plan: Record<string, unknown>): OutputChange[] {
  const changes = plan.output_changes;
  if (!isObject(changes)) return [];
  const out: OutputChange[] = [];
  for (const [name, raw] of Object.entries(changes)) {
    if (!isObject(raw)) continue;
    const action = actionOf(raw.actions, false);
    if (!action) continue;
    const sensitive = raw.before_sensitive === true || raw.after_sensitive === true;
    const render = (v: Json | undefined, unknown: boolean) => (sensitive ? SENSITIVE : unknown ? UNKNOWN : v === undefined || v === null ? null : literal(v));
    out.push({
      name,
      action,
      before: action === "create" ? null : render(raw.before, false),
      after: action === "delete" ? null : render(raw.after, raw.after_unknown === true),
    });
  }
  return out.sort((x, y) => x.name.localeCompare(y.name));
}

/**
 * The page `page` (from 1) of `size` changed resources of a JSON plan, every output change, and how many resources
 * change in all (null: the bytes are not a JSON plan). A page past the end (an old link) gives the last page.
 */
export function planView(bytes: Uint8Array, page: number, size: number): PlanView | null {
  let plan: unknown;
  try {
    plan = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return null;
  }
  if (!isObject(plan)) return null;
  const list = plan.resource_changes ?? [];
  if (!Array.isArray(list)) return null;
  const changed: Array<{ address: string; action: string; change: Record<string, unknown> }> = [];
  for (const rc of list) {
    if (!isObject(rc)) continue;
    const change = isObject(rc.change) ? rc.change : {};
    if (typeof rc.address !== "string") continue;
    const action = actionOf(change.actions, !!change.importing);
    if (action) changed.push({ address: rc.address, action, change });
  }
  const shown = Math.min(Math.max(page, 1), Math.max(1, Math.ceil(changed.length / size)));
  const from = (shown - 1) * size;
  const changes = changed.slice(from, from + size).map((c) => {
    const attributes = attributeChanges(c.change, c.action);
    const shown = attributes.slice(0, ATTRIBUTES_MAX);
    if (attributes.length > ATTRIBUTES_MAX) shown.push({ path: `… ${attributes.length - ATTRIBUTES_MAX} more attributes`, before: null, after: null });
    return { address: c.address, action: c.action, attributes: shown };
  });
  return { page: shown, changes, total: changed.length, outputs: outputChanges(plan) };
}
