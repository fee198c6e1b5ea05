/**
 * One notification sent to one configuration's destination (a run event, or a verification when `event` is null):
 * the body its destination type takes, signed when it has a token, through notifications.outbound.ts. Used by the
 * workspace object's alarm and by the Worker's verification; never throws.
 */
import type { Bindings } from "../env";
import { organizationMembers } from "../users/memberships.d1";
import { openValue } from "../variables/variables.crypto";
import { notificationFetch, sendMail, signature, smtpRelay } from "./notifications.outbound";
import { emailMessage, genericPayload, slackPayload, teamsPayload, type PayloadContext } from "./notifications.rules";
import type { DeliveryResponse, NotificationEvent } from "./notifications.types";

/**
 * The addresses of the users an e-mail configuration names who are active members of its organisation when it is sent
 * (read from the index): an invitation not accepted yet, or a member who left, gets nothing.
 */
async function userEmails(db: D1Database, organizationId: string, ids: string[]): Promise<string[]> {
  return (await organizationMembers(db, organizationId, ids)).filter((u) => u.active && u.email !== "").map((u) => u.email);
}

export async function sendNotification(env: Bindings, x: PayloadContext, event: NotificationEvent | null): Promise<DeliveryResponse> {
  const c = x.config;
  if (c.destinationType === "email") {
    const relay = smtpRelay(env);
    const to = [...new Set([...c.emailAddresses, ...(await userEmails(env.DB, x.organizationId, c.emailUserIds).catch(() => []))])];
    if (!relay)
      return { url: "smtp:", code: "", body: "no SMTP relay is configured (SMTP_URL)", headers: {}, "sent-at": new Date().toISOString(), successful: "false" };
    const m = emailMessage(x, event);
    return sendMail(relay, to, m.subject, m.text);
  }
  const payload =
    c.destinationType === "slack" ? slackPayload(x, event) : c.destinationType === "microsoft-teams" ? teamsPayload(x, event) : genericPayload(x, event);
  const body = JSON.stringify(payload);
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  if (c.destinationType === "generic" && c.sealedToken) {
    try {
      headers["X-TFE-Notification-Signature"] = await signature(await openValue(env, c.id, c.sealedToken), body);
    } catch (err) {
      return { url: c.url ?? "", code: "", body: `not sent: ${String(err)}`, headers: {}, "sent-at": new Date().toISOString(), successful: "false" };
    }
  }
  return notificationFetch(env, c.url ?? "", body, headers, c.origin);
}
