import { z } from "@hono/zod-openapi";
import { callerOf } from "../auth/caller.http";
import { jsonapi, noContent, paginated } from "../jsonapi/document";
import { listDocument, orgParam, pageOf, pageQuery, resourceDocument } from "../jsonapi/schemas";
import { jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import { serializeEntitlements, serializeOrganizationView } from "./organizations.serialize";
import { changeOrganization, createOrganization, entitlementsOf, listCallerOrganizations, removeOrganization, showOrganization } from "./organizations.service";
import { defineRoutes } from "../jsonapi/define-route";
import { entitlementSetResource, organizationAttributesInput, organizationCreateAttributes, organizationResource } from "./organizations.schemas";

const defineRoute = defineRoutes({ tags: ["Organizations"] });
export const organizations = router();

const orgRelationships = z
  .object({
    "default-agent-pool": z.object({ data: z.object({ type: z.literal("agent-pools"), id: z.string().max(64) }).nullable() }).optional(),
  })
  .optional();
const orgCreateBody = z
  .object({
    data: z.object({
      type: z.literal("organizations"),
      attributes: organizationCreateAttributes,
      relationships: orgRelationships,
    }),
  })
  .openapi("OrganizationCreate");
const orgUpdateBody = z
  .object({
    data: z.object({ type: z.literal("organizations"), attributes: organizationAttributesInput.optional(), relationships: orgRelationships }),
  })
  .openapi("OrganizationUpdate");

organizations.openapi(
  defineRoute({
    method: "post",
    path: "/organizations",
    action: "user",
    summary: "Create an organisation (its owners team and Default Project come with it)",
    request: { body: jsonBody(orgCreateBody) },
    responses: ok("The organisation", resourceDocument(organizationResource), 201),
  }),
  async (c) => {
    // The default-agent-pool relationship is accepted and ignored: a new organisation has no pool yet.
    const { attributes } = c.req.valid("json").data;
    return jsonapi(c, { data: serializeOrganizationView(await createOrganization(callerOf(c), attributes)) }, 201);
  },
);

organizations.openapi(
  defineRoute({
    method: "get",
    path: "/organizations",
    action: "authenticated",
    summary: "List the organisations the caller belongs to",
    request: {
      query: pageQuery
        .extend({ q: z.string().max(255).optional(), "q[name]": z.string().max(255).optional(), "q[email]": z.string().max(255).optional() })
        .passthrough(),
    },
    responses: ok("A page of organisations", listDocument(organizationResource)),
  }),
  async (c) => {
    const query = c.req.valid("query");
    const page = pageOf(query);
    // `q` matches the name or the email (go-tfe queries by either); q[email] / q[name] narrow it.
    const filter = { q: query.q ?? query["q[name]"] ?? "", email: query["q[email]"] };
    const { items, total } = await listCallerOrganizations(callerOf(c), filter, page);
    return jsonapi(c, paginated(c, items.map(serializeOrganizationView), page, total));
  },
);

organizations.openapi(
  defineRoute({
    method: "get",
    path: "/organizations/{organization_name}",
    action: "organization.read",
    summary: "Show an organisation",
    request: { params: orgParam },
    responses: ok("The organisation", resourceDocument(organizationResource)),
  }),
  async (c) => jsonapi(c, { data: serializeOrganizationView(await showOrganization(callerOf(c), c.req.valid("param").organization_name)) }),
);

organizations.openapi(
  defineRoute({
    method: "get",
    path: "/organizations/{organization_name}/entitlement-set",
    action: "organization.read",
    summary: "Show an organisation's entitlements: its plan's in the hosted edition (operations: whether remote runs can execute)",
    request: { params: orgParam },
    responses: ok("The entitlement set", resourceDocument(entitlementSetResource)),
  }),
  async (c) => {
    const { organization, plan, remoteExecution } = await entitlementsOf(callerOf(c), c.req.valid("param").organization_name);
    return jsonapi(c, { data: serializeEntitlements(organization, plan, remoteExecution) });
  },
);

organizations.openapi(
  defineRoute({
    method: "patch",
    path: "/organizations/{organization_name}",
    action: "organization.manage",
    summary: "Update an organisation",
    request: { params: orgParam, body: jsonBody(orgUpdateBody) },
    responses: ok("The organisation", resourceDocument(organizationResource)),
  }),
  async (c) => {
    const { attributes = {}, relationships } = c.req.valid("json").data;
    const pool = relationships?.["default-agent-pool"];
    const poolId = pool !== undefined ? (pool.data?.id ?? null) : attributes["default-agent-pool-id"];
    return jsonapi(c, { data: serializeOrganizationView(await changeOrganization(callerOf(c), c.req.valid("param").organization_name, attributes, poolId)) });
  },
);

organizations.openapi(
  defineRoute({
    method: "delete",
    path: "/organizations/{organization_name}",
    action: "organization.owner",
    summary: "Delete an organisation and everything in it",
    request: { params: orgParam },
    responses: noContentResponse,
  }),
  async (c) => {
    await removeOrganization(callerOf(c), c.req.valid("param").organization_name);
    return noContent(c);
  },
);
