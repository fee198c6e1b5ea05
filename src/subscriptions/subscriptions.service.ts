/**
 * HCP Terraform's admin API for plans (hosted edition only; the self-hosted edition has no plans and answers
 * 404): site admins list the feature sets and assign one to an organisation, whose entitlement set and
 * permissions then follow it (src/subscriptions/feature-sets.rules.ts).
 */
import { pageSlice } from "../jsonapi/document";
import { requireOrgAccess } from "../auth/access";
import { authorize } from "../auth/requirements";
import type { Caller } from "../caller";
import { edition } from "../env";
import { ApiError } from "../errors";
import { newId, nowIso } from "../ids";
import type { Page } from "../jsonapi/document";
import { setOrganizationSubscription } from "../organizations/organizations.d1";
import { DEFAULT_FEATURE_SET, featureSetById, searchFeatureSets, type FeatureSet } from "./feature-sets.rules";
import type { Subscription } from "../auth/organization.d1";

/** The terms a site admin may set; omitted ceilings take the plan's defaults, omitted contract terms are none. */
export interface SubscriptionTerms {
  "runs-ceiling"?: number | null;
  "agents-ceiling"?: number | null;
  "contract-start-at"?: string | null;
  "end-at"?: string | null;
  "contract-user-limit"?: number | null;
  "contract-apply-limit"?: number | null;
  "contract-managed-resources-limit"?: number | null;
}

export interface SubscriptionView {
  organization: string;
  subscription: Subscription;
  featureSet: FeatureSet;
}

function requireHosted(caller: Caller): void {
  if (edition(caller.env) !== "hosted") throw ApiError.of("not_found");
}

/** A page of the plans whose name contains `q` (all without it). */
export function listFeatureSets(caller: Caller, q: string, page: Page): { items: FeatureSet[]; total: number } {
  requireHosted(caller);
  authorize(caller, "site-admin");
  const all = searchFeatureSets(q);
  return { items: pageSlice(all, page), total: all.length };
}

/** Assigns the plan to the organisation, replacing its subscription; its entitlements change at once. */
export async function assignSubscription(caller: Caller, organization: string, featureSetId: string, terms: SubscriptionTerms): Promise<SubscriptionView> {
  requireHosted(caller);
  authorize(caller, "site-admin");
  const featureSet = featureSetById(featureSetId);
  if (!featureSet) {
    throw ApiError.of("invalid_attribute", { detail: "Feature set not found", pointer: "/data/relationships/feature-set/data/id" });
  }
  const start = terms["contract-start-at"] ?? null;
  const end = terms["end-at"] ?? null;
  if (start && end && Date.parse(end) < Date.parse(start)) {
    throw ApiError.of("invalid_attribute", { detail: "End at must be after the contract start", pointer: "/data/attributes/end-at" });
  }
  const subscription: Subscription = {
    id: newId("sub"),
    featureSetId: featureSet.id,
    startAt: nowIso(),
    runsCeiling: terms["runs-ceiling"] ?? featureSet.defaultRunsCeiling,
    agentsCeiling: terms["agents-ceiling"] ?? featureSet.defaultAgentsCeiling,
    contractStartAt: start === null ? null : new Date(start).toISOString(),
    endAt: end === null ? null : new Date(end).toISOString(),
    contractUserLimit: terms["contract-user-limit"] ?? null,
    contractApplyLimit: terms["contract-apply-limit"] ?? null,
    contractManagedResourcesLimit: terms["contract-managed-resources-limit"] ?? null,
  };
  // One write: no row changed means no such organisation.
  if (!(await setOrganizationSubscription(caller.db, organization, subscription))) throw ApiError.of("not_found");
  return { organization, subscription, featureSet };
}

/**
 * The organisation's subscription (`GET /organizations/:name/subscription`, which its `subscription` link names), for
 * any member. An organisation no plan was assigned to is on Free from its creation, as a new HCP Terraform
 * organisation is; that subscription is implied, so its id is derived from the organisation's (stable across reads).
 */
export async function showSubscription(caller: Caller, organization: string): Promise<SubscriptionView> {
  requireHosted(caller);
  const access = await requireOrgAccess(caller, { name: organization });
  const org = access.organization;
  const featureSet = (org.subscription && featureSetById(org.subscription.featureSetId)) || DEFAULT_FEATURE_SET;
  const subscription: Subscription = org.subscription ?? {
    id: `sub-${org.externalId.replace(/^org-/, "")}`,
    featureSetId: featureSet.id,
    startAt: org.createdAt,
    runsCeiling: featureSet.defaultRunsCeiling,
    agentsCeiling: featureSet.defaultAgentsCeiling,
    contractStartAt: null,
    endAt: null,
    contractUserLimit: null,
    contractApplyLimit: null,
    contractManagedResourcesLimit: null,
  };
  return { organization: org.name, subscription, featureSet };
}
