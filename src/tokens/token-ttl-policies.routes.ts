/** Organisation token TTL policies: GET lists all four token types' policies, PATCH sets some of them (bulk). */
import { z } from "@hono/zod-openapi";
import { callerOf } from "../auth/caller.http";
import { jsonapi, paginated } from "../jsonapi/document";
import { listDocument, orgParam, pageOf, pageQuery } from "../jsonapi/schemas";
import { LIMITS } from "../limits";
import { jsonBody, ok, router } from "../jsonapi/validation";
import { TTL_TOKEN_TYPES } from "./token-ttl-policies.d1";
import { serializePolicy } from "./token-ttl-policies.serialize";
import { listPolicies, updatePolicies } from "./token-ttl-policies.service";
import { defineRoutes } from "../jsonapi/define-route";
import { tokenTtlPolicyResource } from "./tokens.schemas";

const defineRoute = defineRoutes({ tags: ["Tokens"] });
export const tokenTtlPolicies = router();

const path = "/organizations/{organization_name}/token-ttl-policies";

const policyItem = z.object({
  "token-type": z.enum(TTL_TOKEN_TYPES),
  "max-ttl-ms": z.number().int().min(1).max(LIMITS.tokenTtlPolicyMaxMs),
});
const updateBody = z
  .object({
    data: z.object({
      type: z.literal("organization-token-ttl-policies").optional(),
      attributes: z.object({ "token-ttl-policies": z.array(policyItem).min(1).max(TTL_TOKEN_TYPES.length) }),
    }),
  })
  .openapi("TokenTtlPoliciesUpdate");

tokenTtlPolicies.openapi(
  defineRoute({
    method: "get",
    path,
    action: "organization.manage",
    summary: "List the organisation's token TTL policies (one per token type: organization, team, user, audit_trails)",
    request: { params: orgParam, query: pageQuery },
    responses: ok("A page of policies", listDocument(tokenTtlPolicyResource)),
  }),
  async (c) => {
    const page = pageOf(c.req.valid("query"));
    const { policies, total } = await listPolicies(callerOf(c), c.req.valid("param").organization_name, page);
    return jsonapi(c, paginated(c, policies.map(serializePolicy), page, total));
  },
);

tokenTtlPolicies.openapi(
  defineRoute({
    method: "patch",
    path,
    action: "organization.token-policy",
    summary: "Set the maximum lifetime (ms) of the given token types; answers every policy",
    request: { params: orgParam, body: jsonBody(updateBody) },
    responses: ok("Every policy", listDocument(tokenTtlPolicyResource)),
  }),
  async (c) => {
    const policies = await updatePolicies(callerOf(c), c.req.valid("param").organization_name, c.req.valid("json").data.attributes["token-ttl-policies"]);
    return jsonapi(c, { data: policies.map(serializePolicy) });
  },
);
