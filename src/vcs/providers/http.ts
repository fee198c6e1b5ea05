/** What the providers' clients share: JSON requests to the host with the connection's token, and signature checks. */
import { VcsError, type VcsFetch } from "../vcs.types";

const encoder = new TextEncoder();

/** A request to the host; a non-2xx answer throws VcsError with the host's message (never the token). */
export async function call(
  fetch: VcsFetch,
  url: string,
  init: { method?: string; headers: Record<string, string>; body?: unknown; ok?: number[] },
): Promise<Response> {
  const res = await fetch(url, {
    method: init.method ?? "GET",
    headers: {
      Accept: "application/json",
      "User-Agent": "workspace-service",
      ...init.headers,
      ...(init.body !== undefined ? { "Content-Type": "application/json" } : {}),
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  if (res.ok || init.ok?.includes(res.status)) return res;
  const text = await res.text().catch(() => "");
  let message = text.slice(0, 300);
  try {
    const parsed = JSON.parse(text) as { message?: unknown; error?: unknown };
    if (typeof parsed.message === "string") message = parsed.message;
    else if (typeof parsed.error === "string") message = parsed.error;
  } catch {
    /* not JSON */
  }
  throw new VcsError(`${init.method ?? "GET"} ${new URL(url).pathname} answered ${res.status}: ${message}`, res.status);
}

export async function json<T>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

export async function bytes(res: Response): Promise<Uint8Array> {
  return new Uint8Array(await res.arrayBuffer());
}

/** HMAC-SHA256 of the raw body, checked with Web Crypto's constant-time verify against `sha256=<hex>`. */
export async function verifyHmacSha256(signature: string | null, body: Uint8Array, secret: string): Promise<boolean> {
  const m = /^sha256=([0-9a-f]{64})$/i.exec(signature?.trim() ?? "");
  if (!m) return false;
  const hex = m[1]!;
  const sig = new Uint8Array(32);
  for (let i = 0; i < 32; i++) sig[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  return crypto.subtle.verify("HMAC", key, sig, body);
}

/** Equality of two strings in time independent of where they differ (their SHA-256 digests compared whole). */
export async function sameSecret(given: string | null, secret: string): Promise<boolean> {
  if (given === null) return false;
  const [a, b] = await Promise.all([crypto.subtle.digest("SHA-256", encoder.encode(given)), crypto.subtle.digest("SHA-256", encoder.encode(secret))]);
  const x = new Uint8Array(a);
  const y = new Uint8Array(b);
  let diff = 0;
  for (let i = 0; i < x.length; i++) diff |= x[i]! ^ y[i]!;
  return diff === 0;
}

export async function sha256Hex(body: Uint8Array): Promise<string> {
  return [...new Uint8Array(await crypto.subtle.digest("SHA-256", body))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export const cut = (s: string, n: number) => (s.length <= n ? s : `${s.slice(0, n - 1)}…`);

export const ZERO_SHA = /^0{40}$/;

/** The union of a push's commits' changed paths (added, modified, removed). */
export function pushPaths(commits: Array<{ added?: string[]; modified?: string[]; removed?: string[] }> | undefined): string[] {
  const paths = new Set<string>();
  for (const c of commits ?? []) for (const p of [...(c.added ?? []), ...(c.modified ?? []), ...(c.removed ?? [])]) paths.add(p);
  return [...paths];
}

/** `Link: <…>; rel="next"`, if any. */
export function nextLink(res: Response): string | null {
  const link = res.headers.get("link");
  const m = link && /<([^>]+)>;\s*rel="next"/.exec(link);
  return m ? m[1]! : null;
}

/** `owner/name` as path segments of a GitHub-style API (`/repos/{owner}/{name}`). */
export const repoPath = (repo: string) => repo.split("/").map(encodeURIComponent).join("/");
