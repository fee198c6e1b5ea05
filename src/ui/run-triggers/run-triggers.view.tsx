/** @jsxImportSource hono/jsx */
/**
 * A workspace's run triggers: its sources (whose applies queue runs here) and the workspaces it triggers, with the
 * add and remove forms for its admins. Plain data in, HTML out (run-triggers.routes.tsx calls the services).
 */
import type { Principal } from "../../auth/principal";
import type { RunTrigger } from "../../run-triggers/run-triggers.d1";
import { wsPath } from "../context";
import { ButtonForm, Input, type Refusal, Refused, sentOf } from "../forms";
import { Layout } from "../layout";
import { Crumbs, Submit, Table, type WorkspaceName } from "../parts";

export const triggersPath = (ws: WorkspaceName) => `${wsPath(ws.organization, ws.name)}/run-triggers`;

export function RunTriggersPage(props: {
  principal: Principal;
  ws: WorkspaceName;
  canManage: boolean;
  autoApply: boolean;
  inbound: RunTrigger[];
  outbound: RunTrigger[];
  refusal?: Refusal;
}) {
  const { ws } = props;
  const base = triggersPath(ws);
  const sent = sentOf(props.refusal, "add-source") ?? {};
  return (
    <Layout title={`Run triggers · ${ws.name}`} principal={props.principal}>
      <Crumbs organization={ws.organization} workspace={ws.name} here="Run triggers" />
      <h1>Run triggers of {ws.name}</h1>
      <p>
        A successful apply in a source workspace queues a run here.{" "}
        {props.autoApply
          ? "Those runs apply by themselves (auto-apply-run-trigger is on)."
          : "Those runs wait for confirmation (auto-apply-run-trigger is off)."}
      </p>
      <h2>Source workspaces</h2>
      {props.inbound.length ? (
        <Table id="run-trigger-sources" columns={props.canManage ? ["Source", "Added", "Remove"] : ["Source", "Added"]}>
          {props.inbound.map((t) => (
            <tr data-run-trigger={t.id}>
              <td>
                <a href={wsPath(ws.organization, t.sourceableName)}>{t.sourceableName}</a>
              </td>
              <td>{t.createdAt}</td>
              {props.canManage ? (
                <td>
                  <ButtonForm action={`${base}/${encodeURIComponent(t.id)}/delete`} label={`the run trigger from ${t.sourceableName}`} text="Remove" danger />
                </td>
              ) : null}
            </tr>
          ))}
        </Table>
      ) : (
        <p class="muted">No source workspaces.</p>
      )}
      {props.canManage ? (
        <section aria-labelledby="add-source-h">
          <h2 id="add-source-h">Add a source workspace</h2>
          <Refused refusal={props.refusal} form="add-source" what="The source was not added:" />
          <form class="settings" method="post" action={base}>
            <Input id="source" name="source" label="Source workspace's name" value={sent.source ?? ""} autocomplete="off" />
            <Submit text="Add source" />
          </form>
        </section>
      ) : null}
      <h2>Workspaces this one triggers</h2>
      {props.outbound.length ? (
        <Table id="run-trigger-targets" columns={["Workspace", "Added"]}>
          {props.outbound.map((t) => (
            <tr data-run-trigger={t.id}>
              <td>
                <a href={wsPath(ws.organization, t.workspaceName)}>{t.workspaceName}</a>
              </td>
              <td>{t.createdAt}</td>
            </tr>
          ))}
        </Table>
      ) : (
        <p class="muted">No workspace is triggered by this one.</p>
      )}
    </Layout>
  );
}
