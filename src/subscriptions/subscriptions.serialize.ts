import type { Resource } from "../jsonapi/document";
import { FEATURES, type FeatureSet } from "./feature-sets.rules";
import type { SubscriptionView } from "./subscriptions.service";

const API = "/api/v2";

/** A plan as `GET /feature-sets` shows it: its terms, limits and every feature it includes or not. */
export function serializeFeatureSet(f: FeatureSet): Resource {
  return {
    id: f.id,
    type: "feature-sets",
    attributes: {
      name: f.name,
      identifier: f.identifier,
      description: f.description,
      cost: f.cost,
      plan: null,
      "is-current": f.isCurrent,
      "is-free-tier": f.isFreeTier,
      "default-runs-ceiling": f.defaultRunsCeiling,
      "default-agents-ceiling": f.defaultAgentsCeiling,
      "user-limit": f.userLimit,
      ...f.limits,
      ...Object.fromEntries(FEATURES.map((k) => [k, f.features.has(k)])),
    },
  };
}

/** A subscription, with its organisation and feature set as relationships. */
export function serializeSubscription(v: SubscriptionView): Resource {
  const s = v.subscription;
  return {
    id: s.id,
    type: "subscriptions",
    attributes: {
      "start-at": s.startAt,
      "end-at": s.endAt,
      "is-active": s.endAt === null || Date.parse(s.endAt) > Date.now(),
      "runs-ceiling": s.runsCeiling,
      "agents-ceiling": s.agentsCeiling,
      "contract-start-at": s.contractStartAt,
      "contract-user-limit": s.contractUserLimit,
      "contract-apply-limit": s.contractApplyLimit,
      "contract-managed-resources-limit": s.contractManagedResourcesLimit,
      "is-public-free-tier": v.featureSet.isFreeTier,
      "is-self-serve-trial": false,
    },
    relationships: {
      organization: { data: { id: v.organization, type: "organizations" }, links: { related: `${API}/organizations/${v.organization}` } },
      "billing-account": { data: null },
      "feature-set": { data: { id: v.featureSet.id, type: "feature-sets" } },
    },
  };
}
