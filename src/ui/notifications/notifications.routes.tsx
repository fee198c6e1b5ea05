/** @jsxImportSource hono/jsx */
/**
 * A workspace's notification configurations in the web UI, for its admins: each form calls the service its API
 * endpoint calls (GET, POST /workspaces/:id/notification-configurations; PATCH, DELETE and actions/verify of
 * /notification-configurations/:id), which authorises again; a refused input shows the API's reasons (422).
 */
import { Hono } from "hono";
import type { AppEnv } from "../../env";
import { ApiError } from "../../errors";
import { validationError } from "../../jsonapi/validation";
import { smtpRelay } from "../../notifications/notifications.outbound";
import { notificationCreateBody } from "../../notifications/notifications.schemas";
import {
  createNotification,
  deleteNotification,
  listNotifications,
  showNotification,
  updateNotification,
  verifyNotification,
} from "../../notifications/notifications.service";
import { readByName } from "../../workspaces/workspaces.service";
import { callerOf, type Ctx, nameOf, orgOf } from "../context";
import { definePage } from "../define-page";
import { attempt, type Form, formOf, type Refusal, reasonsOf, refusesInput, text, ticked, values } from "../forms";
import { NotificationsPage, notificationsPath } from "./notifications.view";

export const notificationsUi = new Hono<AppEnv>();

async function page(c: Ctx, refusal?: Refusal): Promise<Response> {
  const caller = callerOf(c);
  const readable = await readByName(caller, orgOf(c), nameOf(c), "workspace.update");
  const views = await listNotifications(caller, readable.record.id);
  const ws = { organization: readable.scope.access.organization.name, name: readable.record.name };
  return c.html(
    <NotificationsPage
      principal={caller.principal}
      ws={ws}
      configs={views.map((v) => v.config)}
      emailRelay={smtpRelay(caller.env) !== null}
      refusal={refusal}
    />,
    refusal ? 422 : 200,
  );
}

const here = (c: Ctx) => notificationsPath({ organization: orgOf(c), name: nameOf(c) });

/** The add form as the API's create body. */
function createOf(form: Form) {
  const destination = text(form, "destination");
  const emails = text(form, "emails")
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean);
  return notificationCreateBody.safeParse({
    data: {
      type: "notification-configurations",
      attributes: {
        name: text(form, "name").trim(),
        "destination-type": destination,
        enabled: ticked(form, "enabled"),
        triggers: values(form, "triggers"),
        ...(destination === "email" ? { "email-addresses": emails } : { url: text(form, "url").trim() }),
        ...(text(form, "token") ? { token: text(form, "token") } : {}),
      },
    },
  });
}

definePage(notificationsUi, "get", "/:organization/workspaces/:name/notifications", "workspace.update", (c) => page(c));

definePage(notificationsUi, "post", "/:organization/workspaces/:name/notifications", "workspace.update", async (c) => {
  const form = await formOf(c);
  const caller = callerOf(c);
  const { record } = await readByName(caller, orgOf(c), nameOf(c), "workspace.update");
  const sent = {
    name: text(form, "name"),
    destination: text(form, "destination"),
    url: text(form, "url"),
    emails: text(form, "emails"),
    triggers: values(form, "triggers").join(","),
    enabled: ticked(form, "enabled") ? "on" : "",
  };
  const again = (errors: string[]) => page(c, { form: "add-notification", values: sent, errors });
  const parsed = createOf(form);
  if (!parsed.success) return again(reasonsOf(validationError(parsed.error, "json")));
  return attempt(c, () => createNotification(caller, record.id, parsed.data.data, new URL(c.req.url).origin), here(c), again);
});

/** A configuration of this page's workspace (another workspace's is not found here). */
async function ofThisWorkspace(c: Ctx) {
  const caller = callerOf(c);
  const { record } = await readByName(caller, orgOf(c), nameOf(c), "workspace.update");
  const view = await showNotification(caller, c.req.param("notification_id") ?? "");
  if (view.workspaceId !== record.id) throw ApiError.of("not_found");
  return { caller, view };
}

for (const [form, enabled] of [
  ["enable", true],
  ["disable", false],
] as const) {
  definePage(notificationsUi, "post", `/:organization/workspaces/:name/notifications/:notification_id/${form}`, "workspace.update", async (c) => {
    const { caller, view } = await ofThisWorkspace(c);
    try {
      await updateNotification(caller, view.config.id, { type: "notification-configurations", attributes: { enabled } });
    } catch (e) {
      if (refusesInput(e)) return page(c, { form: "change-notification", values: {}, errors: reasonsOf(e) });
      throw e;
    }
    return c.redirect(here(c), 303);
  });
}

definePage(notificationsUi, "post", "/:organization/workspaces/:name/notifications/:notification_id/verify", "workspace.update", async (c) => {
  const { caller, view } = await ofThisWorkspace(c);
  await verifyNotification(caller, view.config.id);
  return c.redirect(here(c), 303);
});

definePage(notificationsUi, "post", "/:organization/workspaces/:name/notifications/:notification_id/delete", "workspace.update", async (c) => {
  const { caller, view } = await ofThisWorkspace(c);
  await deleteNotification(caller, view.config.id);
  return c.redirect(here(c), 303);
});
