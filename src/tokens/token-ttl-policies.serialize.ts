/** The organisation token TTL policy resource. */
import type { Resource } from "../jsonapi/document";
import type { TokenTtlPolicy } from "./token-ttl-policies.d1";

export function serializePolicy(p: TokenTtlPolicy): Resource {
  return {
    id: p.id,
    type: "organization-token-ttl-policies",
    attributes: { "token-type": p.tokenType, "max-ttl-ms": p.maxTtlMs, "created-at": p.createdAt, "updated-at": p.updatedAt },
  };
}
