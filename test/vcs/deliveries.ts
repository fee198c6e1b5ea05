// Signed webhook deliveries as the providers send them, built with Web Crypto so they work in workerd and Node.
//
// GitHub: X-Hub-Signature-256 = "sha256=" + hex HMAC-SHA256(secret, raw body), plus the legacy SHA-1 X-Hub-Signature
// (docs.github.com "Validating webhook deliveries"; header list from "Webhook events and payloads").
// GitLab: the hook's secret token is sent as-is in X-Gitlab-Token; no signature (docs.gitlab.com "Webhooks").

const encoder = new TextEncoder();

async function hmacHex(hash: "SHA-256" | "SHA-1", secret: string, body: string | Uint8Array): Promise<string> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash }, false, ["sign"]);
  const data = typeof body === "string" ? encoder.encode(body) : new Uint8Array(body);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, data));
  return [...mac].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** GitHub's X-Hub-Signature-256 value for `body` (sign the exact bytes that are sent). */
export async function signGitHub(secret: string, body: string | Uint8Array): Promise<string> {
  return `sha256=${await hmacHex("SHA-256", secret, body)}`;
}

/** The legacy X-Hub-Signature (HMAC-SHA1) value. */
export async function signGitHubSha1(secret: string, body: string | Uint8Array): Promise<string> {
  return `sha1=${await hmacHex("SHA-1", secret, body)}`;
}

/** Verifies an X-Hub-Signature-256 value with Web Crypto's constant-time HMAC verify. */
export async function verifyGitHub(secret: string, body: string | Uint8Array, signature: string | null): Promise<boolean> {
  if (!signature?.startsWith("sha256=")) return false;
  const hex = signature.slice("sha256=".length);
  if (!/^[0-9a-f]{64}$/i.test(hex)) return false;
  const mac = new Uint8Array(hex.match(/../g)!.map((h) => Number.parseInt(h, 16)));
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  return crypto.subtle.verify("HMAC", key, mac, typeof body === "string" ? encoder.encode(body) : new Uint8Array(body));
}

export interface GitHubDeliveryOptions {
  /** X-GitHub-Event: push, pull_request, ping... */
  event: string;
  /** The payload object (serialised compactly, as GitHub does) or the exact body string. */
  payload: unknown;
  /** The hook secret; omit to send an unsigned delivery. */
  secret?: string;
  /** X-GitHub-Delivery; a redelivery keeps the same value. Default: a fresh UUID. */
  deliveryId?: string;
  hookId?: number | string;
  /** Override or remove (null) any header, e.g. to send a wrong signature. */
  headers?: Record<string, string | null>;
}

/** A Request for `url` carrying a GitHub delivery. */
export async function githubDelivery(url: string, o: GitHubDeliveryOptions): Promise<Request> {
  const body = typeof o.payload === "string" ? o.payload : JSON.stringify(o.payload);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "user-agent": "GitHub-Hookshot/fake",
    "x-github-event": o.event,
    "x-github-delivery": o.deliveryId ?? crypto.randomUUID(),
    "x-github-hook-id": String(o.hookId ?? 1),
    "x-github-hook-installation-target-type": "repository",
    "x-github-hook-installation-target-id": "1",
  };
  if (o.secret !== undefined) {
    headers["x-hub-signature-256"] = await signGitHub(o.secret, body);
    headers["x-hub-signature"] = await signGitHubSha1(o.secret, body);
  }
  return new Request(url, { method: "POST", headers: applyOverrides(headers, o.headers), body });
}

export interface GitLabDeliveryOptions {
  /** X-Gitlab-Event: "Push Hook", "Tag Push Hook", "Merge Request Hook"... */
  event: string;
  payload: unknown;
  /** The hook's secret token; omit to send none. */
  token?: string;
  /** Idempotency-Key and X-Gitlab-Event-UUID; a retry keeps the same value. Default: a fresh UUID. */
  eventId?: string;
  /** X-Gitlab-Webhook-UUID: identifies the hook. */
  webhookUuid?: string;
  /** X-Gitlab-Instance: the GitLab origin. */
  instance?: string;
  headers?: Record<string, string | null>;
}

/** A Request for `url` carrying a GitLab delivery. */
export async function gitlabDelivery(url: string, o: GitLabDeliveryOptions): Promise<Request> {
  const body = typeof o.payload === "string" ? o.payload : JSON.stringify(o.payload);
  const eventId = o.eventId ?? crypto.randomUUID();
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "user-agent": "GitLab/17.0.0",
    "x-gitlab-event": o.event,
    "x-gitlab-instance": o.instance ?? "https://gitlab.example.com",
    "x-gitlab-webhook-uuid": o.webhookUuid ?? "00000000-0000-4000-8000-000000000001",
    "x-gitlab-event-uuid": eventId,
    "idempotency-key": eventId,
  };
  if (o.token !== undefined) headers["x-gitlab-token"] = o.token;
  return new Request(url, { method: "POST", headers: applyOverrides(headers, o.headers), body });
}

function applyOverrides(headers: Record<string, string>, overrides: Record<string, string | null> = {}): Headers {
  const out = new Headers(headers);
  for (const [name, value] of Object.entries(overrides)) {
    if (value === null) out.delete(name);
    else out.set(name, value);
  }
  return out;
}
