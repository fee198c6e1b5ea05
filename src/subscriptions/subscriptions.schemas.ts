/** Response schemas of plans (feature sets) and subscriptions (./subscriptions.serialize.ts). */
import { attr, resourceSchema } from "../jsonapi/schemas";
import { FEATURES, LIMIT_KEYS } from "./feature-sets.rules";

export const featureSetResource = resourceSchema("FeatureSet", "feature-sets", {
  name: attr.string,
  identifier: attr.string,
  description: attr.string,
  cost: attr.int,
  plan: attr.nullableString,
  "is-current": attr.boolean,
  "is-free-tier": attr.boolean,
  "default-runs-ceiling": attr.int,
  "default-agents-ceiling": attr.int,
  "user-limit": attr.nullableInt,
  ...Object.fromEntries(LIMIT_KEYS.map((k) => [k, attr.nullableInt])),
  ...Object.fromEntries(FEATURES.map((f) => [f, attr.boolean])),
});

export const subscriptionResource = resourceSchema("Subscription", "subscriptions", {
  "start-at": attr.time,
  "end-at": attr.nullableTime,
  "is-active": attr.boolean,
  "runs-ceiling": attr.int,
  "agents-ceiling": attr.int,
  "contract-start-at": attr.nullableTime,
  "contract-user-limit": attr.nullableInt,
  "contract-apply-limit": attr.nullableInt,
  "contract-managed-resources-limit": attr.nullableInt,
  "is-public-free-tier": attr.boolean,
  "is-self-serve-trial": attr.boolean,
});
