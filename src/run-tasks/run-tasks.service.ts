/**
 * Run tasks (HCP Terraform API docs: Run Tasks, Task Stages and Results). Organisation run tasks live in D1: owners,
 * the organisation token and manage-run-tasks manage them; the HMAC key is sealed and never answered; a task is
 * verified on create and when its URL changes (its URL must answer the test request with 200). A workspace's
 * attachments live in its object (the run engine reads them there), with an index row in D1 for the task's
 * `workspace_tasks`; workspace admins manage them. A run's task stages and results are read with the run.
 */
import { authorize } from "../auth/requirements";
import { loadOwned, requireOrgAccess, type OrgAccess } from "../auth/access";
import type { Caller } from "../caller";
import { edition } from "../env";
import { ApiError, unwrap } from "../errors";
import { newChildId, newId, nowIso, parentOfId } from "../ids";
import { findPool } from "../agent-pools/agent-pools.d1";
import { outboundRefusal } from "../platform/outbound";
import { readRun } from "../runs/runs.service";
import type { RunRecord } from "../runs/runs.types";
import { entitlementSet, planOf } from "../subscriptions/feature-sets.rules";
import { sealValue } from "../variables/variables.crypto";
import { workspaceObject } from "../workspaces/workspace.stub";
import { mutateAs, readById } from "../workspaces/workspaces.service";
import { attachmentsOf, deleteRunTask, findRunTask, insertRunTask, listRunTasks, saveRunTask, type IndexedWorkspaceTask, type RunTask } from "./run-tasks.d1";
import { taskPayload } from "./run-tasks.rules";
import { sendTaskRequest } from "./run-tasks.send";
import type { Enforcement, TaskResult, TaskStage, TaskStageName, WorkspaceTask } from "./run-tasks.types";

const A = "/data/attributes";
const NAME = /^[A-Za-z0-9_-]+$/;

export interface TaskInput {
  name?: string;
  url?: string;
  description?: string | null;
  category?: string;
  hmacKey?: string | null;
  enabled?: boolean;
  global?: { enabled?: boolean; stages?: string[]; "enforcement-level"?: string } | null;
  agentPoolId?: string | null;
}

export interface TaskView {
  task: RunTask;
  organizationName: string;
  /** Whether the organisation is entitled to global run tasks (the task then shows its `global-configuration`). */
  globalEntitled: boolean;
  attachments: IndexedWorkspaceTask[] | null;
}

const globalEntitled = (caller: Caller, access: OrgAccess) =>
  entitlementSet(planOf(edition(caller.env), access.organization.subscription), access.organization.subscription)["global-run-tasks"] === true;

/** Refusals of what a create or update sends (beyond the schema). */
async function check(caller: Caller, access: OrgAccess, input: TaskInput, origin: string): Promise<void> {
  if (input.name !== undefined && !NAME.test(input.name)) {
    throw ApiError.of("invalid_attribute", { detail: "Name may only contain letters, numbers, - and _", pointer: `${A}/name` });
  }
  if (input.category !== undefined && input.category !== "task") {
    throw ApiError.of("invalid_attribute", { detail: 'Category must be "task"', pointer: `${A}/category` });
  }
  if (input.url !== undefined) {
    const refused = outboundRefusal(caller.env, input.url, origin);
    if (refused) throw ApiError.of("invalid_attribute", { detail: `URL is not requested: ${refused}`, pointer: `${A}/url` });
  }
  if (input.agentPoolId) {
    const pool = await findPool(caller.db, input.agentPoolId);
    if (!pool || pool.organizationId !== access.organization.externalId) {
      throw ApiError.of("invalid_attribute", { detail: "The provided agent pool does not exist", pointer: "/data/relationships/agent-pool/data/id" });
    }
    throw ApiError.of("invalid_attribute", {
      detail: "Run task requests through an agent pool (request forwarding) are not supported: the service sends them itself",
      pointer: "/data/relationships/agent-pool/data/id",
    });
  }
  // Global run tasks (attached to every workspace) are not implemented: refused where the plan would allow them, and
  // ignored elsewhere, as the real service ignores them without the entitlement.
  if (input.global?.enabled === true && globalEntitled(caller, access)) {
    throw ApiError.of("invalid_attribute", {
      detail: "Global run tasks are not supported by this service: attach the task to each workspace instead",
      pointer: `${A}/global-configuration/enabled`,
    });
  }
}

/** The test request the real service sends a task's URL when it is created or changed: it must answer 200. */
async function verify(caller: Caller, task: RunTask, hmacKey: string | null, organizationName: string, origin: string): Promise<void> {
  const payload = taskPayload({
    accessToken: "test-token",
    stage: "test",
    origin,
    organizationName,
    workspaceId: "ws-xxxxxxxxxxxxxxxx",
    workspaceName: "test-workspace",
    workingDirectory: "",
    run: {
      id: "run-xxxxxxxxxxxxxxxx",
      message: "Test run message",
      createdAt: nowIso(),
      createdBy: "test-user",
      isSpeculative: false,
      planId: "plan-xxxxxxxxxxxxxxxx",
      configurationVersionId: "cv-xxxxxxxxxxxxxxxx",
    },
    result: { id: "taskrs-xxxxxxxxxxxxxxxx", enforcementLevel: "test" },
  });
  const answer = await sendTaskRequest(caller.env, task.url, payload, hmacKey, origin);
  if (!answer.accepted) {
    throw ApiError.of("invalid_attribute", {
      detail: `The run task URL did not answer the verification request with 200: ${answer.url} ${answer.code ? `answered ${answer.code}` : answer.body}`,
      pointer: `${A}/url`,
    });
  }
}

async function manageable(caller: Caller, id: string): Promise<{ task: RunTask; access: OrgAccess }> {
  const { item: task, access } = await loadOwned(caller, findRunTask, id);
  authorize(caller, "run-tasks.manage", { access });
  return { task, access };
}

export async function createRunTask(caller: Caller, organization: string, input: TaskInput & { name: string; url: string }, origin: string): Promise<TaskView> {
  const access = await requireOrgAccess(caller, { name: organization });
  authorize(caller, "run-tasks.manage", { access });
  await check(caller, access, input, origin);
  const id = newId("task");
  const hmacKey = input.hmacKey || null;
  const task: RunTask = {
    id,
    organizationId: access.organization.externalId,
    name: input.name,
    url: input.url,
    description: input.description ?? null,
    category: input.category ?? "task",
    sealedHmacKey: hmacKey ? await sealValue(caller.env, id, hmacKey) : null,
    enabled: input.enabled ?? true,
    createdAt: nowIso(),
  };
  await verify(caller, task, hmacKey, access.organization.name, origin);
  await insertRunTask(caller.db, task);
  return { task, organizationName: access.organization.name, globalEntitled: globalEntitled(caller, access), attachments: [] };
}

export async function listOrgRunTasks(caller: Caller, organization: string): Promise<TaskView[]> {
  const access = await requireOrgAccess(caller, { name: organization });
  authorize(caller, "run-tasks.read", { access });
  const entitled = globalEntitled(caller, access);
  return (await listRunTasks(caller.db, access.organization.externalId)).map((task) => ({
    task,
    organizationName: access.organization.name,
    globalEntitled: entitled,
    attachments: null,
  }));
}

export async function showRunTask(caller: Caller, id: string): Promise<TaskView> {
  const { item: task, access } = await loadOwned(caller, findRunTask, id);
  authorize(caller, "run-tasks.read", { access });
  return { task, organizationName: access.organization.name, globalEntitled: globalEntitled(caller, access), attachments: await attachmentsOf(caller.db, id) };
}

export async function updateRunTask(caller: Caller, id: string, input: TaskInput, origin: string): Promise<TaskView> {
  const { task, access } = await manageable(caller, id);
  await check(caller, access, input, origin);
  const hmacKey = input.hmacKey === undefined ? undefined : input.hmacKey || null;
  const next: RunTask = {
    ...task,
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.url !== undefined ? { url: input.url } : {}),
    ...(input.description !== undefined ? { description: input.description } : {}),
    ...(input.category !== undefined ? { category: input.category } : {}),
    ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
    ...(hmacKey !== undefined ? { sealedHmacKey: hmacKey ? await sealValue(caller.env, id, hmacKey) : null } : {}),
  };
  if (next.url !== task.url) await verify(caller, next, hmacKey ?? null, access.organization.name, origin);
  await saveRunTask(caller.db, next);
  return {
    task: next,
    organizationName: access.organization.name,
    globalEntitled: globalEntitled(caller, access),
    attachments: await attachmentsOf(caller.db, id),
  };
}

export async function removeRunTask(caller: Caller, id: string): Promise<void> {
  const { task } = await manageable(caller, id);
  await deleteRunTask(caller.db, task.id);
}

// ---- workspace run tasks ----

export interface WorkspaceTaskView {
  task: WorkspaceTask;
  workspaceId: string;
}

const STAGE_POINTER = `${A}/stages`;

/** The stages sent (`stages`, else the legacy `stage`), or the default post-plan stage on create. */
export function stagesOf(a: { stage?: TaskStageName; stages?: TaskStageName[] }, fallback: TaskStageName[] | undefined): TaskStageName[] | undefined {
  const stages = a.stages ?? (a.stage ? [a.stage] : fallback);
  if (stages && stages.length === 0) throw ApiError.of("invalid_attribute", { detail: "Stages must name at least one stage", pointer: STAGE_POINTER });
  return stages ? [...new Set(stages)] : undefined;
}

export async function createWorkspaceTask(
  caller: Caller,
  workspaceId: string,
  input: { taskId: string; enforcementLevel: Enforcement; stages: TaskStageName[] },
  origin: string,
): Promise<WorkspaceTaskView> {
  const readable = await readById(caller, workspaceId, "workspace.update");
  const task = await findRunTask(caller.db, input.taskId);
  if (!task || task.organizationId !== readable.record.organizationId) {
    throw ApiError.of("invalid_attribute", { detail: "Task not found in this workspace's organization", pointer: "/data/relationships/task/data/id" });
  }
  const attached: WorkspaceTask = {
    id: newChildId("wstask", workspaceId),
    taskId: task.id,
    taskName: task.name,
    taskUrl: task.url,
    enforcementLevel: input.enforcementLevel,
    stages: input.stages,
    origin,
    createdAt: nowIso(),
  };
  const { value } = await mutateAs(caller, workspaceId, "workspace.update", (_r, guard) =>
    workspaceObject(caller.env, workspaceId).createWorkspaceTask({ task: attached, guard }),
  );
  return { task: value.task, workspaceId };
}

export async function listWorkspaceTasks(caller: Caller, workspaceId: string): Promise<WorkspaceTaskView[]> {
  await readById(caller, workspaceId);
  const res = unwrap(await workspaceObject(caller.env, workspaceId).listWorkspaceTasks());
  return res.value.items.map((task) => ({ task, workspaceId }));
}

/** An attachment of the workspace (its id names the workspace; another workspace's is not found here). */
async function attachment(caller: Caller, workspaceId: string, id: string, action: "workspace.read" | "workspace.update"): Promise<WorkspaceTask> {
  await readById(caller, workspaceId, action);
  if (parentOfId(id, "ws") !== workspaceId) throw ApiError.of("not_found");
  return unwrap(await workspaceObject(caller.env, workspaceId).getWorkspaceTask(id)).value.task;
}

export async function showWorkspaceTask(caller: Caller, workspaceId: string, id: string): Promise<WorkspaceTaskView> {
  return { task: await attachment(caller, workspaceId, id, "workspace.read"), workspaceId };
}

export async function updateWorkspaceTask(
  caller: Caller,
  workspaceId: string,
  id: string,
  input: { enforcementLevel?: Enforcement; stages?: TaskStageName[] },
): Promise<WorkspaceTaskView> {
  await attachment(caller, workspaceId, id, "workspace.update");
  const { value } = await mutateAs(caller, workspaceId, "workspace.update", (_r, guard) =>
    workspaceObject(caller.env, workspaceId).updateWorkspaceTask({ id, ...input, guard }),
  );
  return { task: value.task, workspaceId };
}

export async function removeWorkspaceTask(caller: Caller, workspaceId: string, id: string): Promise<void> {
  await attachment(caller, workspaceId, id, "workspace.update");
  await mutateAs(caller, workspaceId, "workspace.update", (_r, guard) => workspaceObject(caller.env, workspaceId).deleteWorkspaceTask({ id, guard }));
}

// ---- a run's task stages and results ----

export interface StageView {
  stage: TaskStage;
  results: TaskResult[];
}

export async function listRunTaskStages(caller: Caller, runId: string): Promise<StageView[]> {
  const read = await readRun(caller, runId);
  const got = unwrap(await workspaceObject(caller.env, read.run.workspaceId).listTaskStages(runId)).value;
  return got.stages.map((stage) => ({ stage, results: got.results.filter((r) => r.stageId === stage.id) }));
}

/** The workspace a stage or result id names, once the caller may read its runs. */
async function readableWorkspace(caller: Caller, id: string): Promise<string> {
  const workspaceId = parentOfId(id, "ws");
  if (!workspaceId) throw ApiError.of("not_found");
  await readById(caller, workspaceId, "runs.read");
  return workspaceId;
}

export async function showTaskStage(caller: Caller, id: string): Promise<StageView & { run: RunRecord }> {
  const workspaceId = await readableWorkspace(caller, id);
  return unwrap(await workspaceObject(caller.env, workspaceId).getTaskStage(id)).value;
}

export async function showTaskResult(caller: Caller, id: string): Promise<TaskResult> {
  const workspaceId = await readableWorkspace(caller, id);
  return unwrap(await workspaceObject(caller.env, workspaceId).getTaskResult(id)).value.result;
}
