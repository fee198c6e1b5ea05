/**
 * Notification configurations (HCP Terraform API docs: Notification Configurations): every operation needs admin
 * access to the workspace. A configuration lives in its workspace's object, found from its id alone. The token is
 * sealed here and never answered; a URL this service may not request is refused when it is set; an e-mail
 * configuration needs the operator's SMTP relay. A configuration enabled (on create, or by an update) is verified
 * first: the verification request must be answered with a 2xx, else the change is refused with the answer.
 */
import { organizationMembers } from "../users/memberships.d1";
import type { Caller } from "../caller";
import { ApiError, unwrap } from "../errors";
import { newChildId, nowIso, parentOfId } from "../ids";
import { outboundRefusal } from "../platform/outbound";
import { sealValue } from "../variables/variables.crypto";
import { workspaceObject } from "../workspaces/workspace.stub";
import { mutateAs, readById, type Readable } from "../workspaces/workspaces.service";
import { smtpRelay } from "./notifications.outbound";
import { checkConfig } from "./notifications.rules";
import type { NotificationCreate, NotificationUpdate } from "./notifications.schemas";
import { sendNotification } from "./notifications.send";
import type { DeliveryResponse, NotificationConfig } from "./notifications.types";

const A = "/data/attributes";

export interface NotificationView {
  config: NotificationConfig;
  workspaceId: string;
}

/** The refusals of a configuration as it would be stored (beyond the pure rules). */
async function check(caller: Caller, c: NotificationConfig, organizationId: string): Promise<void> {
  const failure = checkConfig(c);
  if (failure) throw ApiError.of(failure.code, { detail: failure.detail, pointer: failure.pointer });
  if (c.destinationType === "email") {
    if (!smtpRelay(caller.env)) {
      throw ApiError.of("invalid_attribute", {
        detail: "E-mail notifications need an SMTP relay, and this service has none: its operator sets SMTP_URL to enable them",
        pointer: `${A}/destination-type`,
      });
    }
  } else {
    const refused = outboundRefusal(caller.env, c.url ?? "", c.origin);
    if (refused) throw ApiError.of("invalid_attribute", { detail: `URL is not requested: ${refused}`, pointer: `${A}/url` });
  }
  if (c.emailUserIds.length > 0) {
    // Only the organisation's members (invited or active) may be named; anyone else answers as a user that does not
    // exist, so the refusal tells nothing of other organisations' people.
    const known = new Set((await organizationMembers(caller.db, organizationId, c.emailUserIds)).map((u) => u.id));
    const missing = c.emailUserIds.find((id) => !known.has(id));
    if (missing) throw ApiError.of("invalid_attribute", { detail: `User ${missing} was not found`, pointer: "/data/relationships/users" });
  }
}

/** Sends the verification; refuses the change unless it succeeded. Answers the response to record. */
async function verified(r: Readable, c: NotificationConfig, caller: Caller): Promise<DeliveryResponse> {
  const answer = await sendNotification(caller.env, context(r, c), null);
  if (answer.successful !== "true") {
    throw ApiError.of("invalid_attribute", {
      detail: `Verification failed: ${answer.url} ${answer.code ? `answered ${answer.code}` : answer.body}`,
      pointer: `${A}/enabled`,
    });
  }
  return answer;
}

const context = (r: Readable, config: NotificationConfig) => ({
  config,
  workspaceId: r.record.id,
  workspaceName: r.record.name,
  organizationId: r.record.organizationId,
  organizationName: r.scope.access.organization.name,
});

export async function createNotification(caller: Caller, workspaceId: string, data: NotificationCreate, origin: string): Promise<NotificationView> {
  const readable = await readById(caller, workspaceId, "workspace.update");
  const a = data.attributes;
  const id = newChildId("nc", workspaceId);
  const now = nowIso();
  const email = a["destination-type"] === "email";
  const config: NotificationConfig = {
    id,
    name: a.name,
    destinationType: a["destination-type"],
    enabled: a.enabled,
    url: email ? null : (a.url ?? null),
    triggers: [...new Set(a.triggers ?? [])],
    emailAddresses: email ? (a["email-addresses"] ?? []) : [],
    emailUserIds: email ? (data.relationships?.users?.data.map((u) => u.id) ?? []) : [],
    sealedToken: a.token ? await sealValue(caller.env, id, a.token) : null,
    origin,
    createdAt: now,
    updatedAt: now,
    deliveryResponses: [],
  };
  await check(caller, config, readable.record.organizationId);
  if (config.enabled && !email) config.deliveryResponses = [await verified(readable, config, caller)];
  const { value } = await mutateAs(caller, workspaceId, "workspace.update", (_r, guard) =>
    workspaceObject(caller.env, workspaceId).createNotification({ config, guard }),
  );
  return { config: value.config, workspaceId };
}

export async function listNotifications(caller: Caller, workspaceId: string): Promise<NotificationView[]> {
  await readById(caller, workspaceId, "workspace.update");
  const res = unwrap(await workspaceObject(caller.env, workspaceId).listNotifications());
  return res.value.items.map((config) => ({ config, workspaceId }));
}

/** A configuration and its workspace, once the caller is its workspace's admin. */
async function load(caller: Caller, id: string): Promise<{ readable: Readable; config: NotificationConfig }> {
  const workspaceId = parentOfId(id, "ws");
  if (!workspaceId) throw ApiError.of("not_found");
  const readable = await readById(caller, workspaceId, "workspace.update");
  const res = unwrap(await workspaceObject(caller.env, workspaceId).getNotification(id));
  return { readable, config: res.value.config };
}

export async function showNotification(caller: Caller, id: string): Promise<NotificationView> {
  const { readable, config } = await load(caller, id);
  return { config, workspaceId: readable.record.id };
}

export async function updateNotification(caller: Caller, id: string, data: NotificationUpdate): Promise<NotificationView> {
  const { readable, config } = await load(caller, id);
  const a = data.attributes ?? {};
  const email = config.destinationType === "email";
  const next: NotificationConfig = {
    ...config,
    name: a.name ?? config.name,
    enabled: a.enabled ?? config.enabled,
    url: email ? null : a.url !== undefined ? a.url : config.url,
    triggers: a.triggers ? [...new Set(a.triggers)] : config.triggers,
    emailAddresses: email ? (a["email-addresses"] ?? config.emailAddresses) : [],
    // As the real API: an update names the users of an e-mail configuration whole, so one without them leaves none.
    emailUserIds: email ? (data.relationships?.users?.data.map((u) => u.id) ?? []) : [],
    sealedToken: a.token !== undefined ? (a.token ? await sealValue(caller.env, id, a.token) : null) : config.sealedToken,
    updatedAt: nowIso(),
  };
  await check(caller, next, readable.record.organizationId);
  const reaches = !config.enabled || next.url !== config.url || a.token !== undefined;
  const verification = next.enabled && !email && reaches ? await verified(readable, next, caller) : null;
  const workspaceId = readable.record.id;
  const { value } = await mutateAs(caller, workspaceId, "workspace.update", (_r, guard) =>
    workspaceObject(caller.env, workspaceId).updateNotification({ config: next, readAt: config.updatedAt, guard }),
  );
  // The verification's answer joins the responses the object kept.
  return { config: verification ? await record(caller, workspaceId, id, verification) : value.config, workspaceId };
}

async function record(caller: Caller, workspaceId: string, id: string, response: DeliveryResponse): Promise<NotificationConfig> {
  return unwrap(await workspaceObject(caller.env, workspaceId).recordNotificationResponse({ id, response })).value.config;
}

export async function deleteNotification(caller: Caller, id: string): Promise<void> {
  const { readable } = await load(caller, id);
  const workspaceId = readable.record.id;
  await mutateAs(caller, workspaceId, "workspace.update", (_r, guard) => workspaceObject(caller.env, workspaceId).deleteNotification({ id, guard }));
}

/** `actions/verify`: a verification sent now (whatever the answer), recorded, and the configuration answered. */
export async function verifyNotification(caller: Caller, id: string): Promise<NotificationView> {
  const { readable, config } = await load(caller, id);
  const answer = await sendNotification(caller.env, context(readable, config), null);
  return { config: await record(caller, readable.record.id, id, answer), workspaceId: readable.record.id };
}
