/**
 * HCP Terraform's plans ("feature sets") and how an organisation's entitlement set follows from its plan.
 * Pure data and rules: no I/O. Only the hosted edition has plans; the self-hosted edition answers with the
 * installation's entitlements (Terraform Enterprise is licensed per installation, not per organisation).
 *
 * The table models the plans HCP Terraform offers (Free, Essentials, Standard, Premium), the contract-based
 * Standard plan and the legacy Business plan that admins still assign (go-tfe's subscription helpers look
 * plans up by these names: "Business", "Free", "Standard (entitlement)"). Attribute names are the API's
 * (`GET /feature-sets`, `GET /organizations/:name/entitlement-set`).
 */
import type { Subscription } from "../auth/organization.d1";
import type { Edition } from "../env";
import { containsText } from "../platform/text-match";

/** Everything a plan may include. Each is a feature-set attribute; ENTITLEMENTS lists those the entitlement set shows. */
export const FEATURES = [
  "agents",
  "assessments",
  "audit-logging",
  "configuration-designer",
  "cost-estimation",
  "global-run-tasks",
  "infragraph",
  "infragraph-with-nrtu",
  "module-tests-generation",
  "no-code-modules",
  "operations",
  "policy-enforcement",
  "private-module-registry",
  "private-networking",
  "private-policy-agents",
  "private-run-tasks",
  "private-vcs",
  "run-tasks",
  "self-serve-billing",
  "sentinel",
  "sso",
  "state-storage",
  "teams",
  "usage-reporting",
  "vcs-integrations",
  "waypoint-actions",
  "waypoint-templates-and-addons",
] as const;
export type Feature = (typeof FEATURES)[number];

/** The boolean attributes of an entitlement set (`user-limit` is the one number beside them). */
export const ENTITLEMENTS = FEATURES.filter(
  (f): f is Exclude<Feature, "assessments" | "no-code-modules" | "private-networking"> =>
    f !== "assessments" && f !== "no-code-modules" && f !== "private-networking",
);
export type Entitlement = (typeof ENTITLEMENTS)[number];
export type EntitlementSet = Record<Entitlement, boolean> & { "user-limit": number | null };

/** Policy and run-task limits of a plan (null: unlimited). */
export const LIMIT_KEYS = [
  "policy-limit",
  "policy-mandatory-enforcement-limit",
  "policy-set-limit",
  "versioned-policy-set-limit",
  "run-task-limit",
  "run-task-mandatory-enforcement-limit",
  "run-task-workspace-limit",
] as const;
type Limits = Record<(typeof LIMIT_KEYS)[number], number | null>;

export interface FeatureSet {
  id: string;
  name: string;
  identifier: string;
  description: string;
  /** Monthly list price in US cents (0: free, or priced per resource or by contract). */
  cost: number;
  /** Offered to new customers today. */
  isCurrent: boolean;
  isFreeTier: boolean;
  defaultRunsCeiling: number;
  defaultAgentsCeiling: number;
  userLimit: number | null;
  features: ReadonlySet<Feature>;
  limits: Limits;
}

const UNLIMITED: Limits = Object.fromEntries(LIMIT_KEYS.map((k) => [k, null])) as Limits;

// What every current plan includes: remote state, runs, VCS, the private registry, policies, run tasks, SSO.
const CORE: Feature[] = [
  "state-storage",
  "operations",
  "vcs-integrations",
  "private-module-registry",
  "cost-estimation",
  "policy-enforcement",
  "sentinel",
  "run-tasks",
  "sso",
  "private-networking",
];
const STANDARD: Feature[] = [...CORE, "teams", "agents", "audit-logging", "assessments", "global-run-tasks", "module-tests-generation", "no-code-modules"];
const PREMIUM: Feature[] = [...STANDARD, "private-run-tasks", "private-vcs", "private-policy-agents"];

/** What a plan says unless it says otherwise: free of list price, offered today, ten concurrent runs and agents. */
const PLAN_DEFAULTS = { cost: 0, isCurrent: true, isFreeTier: false, defaultRunsCeiling: 10, defaultAgentsCeiling: 10, userLimit: null };

type PlanInput = Omit<FeatureSet, "features" | "limits" | keyof typeof PLAN_DEFAULTS> &
  Partial<Pick<FeatureSet, keyof typeof PLAN_DEFAULTS>> & { features: Feature[]; limits?: Partial<Limits> };

const plan = (p: PlanInput): FeatureSet => ({
  ...PLAN_DEFAULTS,
  ...p,
  features: new Set(p.features),
  limits: { ...UNLIMITED, ...p.limits },
});

/** The plans, in the order `GET /admin/feature-sets` lists them. */
export const FEATURE_SETS: readonly FeatureSet[] = [
  plan({
    id: "fs-yFctpitMtTQKuVdQ",
    name: "Free",
    identifier: "free_standard",
    description: "Free up to 500 managed resources: state, runs, VCS, private registry, policies and run tasks within limits",
    isFreeTier: true,
    defaultRunsCeiling: 1,
    defaultAgentsCeiling: 0,
    features: [...CORE, "self-serve-billing"],
    limits: {
      "policy-limit": 5,
      "policy-mandatory-enforcement-limit": 1,
      "policy-set-limit": 1,
      "versioned-policy-set-limit": 0,
      "run-task-limit": 1,
      "run-task-mandatory-enforcement-limit": 1,
      "run-task-workspace-limit": 10,
    },
  }),
  plan({
    id: "fs-zhBwJgk3Wvd4Mdv5",
    name: "Essentials",
    identifier: "essentials",
    description: "Automated infrastructure provisioning at any scale, with team management; billed per managed resource",
    defaultAgentsCeiling: 0,
    features: [...CORE, "teams", "self-serve-billing"],
  }),
  plan({
    id: "fs-22nYxGzHtH11ql3j",
    name: "Standard",
    identifier: "standard",
    description: "Automated infrastructure provisioning and management at any scale: agents, audit trails, health assessments, no-code modules",
    features: [...STANDARD, "self-serve-billing"],
  }),
  plan({
    id: "fs-t8UwtwYn3BiT0zoW",
    name: "Premium",
    identifier: "premium",
    description: "Standard plus private run tasks, private VCS and private policy agents; by contract",
    features: PREMIUM,
  }),
  plan({
    id: "fs-FTrlJ21dzXRgYFAT",
    name: "Standard (entitlement)",
    identifier: "standard_entitlement",
    description: "Standard by contract (managed-resource entitlement), with Waypoint templates and add-ons and Infragraph",
    features: [...STANDARD, "waypoint-templates-and-addons", "infragraph"],
  }),
  plan({
    id: "fs-yEBKzzaXXgvnpNns",
    name: "Business",
    identifier: "business",
    description: "Full access to HCP Terraform's enterprise features (legacy plan, assigned by HashiCorp)",
    isCurrent: false,
    features: [...PREMIUM, "configuration-designer", "usage-reporting", "waypoint-templates-and-addons", "infragraph"],
  }),
];

/** The plan an organisation without an assigned subscription is on in the hosted edition (as HCP Terraform's new organisations). */
export const DEFAULT_FEATURE_SET = FEATURE_SETS[0];

export function featureSetById(id: string): FeatureSet | undefined {
  return FEATURE_SETS.find((f) => f.id === id);
}

/** The plans whose name contains `q`, case-insensitively (go-tfe looks plans up by name). */
export function searchFeatureSets(q: string): FeatureSet[] {
  const needle = q.trim();
  return FEATURE_SETS.filter((f) => containsText(f.name, needle));
}

/** The plan an organisation is on: none in the self-hosted edition; its subscription's, else Free, in the hosted one. */
export function planOf(edition: Edition, subscription: Subscription | null): FeatureSet | null {
  if (edition !== "hosted") return null;
  return (subscription && featureSetById(subscription.featureSetId)) || DEFAULT_FEATURE_SET;
}

/**
 * The self-hosted installation's entitlements: what this service provides to every organisation (state storage,
 * teams, agent pools), unchanged by any plan.
 */
const INSTALLATION: ReadonlySet<Feature> = new Set<Feature>(["state-storage", "teams", "agents"]);

/**
 * An organisation's entitlement set: its plan's features (the installation's without a plan), the contract's
 * user limit over the plan's. `operations` is whether remote runs can execute (`remoteExecution`: an agent serves the
 * default pool), whatever the plan: Terraform's cloud backend runs plans and applies remotely whenever the entitlement
 * set allows it, and without an agent a remote run would wait forever (docs/behaviour.md, "Compatibility with the real clients").
 */
export function entitlementSet(planned: FeatureSet | null, subscription: Subscription | null, remoteExecution = false): EntitlementSet {
  const features = planned?.features ?? INSTALLATION;
  const set = Object.fromEntries(ENTITLEMENTS.map((e) => [e, features.has(e)])) as Record<Entitlement, boolean>;
  set.operations = remoteExecution;
  const userLimit = planned ? (subscription?.contractUserLimit ?? planned.userLimit) : null;
  return { ...set, "user-limit": userLimit };
}

/** The organisation permissions a plan gates: owners hold them only when the plan includes the feature. */
export function plannedPermissions(planned: FeatureSet | null): Record<string, boolean> {
  const has = (f: Feature) => planned?.features.has(f) === true;
  return {
    "can-manage-auditing": has("audit-logging"),
    "can-deploy-no-code-modules": has("no-code-modules"),
    "can-manage-no-code-modules": has("no-code-modules"),
  };
}
