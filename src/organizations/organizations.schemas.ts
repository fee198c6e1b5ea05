/** Response schemas of organisations and their entitlement sets (src/organizations/organizations.serialize.ts). */
import { z } from "@hono/zod-openapi";
import { attr, resourceSchema } from "../jsonapi/schemas";
import { LIMITS } from "../limits";
import { ENTITLEMENTS } from "../subscriptions/feature-sets.rules";

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
  /** This service's own setting (docs/behaviour.md): members reach the organisation through SSO sessions, not password ones. */
  "sso-required": attr.boolean,
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

/** The attributes a create or update may send (the UI's settings form is checked against the same schema). */
export const organizationAttributesInput = z.object({
  name: z.string().max(LIMITS.organizationNameMax).optional(),
  email: z.string().max(255).optional(),
  "session-timeout": z.number().int().min(1).max(1_000_000).nullable().optional(),
  "session-remember": z.number().int().min(1).max(1_000_000).nullable().optional(),
  "collaborator-auth-policy": z.enum(["password", "two_factor_mandatory"]).optional(),
  "cost-estimation-enabled": z.boolean().optional(),
  "send-passing-statuses-for-untriggered-speculative-plans": z.boolean().optional(),
  "aggregated-commit-status-enabled": z.boolean().optional(),
  "speculative-plan-management-enabled": z.boolean().optional(),
  "owners-team-saml-role-id": z.string().max(255).nullable().optional(),
  "assessments-enforced": z.boolean().optional(),
  "allow-force-delete-workspaces": z.boolean().optional(),
  "default-execution-mode": z.enum(["remote", "local", "agent"]).optional(),
  "default-agent-pool-id": z.string().max(64).nullable().optional(),
  "user-tokens-enabled": z.boolean().optional(),
  "stacks-enabled": z.boolean().optional(),
  "max-ttl-enabled": z.boolean().optional(),
  "sso-required": z.boolean().optional(),
  // Taken so that `true` is refused rather than ignored (the tfe provider sends false on every update).
  "enforce-hyok": z.boolean().optional(),
});

/** A create's attributes: a name and an e-mail besides (the UI's new-organisation form is checked against it too). */
export const organizationCreateAttributes = organizationAttributesInput.extend({
  name: z.string().max(LIMITS.organizationNameMax),
  email: z.string().max(255),
});
