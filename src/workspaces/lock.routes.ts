/** Lock, unlock, force-unlock and safe delete (HCP Terraform API docs, Workspaces). */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { callerOf } from "../auth/caller.http";
import type { AppEnv } from "../env";
import { unwrap } from "../errors";
import { LIMITS } from "../limits";
import { jsonapi, noContent } from "../jsonapi/document";
import { noContentResponse, ok, optionalJsonBody, router } from "../jsonapi/validation";
import { orgWorkspaceParam, workspaceIdParam, workspaceResource } from "./workspaces.schemas";
import { forceUnlockWorkspace, lockWorkspace, safeDeleteWorkspace, unlockWorkspace } from "./lock.service";
import { acknowledge } from "./workspaces.http";
import type { WorkspaceRef } from "./workspaces.service";
import { defineRoutes } from "../jsonapi/define-route";
import { resourceDocument } from "../jsonapi/schemas";

const defineRoute = defineRoutes({ tags: ["Workspace actions"] });
export const workspaceActions = router();

const reason = z.string().max(LIMITS.descriptionMax).nullable().optional();
/** go-tfe and Terraform wrap the reason in a JSON:API document with an empty type; plain `{reason}` and no body work too. */
const lockBody = z
  .union([z.object({ data: z.object({ type: z.string().max(64).optional(), attributes: z.object({ reason }).optional() }) }), z.object({ reason }).strict()])
  .optional()
  .transform((v) => (v === undefined ? undefined : "data" in v ? v.data.attributes?.reason : v.reason) ?? "");

workspaceActions.openapi(
  defineRoute({
    method: "post",
    path: "/workspaces/{workspace_id}/actions/lock",
    action: "workspace.lock",
    summary: "Lock a workspace",
    // The body is optional and may be empty even with a JSON:API Content-Type: the handler reads it (optionalJsonBody).
    description: 'Body (optional): `{"data":{"type":"","attributes":{"reason":"..."}}}` or `{"reason":"..."}`.',
    request: { params: workspaceIdParam },
    responses: { ...ok("The locked workspace", resourceDocument(workspaceResource)), 409: { description: "Already locked" } },
  }),
  async (c) => {
    const { workspace_id } = c.req.valid("param");
    const reasonText = unwrap(await optionalJsonBody(c, lockBody)).value;
    const result = await lockWorkspace(callerOf(c), workspace_id, reasonText);
    acknowledge(c, result);
    return jsonapi(c, { data: result.scope.serialize(result.workspace) });
  },
);

workspaceActions.openapi(
  defineRoute({
    method: "post",
    path: "/workspaces/{workspace_id}/actions/unlock",
    action: "workspace.lock",
    summary: "Unlock a workspace (only its locker may)",
    request: { params: workspaceIdParam },
    responses: {
      ...ok("The unlocked workspace", resourceDocument(workspaceResource)),
      409: { description: "Not locked, or locked by someone else" },
      503: { description: "Latest state version still pending; retry" },
    },
  }),
  async (c) => {
    const { workspace_id } = c.req.valid("param");
    const result = await unlockWorkspace(callerOf(c), workspace_id);
    acknowledge(c, result);
    return jsonapi(c, { data: result.scope.serialize(result.workspace) });
  },
);

workspaceActions.openapi(
  defineRoute({
    method: "post",
    path: "/workspaces/{workspace_id}/actions/force-unlock",
    action: "workspace.force-unlock",
    summary: "Force-unlock a workspace (workspace admins)",
    request: { params: workspaceIdParam },
    responses: { ...ok("The unlocked workspace", resourceDocument(workspaceResource)), 409: { description: "Not locked" } },
  }),
  async (c) => {
    const { workspace_id } = c.req.valid("param");
    const result = await forceUnlockWorkspace(callerOf(c), workspace_id);
    acknowledge(c, result);
    return jsonapi(c, { data: result.scope.serialize(result.workspace) });
  },
);

async function safeDelete(c: Context<AppEnv>, ref: WorkspaceRef): Promise<Response> {
  await safeDeleteWorkspace(callerOf(c), ref);
  return noContent(c);
}

workspaceActions.openapi(
  defineRoute({
    method: "post",
    path: "/workspaces/{workspace_id}/actions/safe-delete",
    action: "workspace.delete",
    summary: "Delete a workspace only if it is unlocked and manages no resources",
    request: { params: workspaceIdParam },
    responses: { ...noContentResponse, 409: { description: "Locked, managing resources, or still processing state" } },
  }),
  async (c) => safeDelete(c, c.req.valid("param").workspace_id),
);

workspaceActions.openapi(
  defineRoute({
    method: "post",
    path: "/organizations/{organization_name}/workspaces/{name}/actions/safe-delete",
    action: "workspace.delete",
    summary: "Safe delete by organisation and name",
    request: { params: orgWorkspaceParam },
    responses: { ...noContentResponse, 409: { description: "Locked, managing resources, or still processing state" } },
  }),
  async (c) => {
    const { organization_name, name } = c.req.valid("param");
    return safeDelete(c, { organization: organization_name, name });
  },
);
