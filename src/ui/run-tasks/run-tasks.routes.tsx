/** @jsxImportSource hono/jsx */
/**
 * Run tasks in the web UI: the organisation's tasks (GET, POST /organizations/:org/tasks, DELETE /tasks/:id) and a
 * workspace's attachments (GET, POST /workspaces/:id/tasks, DELETE /workspaces/:id/tasks/:id). Each form calls the
 * service its API endpoint calls, which authorises again; a refused input shows the API's reasons (422).
 */
import { Hono } from "hono";
import { loadOrgAccess } from "../../auth/access";
import { allows } from "../../auth/requirements";
import type { AppEnv } from "../../env";
import { ApiError } from "../../errors";
import { createRunTask, createWorkspaceTask, listOrgRunTasks, listWorkspaceTasks, removeRunTask, removeWorkspaceTask } from "../../run-tasks/run-tasks.service";
import { TASK_STAGES, type TaskStageName } from "../../run-tasks/run-tasks.types";
import { readByName } from "../../workspaces/workspaces.service";
import { callerOf, type Ctx, flagsOf, nameOf, orgOf } from "../context";
import { definePage } from "../define-page";
import { attempt, formOf, type Refusal, text, ticked, values } from "../forms";
import { OrgTasksPage, orgTasksPath, WorkspaceTasksPage, wsTasksPath } from "./run-tasks.view";

export const runTasksUi = new Hono<AppEnv>();

const originOf = (c: Ctx) => new URL(c.req.url).origin;

async function orgPage(c: Ctx, refusal?: Refusal): Promise<Response> {
  const caller = callerOf(c);
  const views = await listOrgRunTasks(caller, orgOf(c));
  const access = await loadOrgAccess(caller.db, caller.principal, { name: orgOf(c) });
  return c.html(
    <OrgTasksPage
      principal={caller.principal}
      organization={views[0]?.organizationName ?? orgOf(c)}
      tasks={views.map((v) => v.task)}
      canManage={!!access && allows(caller.principal, "run-tasks.manage", { access })}
      refusal={refusal}
    />,
    refusal ? 422 : 200,
  );
}

definePage(runTasksUi, "get", "/:organization/run-tasks", "run-tasks.read", (c) => orgPage(c));

definePage(runTasksUi, "post", "/:organization/run-tasks", "run-tasks.manage", async (c) => {
  const form = await formOf(c);
  const sent = {
    name: text(form, "name").trim(),
    url: text(form, "url").trim(),
    description: text(form, "description").trim(),
    enabled: ticked(form, "enabled") ? "on" : "",
  };
  return attempt(
    c,
    () =>
      createRunTask(
        callerOf(c),
        orgOf(c),
        { name: sent.name, url: sent.url, description: sent.description || null, hmacKey: text(form, "hmac-key") || null, enabled: sent.enabled === "on" },
        originOf(c),
      ),
    orgTasksPath(orgOf(c)),
    (errors) => orgPage(c, { form: "add-task", values: sent, errors }),
  );
});

definePage(runTasksUi, "post", "/:organization/run-tasks/:task_id/delete", "run-tasks.manage", async (c) => {
  const caller = callerOf(c);
  const id = c.req.param("task_id") ?? "";
  // A task of another organisation is not this page's to delete.
  if (!(await listOrgRunTasks(caller, orgOf(c))).some((v) => v.task.id === id)) throw ApiError.of("not_found");
  await removeRunTask(caller, id);
  return c.redirect(orgTasksPath(orgOf(c)), 303);
});

async function wsPage(c: Ctx, refusal?: Refusal): Promise<Response> {
  const caller = callerOf(c);
  const readable = await readByName(caller, orgOf(c), nameOf(c));
  const canManage = flagsOf(readable)["can-update"] === true;
  const [attached, available] = await Promise.all([
    listWorkspaceTasks(caller, readable.record.id),
    canManage ? listOrgRunTasks(caller, orgOf(c)).catch(() => null) : null,
  ]);
  const ws = { organization: readable.scope.access.organization.name, name: readable.record.name };
  return c.html(
    <WorkspaceTasksPage
      principal={caller.principal}
      ws={ws}
      attached={attached.map((v) => v.task)}
      available={available?.map((v) => v.task) ?? null}
      canManage={canManage}
      refusal={refusal}
    />,
    refusal ? 422 : 200,
  );
}

const wsHere = (c: Ctx) => wsTasksPath({ organization: orgOf(c), name: nameOf(c) });

definePage(runTasksUi, "get", "/:organization/workspaces/:name/run-tasks", "workspace.read", (c) => wsPage(c));

definePage(runTasksUi, "post", "/:organization/workspaces/:name/run-tasks", "workspace.update", async (c) => {
  const form = await formOf(c);
  const caller = callerOf(c);
  const { record } = await readByName(caller, orgOf(c), nameOf(c), "workspace.update");
  const stages = values(form, "stages").filter((s): s is TaskStageName => (TASK_STAGES as readonly string[]).includes(s));
  const enforcement = text(form, "enforcement") === "mandatory" ? "mandatory" : "advisory";
  const sent = { task: text(form, "task"), enforcement };
  return attempt(
    c,
    async () => {
      if (stages.length === 0) throw ApiError.of("invalid_attribute", { detail: "Choose at least one stage", pointer: "/data/attributes/stages" });
      return createWorkspaceTask(caller, record.id, { taskId: sent.task, enforcementLevel: enforcement, stages }, originOf(c));
    },
    wsHere(c),
    (errors) => wsPage(c, { form: "attach-task", values: sent, errors }),
  );
});

definePage(runTasksUi, "post", "/:organization/workspaces/:name/run-tasks/:workspace_task_id/delete", "workspace.update", async (c) => {
  const caller = callerOf(c);
  const { record } = await readByName(caller, orgOf(c), nameOf(c), "workspace.update");
  await removeWorkspaceTask(caller, record.id, c.req.param("workspace_task_id") ?? "");
  return c.redirect(wsHere(c), 303);
});
