/**
 * The `access_token` a run task's request carries (HCP Terraform API docs: Run Tasks Integration): the integration
 * sends it back on its callback, and may read the run's JSON plan with it, nothing else.
 * `task.<payload>.<signature>`: the payload base64url JSON `{t, r, w, p, x}` (task result, run, workspace, plan, expiry
 * in seconds), the signature HMAC-SHA256 with `BLOB_SIGNING_KEY` over a domain-separated message (no run token or
 * signed URL passes for it). Stateless; the callback then checks the result in the workspace's object.
 */
import type { Bindings } from "../env";

export const TASK_TOKEN_PREFIX = "task.";
const DOMAIN = "workspace-service/task-token/v1\n";
const encoder = new TextEncoder();

export interface TaskTokenClaims {
  resultId: string;
  runId: string;
  workspaceId: string;
  planId: string;
  /** Seconds since the epoch. */
  expiresAt: number;
}

async function key(env: Bindings): Promise<CryptoKey> {
  if (!env.BLOB_SIGNING_KEY) throw new Error("BLOB_SIGNING_KEY is not configured");
  return crypto.subtle.importKey("raw", encoder.encode(env.BLOB_SIGNING_KEY), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
}

const b64url = (text: string) => {
  let bin = "";
  for (const b of encoder.encode(text)) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
};
const hex = (bytes: ArrayBuffer) => [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");

export async function mintTaskToken(env: Bindings, claims: TaskTokenClaims): Promise<string> {
  const payload = b64url(JSON.stringify({ t: claims.resultId, r: claims.runId, w: claims.workspaceId, p: claims.planId, x: claims.expiresAt }));
  const sig = await crypto.subtle.sign("HMAC", await key(env), encoder.encode(DOMAIN + payload));
  return `${TASK_TOKEN_PREFIX}${payload}.${hex(sig)}`;
}

const ID = /^[A-Za-z0-9_-]{1,80}$/;

/** The claims of a token whose signature holds and which has not expired, else null. */
export async function verifyTaskToken(env: Bindings, token: string, nowSeconds = Math.floor(Date.now() / 1000)): Promise<TaskTokenClaims | null> {
  if (!token.startsWith(TASK_TOKEN_PREFIX) || token.length > 1024) return null;
  const [payload, sigHex, ...rest] = token.slice(TASK_TOKEN_PREFIX.length).split(".");
  if (rest.length || !payload || !sigHex || !/^[0-9a-f]{64}$/.test(sigHex) || !/^[A-Za-z0-9_-]+$/.test(payload)) return null;
  const sig = new Uint8Array(32);
  for (let i = 0; i < 32; i++) sig[i] = Number.parseInt(sigHex.slice(i * 2, i * 2 + 2), 16);
  if (!(await crypto.subtle.verify("HMAC", await key(env), sig, encoder.encode(DOMAIN + payload)))) return null;
  let c: Record<string, unknown>;
  try {
    const bin = atob(payload.replace(/-/g, "+").replace(/_/g, "/"));
    c = JSON.parse(new TextDecoder().decode(Uint8Array.from(bin, (ch) => ch.charCodeAt(0)))) as Record<string, unknown>;
  } catch {
    return null;
  }
  const { t, r, w, p, x } = c;
  if (![t, r, w, p].every((v) => typeof v === "string" && ID.test(v))) return null;
  if (typeof x !== "number" || x <= nowSeconds) return null;
  return { resultId: t as string, runId: r as string, workspaceId: w as string, planId: p as string, expiresAt: x };
}

/** The bearer token of a request, if it is a task token. */
export function bearerTaskToken(authorization: string | undefined): string | null {
  const m = /^Bearer\s+(\S+)$/i.exec(authorization ?? "");
  return m && m[1]!.startsWith(TASK_TOKEN_PREFIX) ? m[1]! : null;
}
