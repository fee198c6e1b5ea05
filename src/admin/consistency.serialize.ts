/** A page of the consistency checker's report: each difference a resource, the cursor in `meta`. */
import type { Resource } from "../jsonapi/document";
import type { ConsistencyPage } from "./consistency.service";

export function serializeConsistencyReport(page: ConsistencyPage): { data: Resource[]; meta: Record<string, unknown> } {
  return {
    data: page.differences.map((d, i) => ({
      id: `${d.workspaceId}:${i}`,
      type: "consistency-differences",
      attributes: { "workspace-id": d.workspaceId, kind: d.kind, detail: d.detail },
    })),
    meta: { checked: page.checked, "next-cursor": page.next },
  };
}
