/** A phase's counts: from the JSON plan (`terraform show -json`) for a plan, from Terraform's last line for an apply. */

export interface Counts {
  hasChanges: boolean;
  resourceAdditions: number;
  resourceChanges: number;
  resourceDestructions: number;
  resourceImports: number;
}

export const NO_CHANGES: Counts = { hasChanges: false, resourceAdditions: 0, resourceChanges: 0, resourceDestructions: 0, resourceImports: 0 };

interface JsonChange {
  actions?: string[];
  importing?: unknown;
}

interface JsonPlan {
  resource_changes?: { change?: JsonChange; previous_address?: string }[];
  resource_drift?: { change?: JsonChange }[];
  output_changes?: Record<string, JsonChange>;
}

const isNoOp = (c: JsonChange | undefined) => !c?.actions || c.actions.length === 0 || (c.actions.length === 1 && c.actions[0] === "no-op");

/**
 * Counts as the plan's summary line does: create → added, update → changed, delete → destroyed, a replacement both
 * added and destroyed, an import → imported. `hasChanges` is any resource or output change (a moved or imported
 * resource included), and for a refresh-only plan any drift, since applying it writes the state.
 */
export function planCounts(plan: JsonPlan, options: { refreshOnly?: boolean } = {}): Counts {
  const counts = { ...NO_CHANGES };
  for (const rc of plan.resource_changes ?? []) {
    const actions = rc.change?.actions ?? [];
    if (actions.includes("create")) counts.resourceAdditions++;
    if (actions.includes("delete")) counts.resourceDestructions++;
    if (actions.length === 1 && actions[0] === "update") counts.resourceChanges++;
    if (rc.change?.importing) counts.resourceImports++;
    if (!isNoOp(rc.change) || rc.change?.importing || rc.previous_address) counts.hasChanges = true;
  }
  for (const oc of Object.values(plan.output_changes ?? {})) if (!isNoOp(oc)) counts.hasChanges = true;
  if (options.refreshOnly) for (const d of plan.resource_drift ?? []) if (!isNoOp(d.change)) counts.hasChanges = true;
  return counts;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour sequences are what it strips
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;

/**
 * Counts from `Apply complete! Resources: [N imported, ]N added, N changed, N destroyed.` or, for a destroy,
 * `Destroy complete! Resources: N destroyed.`; null when the output has neither.
 */
export function applyCounts(output: string): Omit<Counts, "hasChanges"> | null {
  const text = output.replace(ANSI, "");
  const apply = /Apply complete! Resources: (?:(\d+) imported, )?(\d+) added, (\d+) changed, (\d+) destroyed\./.exec(text);
  if (apply) {
    return {
      resourceImports: Number(apply[1] ?? 0),
      resourceAdditions: Number(apply[2]),
      resourceChanges: Number(apply[3]),
      resourceDestructions: Number(apply[4]),
    };
  }
  const destroy = /Destroy complete! Resources: (\d+) destroyed\./.exec(text);
  if (destroy) return { resourceImports: 0, resourceAdditions: 0, resourceChanges: 0, resourceDestructions: Number(destroy[1]) };
  return null;
}
