/** Response schema of data retention policies (./retention.routes.ts). */
import { attr, resourceSchema } from "../jsonapi/schemas";

/**
 * A policy, in its own type (delete-older or don't-delete), or in the deprecated `data-retention-policies` type
 * when the request used it. Only a delete-older policy has an attribute.
 */
export const retentionPolicyResource = resourceSchema(
  "RetentionPolicy",
  ["data-retention-policy-delete-olders", "data-retention-policy-dont-deletes", "data-retention-policies"],
  { "delete-older-than-n-days": attr.nullableInt.optional() },
);
