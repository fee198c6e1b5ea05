/**
 * The resource changes a run page lists, from the redacted JSON plan (agent/redact.ts): each changed resource's
 * address and what happens to it. Only addresses and actions are read, never values; an address that held a
 * sensitive value (a `for_each` key) holds its stand-in there, so the page never shows one. Pure.
 */

export interface ResourceChange {
  address: string;
  /** create, update, delete, replace, read, import, forget, … */
  action: string;
}

/** The action a change's `actions` list means; null: nothing happens to the resource. */
function actionOf(actions: unknown, importing: boolean): string | null {
  if (!Array.isArray(actions) || !actions.every((a) => typeof a === "string")) return null;
  const key = actions.join(",");
  if (key === "delete,create" || key === "create,delete") return "replace";
  if (key === "no-op" || key === "") return importing ? "import" : null;
  return key;
}

/** The changes of a JSON plan, at most `max` (null: the bytes are not a JSON plan). */
export function resourceChanges(bytes: Uint8Array, max: number): { changes: ResourceChange[]; truncated: boolean } | null {
  let plan: unknown;
  try {
    plan = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return null;
  }
  if (!plan || typeof plan !== "object") return null;
  const list = (plan as { resource_changes?: unknown }).resource_changes ?? [];
  if (!Array.isArray(list)) return null;
  const changes: ResourceChange[] = [];
  for (const rc of list) {
    if (!rc || typeof rc !== "object") continue;
    const { address, change } = rc as { address?: unknown; change?: { actions?: unknown; importing?: unknown } };
    if (typeof address !== "string") continue;
    const action = actionOf(change?.actions, !!change?.importing);
    if (action) changes.push({ address, action });
  }
  return { changes: changes.slice(0, max), truncated: changes.length > max };
}
