import type { Resource } from "../jsonapi/document";
import { entitlementSet, plannedPermissions, type FeatureSet } from "../subscriptions/feature-sets.rules";
import type { DataRetentionPolicy } from "../workspaces/workspace.types";
import type { Organization } from "../auth/organization.d1";
import type { OrganizationView } from "./organizations.service";

const API = "/api/v2";

/**
 * An organisation's `permissions`: owners (and the organisation token, the site admin) hold them all, those
 * a plan gates (audit trails, no-code modules) only when the organisation's plan includes the feature.
 */
export function orgPermissions(owner: boolean, plan: FeatureSet | null): Record<string, boolean> {
  const keys = [
    "can-update",
    "can-destroy",
    "can-access-via-teams",
    "can-create-module",
    "can-create-team",
    "can-create-workspace",
    "can-manage-users",
    "can-manage-subscription",
    "can-manage-sso",
    "can-update-oauth",
    "can-update-sentinel",
    "can-update-ssh-keys",
    "can-update-api-token",
    "can-traverse",
    "can-start-trial",
    "can-update-agent-pools",
    "can-manage-tags",
    "can-manage-public-modules",
    "can-manage-public-providers",
    "can-manage-run-tasks",
    "can-read-run-tasks",
    "can-create-provider",
    "can-create-project",
  ];
  const planned = Object.entries(plannedPermissions(plan)).map(([k, v]) => [k, owner && v]);
  return Object.fromEntries([...keys.map((k) => [k, owner || k === "can-access-via-teams" || k === "can-traverse"]), ...planned]);
}

/**
 * `retention`: the organisation's default data retention policy for its `data-retention-policy`
 * relationship (go-tfe decodes it as DataRetentionPolicyChoice); undefined leaves the relationship out.
 * `plan`: the organisation's plan (hosted edition); only then is there a subscription for its `subscription` link.
 */
export function serializeOrganization(
  o: Organization,
  permissions?: Record<string, boolean>,
  retention?: DataRetentionPolicy | null,
  plan?: FeatureSet | null,
): Resource {
  const a = o.attrs;
  const attributes: Record<string, unknown> = {
    name: o.name,
    "external-id": o.externalId,
    "created-at": o.createdAt,
    email: o.email,
    "session-timeout": a["session-timeout"] ?? null,
    "session-remember": a["session-remember"] ?? null,
    "collaborator-auth-policy": a["collaborator-auth-policy"] ?? "password",
    "plan-expired": false,
    "plan-expires-at": null,
    "plan-is-trial": false,
    "plan-is-enterprise": false,
    "cost-estimation-enabled": a["cost-estimation-enabled"] ?? false,
    "send-passing-statuses-for-untriggered-speculative-plans": a["send-passing-statuses-for-untriggered-speculative-plans"] ?? false,
    "aggregated-commit-status-enabled": a["aggregated-commit-status-enabled"] ?? true,
    "speculative-plan-management-enabled": a["speculative-plan-management-enabled"] ?? true,
    "allow-force-delete-workspaces": o.allowForceDeleteWorkspaces,
    "assessments-enforced": a["assessments-enforced"] ?? false,
    "default-execution-mode": o.defaultExecutionMode,
    "user-tokens-enabled": a["user-tokens-enabled"] ?? true,
    "owners-team-saml-role-id": a["owners-team-saml-role-id"] ?? null,
    "fair-run-queuing-enabled": true,
    "saml-enabled": false,
    "two-factor-conformant": false,
    "sso-required": a["sso-required"] ?? false,
    "stacks-enabled": a["stacks-enabled"] ?? false,
    "max-ttl-enabled": a["max-ttl-enabled"] ?? false,
    "remaining-testable-count": 5,
  };
  if (permissions) attributes.permissions = permissions;
  return {
    id: o.name,
    type: "organizations",
    attributes,
    relationships: {
      "default-agent-pool": { data: o.defaultAgentPoolId ? { id: o.defaultAgentPoolId, type: "agent-pools" } : null },
      "default-project": { data: { id: o.defaultProjectId, type: "projects" }, links: { related: `${API}/projects/${o.defaultProjectId}` } },
      "oauth-tokens": { links: { related: `${API}/organizations/${o.name}/oauth-tokens` } },
      "authentication-token": { links: { related: `${API}/organizations/${o.name}/authentication-token` } },
      "entitlement-set": {
        data: { id: o.externalId, type: "entitlement-sets" },
        links: { related: `${API}/organizations/${o.name}/entitlement-set` },
      },
      // GET /organizations/:name/subscription (src/subscriptions/subscriptions.routes.ts), as the real link names it.
      ...(plan ? { subscription: { links: { related: `${API}/organizations/${o.name}/subscription` } } } : {}),
      ...(retention === undefined
        ? {}
        : {
            "data-retention-policy": {
              data: retention ? { id: retention.id, type: retention.type } : null,
              links: { related: `${API}/organizations/${o.name}/relationships/data-retention-policy` },
            },
          }),
    },
    links: { self: `${API}/organizations/${o.name}` },
  };
}

/**
 * Entitlements: the organisation's plan's (hosted edition) or the installation's (self-hosted); `operations`
 * is true exactly when remote runs can execute (`remoteExecution`), else clients run operations locally.
 */
export function serializeEntitlements(o: Organization, plan: FeatureSet | null, remoteExecution = false): Resource {
  return {
    id: o.externalId,
    type: "entitlement-sets",
    attributes: entitlementSet(plan, o.subscription, remoteExecution),
    links: { self: `/api/v2/entitlement-sets/${o.externalId}` },
  };
}

/** An organisation as its own endpoints show it: with the caller's permissions and its default retention policy. */
export const serializeOrganizationView = (v: OrganizationView): Resource =>
  serializeOrganization(v.organization, orgPermissions(v.owner, v.plan), v.retention, v.plan);
