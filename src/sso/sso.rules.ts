/**
 * Single sign-on's pure rules: the operator's configuration, the username a new user gets, the groups an ID token
 * lists, and the team mapping (HCP Terraform's SSO team rules: a group matches a team by its `sso-team-id` or its
 * name, exactly; memberships become exactly the matched teams; unknown groups are ignored; no groups claim changes
 * nothing; owners are never assigned by the mapping, here unless the operator names an owners group).
 */
import type { Bindings } from "../env";

export interface SsoConfig {
  issuer: string;
  clientId: string;
  clientSecret: string;
  groupsClaim: string;
  /** The group whose members the owners teams it names take (null: owners are never assigned by the mapping). */
  ownersGroup: string | null;
}

/** The operator's SSO configuration, or null when SSO is off (no issuer or no client id). */
export function ssoConfig(
  env: Pick<Bindings, "OIDC_ISSUER" | "OIDC_CLIENT_ID" | "OIDC_CLIENT_SECRET" | "OIDC_GROUPS_CLAIM" | "OIDC_OWNERS_GROUP">,
): SsoConfig | null {
  const issuer = env.OIDC_ISSUER?.trim();
  const clientId = env.OIDC_CLIENT_ID?.trim();
  if (!issuer || !clientId) return null;
  return {
    issuer,
    clientId,
    clientSecret: env.OIDC_CLIENT_SECRET ?? "",
    groupsClaim: env.OIDC_GROUPS_CLAIM?.trim() || "groups",
    ownersGroup: env.OIDC_OWNERS_GROUP?.trim() || null,
  };
}

/** How long a sign-in may take at the provider, from /app/sso/start to the callback. */
export const SSO_REQUEST_TTL_MS = 10 * 60 * 1000;

/** The usernames this service accepts (as src/users/users.service.ts does). */
const USERNAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;

/**
 * The username a new SSO user asks for: `preferred_username`, else the e-mail's local part, made to fit the username
 * rule (other characters become `-`); "user" when neither gives one.
 */
export function baseUsername(claims: Record<string, unknown>): string {
  const fitted = (s: unknown): string | null => {
    if (typeof s !== "string") return null;
    const cleaned = s
      .trim()
      .replace(/[^A-Za-z0-9_.-]/g, "-")
      .replace(/^[^A-Za-z0-9]+/, "")
      .slice(0, 56);
    return USERNAME.test(cleaned) ? cleaned : null;
  };
  const email = typeof claims.email === "string" ? claims.email.split("@")[0] : undefined;
  return fitted(claims.preferred_username) ?? fitted(email) ?? "user";
}

/** The candidates for a new user's name, in order: the base, then the base with a number (made unique). */
export function usernameCandidates(base: string, count = 20): string[] {
  return [base, ...Array.from({ length: count - 1 }, (_, i) => `${base}-${i + 2}`)];
}

/**
 * The groups an ID token lists under `claim`: an array of strings, or one string of comma-separated names (as SAML's
 * single-value form). null: no such claim (memberships then stay as they are).
 */
export function groupsOf(claims: Record<string, unknown>, claim: string): string[] | null {
  const v = claims[claim];
  if (Array.isArray(v)) return v.filter((g): g is string => typeof g === "string" && g.length > 0);
  if (typeof v === "string")
    return v
      .split(",")
      .map((g) => g.trim())
      .filter((g) => g.length > 0);
  return null;
}

export interface MappableTeam {
  id: string;
  organizationId: string;
  name: string;
  ssoTeamId: string | null;
  isOwners: boolean;
}

/**
 * Whether the mapping manages a team's members: every team but the owners teams, and those owners teams that the
 * operator's owners group names (by name or `sso-team-id`).
 */
export function managedByMapping(team: MappableTeam, ownersGroup: string | null): boolean {
  if (!team.isOwners) return true;
  return ownersGroup !== null && (team.ssoTeamId === ownersGroup || team.name === ownersGroup);
}

/** Whether one of `groups` matches the team: its `sso-team-id` or its name, exactly (case-sensitive). */
export function matchesTeam(team: MappableTeam, groups: ReadonlySet<string>): boolean {
  return (team.ssoTeamId !== null && groups.has(team.ssoTeamId)) || groups.has(team.name);
}

/**
 * The changes to a user's memberships an SSO sign-in makes: the managed teams `groups` match, joined; the managed
 * teams it is in that they do not match, left. `candidates`: the teams matched by a group (as the query finds them);
 * `current`: the teams the user is in now.
 */
export function membershipChanges(
  groups: string[],
  candidates: MappableTeam[],
  current: MappableTeam[],
  ownersGroup: string | null,
): { join: MappableTeam[]; leave: MappableTeam[] } {
  const set = new Set(groups);
  const matched = candidates.filter((t) => managedByMapping(t, ownersGroup) && matchesTeam(t, set));
  const matchedIds = new Set(matched.map((t) => t.id));
  const currentIds = new Set(current.map((t) => t.id));
  return {
    join: matched.filter((t) => !currentIds.has(t.id)),
    leave: current.filter((t) => managedByMapping(t, ownersGroup) && !matchedIds.has(t.id)),
  };
}
