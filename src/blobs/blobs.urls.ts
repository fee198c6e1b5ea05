/**
 * Signed state-blob URLs: Terraform PUTs state without an Authorization header, so upload and
 * download URLs carry an HMAC-SHA256 signature and an expiry (25 hours, as the real service's).
 */
import type { Bindings } from "../env";

export const BLOB_URL_TTL_SECONDS = 25 * 60 * 60;
export type BlobKind = "state" | "json";

/** HMAC-SHA256 of `message`, hex; each kind of signed URL prefixes its messages so none is valid as another. */
export async function hmacHex(key: string, message: string): Promise<string> {
  const k = await crypto.subtle.importKey("raw", new TextEncoder().encode(key), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const sig = await crypto.subtle.sign("HMAC", k, new TextEncoder().encode(message));
  return [...new Uint8Array(sig)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export function signingKey(env: Bindings): string {
  if (!env.BLOB_SIGNING_KEY) throw new Error("BLOB_SIGNING_KEY is not configured");
  return env.BLOB_SIGNING_KEY;
}

const message = (method: "GET" | "PUT", workspaceId: string, svId: string, kind: BlobKind, exp: number) =>
  `${method}\n${workspaceId}\n${svId}\n${kind}\n${exp}`;

/** An absolute URL of this service for one blob operation. */
export async function signedBlobUrl(
  env: Bindings,
  origin: string,
  method: "GET" | "PUT",
  workspaceId: string,
  svId: string,
  kind: BlobKind,
  nowSeconds = Math.floor(Date.now() / 1000),
): Promise<string> {
  const exp = nowSeconds + BLOB_URL_TTL_SECONDS;
  const sig = await hmacHex(signingKey(env), message(method, workspaceId, svId, kind, exp));
  return `${origin}/_blobs/${workspaceId}/${svId}/${kind}?method=${method}&exp=${exp}&sig=${sig}`;
}

/** Checks a request's signature and expiry in constant time. */
export async function verifyBlobUrl(
  env: Bindings,
  method: "GET" | "PUT",
  workspaceId: string,
  svId: string,
  kind: BlobKind,
  exp: string | undefined,
  sig: string | undefined,
): Promise<boolean> {
  if (!exp || !sig || !/^\d{1,12}$/.test(exp) || !/^[0-9a-f]{64}$/.test(sig)) return false;
  if (Number(exp) < Math.floor(Date.now() / 1000)) return false;
  const expected = await hmacHex(signingKey(env), message(method, workspaceId, svId, kind, Number(exp)));
  return sameHex(expected, sig);
}

/** Whether two 64-digit hex signatures are equal, in constant time. */
export function sameHex(expected: string, sig: string): boolean {
  if (expected.length !== 64 || sig.length !== 64) return false;
  let diff = 0;
  for (let i = 0; i < 64; i++) diff |= expected.charCodeAt(i) ^ sig.charCodeAt(i);
  return diff === 0;
}
