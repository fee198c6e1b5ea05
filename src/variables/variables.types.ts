/** Variable types shared across the Durable Object boundary and with the variable-set repository (import type). */

export type Category = "terraform" | "env";

/** A stored variable: its value always sealed (src/variables/variables.crypto.ts). */
export interface StoredVariable {
  id: string;
  key: string;
  category: Category;
  sealedValue: string;
  description: string | null;
  hcl: boolean;
  sensitive: boolean;
  versionId: string;
  createdAt: string;
}

/** A change already validated against the request; the store checks what needs current state. */
export interface VariablePatch {
  key?: string;
  category?: Category;
  sealedValue?: string;
  description?: string | null;
  hcl?: boolean;
  sensitive?: boolean;
  /** Every update gets a new version id, even one that changes nothing (go-tfe checks it). */
  versionId: string;
}

/** What a response shows of a variable: the value opened, or null when sensitive (never decrypted). */
export interface VariableView {
  id: string;
  key: string;
  value: string | null;
  description: string | null;
  category: Category;
  hcl: boolean;
  sensitive: boolean;
  versionId: string;
  createdAt: string;
  owner: { kind: "workspace"; id: string; organization: string; name: string } | { kind: "varset"; id: string };
}

/** A stored variable as both stores keep it (the DO's `variables` table and D1's `varset_vars`). */
export type VariableRow = {
  id: string;
  key: string;
  category: string;
  value: string;
  description: string | null;
  hcl: number;
  sensitive: number;
  version_id: string;
  created_at: string;
};

export function variableFromRow(r: VariableRow): StoredVariable {
  return {
    id: r.id,
    key: r.key,
    category: r.category as Category,
    sealedValue: r.value,
    description: r.description,
    hcl: r.hcl === 1,
    sensitive: r.sensitive === 1,
    versionId: r.version_id,
    createdAt: r.created_at,
  };
}

/** The columns a write sets, in both stores' order: key, category, value, description, hcl, sensitive, version_id. */
export function variableColumns(v: StoredVariable): [string, Category, string, string | null, number, number, string] {
  return [v.key, v.category, v.sealedValue, v.description, v.hcl ? 1 : 0, v.sensitive ? 1 : 0, v.versionId];
}
