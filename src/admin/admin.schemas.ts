/** Response schema of the consistency checker's differences (./admin.routes.ts). */
import { attr, resourceSchema } from "../jsonapi/schemas";

export const consistencyDifferenceResource = resourceSchema("ConsistencyDifference", "consistency-differences", {
  "workspace-id": attr.string,
  kind: attr.string,
  detail: attr.string,
});
