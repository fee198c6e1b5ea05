/**
 * The requests a notification makes: an HTTP POST to its destination (through src/platform/outbound.ts, the answer
 * recorded), and an e-mail through the operator's SMTP relay (`SMTP_URL`, `smtp://user:pass@host:port` or
 * `smtps://…`) over a Workers TCP socket (worker-mailer).
 * `notificationFetch` records a POST's answer as a delivery response: run tasks share it, and its retry schedule.
 */
import { WorkerMailer } from "worker-mailer";
import type { Bindings } from "../env";
import { outboundFetch } from "../platform/outbound";
import type { DeliveryResponse } from "./notifications.types";

const TIMEOUT_MS = 10_000;
const BODY_KEPT = 4_096;
const RETRY_BASE_MS = 2_000;
const RETRY_MAX_MS = 10 * 60_000;

/** Requests one alarm sends (notification deliveries, run task requests); more wait for the next, which is due at once. */
export const SENDS_PER_ALARM = 25;

/** When a failed request is tried again: 2 seconds after the first attempt, four times longer after each next, 10 minutes at most. */
export const retryAt = (attempts: number, nowMs = Date.now()): number => nowMs + Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 4 ** attempts);

const response = (url: string, code: string, body: string, headers: Record<string, string[]>, ok: boolean): DeliveryResponse => ({
  url,
  code,
  body: body.slice(0, BODY_KEPT),
  headers,
  "sent-at": new Date().toISOString(),
  successful: ok ? "true" : "false",
});

/**
 * POSTs `body` to `url` through src/platform/outbound.ts `outboundFetch` (each redirect hop checked, time bounded) and
 * records the answer: 2xx is a success; a refused address, a failure to connect, a time out or any other status is not.
 */
export async function notificationFetch(
  env: Pick<Bindings, "OUTBOUND_ALLOW_PRIVATE">,
  url: string,
  body: string,
  headers: Record<string, string>,
  self: string | null,
): Promise<DeliveryResponse> {
  let res: Response;
  try {
    res = await outboundFetch(env, url, { method: "POST", headers: { "User-Agent": "workspace-service", ...headers }, body, self, timeoutMs: TIMEOUT_MS });
  } catch (err) {
    return response(url, "", `not delivered: ${err instanceof Error ? err.message : String(err)}`, {}, false);
  }
  const answered: Record<string, string[]> = {};
  res.headers.forEach((value, key) => {
    answered[key] = [...(answered[key] ?? []), value];
  });
  let text = "";
  try {
    text = await res.text();
  } catch {
    // The status is what counts; a body cut off is recorded as empty.
  }
  return response(res.url || url, String(res.status), text, answered, res.status >= 200 && res.status < 300);
}

/** The `X-TFE-Notification-Signature`: HMAC-SHA512 of the body with the configuration's token, hex. */
export async function signature(token: string, body: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(token), { name: "HMAC", hash: "SHA-512" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(body)));
  return Array.from(mac, (b) => b.toString(16).padStart(2, "0")).join("");
}

export interface SmtpRelay {
  host: string;
  port: number;
  secure: boolean;
  username: string | null;
  password: string | null;
  from: string;
}

/** The operator's relay from `SMTP_URL` (`from` the `from` parameter, else `notifications@<host>`), or null when unset or unreadable. */
export function smtpRelay(env: { SMTP_URL?: string }): SmtpRelay | null {
  const raw = env.SMTP_URL?.trim();
  if (!raw) return null;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return null;
  }
  if (u.protocol !== "smtp:" && u.protocol !== "smtps:") return null;
  const secure = u.protocol === "smtps:";
  return {
    host: u.hostname.replace(/^\[|\]$/g, ""),
    port: u.port ? Number(u.port) : secure ? 465 : 587,
    secure,
    username: u.username ? decodeURIComponent(u.username) : null,
    password: u.password ? decodeURIComponent(u.password) : null,
    from: u.searchParams.get("from") ?? `notifications@${u.hostname}`,
  };
}

/** Sends one plain-text message to `to` through the relay; the answer recorded as a delivery response. */
export async function sendMail(relay: SmtpRelay, to: string[], subject: string, text: string): Promise<DeliveryResponse> {
  const url = `smtp://${relay.host}:${relay.port}`;
  if (to.length === 0) return response(url, "", "no recipients", {}, false);
  try {
    const mailer = await WorkerMailer.connect({
      host: relay.host,
      port: relay.port,
      secure: relay.secure,
      ...(relay.username && relay.password
        ? { credentials: { username: relay.username, password: relay.password }, authType: ["plain", "login"] as const }
        : {}),
      socketTimeoutMs: TIMEOUT_MS,
      responseTimeoutMs: TIMEOUT_MS,
    });
    try {
      await mailer.send({ from: { email: relay.from }, to: to.map((email) => ({ email })), subject, text });
    } finally {
      await mailer.close().catch(() => undefined);
    }
    return response(url, "250", `sent to ${to.length} recipient${to.length === 1 ? "" : "s"}`, {}, true);
  } catch (err) {
    return response(url, "", `not sent: ${err instanceof Error ? err.message : String(err)}`, {}, false);
  }
}
