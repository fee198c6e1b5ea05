/**
 * HCP Terraform's admin endpoints for plans (hosted edition only; site admins): list the feature sets,
 * assign one to an organisation. go-tfe's subscription helpers (`newSubscriptionUpdater`) call both. Members
 * read their organisation's subscription, where its `subscription` link leads.
 */
import { z } from "@hono/zod-openapi";
import { callerOf } from "../auth/caller.http";
import { jsonapi, paginated } from "../jsonapi/document";
import { listDocument, orgParam, pageOf, pageQuery, resourceDocument } from "../jsonapi/schemas";
import { jsonBody, ok, router } from "../jsonapi/validation";
import { serializeFeatureSet, serializeSubscription } from "./subscriptions.serialize";
import { assignSubscription, listFeatureSets, showSubscription } from "./subscriptions.service";
import { defineRoutes } from "../jsonapi/define-route";
import { featureSetResource, subscriptionResource } from "./subscriptions.schemas";

const defineRoute = defineRoutes({ tags: ["Admin"] });
export const subscriptions = router();

const timestamp = z
  .string()
  .max(64)
  .refine((s) => !Number.isNaN(Date.parse(s)), "must be an ISO 8601 timestamp");
const count = z.number().int().min(0).max(1_000_000_000);

// go-tfe sends the singular type "subscription"; the resource it gets back is "subscriptions".
const subscriptionBody = z
  .object({
    data: z.object({
      type: z.enum(["subscription", "subscriptions"]),
      attributes: z
        .object({
          "runs-ceiling": count.nullable().optional(),
          "agents-ceiling": count.nullable().optional(),
          "contract-start-at": timestamp.nullable().optional(),
          "end-at": timestamp.nullable().optional(),
          "contract-user-limit": count.nullable().optional(),
          "contract-apply-limit": count.nullable().optional(),
          "contract-managed-resources-limit": count.nullable().optional(),
        })
        .optional(),
      relationships: z.object({
        "feature-set": z.object({ data: z.object({ type: z.literal("feature-sets"), id: z.string().max(64) }) }),
      }),
    }),
  })
  .openapi("SubscriptionAssign");

subscriptions.openapi(
  defineRoute({
    method: "get",
    path: "/admin/feature-sets",
    action: "site-admin",
    summary: "List the plans (feature sets) an organisation can be assigned, by name (hosted edition; site admins)",
    request: {
      query: pageQuery.extend({ q: z.string().max(255).optional() }).passthrough(),
    },
    responses: ok("A page of feature sets", listDocument(featureSetResource)),
  }),
  (c) => {
    const query = c.req.valid("query");
    const page = pageOf(query);
    const { items, total } = listFeatureSets(callerOf(c), query.q ?? "", page);
    return jsonapi(c, paginated(c, items.map(serializeFeatureSet), page, total));
  },
);

subscriptions.openapi(
  defineRoute({
    method: "post",
    path: "/admin/organizations/{organization_name}/subscription",
    action: "site-admin",
    summary: "Assign a plan to an organisation; its entitlement set follows (hosted edition; site admins)",
    request: { params: orgParam, body: jsonBody(subscriptionBody) },
    responses: ok("The new subscription, its feature set included", resourceDocument(subscriptionResource), 201),
  }),
  async (c) => {
    const { attributes = {}, relationships } = c.req.valid("json").data;
    const view = await assignSubscription(callerOf(c), c.req.valid("param").organization_name, relationships["feature-set"].data.id, attributes);
    return jsonapi(c, { data: serializeSubscription(view), included: [serializeFeatureSet(view.featureSet)] }, 201);
  },
);

subscriptions.openapi(
  defineRoute({
    method: "get",
    path: "/organizations/{organization_name}/subscription",
    action: "organization.read",
    tags: ["Organizations"],
    summary: "Show the organisation's subscription, its feature set included (hosted edition; members)",
    request: { params: orgParam },
    responses: ok("The subscription, its feature set included", resourceDocument(subscriptionResource)),
  }),
  async (c) => {
    const view = await showSubscription(callerOf(c), c.req.valid("param").organization_name);
    return jsonapi(c, { data: serializeSubscription(view), included: [serializeFeatureSet(view.featureSet)] });
  },
);
