/** Variable sets and their variables: validate, one service call, serialise. */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { callerOf } from "../auth/caller.http";
import type { AppEnv } from "../env";
import { jsonapi, noContent, paginated, readPage, type Resource } from "../jsonapi/document";
import { errorResponses, jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import { createVariableBody, updateVariableBody } from "../variables/variables.schemas";
import { serializeVariable } from "../variables/variables.serialize";
import type { VariableView } from "../variables/variables.types";
import { orgParam, workspaceIdParam } from "../workspaces/workspaces.schemas";
import type { Varset } from "./varsets.d1";
import {
  createVarsetBody,
  includeQuery,
  listQuery,
  projectIdParam,
  projectRefsBody,
  updateVarsetBody,
  varsetIdParam,
  varsetVarParams,
  workspaceRefsBody,
} from "./varsets.schemas";
import { serializeVarset } from "./varsets.serialize";
import * as service from "./varsets.service";
import { defineRoute } from "../jsonapi/define-route";

const tags = ["Variable sets"];
export const varsets = router();

const include = (c: Context<AppEnv>) => service.parseVarsetInclude(c.req.query("include"));

function listDocument(c: Context<AppEnv>, res: { items: Varset[]; total: number; full: boolean; included: VariableView[] }) {
  const data = res.items.map((v) => serializeVarset(v, res.full));
  return jsonapi(c, paginated(c, data, readPage(c), res.total, { included: res.included.map(serializeVariable) }));
}

function oneDocument(c: Context<AppEnv>, res: { varset: Varset; full: boolean; included: VariableView[] }) {
  const doc: { data: Resource; included?: Resource[] } = { data: serializeVarset(res.varset, res.full) };
  if (res.included.length) doc.included = res.included.map(serializeVariable);
  return jsonapi(c, doc);
}

varsets.openapi(
  defineRoute({
    method: "get",
    path: "/organizations/{organization_name}/varsets",
    action: "varsets.read",
    tags,
    summary: "List the organisation's variable sets",
    request: { params: orgParam, query: listQuery },
    responses: { ...ok("A page of variable sets"), ...errorResponses },
  }),
  async (c) => {
    const org = c.req.valid("param").organization_name;
    return listDocument(c, await service.listOrganizationVarsets(callerOf(c), org, c.req.valid("query").q, readPage(c), include(c)));
  },
);

varsets.openapi(
  defineRoute({
    method: "post",
    path: "/organizations/{organization_name}/varsets",
    action: "varsets.manage",
    tags,
    summary: "Create a variable set",
    request: { params: orgParam, body: jsonBody(createVarsetBody) },
    responses: { ...ok("The variable set", 201), ...errorResponses },
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
    tags,
    summary: "Show a variable set",
    request: { params: varsetIdParam, query: includeQuery },
    responses: { ...ok("The variable set"), ...errorResponses },
  }),
  async (c) => oneDocument(c, await service.showVarset(callerOf(c), c.req.valid("param").varset_id, include(c))),
);

varsets.openapi(
  defineRoute({
    method: "patch",
    path: "/varsets/{varset_id}",
    action: "varsets.manage",
    tags,
    summary: "Update a variable set (relationships.workspaces replaces its workspaces)",
    request: { params: varsetIdParam, query: includeQuery, body: jsonBody(updateVarsetBody) },
    responses: { ...ok("The variable set"), ...errorResponses },
  }),
  async (c) => oneDocument(c, await service.updateVarset(callerOf(c), c.req.valid("param").varset_id, c.req.valid("json").data, include(c))),
);

varsets.openapi(
  defineRoute({
    method: "delete",
    path: "/varsets/{varset_id}",
    action: "varsets.manage",
    tags,
    summary: "Delete a variable set",
    request: { params: varsetIdParam },
    responses: { ...noContentResponse, ...errorResponses },
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
      tags,
      summary: op === "add" ? "Apply the set to workspaces" : "Remove the set from workspaces",
      request: { params: varsetIdParam, body: jsonBody(workspaceRefsBody) },
      responses: { ...noContentResponse, ...errorResponses },
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
      tags,
      summary: op === "add" ? "Apply the set to projects" : "Remove the set from projects",
      request: { params: varsetIdParam, body: jsonBody(projectRefsBody) },
      responses: { ...noContentResponse, ...errorResponses },
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

const pageQuery = z
  .object({ include: z.string().max(200).optional(), "page[number]": z.string().max(20).optional(), "page[size]": z.string().max(20).optional() })
  .passthrough();

varsets.openapi(
  defineRoute({
    method: "get",
    path: "/workspaces/{workspace_id}/varsets",
    action: "variables.read",
    tags,
    summary: "Variable sets reaching a workspace (applied to it, to its project, or global)",
    request: { params: workspaceIdParam, query: pageQuery },
    responses: { ...ok("A page of variable sets"), ...errorResponses },
  }),
  async (c) => listDocument(c, await service.listWorkspaceVarsets(callerOf(c), c.req.valid("param").workspace_id, readPage(c), include(c))),
);

varsets.openapi(
  defineRoute({
    method: "get",
    path: "/projects/{project_id}/varsets",
    action: "project.read-variables",
    tags,
    summary: "Variable sets applied to a project",
    request: { params: projectIdParam, query: pageQuery },
    responses: { ...ok("A page of variable sets"), ...errorResponses },
  }),
  async (c) => listDocument(c, await service.listProjectVarsets(callerOf(c), c.req.valid("param").project_id, readPage(c), include(c))),
);

// ---- the sets' variables ----

const varsPath = "/varsets/{varset_id}/relationships/vars";

varsets.openapi(
  defineRoute({
    method: "get",
    path: varsPath,
    action: "varsets.read",
    tags,
    summary: "List a set's variables (sensitive values are never shown)",
    request: { params: varsetIdParam },
    responses: { ...ok("The variables"), ...errorResponses },
  }),
  async (c) => jsonapi(c, { data: (await service.listVarsetVariables(callerOf(c), c.req.valid("param").varset_id)).map(serializeVariable) }),
);

varsets.openapi(
  defineRoute({
    method: "post",
    path: varsPath,
    action: "varsets.manage",
    tags,
    summary: "Add a variable to a set",
    request: { params: varsetIdParam, body: jsonBody(createVariableBody) },
    responses: { ...ok("The variable", 201), ...errorResponses },
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
    tags,
    summary: "Show a set's variable",
    request: { params: varsetVarParams },
    responses: { ...ok("The variable"), ...errorResponses },
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
    tags,
    summary: "Update a set's variable (a sensitive one stays sensitive)",
    request: { params: varsetVarParams, body: jsonBody(updateVariableBody) },
    responses: { ...ok("The variable"), ...errorResponses },
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
    tags,
    summary: "Delete a set's variable",
    request: { params: varsetVarParams },
    responses: { ...noContentResponse, ...errorResponses },
  }),
  async (c) => {
    const p = c.req.valid("param");
    await service.deleteVarsetVariable(callerOf(c), p.varset_id, p.var_id);
    return noContent(c);
  },
);
