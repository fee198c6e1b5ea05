/** @jsxImportSource hono/jsx */
/**
 * A workspace's notification configurations, for its admins: each with its destination, triggers and last answers,
 * the forms to add one, enable or disable it, verify it and delete it. Plain data in, HTML out
 * (notifications.routes.tsx calls the services). The token is write-only: no page shows it.
 */
import type { Principal } from "../../auth/principal";
import { DESTINATIONS, TRIGGERS } from "../../notifications/notifications.rules";
import type { NotificationConfig } from "../../notifications/notifications.types";
import { wsPath } from "../context";
import { ButtonForm, Check, Input, type Refusal, Refused, sentOf } from "../forms";
import { Layout } from "../layout";
import { Crumbs, Submit, Table, type WorkspaceName } from "../parts";

export const notificationsPath = (ws: WorkspaceName) => `${wsPath(ws.organization, ws.name)}/notifications`;

const DESTINATION_NAMES: Record<string, string> = { generic: "Webhook (generic)", slack: "Slack", "microsoft-teams": "Microsoft Teams", email: "E-mail" };

export function NotificationsPage(props: { principal: Principal; ws: WorkspaceName; configs: NotificationConfig[]; emailRelay: boolean; refusal?: Refusal }) {
  const { ws } = props;
  const base = notificationsPath(ws);
  const sent = sentOf(props.refusal, "add-notification") ?? { destination: "generic" };
  const sentTriggers = new Set((sent.triggers ?? "").split(",").filter(Boolean));
  return (
    <Layout title={`Notifications · ${ws.name}`} principal={props.principal}>
      <Crumbs organization={ws.organization} workspace={ws.name} here="Notifications" />
      <h1>Notifications of {ws.name}</h1>
      <Refused refusal={props.refusal} form="change-notification" what="The configuration was not changed:" />
      {props.configs.length ? (
        <Table id="notifications" columns={["Name", "Destination", "Triggers", "Enabled", "Last answer", "Actions"]}>
          {props.configs.map((n) => {
            const last = n.deliveryResponses[0];
            const at = `${base}/${encodeURIComponent(n.id)}`;
            return (
              <tr data-notification={n.id}>
                <td>{n.name}</td>
                <td>
                  {DESTINATION_NAMES[n.destinationType]}
                  <br />
                  <code>{n.destinationType === "email" ? n.emailAddresses.join(", ") : (n.url ?? "")}</code>
                </td>
                <td>{n.triggers.length ? n.triggers.join(", ") : <span class="muted">none</span>}</td>
                <td>{n.enabled ? "yes" : "no"}</td>
                <td>
                  {last ? (
                    <>
                      {last.successful === "true" ? "delivered" : "failed"} {last.code ? `(${last.code})` : ""} <span class="muted">{last["sent-at"]}</span>
                    </>
                  ) : (
                    <span class="muted">none yet</span>
                  )}
                </td>
                <td>
                  <ButtonForm action={`${at}/${n.enabled ? "disable" : "enable"}`} label={n.name} text={n.enabled ? "Disable" : "Enable"} />{" "}
                  <ButtonForm action={`${at}/verify`} label={n.name} text="Verify" /> <ButtonForm action={`${at}/delete`} label={n.name} text="Delete" danger />
                </td>
              </tr>
            );
          })}
        </Table>
      ) : (
        <p class="muted">No notification configurations.</p>
      )}
      <section aria-labelledby="add-notification-h">
        <h2 id="add-notification-h">Add a notification configuration</h2>
        {props.emailRelay ? null : <p class="muted">E-mail destinations need an SMTP relay, which this service's operator has not configured (SMTP_URL).</p>}
        <Refused refusal={props.refusal} form="add-notification" what="The configuration was not added:" />
        <form class="settings" method="post" action={base}>
          <Input id="n-name" name="name" label="Name" value={sent.name ?? ""} />
          <div>
            <label for="n-destination">Destination</label>
            <select id="n-destination" name="destination">
              {DESTINATIONS.map((d) => (
                <option value={d} selected={sent.destination === d}>
                  {DESTINATION_NAMES[d]}
                </option>
              ))}
            </select>
          </div>
          <Input id="n-url" name="url" label="URL (webhook, Slack, Teams)" value={sent.url ?? ""} wide />
          <Input id="n-token" name="token" label="Token (signs generic webhooks; write-only)" value="" type="password" autocomplete="off" />
          <Input id="n-emails" name="emails" label="E-mail addresses (comma-separated)" value={sent.emails ?? ""} wide />
          <fieldset class="wide">
            <legend>Triggers</legend>
            {TRIGGERS.map((t) => (
              <Check id={`n-trigger-${t.replace(/[^a-z_]/g, "-")}`} name="triggers" value={t} label={t} checked={sentTriggers.has(t)} />
            ))}
          </fieldset>
          <Check id="n-enabled" name="enabled" label="Enabled (verified first)" checked={sent.enabled === "on"} />
          <Submit text="Add configuration" />
        </form>
      </section>
    </Layout>
  );
}
