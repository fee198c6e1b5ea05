/**
 * Run tasks across the Durable Object boundary (HCP Terraform API docs: Run Tasks, Run Tasks Integration, Task
 * Stages and Results): a workspace's attachments of its organisation's tasks, and a run's task stages and results.
 */

export type TaskStageName = "pre_plan" | "post_plan" | "pre_apply" | "post_apply";
export const TASK_STAGES: readonly TaskStageName[] = ["pre_plan", "post_plan", "pre_apply", "post_apply"];
export type Enforcement = "advisory" | "mandatory";

export type TaskStageStatus = "pending" | "running" | "passed" | "failed" | "errored" | "canceled" | "awaiting_override" | "unreachable";
export type TaskResultStatus = "pending" | "running" | "passed" | "failed" | "errored" | "canceled" | "unreachable";

/** A workspace run task (`wstask-`): the organisation's task `taskId`, at its stages, advisory or mandatory. */
export interface WorkspaceTask {
  id: string;
  taskId: string;
  /** The task's name and URL when attached (the engine reads the current ones from D1 when it sends). */
  taskName: string;
  taskUrl: string;
  enforcementLevel: Enforcement;
  stages: TaskStageName[];
  /** The service's origin the attachment was made through: callback and plan URLs are built on it. */
  origin: string;
  createdAt: string;
}

export interface TaskResult {
  /** `taskrs-<16><16 of the workspace>`. */
  id: string;
  stageId: string;
  runId: string;
  stage: TaskStageName;
  workspaceTaskId: string;
  taskId: string;
  taskName: string;
  taskUrl: string;
  enforcementLevel: Enforcement;
  status: TaskResultStatus;
  message: string;
  url: string;
  /** The integration's detailed outcomes, as it sent them (`relationships.outcomes.data`). */
  outcomes: unknown[];
  statusTimestamps: Record<string, string>;
  createdAt: string;
  updatedAt: string;
}

export interface TaskStage {
  /** `ts-<16><16 of the workspace>`. */
  id: string;
  runId: string;
  stage: TaskStageName;
  status: TaskStageStatus;
  statusTimestamps: Record<string, string>;
  createdAt: string;
  updatedAt: string;
  resultIds: string[];
}

/** What the integration's callback says (`PATCH /task-results/:id/callback`). */
export interface TaskCallback {
  resultId: string;
  status: "passed" | "failed" | "running";
  message: string | null;
  url: string | null;
  outcomes: unknown[] | null;
}
