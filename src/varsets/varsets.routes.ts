/** Variable sets and their variables: validate, one service call, serialise. */
import type { Context } from "hono";
import { callerOf } from "../auth/caller.http";
import type { AppEnv } from "../env";
import { jsonapi, noContent, paginated, type Page, type Resource } from "../jsonapi/document";
import { includeQuery, listDocument as listOf, orgParam, pageOf, resourceDocument } from "../jsonapi/schemas";
import { jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import { createVariableBody, updateVariableBody, variableResource } from "../variables/variables.schemas";
import { serializeVariable } from "../variables/variables.serialize";
import { workspaceIdParam } from "../workspaces/workspaces.schemas";
import type { Varset } from "./varsets.d1";
import {
  createVarsetBody,
  listQuery,
  pageIncludeQuery,
  projectRefsBody,
  updateVarsetBody,
  varsetResource,
  varsetIdParam,
  varsetVarParams,
  workspaceRefsBody,
} from "./varsets.schemas";
import { projectParam } from "../projects/projects.schemas";
import { serializeVarset } from "./varsets.serialize";
import * as service from "./varsets.service";
import { defineRoutes } from "../jsonapi/define-route";

const defineRoute = defineRoutes({ tags: ["Variable sets"] });
export const varsets = router();
const varsetPageResponse = ok("A page of variable sets", listOf(varsetResource));

const include = (query: { include?: string }) => service.parseVarsetInclude(query.include);

function listDocument(c: Context<AppEnv>, page: Page, res: { items: Varset[]; total: number; full: boolean; included: Resource[] }) {
  const data = res.items.map((v) => serializeVarset(v, res.full));
  return jsonapi(c, paginated(c, data, page, res.total, res.included.length ? { included: res.included } : {}));
}

function oneDocument(c: Context<AppEnv>, res: { varset: Varset; full: boolean; included: Resource[] }) {
  const doc: { data: Resource; included?: Resource[] } = { data: serializeVarset(res.varset, res.full) };
  if (res.included.length) doc.included = res.included;
  return jsonapi(c, doc);
}

varsets.openapi(
  defineRoute({
    method: "get",
    path: "/organizations/{organization_name}/varsets",
    action: "varsets.read",
    summary: "List the organisation's variable sets",
    request: { params: orgParam, query: listQuery },
    responses: varsetPageResponse,
  }),
  async (c) => {
    const query = c.req.valid("query");
    const page = pageOf(query);
    return listDocument(c, page, await service.listOrganizationVarsets(callerOf(c), c.req.valid("param").organization_name, query.q, page, include(query)));
  },
);

varsets.openapi(
  defineRoute({
    method: "post",
    path: "/organizations/{organization_name}/varsets",
    action: "varsets.manage",
    summary: "Create a variable set",
    request: { params: orgParam, body: jsonBody(createVarsetBody) },
    responses: ok("The variable set", resourceDocument(varsetResource), 201),
  }),
  async (c) => {
    const set = await service.createVarset(callerOf(c), c.req.valid("param").organization_name, c.req.valid("json").data);
    return jsonapi(c, { data: serializeVarset(set, true) }, 201);
  },
);

varsets.openapi(
  defineRoute({
    method: "get",
    path: "/varsets/{varset_id}",
    action: "varsets.read",
    summary: "Show a variable set",
    request: { params: varsetIdParam, query: includeQuery },
    responses: ok("The variable set", resourceDocument(varsetResource)),
  }),
  async (c) => oneDocument(c, await service.showVarset(callerOf(c), c.req.valid("param").varset_id, include(c.req.valid("query")))),
);

varsets.openapi(
  defineRoute({
    method: "patch",
    path: "/varsets/{varset_id}",
    action: "varsets.manage",
    summary: "Update a variable set (relationships.workspaces replaces its workspaces)",
    request: { params: varsetIdParam, query: includeQuery, body: jsonBody(updateVarsetBody) },
    responses: ok("The variable set", resourceDocument(varsetResource)),
  }),
  async (c) => oneDocument(c, await service.updateVarset(callerOf(c), c.req.valid("param").varset_id, c.req.valid("json").data, include(c.req.valid("query")))),
);

varsets.openapi(
  defineRoute({
    method: "delete",
    path: "/varsets/{varset_id}",
    action: "varsets.manage",
    summary: "Delete a variable set",
    request: { params: varsetIdParam },
    responses: noContentResponse,
  }),
  async (c) => {
    await service.deleteVarset(callerOf(c), c.req.valid("param").varset_id);
    return noContent(c);
  },
);

// ---- where a set applies ----

for (const [method, op] of [
  ["post", "add"],
  ["delete", "remove"],
] as const) {
  varsets.openapi(
    defineRoute({
      method,
      path: "/varsets/{varset_id}/relationships/workspaces",
      action: "varsets.manage",
      summary: op === "add" ? "Apply the set to workspaces" : "Remove the set from workspaces",
      request: { params: varsetIdParam, body: jsonBody(workspaceRefsBody) },
      responses: noContentResponse,
    }),
    async (c) => {
      await service.changeWorkspaces(
        callerOf(c),
        c.req.valid("param").varset_id,
        op,
        c.req.valid("json").data.map((w) => w.id),
      );
      return noContent(c);
    },
  );
  varsets.openapi(
    defineRoute({
      method,
      path: "/varsets/{varset_id}/relationships/projects",
      action: "varsets.manage",
      summary: op === "add" ? "Apply the set to projects" : "Remove the set from projects",
      request: { params: varsetIdParam, body: jsonBody(projectRefsBody) },
      responses: noContentResponse,
    }),
    async (c) => {
      await service.changeProjects(
        callerOf(c),
        c.req.valid("param").varset_id,
        op,
        c.req.valid("json").data.map((p) => p.id),
      );
      return noContent(c);
    },
  );
}

varsets.openapi(
  defineRoute({
    method: "get",
    path: "/workspaces/{workspace_id}/varsets",
    action: "variables.read",
    summary: "Variable sets reaching a workspace (applied to it, to its project, or global)",
    request: { params: workspaceIdParam, query: pageIncludeQuery },
    responses: varsetPageResponse,
  }),
  async (c) => {
    const query = c.req.valid("query");
    const page = pageOf(query);
    return listDocument(c, page, await service.listWorkspaceVarsets(callerOf(c), c.req.valid("param").workspace_id, page, include(query)));
  },
);

varsets.openapi(
  defineRoute({
    method: "get",
    path: "/projects/{project_id}/varsets",
    action: "project.read-variables",
    summary: "Variable sets applied to a project",
    request: { params: projectParam, query: pageIncludeQuery },
    responses: varsetPageResponse,
  }),
  async (c) => {
    const query = c.req.valid("query");
    const page = pageOf(query);
    return listDocument(c, page, await service.listProjectVarsets(callerOf(c), c.req.valid("param").project_id, page, include(query)));
  },
);

// ---- the sets' variables ----

const varsPath = "/varsets/{varset_id}/relationships/vars";

varsets.openapi(
  defineRoute({
    method: "get",
    path: varsPath,
    action: "varsets.read",
    summary: "List a set's variables (sensitive values are never shown)",
    request: { params: varsetIdParam },
    responses: ok("The variables", listOf(variableResource)),
  }),
  async (c) => jsonapi(c, { data: (await service.listVarsetVariables(callerOf(c), c.req.valid("param").varset_id)).map(serializeVariable) }),
);

varsets.openapi(
  defineRoute({
    method: "post",
    path: varsPath,
    action: "varsets.manage",
    summary: "Add a variable to a set",
    request: { params: varsetIdParam, body: jsonBody(createVariableBody) },
    responses: ok("The variable", resourceDocument(variableResource), 201),
  }),
  async (c) => {
    const view = await service.createVarsetVariable(callerOf(c), c.req.valid("param").varset_id, c.req.valid("json").data.attributes);
    return jsonapi(c, { data: serializeVariable(view) }, 201);
  },
);

varsets.openapi(
  defineRoute({
    method: "get",
    path: `${varsPath}/{var_id}`,
    action: "varsets.read",
    summary: "Show a set's variable",
    request: { params: varsetVarParams },
    responses: ok("The variable", resourceDocument(variableResource)),
  }),
  async (c) => {
    const p = c.req.valid("param");
    return jsonapi(c, { data: serializeVariable(await service.readVarsetVariable(callerOf(c), p.varset_id, p.var_id)) });
  },
);

varsets.openapi(
  defineRoute({
    method: "patch",
    path: `${varsPath}/{var_id}`,
    action: "varsets.manage",
    summary: "Update a set's variable (a sensitive one stays sensitive)",
    request: { params: varsetVarParams, body: jsonBody(updateVariableBody) },
    responses: ok("The variable", resourceDocument(variableResource)),
  }),
  async (c) => {
    const p = c.req.valid("param");
    const view = await service.updateVarsetVariable(callerOf(c), p.varset_id, p.var_id, c.req.valid("json").data.attributes ?? {});
    return jsonapi(c, { data: serializeVariable(view) });
  },
);

varsets.openapi(
  defineRoute({
    method: "delete",
    path: `${varsPath}/{var_id}`,
    action: "varsets.manage",
    summary: "Delete a set's variable",
    request: { params: varsetVarParams },
    responses: noContentResponse,
  }),
  async (c) => {
    const p = c.req.valid("param");
    await service.deleteVarsetVariable(callerOf(c), p.varset_id, p.var_id);
    return noContent(c);
  },
);
