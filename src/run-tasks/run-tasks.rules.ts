/**
 * Pure rules of run tasks: the request body an integration gets (HCP Terraform API docs: Run Tasks Integration,
 * payload version 1), and what a stage's results decide (a mandatory task failed or errored: the run stops).
 */
import type { TaskResult, TaskResultStatus, TaskStageName, TaskStageStatus } from "./run-tasks.types";

export const FINAL_RESULT: ReadonlySet<TaskResultStatus> = new Set(["passed", "failed", "errored", "canceled", "unreachable"]);

/** The stage's status once every result is final, else null. Post-apply tasks cannot stop an applied run. */
export function stageOutcome(stage: TaskStageName, results: TaskResult[]): TaskStageStatus | null {
  if (!results.every((r) => FINAL_RESULT.has(r.status))) return null;
  const blocked = results.some((r) => r.enforcementLevel === "mandatory" && (r.status === "failed" || r.status === "errored"));
  return blocked && stage !== "post_apply" ? "failed" : "passed";
}

export interface PayloadContext {
  accessToken: string;
  stage: TaskStageName | "test";
  origin: string;
  organizationName: string;
  workspaceId: string;
  workspaceName: string;
  workingDirectory: string;
  run: {
    id: string;
    message: string;
    createdAt: string;
    createdBy: string | null;
    isSpeculative: boolean;
    planId: string;
    configurationVersionId: string;
  };
  result: { id: string; enforcementLevel: string };
}

export function taskPayload(x: PayloadContext): Record<string, unknown> {
  const api = `${x.origin}/api/v2`;
  const workspaceApp = `${x.origin}/app/${x.organizationName}/workspaces/${x.workspaceName}`;
  const planned = x.stage === "post_plan" || x.stage === "pre_apply" || x.stage === "post_apply";
  return {
    payload_version: 1,
    stage: x.stage,
    access_token: x.accessToken,
    capabilities: { outcomes: true },
    configuration_version_download_url: `${api}/configuration-versions/${x.run.configurationVersionId}/download`,
    configuration_version_id: x.run.configurationVersionId,
    is_speculative: x.run.isSpeculative,
    organization_name: x.organizationName,
    ...(planned ? { plan_json_api_url: `${api}/plans/${x.run.planId}/json-output` } : {}),
    run_app_url: `${workspaceApp}/runs/${x.run.id}`,
    run_created_at: x.run.createdAt,
    run_created_by: x.run.createdBy,
    run_id: x.run.id,
    run_message: x.run.message,
    task_result_callback_url: `${api}/task-results/${x.result.id}/callback`,
    task_result_enforcement_level: x.result.enforcementLevel,
    task_result_id: x.result.id,
    vcs_branch: null,
    vcs_commit_url: null,
    vcs_pull_request_url: null,
    vcs_repo_url: null,
    workspace_app_url: workspaceApp,
    workspace_id: x.workspaceId,
    workspace_name: x.workspaceName,
    workspace_working_directory: x.workingDirectory,
  };
}
