/** Run triggers (HCP Terraform API docs: Run Triggers). */
import { callerOf } from "../auth/caller.http";
import { defineRoutes } from "../jsonapi/define-route";
import { jsonapi, noContent, paginated, pageSlice } from "../jsonapi/document";
import { includeQuery, listDocument, pageOf, resourceDocument } from "../jsonapi/schemas";
import { jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import { workspaceIdParam } from "../workspaces/workspaces.schemas";
import { runTriggerCreateBody, runTriggerListQuery, runTriggerParam, runTriggerResource } from "./run-triggers.schemas";
import { serializeRunTrigger } from "./run-triggers.serialize";
import { createRunTrigger, listWorkspaceRunTriggers, removeRunTrigger, showRunTrigger } from "./run-triggers.service";

const defineRoute = defineRoutes({ tags: ["Run triggers"] });
export const runTriggers = router();

runTriggers.openapi(
  defineRoute({
    method: "post",
    path: "/workspaces/{workspace_id}/run-triggers",
    action: "workspace.update",
    summary: "Create a run trigger: the source workspace's applies queue runs here (workspace admin; read runs of the source)",
    request: { params: workspaceIdParam, body: jsonBody(runTriggerCreateBody) },
    responses: ok("The run trigger", resourceDocument(runTriggerResource), 201),
  }),
  async (c) => {
    const body = c.req.valid("json");
    const trigger = await createRunTrigger(callerOf(c), c.req.valid("param").workspace_id, body.data.relationships.sourceable.data.id);
    return jsonapi(c, { data: serializeRunTrigger(trigger) }, 201);
  },
);

runTriggers.openapi(
  defineRoute({
    method: "get",
    path: "/workspaces/{workspace_id}/run-triggers",
    action: "workspace.read",
    summary: "List a workspace's run triggers: inbound (its sources) or outbound (the workspaces it triggers)",
    request: { params: workspaceIdParam, query: runTriggerListQuery },
    responses: ok("A page of run triggers", listDocument(runTriggerResource)),
  }),
  async (c) => {
    const q = c.req.valid("query");
    const { triggers, included } = await listWorkspaceRunTriggers(callerOf(c), c.req.valid("param").workspace_id, {
      type: q["filter[run-trigger][type]"],
      include: q.include,
    });
    const page = pageOf(q);
    const items = pageSlice(triggers, page);
    return jsonapi(c, paginated(c, items.map(serializeRunTrigger), page, triggers.length, { included: await included(items) }));
  },
);

runTriggers.openapi(
  defineRoute({
    method: "get",
    path: "/run-triggers/{run_trigger_id}",
    action: "workspace.read",
    summary: "Show a run trigger",
    request: { params: runTriggerParam, query: includeQuery },
    responses: ok("The run trigger", resourceDocument(runTriggerResource)),
  }),
  async (c) => {
    const { trigger, included } = await showRunTrigger(callerOf(c), c.req.valid("param").run_trigger_id, c.req.valid("query").include);
    return jsonapi(c, { data: serializeRunTrigger(trigger), ...(included.length ? { included } : {}) });
  },
);

runTriggers.openapi(
  defineRoute({
    method: "delete",
    path: "/run-triggers/{run_trigger_id}",
    action: "workspace.update",
    summary: "Delete a run trigger (workspace admin)",
    request: { params: runTriggerParam },
    responses: noContentResponse,
  }),
  async (c) => {
    await removeRunTrigger(callerOf(c), c.req.valid("param").run_trigger_id);
    return noContent(c);
  },
);
