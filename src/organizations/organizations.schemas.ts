/** Response schemas of organisations and their entitlement sets (src/organizations/organizations.serialize.ts). */
import { z } from "@hono/zod-openapi";
import { attr, resourceSchema } from "../jsonapi/schemas";
import { ENTITLEMENTS } from "../subscriptions/feature-sets";

export const organizationResource = resourceSchema("Organization", "organizations", {
  name: attr.string,
  "external-id": attr.string,
  "created-at": attr.time,
  email: attr.string,
  "session-timeout": attr.nullableInt,
  "session-remember": attr.nullableInt,
  "collaborator-auth-policy": attr.string,
  "plan-expired": attr.boolean,
  "plan-expires-at": attr.nullableTime,
  "plan-is-trial": attr.boolean,
  "plan-is-enterprise": attr.boolean,
  "cost-estimation-enabled": attr.boolean,
  "send-passing-statuses-for-untriggered-speculative-plans": attr.boolean,
  "aggregated-commit-status-enabled": attr.boolean,
  "speculative-plan-management-enabled": attr.boolean,
  "allow-force-delete-workspaces": attr.boolean,
  "assessments-enforced": attr.boolean,
  "default-execution-mode": z.enum(["remote", "local", "agent"]),
  "user-tokens-enabled": attr.boolean,
  "owners-team-saml-role-id": attr.nullableString,
  "fair-run-queuing-enabled": attr.boolean,
  "saml-enabled": attr.boolean,
  "two-factor-conformant": attr.boolean,
  "stacks-enabled": attr.boolean,
  "max-ttl-enabled": attr.boolean,
  "remaining-testable-count": attr.int,
  permissions: attr.permissions,
});

/** What the organisation's plan (hosted) or the installation (self-hosted) entitles it to. */
export const entitlementSetResource = resourceSchema("EntitlementSet", "entitlement-sets", {
  ...Object.fromEntries(ENTITLEMENTS.map((e) => [e, attr.boolean])),
  "user-limit": attr.nullableInt,
});
