/** Pure rules of teams: organisation-access dependencies (who may manage what: src/auth/team-rights.ts). */
import type { Failure } from "../errors";

/** Every organisation-access key a team carries (the owners team has all of them). */
export const ORG_ACCESS_KEYS = [
  "manage-policies",
  "manage-policy-overrides",
  "delegate-policy-overrides",
  "manage-workspaces",
  "manage-vcs-settings",
  "manage-providers",
  "manage-modules",
  "manage-run-tasks",
  "manage-projects",
  "read-workspaces",
  "read-projects",
  "manage-membership",
  "manage-teams",
  "manage-organization-access",
  "access-secret-teams",
  "manage-agent-pools",
] as const;

export type OrgAccessKey = (typeof ORG_ACCESS_KEYS)[number];
export type OrgAccessInput = Partial<Record<OrgAccessKey, boolean | undefined>>;

/** Managing implies reading: filled in when the request does not set the implied key itself. */
const IMPLIED: Array<[OrgAccessKey, OrgAccessKey]> = [
  ["manage-workspaces", "read-workspaces"],
  ["manage-projects", "read-projects"],
];

/** Keys that need others (the real service refuses the combination; go-tfe's tests set both). */
const REQUIRES: Array<[OrgAccessKey, OrgAccessKey[], string]> = [
  ["manage-workspaces", ["read-workspaces"], "read-workspaces"],
  ["manage-projects", ["read-projects"], "read-projects"],
  ["manage-projects", ["manage-workspaces"], "manage-workspaces"],
  ["read-projects", ["read-workspaces"], "read-workspaces"],
  ["manage-teams", ["manage-membership"], "manage-membership"],
  ["manage-organization-access", ["manage-teams"], "manage-teams"],
  [
    "access-secret-teams",
    ["manage-membership", "manage-teams", "manage-organization-access"],
    "one of manage-membership, manage-teams or manage-organization-access",
  ],
];

/**
 * The organisation access a team ends up with: the stored keys, overwritten by the request's, with
 * implied reads added, or the first dependency the result violates (422).
 */
export function resolveOrgAccess(stored: Record<string, boolean>, given: OrgAccessInput): { ok: true; value: Record<OrgAccessKey, boolean> } | Failure {
  const out = Object.fromEntries(ORG_ACCESS_KEYS.map((k) => [k, given[k] ?? stored[k] === true])) as Record<OrgAccessKey, boolean>;
  for (const [k, implied] of IMPLIED) if (out[k] && given[implied] === undefined) out[implied] = true;
  for (const [k, needs, words] of REQUIRES) {
    if (out[k] && !needs.some((n) => out[n])) {
      return {
        ok: false,
        code: "invalid_attribute",
        detail: `${k} requires ${words}`,
        pointer: `/data/attributes/organization-access/${given[needs[0]] === false ? needs[0] : k}`,
      };
    }
  }
  return { ok: true, value: out };
}
