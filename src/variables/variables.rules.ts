/** Pure rules of variables: keys, lengths, and which variable wins in a workspace's effective set. */
import { fail, type Failure } from "../errors";
import { LIMITS } from "../limits";
import type { Category, StoredVariable, VariablePatch } from "./variables.types";

export const CATEGORIES = ["terraform", "env"] as const;

/** Terraform input variables: identifier characters (keys may start with a digit, as go-tfe's generated keys do). */
const TERRAFORM_KEY = /^[A-Za-z0-9_-]+$/;
/** Environment variables: portable shell names. */
const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

const KEY = "/data/attributes/key";

/** The key rules; the detail starts with the real service's "Key is invalid" (clients match it). */
export function checkKey(key: string, category: Category): Failure | null {
  if (key.length === 0) return fail("invalid_attribute", "Key can't be blank", KEY);
  if (key.length > LIMITS.variableKeyMax) return fail("invalid_attribute", `Key is too long (maximum is ${LIMITS.variableKeyMax} characters)`, KEY);
  if (category === "terraform" && !TERRAFORM_KEY.test(key)) {
    return fail("invalid_attribute", "Key is invalid: a Terraform variable key may contain only letters, numbers, hyphens and underscores", KEY);
  }
  if (category === "env" && !ENV_KEY.test(key)) {
    const detail = "Key is invalid: an environment variable key may contain only letters, numbers and underscores, and cannot start with a number";
    return fail("invalid_attribute", detail, KEY);
  }
  return null;
}

/** A variable after a patch, or why the patch is refused (a sensitive variable stays sensitive). */
export function applyPatch(current: StoredVariable, patch: VariablePatch): StoredVariable | Failure {
  if (current.sensitive && patch.sensitive === false) {
    const detail = "Sensitive variables cannot be made non-sensitive; delete and re-create the variable instead";
    return fail("invalid_attribute", detail, "/data/attributes/sensitive");
  }
  const next: StoredVariable = {
    ...current,
    key: patch.key ?? current.key,
    category: patch.category ?? current.category,
    sealedValue: patch.sealedValue ?? current.sealedValue,
    description: patch.description !== undefined ? patch.description : current.description,
    hcl: patch.hcl ?? current.hcl,
    sensitive: patch.sensitive ?? current.sensitive,
    versionId: patch.versionId,
  };
  return checkKey(next.key, next.category) ?? next;
}

/** A fresh version id (hex, as the real service's). */
export function newVersionId(): string {
  return [...crypto.getRandomValues(new Uint8Array(20))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** A set's variables with where the set reaches the workspace from. */
export interface ScopedSetVariables {
  scope: "workspace" | "project" | "global";
  priority: boolean;
  name: string;
  id: string;
  variables: StoredVariable[];
}

const SCOPE_RANK = { workspace: 0, project: 1, global: 2 } as const;

/**
 * The workspace's effective variables (`all-vars`): one per key and category. Precedence, highest first:
 * priority sets, the workspace's own variables, sets applied to the workspace, sets applied to its
 * project, global sets; between sets of one rank, the set whose name sorts first (then id) wins.
 */
export function effectiveVariables<W extends { key: string; category: Category }>(
  own: W[],
  sets: ScopedSetVariables[],
): Array<{ from: "workspace"; variable: W } | { from: "varset"; varsetId: string; variable: StoredVariable }> {
  const ordered = [...sets].sort(
    (a, b) => SCOPE_RANK[a.scope] - SCOPE_RANK[b.scope] || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) || (a.id < b.id ? -1 : 1),
  );
  type Entry = { from: "workspace"; variable: W } | { from: "varset"; varsetId: string; variable: StoredVariable };
  const chosen = new Map<string, Entry>();
  const offer = (e: Entry) => {
    const k = `${e.variable.category}\u0000${e.variable.key}`;
    if (!chosen.has(k)) chosen.set(k, e);
  };
  for (const s of ordered.filter((s) => s.priority)) for (const v of s.variables) offer({ from: "varset", varsetId: s.id, variable: v });
  for (const v of own) offer({ from: "workspace", variable: v });
  for (const s of ordered.filter((s) => !s.priority)) for (const v of s.variables) offer({ from: "varset", varsetId: s.id, variable: v });
  return [...chosen.values()];
}
