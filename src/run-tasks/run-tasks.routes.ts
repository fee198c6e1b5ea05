/** Run tasks, workspace run tasks, task stages and task results (HCP Terraform API docs). */
import type { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { callerOf } from "../auth/caller.http";
import type { AppEnv } from "../env";
import { defineRoutes } from "../jsonapi/define-route";
import { jsonapi, noContent, paginated, paginatedList, type Resource, pageSlice } from "../jsonapi/document";
import { listDocument, orgParam, pageOf, pageQuery, resourceDocument } from "../jsonapi/schemas";
import { jsonBody, noContentResponse, ok, router, includesOf } from "../jsonapi/validation";
import { runIdParam } from "../runs/runs.schemas";
import { workspaceIdParam } from "../workspaces/workspaces.schemas";
import {
  runTaskResource,
  taskCreateBody,
  taskParam,
  taskReadQuery,
  taskResultParam,
  taskResultResource,
  taskStageParam,
  taskStageReadQuery,
  taskStageResource,
  taskUpdateBody,
  workspaceTaskCreateBody,
  workspaceTaskParams,
  workspaceTaskResource,
  workspaceTaskUpdateBody,
} from "./run-tasks.schemas";
import { serializeIndexedWorkspaceTask, serializeRunTask, serializeTaskResult, serializeTaskStage, serializeWorkspaceTask } from "./run-tasks.serialize";
import * as service from "./run-tasks.service";

const defineRoute = defineRoutes({ tags: ["Run tasks"] });
export const runTasks = router();

const origin = (c: Context<AppEnv>) => new URL(c.req.url).origin;

/** The include values a request names, each one of `allowed` (a 400 naming the parameter otherwise). */
const includes = (raw: string | undefined, allowed: string[]): Set<string> => new Set(includesOf(raw, allowed));

const agentPoolOf = (r: { "agent-pool"?: { data: { id: string } | null } } | undefined) => (r?.["agent-pool"] ? (r["agent-pool"].data?.id ?? null) : undefined);

type TaskAttributes = NonNullable<z.infer<typeof taskUpdateBody>["data"]["attributes"]>;

/** A create or update document's attributes and relationships as the service's input. */
function taskInput<A extends TaskAttributes>(a: A, relationships: Parameters<typeof agentPoolOf>[0]): service.TaskInput & Pick<A, "name" | "url"> {
  return {
    name: a.name,
    url: a.url,
    description: a.description,
    category: a.category,
    hmacKey: a["hmac-key"],
    enabled: a.enabled,
    global: a["global-configuration"],
    agentPoolId: agentPoolOf(relationships),
  };
}

// ---- organisation run tasks ----

runTasks.openapi(
  defineRoute({
    method: "post",
    path: "/organizations/{organization_name}/tasks",
    action: "run-tasks.manage",
    summary: "Create a run task (verified: its URL must answer a test request with 200)",
    request: { params: orgParam, body: jsonBody(taskCreateBody) },
    responses: ok("The run task", resourceDocument(runTaskResource), 201),
  }),
  async (c) => {
    const { attributes: a, relationships } = c.req.valid("json").data;
    const v = await service.createRunTask(callerOf(c), c.req.valid("param").organization_name, taskInput(a, relationships), origin(c));
    return jsonapi(c, { data: serializeRunTask(v) }, 201);
  },
);

runTasks.openapi(
  defineRoute({
    method: "get",
    path: "/organizations/{organization_name}/tasks",
    action: "run-tasks.read",
    summary: "List an organization's run tasks",
    request: { params: orgParam, query: pageQuery.extend({ include: taskReadQuery.shape.include }) },
    responses: ok("A page of run tasks", listDocument(runTaskResource)),
  }),
  async (c) => {
    const q = c.req.valid("query");
    includes(q.include, ["workspace_tasks"]);
    const all = await service.listOrgRunTasks(callerOf(c), c.req.valid("param").organization_name);
    const page = pageOf(q);
    return jsonapi(c, paginatedList(c, all, page, serializeRunTask));
  },
);

runTasks.openapi(
  defineRoute({
    method: "get",
    path: "/tasks/{task_id}",
    action: "run-tasks.read",
    summary: "Show a run task (include: workspace_tasks)",
    request: { params: taskParam, query: taskReadQuery },
    responses: ok("The run task", resourceDocument(runTaskResource)),
  }),
  async (c) => {
    const wanted = includes(c.req.valid("query").include, ["workspace_tasks"]);
    const v = await service.showRunTask(callerOf(c), c.req.valid("param").task_id);
    const included: Resource[] = wanted.has("workspace_tasks") ? (v.attachments ?? []).map(serializeIndexedWorkspaceTask) : [];
    return jsonapi(c, { data: serializeRunTask(v), ...(included.length ? { included } : {}) });
  },
);

runTasks.openapi(
  defineRoute({
    method: "patch",
    path: "/tasks/{task_id}",
    action: "run-tasks.manage",
    summary: "Update a run task (a new URL is verified)",
    request: { params: taskParam, body: jsonBody(taskUpdateBody) },
    responses: ok("The run task", resourceDocument(runTaskResource)),
  }),
  async (c) => {
    const { attributes: a = {}, relationships } = c.req.valid("json").data;
    const v = await service.updateRunTask(callerOf(c), c.req.valid("param").task_id, taskInput(a, relationships), origin(c));
    return jsonapi(c, { data: serializeRunTask(v) });
  },
);

runTasks.openapi(
  defineRoute({
    method: "delete",
    path: "/tasks/{task_id}",
    action: "run-tasks.manage",
    summary: "Delete a run task (and its attachments to workspaces)",
    request: { params: taskParam },
    responses: noContentResponse,
  }),
  async (c) => {
    await service.removeRunTask(callerOf(c), c.req.valid("param").task_id);
    return noContent(c);
  },
);

// ---- workspace run tasks ----

runTasks.openapi(
  defineRoute({
    method: "post",
    path: "/workspaces/{workspace_id}/tasks",
    action: "workspace.update",
    summary: "Attach a run task to a workspace (workspace admin)",
    request: { params: workspaceIdParam, body: jsonBody(workspaceTaskCreateBody) },
    responses: ok("The workspace run task", resourceDocument(workspaceTaskResource), 201),
  }),
  async (c) => {
    const { attributes: a, relationships } = c.req.valid("json").data;
    const v = await service.createWorkspaceTask(
      callerOf(c),
      c.req.valid("param").workspace_id,
      { taskId: relationships.task.data.id, enforcementLevel: a["enforcement-level"], stages: service.stagesOf(a, ["post_plan"])! },
      origin(c),
    );
    return jsonapi(c, { data: serializeWorkspaceTask(v) }, 201);
  },
);

runTasks.openapi(
  defineRoute({
    method: "get",
    path: "/workspaces/{workspace_id}/tasks",
    action: "workspace.read",
    summary: "List a workspace's run tasks",
    request: { params: workspaceIdParam, query: pageQuery },
    responses: ok("A page of workspace run tasks", listDocument(workspaceTaskResource)),
  }),
  async (c) => {
    const all = await service.listWorkspaceTasks(callerOf(c), c.req.valid("param").workspace_id);
    const page = pageOf(c.req.valid("query"));
    return jsonapi(c, paginatedList(c, all, page, serializeWorkspaceTask));
  },
);

runTasks.openapi(
  defineRoute({
    method: "get",
    path: "/workspaces/{workspace_id}/tasks/{workspace_task_id}",
    action: "workspace.read",
    summary: "Show a workspace run task",
    request: { params: workspaceTaskParams },
    responses: ok("The workspace run task", resourceDocument(workspaceTaskResource)),
  }),
  async (c) => {
    const p = c.req.valid("param");
    return jsonapi(c, { data: serializeWorkspaceTask(await service.showWorkspaceTask(callerOf(c), p.workspace_id, p.workspace_task_id)) });
  },
);

runTasks.openapi(
  defineRoute({
    method: "patch",
    path: "/workspaces/{workspace_id}/tasks/{workspace_task_id}",
    action: "workspace.update",
    summary: "Update a workspace run task's enforcement level and stages (workspace admin)",
    request: { params: workspaceTaskParams, body: jsonBody(workspaceTaskUpdateBody) },
    responses: ok("The workspace run task", resourceDocument(workspaceTaskResource)),
  }),
  async (c) => {
    const p = c.req.valid("param");
    const a = c.req.valid("json").data.attributes ?? {};
    const v = await service.updateWorkspaceTask(callerOf(c), p.workspace_id, p.workspace_task_id, {
      enforcementLevel: a["enforcement-level"],
      stages: service.stagesOf(a, undefined),
    });
    return jsonapi(c, { data: serializeWorkspaceTask(v) });
  },
);

runTasks.openapi(
  defineRoute({
    method: "delete",
    path: "/workspaces/{workspace_id}/tasks/{workspace_task_id}",
    action: "workspace.update",
    summary: "Detach a run task from a workspace (workspace admin)",
    request: { params: workspaceTaskParams },
    responses: noContentResponse,
  }),
  async (c) => {
    const p = c.req.valid("param");
    await service.removeWorkspaceTask(callerOf(c), p.workspace_id, p.workspace_task_id);
    return noContent(c);
  },
);

// ---- task stages and results ----

const STAGE_INCLUDES = ["task_results", "policy_evaluations"];

runTasks.openapi(
  defineRoute({
    method: "get",
    path: "/runs/{run_id}/task-stages",
    action: "runs.read",
    summary: "List a run's task stages (include: task_results)",
    request: { params: runIdParam, query: pageQuery.extend({ include: taskStageReadQuery.shape.include }) },
    responses: ok("A page of task stages", listDocument(taskStageResource)),
  }),
  async (c) => {
    const q = c.req.valid("query");
    const wanted = includes(q.include, STAGE_INCLUDES);
    const all = await service.listRunTaskStages(callerOf(c), c.req.valid("param").run_id);
    const page = pageOf(q);
    const items = pageSlice(all, page);
    const included = wanted.has("task_results") ? items.flatMap((s) => s.results.map(serializeTaskResult)) : [];
    return jsonapi(
      c,
      paginated(
        c,
        items.map((s) => serializeTaskStage(s.stage)),
        page,
        all.length,
        included.length ? { included } : {},
      ),
    );
  },
);

runTasks.openapi(
  defineRoute({
    method: "get",
    path: "/task-stages/{task_stage_id}",
    action: "runs.read",
    summary: "Show a task stage (include: task_results)",
    request: { params: taskStageParam, query: taskStageReadQuery },
    responses: ok("The task stage", resourceDocument(taskStageResource)),
  }),
  async (c) => {
    const wanted = includes(c.req.valid("query").include, STAGE_INCLUDES);
    const v = await service.showTaskStage(callerOf(c), c.req.valid("param").task_stage_id);
    const included = wanted.has("task_results") ? v.results.map(serializeTaskResult) : [];
    return jsonapi(c, { data: serializeTaskStage(v.stage), ...(included.length ? { included } : {}) });
  },
);

runTasks.openapi(
  defineRoute({
    method: "get",
    path: "/task-results/{task_result_id}",
    action: "runs.read",
    summary: "Show a task result",
    request: { params: taskResultParam },
    responses: ok("The task result", resourceDocument(taskResultResource)),
  }),
  async (c) => {
    return jsonapi(c, { data: serializeTaskResult(await service.showTaskResult(callerOf(c), c.req.valid("param").task_result_id)) });
  },
);
