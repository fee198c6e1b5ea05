/** The run task, workspace run task, task stage and task result resources (the HMAC key is never answered). */
import type { Resource } from "../jsonapi/document";
import type { IndexedWorkspaceTask } from "./run-tasks.d1";
import type { TaskView, WorkspaceTaskView } from "./run-tasks.service";
import type { TaskResult, TaskStage } from "./run-tasks.types";

export function serializeRunTask(v: TaskView): Resource {
  const t = v.task;
  return {
    id: t.id,
    type: "tasks",
    attributes: {
      name: t.name,
      url: t.url,
      description: t.description,
      category: t.category,
      "hmac-key": null,
      enabled: t.enabled,
      "created-at": t.createdAt,
      // Global run tasks are not supported: shown disabled where the plan has them, absent elsewhere.
      "global-configuration": v.globalEntitled ? { enabled: false, stages: [], "enforcement-level": "advisory" } : null,
    },
    relationships: {
      organization: { data: { id: v.organizationName, type: "organizations" } },
      "agent-pool": { data: null },
      "workspace-tasks": { data: (v.attachments ?? []).map((a) => ({ id: a.id, type: "workspace-tasks" })) },
    },
    links: { self: `/api/v2/tasks/${t.id}` },
  };
}

/** An attachment as the task's `workspace_tasks` include shows it (from the index). */
export function serializeIndexedWorkspaceTask(a: IndexedWorkspaceTask): Resource {
  return workspaceTaskResource(a.id, a.workspaceId, a.taskId, a.enforcementLevel, a.stages, a.createdAt);
}

export function serializeWorkspaceTask(v: WorkspaceTaskView): Resource {
  const t = v.task;
  return workspaceTaskResource(t.id, v.workspaceId, t.taskId, t.enforcementLevel, t.stages, t.createdAt);
}

function workspaceTaskResource(id: string, workspaceId: string, taskId: string, level: string, stages: string[], createdAt: string): Resource {
  return {
    id,
    type: "workspace-tasks",
    attributes: { "enforcement-level": level, stage: stages[0] ?? "post_plan", stages, "created-at": createdAt },
    relationships: {
      task: { data: { id: taskId, type: "tasks" } },
      workspace: { data: { id: workspaceId, type: "workspaces" } },
    },
    links: { self: `/api/v2/workspaces/${workspaceId}/tasks/${id}` },
  };
}

export function serializeTaskStage(s: TaskStage): Resource {
  return {
    id: s.id,
    type: "task-stages",
    attributes: {
      stage: s.stage,
      status: s.status,
      "status-timestamps": s.statusTimestamps,
      "created-at": s.createdAt,
      "updated-at": s.updatedAt,
      permissions: { "can-override-policy": false, "can-override-tasks": false, "can-override": false },
      actions: { "is-overridable": false },
    },
    relationships: {
      run: { data: { id: s.runId, type: "runs" } },
      "task-results": { data: s.resultIds.map((id) => ({ id, type: "task-results" })) },
      "policy-evaluations": { data: [] },
    },
    links: { self: `/api/v2/task-stages/${s.id}` },
  };
}

export function serializeTaskResult(r: TaskResult): Resource {
  return {
    id: r.id,
    type: "task-results",
    attributes: {
      status: r.status,
      message: r.message,
      url: r.url,
      "status-timestamps": r.statusTimestamps,
      "created-at": r.createdAt,
      "updated-at": r.updatedAt,
      "task-id": r.taskId,
      "task-name": r.taskName,
      "task-url": r.taskUrl,
      "workspace-task-id": r.workspaceTaskId,
      "workspace-task-enforcement-level": r.enforcementLevel,
      "agent-pool-id": null,
    },
    // go-tfe's TaskResult names this relationship `task_stage`.
    relationships: { task_stage: { data: { id: r.stageId, type: "task-stages" } } },
    links: { self: `/api/v2/task-results/${r.id}` },
  };
}
