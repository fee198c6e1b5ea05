/**
 * Signed state-blob URLs: Terraform PUTs state without an Authorization header, so upload and
 * download URLs carry an HMAC-SHA256 signature and an expiry (25 hours, as the real service's).
 */
import type { Bindings } from "../env";
import { sign, verifySignature } from "../platform/signature";

export const BLOB_URL_TTL_SECONDS = 25 * 60 * 60;
export type BlobKind = "state" | "json";

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
  const sig = await sign(env, message(method, workspaceId, svId, kind, exp));
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
  return verifySignature(env, exp, sig, (e) => message(method, workspaceId, svId, kind, e));
}
