/** Remote-state consumers and SSH key assignment (HCP Terraform API docs, Workspaces). */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { callerOf } from "../auth/caller.http";
import { listSession } from "../platform/db";
import type { AppEnv } from "../env";
import { LIMITS } from "../limits";
import { jsonapi, noContent, paginated } from "../jsonapi/document";
import { listDocument, pageOf, pageQuery, resourceDocument } from "../jsonapi/schemas";
import { jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import type { ConsumerChange } from "./consumers.rules";
import { changeConsumers, listConsumers, setSshKey } from "./consumers.service";
import { workspaceIdParam, workspaceResource } from "./workspaces.schemas";
import { acknowledge } from "./workspaces.http";
import { defineRoutes } from "../jsonapi/define-route";

const defineRoute = defineRoutes({ tags: ["Remote state consumers"] });
export const consumers = router();

/** go-tfe sends each entry as a whole workspace object: only `type` and `id` are used. */
const consumerEntries = z.array(z.object({ type: z.literal("workspaces"), id: z.string().max(64) }).passthrough()).max(LIMITS.consumersPerRequest);
const consumersBody = z.object({ data: consumerEntries.min(1) }).openapi("RemoteStateConsumers");
/** JSON:API: PATCH of a to-many relationship with `data: []` clears it. */
const consumersReplaceBody = z.object({ data: consumerEntries }).openapi("RemoteStateConsumersReplace");
const path = "/workspaces/{workspace_id}/relationships/remote-state-consumers";

consumers.openapi(
  defineRoute({
    method: "get",
    path,
    action: "workspace.read",
    summary: "List the workspaces that may read this workspace's state",
    request: {
      params: workspaceIdParam,
      query: pageQuery,
    },
    responses: ok("A page of workspaces", listDocument(workspaceResource)),
  }),
  async (c) => {
    const page = pageOf(c.req.valid("query"));
    const { records, scope, total } = await listConsumers(callerOf(c), listSession(c), c.req.valid("param").workspace_id, page);
    return jsonapi(c, paginated(c, records.map(scope.serialize), page, total));
  },
);

async function change(c: Context<AppEnv>, op: ConsumerChange["op"]): Promise<Response> {
  const id = c.req.param("workspace_id")!;
  const ids = (c.req.valid as (t: "json") => z.infer<typeof consumersBody>)("json").data.map((d) => d.id);
  acknowledge(c, await changeConsumers(callerOf(c), id, op, { ids }));
  return noContent(c);
}

for (const [method, op, summary] of [
  ["post", "add", "Add remote state consumers"],
  ["patch", "replace", "Replace the remote state consumers (organisation-wide workspace managers)"],
  ["delete", "remove", "Remove remote state consumers"],
] as const) {
  consumers.openapi(
    defineRoute({
      method,
      path,
      action: method === "patch" ? "workspaces.manage" : "workspace.update",
      summary,
      request: { params: workspaceIdParam, body: jsonBody(op === "replace" ? consumersReplaceBody : consumersBody) },
      responses: noContentResponse,
    }),
    async (c) => change(c, op),
  );
}

// ---- SSH key ----

const sshKeyBody = z
  .object({ data: z.object({ type: z.literal("workspaces"), attributes: z.object({ id: z.string().max(64).nullable() }) }) })
  .openapi("WorkspaceSshKey");

consumers.openapi(
  defineRoute({
    method: "patch",
    path: "/workspaces/{workspace_id}/relationships/ssh-key",
    action: "workspace.update",
    tags: ["Workspaces"],
    summary: "Assign (id) or unassign (null) the workspace's SSH key",
    request: { params: workspaceIdParam, body: jsonBody(sshKeyBody) },
    responses: ok("The workspace", resourceDocument(workspaceResource)),
  }),
  async (c) => {
    const result = await setSshKey(callerOf(c), c.req.valid("param").workspace_id, c.req.valid("json").data.attributes.id);
    acknowledge(c, result);
    return jsonapi(c, { data: result.scope.serialize(result.workspace) });
  },
);
