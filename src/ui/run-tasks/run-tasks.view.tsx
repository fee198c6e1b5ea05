/** @jsxImportSource hono/jsx */
/**
 * Run tasks in the web UI: an organisation's tasks (with the add form for who manages them) and a workspace's attached
 * tasks (with the attach form for its admins). Plain data in, HTML out (run-tasks.routes.tsx calls the services).
 */
import type { Principal } from "../../auth/principal";
import type { RunTask } from "../../run-tasks/run-tasks.d1";
import type { WorkspaceTask } from "../../run-tasks/run-tasks.types";
import { TASK_STAGES } from "../../run-tasks/run-tasks.types";
import { wsPath } from "../context";
import { ButtonForm, Check, Input, type Refusal, Refused, sentOf } from "../forms";
import { Layout } from "../layout";
import { Crumbs, Submit, Table, type WorkspaceName } from "../parts";

export const orgTasksPath = (org: string) => `/app/${encodeURIComponent(org)}/run-tasks`;
export const wsTasksPath = (ws: WorkspaceName) => `${wsPath(ws.organization, ws.name)}/run-tasks`;

export function OrgTasksPage(props: { principal: Principal; organization: string; tasks: RunTask[]; canManage: boolean; refusal?: Refusal }) {
  const base = orgTasksPath(props.organization);
  const sent = sentOf(props.refusal, "add-task") ?? {};
  return (
    <Layout title={`Run tasks · ${props.organization}`} principal={props.principal}>
      <Crumbs organization={props.organization} here="Run tasks" />
      <h1>Run tasks of {props.organization}</h1>
      <p>A run task sends a request to another system at a stage of each run of the workspaces it is attached to, and waits for its answer.</p>
      {props.tasks.length ? (
        <Table id="run-tasks" columns={props.canManage ? ["Name", "URL", "Enabled", "Signed", "Delete"] : ["Name", "URL", "Enabled", "Signed"]}>
          {props.tasks.map((t) => (
            <tr data-task={t.id}>
              <td>
                {t.name}
                {t.description ? <span class="muted"> — {t.description}</span> : null}
              </td>
              <td>
                <code>{t.url}</code>
              </td>
              <td>{t.enabled ? "yes" : "no"}</td>
              <td>{t.sealedHmacKey ? "yes (HMAC key set)" : "no"}</td>
              {props.canManage ? (
                <td>
                  <ButtonForm action={`${base}/${encodeURIComponent(t.id)}/delete`} label={`the run task ${t.name}`} text="Delete" danger />
                </td>
              ) : null}
            </tr>
          ))}
        </Table>
      ) : (
        <p class="muted">No run tasks.</p>
      )}
      {props.canManage ? (
        <section aria-labelledby="add-task-h">
          <h2 id="add-task-h">Add a run task</h2>
          <p>Its URL must answer a test request with 200.</p>
          <Refused refusal={props.refusal} form="add-task" what="The run task was not added:" />
          <form class="settings" method="post" action={base}>
            <Input id="task-name" name="name" label="Name" value={sent.name ?? ""} autocomplete="off" />
            <Input id="task-url" name="url" label="URL" value={sent.url ?? ""} wide autocomplete="off" />
            <Input id="task-description" name="description" label="Description" value={sent.description ?? ""} wide />
            <Input id="task-hmac" name="hmac-key" label="HMAC key (optional, never shown again)" value="" type="password" autocomplete="off" />
            <Check id="task-enabled" name="enabled" label="Enabled" checked={sent.enabled !== undefined ? sent.enabled === "on" : true} />
            <Submit text="Add run task" />
          </form>
        </section>
      ) : null}
    </Layout>
  );
}

export function WorkspaceTasksPage(props: {
  principal: Principal;
  ws: WorkspaceName;
  attached: WorkspaceTask[];
  /** The organisation's tasks the caller may see (the attach form's choices); null when it may see none. */
  available: RunTask[] | null;
  canManage: boolean;
  refusal?: Refusal;
}) {
  const { ws } = props;
  const base = wsTasksPath(ws);
  const sent = sentOf(props.refusal, "attach-task") ?? {};
  return (
    <Layout title={`Run tasks · ${ws.name}`} principal={props.principal}>
      <Crumbs organization={ws.organization} workspace={ws.name} here="Run tasks" />
      <h1>Run tasks of {ws.name}</h1>
      <p>At each stage named, a run waits for these tasks; a mandatory one that fails stops the run, an advisory one is only shown.</p>
      {props.attached.length ? (
        <Table id="workspace-tasks" columns={props.canManage ? ["Task", "Stages", "Enforcement", "Detach"] : ["Task", "Stages", "Enforcement"]}>
          {props.attached.map((t) => (
            <tr data-workspace-task={t.id}>
              <td>{t.taskName}</td>
              <td>{t.stages.map((s) => s.replace("_", "-")).join(", ")}</td>
              <td>{t.enforcementLevel}</td>
              {props.canManage ? (
                <td>
                  <ButtonForm action={`${base}/${encodeURIComponent(t.id)}/delete`} label={`the run task ${t.taskName}`} text="Detach" danger />
                </td>
              ) : null}
            </tr>
          ))}
        </Table>
      ) : (
        <p class="muted">No run tasks are attached.</p>
      )}
      {props.canManage && props.available ? (
        <section aria-labelledby="attach-task-h">
          <h2 id="attach-task-h">Attach a run task</h2>
          <Refused refusal={props.refusal} form="attach-task" what="The run task was not attached:" />
          {props.available.length ? (
            <form class="settings" method="post" action={base}>
              <div>
                <label for="attach-task">Task</label>
                <select id="attach-task" name="task">
                  {props.available.map((t) => (
                    <option value={t.id} selected={sent.task === t.id}>
                      {t.name}
                    </option>
                  ))}
                </select>
              </div>
              <div>
                <label for="attach-enforcement">Enforcement</label>
                <select id="attach-enforcement" name="enforcement">
                  <option value="advisory" selected={sent.enforcement !== "mandatory"}>
                    advisory
                  </option>
                  <option value="mandatory" selected={sent.enforcement === "mandatory"}>
                    mandatory
                  </option>
                </select>
              </div>
              {TASK_STAGES.map((s) => (
                <Check id={`attach-${s}`} name="stages" value={s} label={s.replace("_", "-")} checked={s === "post_plan"} />
              ))}
              <Submit text="Attach run task" />
            </form>
          ) : (
            <p class="muted">The organisation has no run tasks yet.</p>
          )}
        </section>
      ) : null}
    </Layout>
  );
}
