/**
 * Terraform versions (Terraform Enterprise's Admin Terraform Versions API): the site admin lists, shows, adds,
 * changes and removes the versions workspaces may use. docs/terraform-versions.md has the list's life.
 */
import { z } from "@hono/zod-openapi";
import { callerOf } from "../auth/caller.http";
import { jsonapi, noContent, paginated } from "../jsonapi/document";
import { defineRoutes } from "../jsonapi/define-route";
import { listDocument, pageOf, pageQuery, resourceDocument } from "../jsonapi/schemas";
import { jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import { terraformVersionResource, versionCreateBody, versionIdParam, versionUpdateBody } from "./terraform-versions.schemas";
import { serializeTerraformVersion } from "./terraform-versions.serialize";
import {
  createTerraformVersion,
  deleteTerraformVersion,
  listTerraformVersions,
  showTerraformVersion,
  updateTerraformVersion,
} from "./terraform-versions.service";

const defineRoute = defineRoutes({ tags: ["Admin"] });
export const terraformVersions = router();

terraformVersions.openapi(
  defineRoute({
    method: "get",
    path: "/admin/terraform-versions",
    action: "site-admin",
    summary: "List Terraform versions (site admins)",
    request: {
      query: pageQuery.extend({ "filter[version]": z.string().max(128).optional(), "search[version]": z.string().max(128).optional() }).passthrough(),
    },
    responses: ok("A page of Terraform versions, newest first", listDocument(terraformVersionResource)),
  }),
  async (c) => {
    const q = c.req.valid("query");
    const page = pageOf(q);
    const { items, total } = await listTerraformVersions(callerOf(c), { filter: q["filter[version]"], search: q["search[version]"] }, page);
    return jsonapi(
      c,
      paginated(
        c,
        items.map((i) => serializeTerraformVersion(i.version, i.usage)),
        page,
        total,
      ),
    );
  },
);

terraformVersions.openapi(
  defineRoute({
    method: "post",
    path: "/admin/terraform-versions",
    action: "site-admin",
    summary: "Add a Terraform version (site admins)",
    request: { body: jsonBody(versionCreateBody) },
    responses: ok("The version", resourceDocument(terraformVersionResource), 201),
  }),
  async (c) => {
    const created = await createTerraformVersion(callerOf(c), c.req.valid("json").data.attributes);
    return jsonapi(c, { data: serializeTerraformVersion(created.version, created.usage) }, 201);
  },
);

terraformVersions.openapi(
  defineRoute({
    method: "get",
    path: "/admin/terraform-versions/{version_id}",
    action: "site-admin",
    summary: "Show a Terraform version (site admins)",
    request: { params: versionIdParam },
    responses: ok("The version", resourceDocument(terraformVersionResource)),
  }),
  async (c) => {
    const shown = await showTerraformVersion(callerOf(c), c.req.valid("param").version_id);
    return jsonapi(c, { data: serializeTerraformVersion(shown.version, shown.usage) });
  },
);

terraformVersions.openapi(
  defineRoute({
    method: "patch",
    path: "/admin/terraform-versions/{version_id}",
    action: "site-admin",
    summary: "Update a Terraform version (site admins)",
    request: { params: versionIdParam, body: jsonBody(versionUpdateBody) },
    responses: ok("The version", resourceDocument(terraformVersionResource)),
  }),
  async (c) => {
    const updated = await updateTerraformVersion(callerOf(c), c.req.valid("param").version_id, c.req.valid("json").data.attributes ?? {});
    return jsonapi(c, { data: serializeTerraformVersion(updated.version, updated.usage) });
  },
);

terraformVersions.openapi(
  defineRoute({
    method: "delete",
    path: "/admin/terraform-versions/{version_id}",
    action: "site-admin",
    summary: "Remove a Terraform version (site admins; not an official one, nor one a workspace uses)",
    request: { params: versionIdParam },
    responses: { ...noContentResponse },
  }),
  async (c) => {
    await deleteTerraformVersion(callerOf(c), c.req.valid("param").version_id);
    return noContent(c);
  },
);
