/** Input and response schemas of run tasks, workspace run tasks, task stages and task results (HCP Terraform API docs). */
import { z } from "@hono/zod-openapi";
import { attr, resourceSchema } from "../jsonapi/schemas";

export const taskParam = z.object({ task_id: z.string().min(1).max(255) });
export const workspaceTaskParams = z.object({ workspace_id: z.string().min(1).max(255), workspace_task_id: z.string().min(1).max(255) });
export const taskStageParam = z.object({ task_stage_id: z.string().min(1).max(255) });
export const taskResultParam = z.object({ task_result_id: z.string().min(1).max(255) });

const stage = z.enum(["pre_plan", "post_plan", "pre_apply", "post_apply"]);
const enforcement = z.enum(["advisory", "mandatory"]);
const global = z
  .object({ enabled: z.boolean().optional(), stages: z.array(stage).max(4).optional(), "enforcement-level": enforcement.optional() })
  .nullable()
  .optional();
const relationships = z
  .object({
    "agent-pool": z.object({ data: z.object({ type: z.literal("agent-pools").optional(), id: z.string().max(255) }).nullable() }).optional(),
  })
  .optional();

const taskAttributes = {
  name: z.string().min(1).max(255),
  url: z.string().url().max(2048),
  description: z.string().max(1000).nullable().optional(),
  category: z.string().max(50).optional(),
  "hmac-key": z.string().max(1024).nullable().optional(),
  enabled: z.boolean().optional(),
  "global-configuration": global,
};

export const taskCreateBody = z
  .object({ data: z.object({ type: z.literal("tasks").optional(), attributes: z.object(taskAttributes), relationships }) })
  .openapi("RunTaskCreate");

export const taskUpdateBody = z
  .object({
    data: z.object({
      type: z.literal("tasks").optional(),
      attributes: z.object({ ...taskAttributes, name: taskAttributes.name.optional(), url: taskAttributes.url.optional() }).optional(),
      relationships,
    }),
  })
  .openapi("RunTaskUpdate");

export const taskReadQuery = z.object({ include: z.string().max(200).optional() });

export const workspaceTaskCreateBody = z
  .object({
    data: z.object({
      type: z.literal("workspace-tasks").optional(),
      attributes: z.object({ "enforcement-level": enforcement, stage: stage.optional(), stages: z.array(stage).max(4).optional() }),
      relationships: z.object({ task: z.object({ data: z.object({ type: z.literal("tasks").optional(), id: z.string().min(1).max(255) }) }) }),
    }),
  })
  .openapi("WorkspaceRunTaskCreate");

export const workspaceTaskUpdateBody = z
  .object({
    data: z.object({
      type: z.literal("workspace-tasks").optional(),
      attributes: z.object({ "enforcement-level": enforcement.optional(), stage: stage.optional(), stages: z.array(stage).max(4).optional() }).optional(),
    }),
  })
  .openapi("WorkspaceRunTaskUpdate");

export const taskStageReadQuery = z.object({ include: z.string().max(200).optional() });

/** The integration's callback (HCP Terraform API docs: Run Tasks Integration, "Run Task Callback"). */
export const taskCallbackBody = z.object({
  data: z.object({
    type: z.literal("task-results"),
    attributes: z.object({
      status: z.enum(["passed", "failed", "running"]),
      message: z.string().max(10_000).nullable().optional(),
      url: z.string().max(2048).nullable().optional(),
    }),
    relationships: z
      .object({ outcomes: z.object({ data: z.array(z.unknown()).max(100) }).optional() })
      .passthrough()
      .optional(),
  }),
});

export const runTaskResource = resourceSchema("RunTask", "tasks", {
  name: attr.string,
  url: attr.string,
  description: attr.nullableString,
  category: attr.string,
  "hmac-key": attr.nullableString,
  enabled: attr.boolean,
  "created-at": attr.time,
  "global-configuration": attr.json,
});

export const workspaceTaskResource = resourceSchema("WorkspaceRunTask", "workspace-tasks", {
  "enforcement-level": attr.string,
  stage: attr.string,
  stages: attr.strings,
  "created-at": attr.time,
});

export const taskStageResource = resourceSchema("TaskStage", "task-stages", {
  stage: attr.string,
  status: attr.string,
  "status-timestamps": attr.json,
  "created-at": attr.time,
  "updated-at": attr.time,
  permissions: attr.json,
  actions: attr.json,
});

export const taskResultResource = resourceSchema("TaskResult", "task-results", {
  status: attr.string,
  message: attr.string,
  url: attr.string,
  "status-timestamps": attr.json,
  "created-at": attr.time,
  "updated-at": attr.time,
  "task-id": attr.string,
  "task-name": attr.string,
  "task-url": attr.string,
  "workspace-task-id": attr.string,
  "workspace-task-enforcement-level": attr.string,
  "agent-pool-id": attr.nullableString,
});
