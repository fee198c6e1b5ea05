/**
 * One run task request: the JSON body POSTed to the task's URL through the outbound rules (notifications.outbound.ts
 * `notificationFetch`: each redirect hop checked, time bounded), signed in `X-TFC-Task-Signature` (HMAC-SHA512 of the
 * body with the task's HMAC key, hex) when the task has a key. The integration must answer 200. Never throws.
 */
import type { Bindings } from "../env";
import { notificationFetch, signature } from "../notifications/notifications.outbound";
import type { DeliveryResponse } from "../notifications/notifications.types";

export async function sendTaskRequest(
  env: Bindings,
  url: string,
  payload: Record<string, unknown>,
  hmacKey: string | null,
  self: string | null,
): Promise<DeliveryResponse & { accepted: boolean }> {
  const body = JSON.stringify(payload);
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  if (hmacKey) headers["X-TFC-Task-Signature"] = await signature(hmacKey, body);
  const answer = await notificationFetch(env, url, body, headers, self);
  return { ...answer, accepted: answer.code === "200" };
}
