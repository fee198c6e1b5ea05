import type { Context } from "hono";
import { callerOf } from "../auth/caller.http";
import type { AppEnv } from "../env";
import { jsonapi, noContent, paginated } from "../jsonapi/document";
import { jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import { includeFor, parseInclude } from "./workspaces.include";
import { acknowledge } from "./workspaces.http";
import { type ListQuery, listQuery } from "./workspaces.filters";
import { listWorkspacePage } from "./workspaces.list.service";
import { exposeBookmark } from "../platform/db";
import { orgWorkspaceParam, workspaceCreateBody, workspaceIdParam, workspaceResource, workspaceUpdateBody } from "./workspaces.schemas";
import { includeQuery, listDocument, orgParam, resourceDocument } from "../jsonapi/schemas";
import { readById, readByName, type WorkspaceRef } from "./workspaces.service";
import { createWorkspace, forceDeleteWorkspace, updateWorkspace } from "./workspaces.write.service";
import { defineRoutes } from "../jsonapi/define-route";

const defineRoute = defineRoutes({ tags: ["Workspaces"] });
export const workspaces = router();

// ---- create ----

workspaces.openapi(
  defineRoute({
    method: "post",
    path: "/organizations/{organization_name}/workspaces",
    action: "workspace.create",
    summary: "Create a workspace",
    request: { params: orgParam, body: jsonBody(workspaceCreateBody) },
    responses: ok("The created workspace", resourceDocument(workspaceResource), 201),
  }),
  async (c) => {
    const result = await createWorkspace(callerOf(c), c.req.valid("param").organization_name, c.req.valid("json").data);
    acknowledge(c, result);
    return jsonapi(c, { data: result.scope.serialize(result.workspace) }, 201);
  },
);

// ---- show ----

workspaces.openapi(
  defineRoute({
    method: "get",
    path: "/workspaces/{workspace_id}",
    action: "workspace.read",
    summary: "Show a workspace by ID",
    request: { params: workspaceIdParam, query: includeQuery },
    responses: ok("The workspace", resourceDocument(workspaceResource)),
  }),
  async (c) => {
    const { workspace_id } = c.req.valid("param");
    const include = c.req.valid("query").include;
    const caller = callerOf(c);
    const { record, scope } = await readById(caller, workspace_id);
    const data = scope.serialize(record);
    return jsonapi(c, { data, ...(await includeFor(caller, new URL(c.req.url).origin, [record], scope, include, [data])) });
  },
);

workspaces.openapi(
  defineRoute({
    method: "get",
    path: "/organizations/{organization_name}/workspaces/{name}",
    action: "workspace.read",
    summary: "Show a workspace by organisation and name",
    request: { params: orgWorkspaceParam, query: includeQuery },
    responses: ok("The workspace", resourceDocument(workspaceResource)),
  }),
  async (c) => {
    const { organization_name, name } = c.req.valid("param");
    const include = c.req.valid("query").include;
    const caller = callerOf(c);
    const { record, scope } = await readByName(caller, organization_name, name);
    const data = scope.serialize(record);
    return jsonapi(c, { data, ...(await includeFor(caller, new URL(c.req.url).origin, [record], scope, include, [data])) });
  },
);

// ---- list ----

/** The list: one D1 batch carries the page and the caller's access to it (workspaces.list.service.ts). */
async function listWorkspaces(c: Context<AppEnv>, organization: string, query: ListQuery): Promise<Response> {
  const { spec, page, include } = query;
  parseInclude(include);

  // Authorisation data travels in the same batch, from the nearest fenced instance (docs/consistency.md).
  const caller = callerOf(c);
  let result: Awaited<ReturnType<typeof listWorkspacePage>>;
  try {
    result = await listWorkspacePage(caller, organization, spec);
  } finally {
    exposeBookmark(c, caller.near);
  }
  const data = result.records.map(result.scope.serialize);
  const inc = await includeFor(caller, new URL(c.req.url).origin, result.records, result.scope, include, data);
  return jsonapi(c, paginated(c, data, page, result.total, inc));
}

workspaces.openapi(
  defineRoute({
    method: "get",
    path: "/organizations/{organization_name}/workspaces",
    action: "organization.read",
    summary: "List workspaces",
    description:
      "`filter[tagged][i][key]` and `filter[tagged][i][value]` (i = 0, 1, …) narrow the list to workspaces with every given tag binding; an empty value means any.",
    request: { params: orgParam, query: listQuery },
    responses: ok("A page of workspaces", listDocument(workspaceResource)),
  }),
  async (c) => listWorkspaces(c, c.req.valid("param").organization_name, c.req.valid("query")),
);

// ---- update ----

async function update(c: Context<AppEnv>, ref: WorkspaceRef, body: (typeof workspaceUpdateBody)["_output"]["data"]): Promise<Response> {
  const result = await updateWorkspace(callerOf(c), ref, body);
  acknowledge(c, result);
  return jsonapi(c, { data: result.scope.serialize(result.workspace) });
}

workspaces.openapi(
  defineRoute({
    method: "patch",
    path: "/workspaces/{workspace_id}",
    action: "workspace.update",
    summary: "Update a workspace by ID",
    request: { params: workspaceIdParam, body: jsonBody(workspaceUpdateBody) },
    responses: ok("The updated workspace", resourceDocument(workspaceResource)),
  }),
  async (c) => update(c, c.req.valid("param").workspace_id, c.req.valid("json").data),
);

workspaces.openapi(
  defineRoute({
    method: "patch",
    path: "/organizations/{organization_name}/workspaces/{name}",
    action: "workspace.update",
    summary: "Update a workspace by organisation and name",
    request: { params: orgWorkspaceParam, body: jsonBody(workspaceUpdateBody) },
    responses: ok("The updated workspace", resourceDocument(workspaceResource)),
  }),
  async (c) => {
    const { organization_name, name } = c.req.valid("param");
    return update(c, { organization: organization_name, name }, c.req.valid("json").data);
  },
);

// ---- force delete ----

async function forceDelete(c: Context<AppEnv>, ref: WorkspaceRef): Promise<Response> {
  await forceDeleteWorkspace(callerOf(c), ref);
  return noContent(c);
}

workspaces.openapi(
  defineRoute({
    method: "delete",
    path: "/workspaces/{workspace_id}",
    action: "workspace.force-delete",
    summary: "Force delete a workspace by ID",
    request: { params: workspaceIdParam },
    responses: { ...noContentResponse, 403: { description: "Not authorised to force delete" } },
  }),
  async (c) => forceDelete(c, c.req.valid("param").workspace_id),
);

workspaces.openapi(
  defineRoute({
    method: "delete",
    path: "/organizations/{organization_name}/workspaces/{name}",
    action: "workspace.force-delete",
    summary: "Force delete a workspace by organisation and name",
    request: { params: orgWorkspaceParam },
    responses: { ...noContentResponse, 403: { description: "Not authorised to force delete" } },
  }),
  async (c) => {
    const { organization_name, name } = c.req.valid("param");
    return forceDelete(c, { organization: organization_name, name });
  },
);
