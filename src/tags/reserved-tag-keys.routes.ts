/** Reserved tag keys (HCP reserved-tag-keys API; go-tfe ReservedTagKeys): list, create, update, delete. */
import { z } from "@hono/zod-openapi";
import { callerOf } from "../auth/caller.http";
import { jsonapi, noContent, paginated } from "../jsonapi/document";
import { listDocument, orgParam, pageOf, pageQuery, resourceDocument } from "../jsonapi/schemas";
import { jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import { serializeReservedTagKey } from "./reserved-tag-keys.serialize";
import { createReservedTagKey, listOrgReservedTagKeys, removeReservedTagKey, updateReservedTagKeyById } from "./reserved-tag-keys.service";
import { defineRoutes } from "../jsonapi/define-route";
import { reservedTagKeyResource } from "./tags.schemas";

const defineRoute = defineRoutes({ tags: ["Reserved tag keys"] });
export const reservedTagKeys = router();

const idParam = z.object({ id: z.string().regex(/^rtk-[A-Za-z0-9]{1,64}$/) });
// The key's rules (and their texts, which go-tfe matches) are the service's: here only a bound on the size.
const attributes = z.object({ key: z.string().max(1000).optional(), "disable-overrides": z.boolean().optional() });
const body = (name: string) => z.object({ data: z.object({ type: z.literal("reserved-tag-keys"), attributes: attributes.optional() }) }).openapi(name);

reservedTagKeys.openapi(
  defineRoute({
    method: "get",
    path: "/organizations/{organization_name}/reserved-tag-keys",
    // Reserved tag keys: members read them; the docs ask for the admin preset to manage them (owners, organisation token).
    action: "organization.read",
    summary: "List reserved tag keys",
    request: { params: orgParam, query: pageQuery },
    responses: ok("A page of reserved tag keys, oldest first", listDocument(reservedTagKeyResource)),
  }),
  async (c) => {
    const page = pageOf(c.req.valid("query"));
    const { keys, total } = await listOrgReservedTagKeys(callerOf(c), c.req.valid("param").organization_name, page);
    return jsonapi(c, paginated(c, keys.map(serializeReservedTagKey), page, total));
  },
);

reservedTagKeys.openapi(
  defineRoute({
    method: "post",
    path: "/organizations/{organization_name}/reserved-tag-keys",
    action: "organization.manage",
    summary: "Add a reserved tag key",
    request: { params: orgParam, body: jsonBody(body("ReservedTagKeyCreate")) },
    responses: ok("The reserved tag key", resourceDocument(reservedTagKeyResource), 201),
  }),
  async (c) => {
    const a = c.req.valid("json").data.attributes ?? {};
    const reserved = await createReservedTagKey(callerOf(c), c.req.valid("param").organization_name, { key: a.key, disableOverrides: a["disable-overrides"] });
    return jsonapi(c, { data: serializeReservedTagKey(reserved) }, 201);
  },
);

reservedTagKeys.openapi(
  defineRoute({
    method: "patch",
    path: "/reserved-tag-keys/{id}",
    action: "organization.manage",
    summary: "Update a reserved tag key",
    request: { params: idParam, body: jsonBody(body("ReservedTagKeyUpdate")) },
    responses: ok("The reserved tag key", resourceDocument(reservedTagKeyResource)),
  }),
  async (c) => {
    const a = c.req.valid("json").data.attributes ?? {};
    const reserved = await updateReservedTagKeyById(callerOf(c), c.req.valid("param").id, { key: a.key, disableOverrides: a["disable-overrides"] });
    return jsonapi(c, { data: serializeReservedTagKey(reserved) });
  },
);

reservedTagKeys.openapi(
  defineRoute({
    method: "delete",
    path: "/reserved-tag-keys/{id}",
    action: "organization.manage",
    summary: "Delete a reserved tag key",
    request: { params: idParam },
    responses: noContentResponse,
  }),
  async (c) => {
    await removeReservedTagKey(callerOf(c), c.req.valid("param").id);
    return noContent(c);
  },
);
