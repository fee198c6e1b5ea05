/** Workspace variables: validate, one service call, serialise. */
import { z } from "@hono/zod-openapi";
import { callerOf } from "../auth/caller.http";
import { jsonapi, noContent } from "../jsonapi/document";
import { jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import { workspaceIdParam } from "../workspaces/workspaces.schemas";
import { acknowledge } from "../workspaces/workspaces.http";
import { createVariableBody, updateVariableBody, variableIdParam, variableResource } from "./variables.schemas";
import { serializeVariable } from "./variables.serialize";
import * as service from "./variables.service";
import { defineRoutes } from "../jsonapi/define-route";
import { listDocument, resourceDocument } from "../jsonapi/schemas";

const defineRoute = defineRoutes({ tags: ["Workspace variables"] });
export const variables = router();

const path = "/workspaces/{workspace_id}/vars";
const varParams = z.object({ workspace_id: workspaceIdParam.shape.workspace_id, var_id: variableIdParam });

variables.openapi(
  defineRoute({
    method: "get",
    path,
    action: "variables.read",
    summary: "List the workspace's own variables (sensitive values are never shown)",
    request: { params: workspaceIdParam },
    responses: ok("The variables", listDocument(variableResource)),
  }),
  async (c) => jsonapi(c, { data: (await service.listWorkspaceVariables(callerOf(c), c.req.valid("param").workspace_id)).map(serializeVariable) }),
);

variables.openapi(
  defineRoute({
    method: "post",
    path,
    action: "variables.write",
    summary: "Create a variable (one key per category)",
    request: { params: workspaceIdParam, body: jsonBody(createVariableBody) },
    responses: ok("The variable", resourceDocument(variableResource), 201),
  }),
  async (c) => {
    const res = await service.createWorkspaceVariable(callerOf(c), c.req.valid("param").workspace_id, c.req.valid("json").data.attributes);
    acknowledge(c, res);
    return jsonapi(c, { data: serializeVariable(res.view) }, 201);
  },
);

variables.openapi(
  defineRoute({
    method: "get",
    path: `${path}/{var_id}`,
    action: "variables.read",
    summary: "Show a variable",
    request: { params: varParams },
    responses: ok("The variable", resourceDocument(variableResource)),
  }),
  async (c) => {
    const p = c.req.valid("param");
    return jsonapi(c, { data: serializeVariable(await service.readWorkspaceVariable(callerOf(c), p.workspace_id, p.var_id)) });
  },
);

variables.openapi(
  defineRoute({
    method: "patch",
    path: `${path}/{var_id}`,
    action: "variables.write",
    summary: "Update a variable (a sensitive one stays sensitive)",
    request: { params: varParams, body: jsonBody(updateVariableBody) },
    responses: ok("The variable", resourceDocument(variableResource)),
  }),
  async (c) => {
    const p = c.req.valid("param");
    const view = await service.updateWorkspaceVariable(callerOf(c), p.workspace_id, p.var_id, c.req.valid("json").data.attributes ?? {});
    return jsonapi(c, { data: serializeVariable(view) });
  },
);

variables.openapi(
  defineRoute({
    method: "delete",
    path: `${path}/{var_id}`,
    action: "variables.write",
    summary: "Delete a variable",
    request: { params: varParams },
    responses: noContentResponse,
  }),
  async (c) => {
    const p = c.req.valid("param");
    acknowledge(c, await service.deleteWorkspaceVariable(callerOf(c), p.workspace_id, p.var_id));
    return noContent(c);
  },
);

variables.openapi(
  defineRoute({
    method: "get",
    path: "/workspaces/{workspace_id}/all-vars",
    action: "variables.read",
    summary: "The workspace's effective variables: its own and those of the variable sets reaching it, by precedence",
    request: { params: workspaceIdParam },
    responses: ok("The variables", listDocument(variableResource)),
  }),
  async (c) => jsonapi(c, { data: (await service.listEffectiveVariables(callerOf(c), c.req.valid("param").workspace_id)).map(serializeVariable) }),
);
