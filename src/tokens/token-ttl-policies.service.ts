/**
 * Organisation token TTL policies: the longest lifetime each kind of API token may have in the organisation
 * (organisation, team, user and audit-trails tokens). Part of the organisation's settings: owners and the
 * organisation token read them; only owners change them (they bound the organisation token's own lifetime). They take effect while the organisation's `max-ttl-enabled` is on
 * (the tfe provider's `tfe_org_max_token_ttl_policy` docs): see `tokenLifetimeCap` and the token services.
 */
import { pageSlice } from "../jsonapi/document";
import { requireOrgAccess } from "../auth/access";
import { authorize } from "../auth/requirements";
import type { Caller } from "../caller";
import { ApiError } from "../errors";
import { nowIso } from "../ids";
import type { Page } from "../jsonapi/document";
import type { Organization } from "../auth/organization.d1";
import { listTokenTtlPolicies, maxTtlMsOf, updateTokenTtlPolicies, type TokenTtlPolicy, type TtlTokenType } from "./token-ttl-policies.d1";

export interface TokenTtlPolicyInput {
  "token-type": TtlTokenType;
  "max-ttl-ms": number;
}

async function organizationFor(caller: Caller, organization: string, action: "organization.manage" | "organization.token-policy"): Promise<Organization> {
  // Owners reach the organisation's settings even with user tokens refused (as for its token).
  const access = await requireOrgAccess(caller, { name: organization }, { ownerSettings: true });
  authorize(caller, action, { access });
  return access.organization;
}

/** Every token type's policy (four, the defaults for those never set). */
export async function listPolicies(caller: Caller, organization: string, page: Page): Promise<{ policies: TokenTtlPolicy[]; total: number }> {
  const org = await organizationFor(caller, organization, "organization.manage");
  const all = await listTokenTtlPolicies(caller.db, org.externalId, nowIso());
  return { policies: pageSlice(all, page), total: all.length };
}

/** Sets the given token types' maximums; the others keep theirs. Answers every policy, as the real service does. */
export async function updatePolicies(caller: Caller, organization: string, items: TokenTtlPolicyInput[]): Promise<TokenTtlPolicy[]> {
  const org = await organizationFor(caller, organization, "organization.token-policy");
  const seen = new Set<string>();
  items.forEach((item, i) => {
    if (seen.has(item["token-type"])) {
      throw ApiError.of("invalid_attribute", {
        detail: `Token type ${item["token-type"]} is given more than once`,
        pointer: `/data/attributes/token-ttl-policies/${i}/token-type`,
      });
    }
    seen.add(item["token-type"]);
  });
  return updateTokenTtlPolicies(
    caller.db,
    org.externalId,
    items.map((i) => ({ tokenType: i["token-type"], maxTtlMs: i["max-ttl-ms"] })),
    nowIso(),
  );
}

/**
 * The longest lifetime (ms) a new token of the type may have in the organisation, or null when the organisation does
 * not enforce its policies (`max-ttl-enabled` off, the default): one D1 read, only for organisations that do.
 */
export async function tokenLifetimeCap(caller: Caller, org: Organization, tokenType: TtlTokenType): Promise<number | null> {
  if (org.attrs["max-ttl-enabled"] !== true) return null;
  return maxTtlMsOf(caller.db, org.externalId, tokenType);
}
