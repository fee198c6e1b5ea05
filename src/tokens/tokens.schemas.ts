/** Response schemas of API and agent tokens (both `authentication-tokens`) and token TTL policies. */
import { z } from "@hono/zod-openapi";
import { attr, resourceSchema } from "../jsonapi/schemas";
import { TTL_TOKEN_TYPES } from "./token-ttl-policies.d1";

/** A token create request's attributes (the API's body and the tokens page's form alike). */
export const tokenAttributesInput = z.object({
  description: z.string().max(255).nullable().optional(),
  "expired-at": z.string().max(64).nullable().optional(),
});

/** `token`: the secret, only in the create response (null elsewhere). Agent tokens have no `expired-at`. */
export const authenticationTokenResource = resourceSchema("AuthenticationToken", "authentication-tokens", {
  "created-at": attr.time,
  "last-used-at": attr.nullableTime,
  description: attr.nullableString,
  "expired-at": attr.nullableTime.optional(),
  token: attr.nullableString,
});

export const tokenTtlPolicyResource = resourceSchema("OrganizationTokenTtlPolicy", "organization-token-ttl-policies", {
  "token-type": z.enum(TTL_TOKEN_TYPES),
  "max-ttl-ms": attr.int,
  "created-at": attr.time,
  "updated-at": attr.time,
});
