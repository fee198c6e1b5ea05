/** Configuration versions (HCP Terraform API docs: Configuration Versions): created here, uploaded through a signed URL. */
import type { Context } from "hono";
import { callerOf } from "../auth/caller.http";
import type { AppEnv } from "../env";
import { defineRoutes } from "../jsonapi/define-route";
import { jsonapi, noContent, paginated } from "../jsonapi/document";
import { includeQuery, listDocument, pageOf, pageQuery, resourceDocument } from "../jsonapi/schemas";
import { jsonBody, noContentResponse, ok, router, includesOf } from "../jsonapi/validation";
import { workspaceIdParam } from "../workspaces/workspaces.schemas";
import { z } from "@hono/zod-openapi";
import { configurationVersionResource, cvCreateBody, cvIdParam, ingressAttributesResource } from "./configuration-versions.schemas";
import { serializeConfigurationVersion, serializeIngressAttributes } from "./configuration-versions.serialize";
import {
  archiveConfigurationVersion,
  configurationDownloadUrl,
  createConfigurationVersion,
  listConfigurationVersions,
  manageConfigurationVersionBackingData,
  readConfigurationVersion,
} from "./configuration-versions.service";

const defineRoute = defineRoutes({ tags: ["Configuration versions"] });
export const configurationVersions = router();

const origin = (c: Context<AppEnv>) => new URL(c.req.url).origin;

/**
 * `include` of the documented values: `ingress_attributes` (commit information, which only VCS configuration has) and
 * `run` (runs are queued from an upload by the run engine); neither adds anything for versions from the API or CLI.
 */
function checkInclude(raw: string | undefined): void {
  includesOf(raw, ["ingress_attributes", "run"]);
}

configurationVersions.openapi(
  defineRoute({
    method: "post",
    path: "/workspaces/{workspace_id}/configuration-versions",
    action: "runs.queue",
    summary: "Create a configuration version; the response alone carries its upload URL",
    request: { params: workspaceIdParam, body: jsonBody(cvCreateBody) },
    responses: ok("The configuration version", resourceDocument(configurationVersionResource), 201),
  }),
  async (c) => {
    const wsId = c.req.valid("param").workspace_id;
    const { cv, uploadUrl } = await createConfigurationVersion(callerOf(c), wsId, c.req.valid("json").data.attributes ?? {}, {
      fromCli: (c.req.header("X-Terraform-Integration") ?? "").toLowerCase() === "cloud",
      origin: origin(c),
    });
    return jsonapi(c, { data: serializeConfigurationVersion(cv, uploadUrl) }, 201);
  },
);

configurationVersions.openapi(
  defineRoute({
    method: "get",
    path: "/workspaces/{workspace_id}/configuration-versions",
    action: "runs.read",
    summary: "List a workspace's configuration versions, newest first",
    request: { params: workspaceIdParam, query: pageQuery.merge(includeQuery) },
    responses: ok("A page of configuration versions", listDocument(configurationVersionResource)),
  }),
  async (c) => {
    const q = c.req.valid("query");
    checkInclude(q.include);
    const page = pageOf(q);
    const { items, total } = await listConfigurationVersions(callerOf(c), c.req.valid("param").workspace_id, page);
    return jsonapi(
      c,
      paginated(
        c,
        items.map((cv) => serializeConfigurationVersion(cv)),
        page,
        total,
      ),
    );
  },
);

configurationVersions.openapi(
  defineRoute({
    method: "get",
    path: "/configuration-versions/{configuration_version_id}",
    action: "runs.read",
    summary: "Show a configuration version",
    request: { params: cvIdParam, query: includeQuery },
    responses: ok("The configuration version", resourceDocument(configurationVersionResource)),
  }),
  async (c) => {
    const include = c.req.valid("query").include;
    checkInclude(include);
    const cv = await readConfigurationVersion(callerOf(c), c.req.valid("param").configuration_version_id);
    const wantsIngress = (include ?? "").split(",").some((v) => v.trim() === "ingress_attributes");
    const included = wantsIngress && cv.ingress ? [serializeIngressAttributes(cv.ingress)] : undefined;
    return jsonapi(c, { data: serializeConfigurationVersion(cv), ...(included ? { included } : {}) });
  },
);

configurationVersions.openapi(
  defineRoute({
    method: "get",
    path: "/configuration-versions/{configuration_version_id}/ingress-attributes",
    action: "runs.read",
    summary: "Show the commit a configuration version from a repository was made of (data null for the API's and the CLI's)",
    request: { params: cvIdParam },
    responses: ok("The ingress attributes", z.object({ data: ingressAttributesResource.nullable() }).openapi("IngressAttributesDocument")),
  }),
  async (c) => {
    const cv = await readConfigurationVersion(callerOf(c), c.req.valid("param").configuration_version_id);
    return jsonapi(c, { data: cv.ingress ? serializeIngressAttributes(cv.ingress) : null });
  },
);

configurationVersions.openapi(
  defineRoute({
    method: "post",
    path: "/configuration-versions/{configuration_version_id}/actions/archive",
    action: "runs.queue",
    summary: "Archive an uploaded configuration version (not the current one, nor one an unfinished run uses)",
    request: { params: cvIdParam },
    responses: { 202: { description: "Archived; no body" }, 409: { description: "Not archivable" } },
  }),
  async (c) => {
    await archiveConfigurationVersion(callerOf(c), c.req.valid("param").configuration_version_id);
    return c.body(null, 202);
  },
);

configurationVersions.openapi(
  defineRoute({
    method: "get",
    path: "/configuration-versions/{configuration_version_id}/download",
    action: "runs.read",
    summary: "Redirect to a short-lived signed URL of the uploaded archive (404 while not uploaded)",
    request: { params: cvIdParam },
    responses: { 302: { description: "Redirect to the tar.gz" } },
  }),
  async (c) => c.redirect(await configurationDownloadUrl(callerOf(c), c.req.valid("param").configuration_version_id, origin(c)), 302),
);

// Terraform Enterprise's backing-data actions (go-tfe ConfigurationVersions.SoftDeleteBackingData and friends).
for (const action of ["soft_delete_backing_data", "restore_backing_data", "permanently_delete_backing_data"] as const) {
  configurationVersions.openapi(
    defineRoute({
      method: "post",
      path: `/configuration-versions/{configuration_version_id}/actions/${action}`,
      action: "workspace.update",
      summary: `${action.replace(/_/g, " ")} (self-hosted edition; not the current configuration version)`,
      request: { params: cvIdParam },
      responses: noContentResponse,
    }),
    async (c) => {
      await manageConfigurationVersionBackingData(callerOf(c), c.req.valid("param").configuration_version_id, action);
      return noContent(c);
    },
  );
}
