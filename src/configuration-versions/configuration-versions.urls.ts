/**
 * Signed configuration-archive URLs (`/_slugs/...`): go-tfe PUTs the archive without an Authorization header, and the
 * download endpoint redirects to one, so the URL carries an HMAC-SHA256 signature and an expiry. The key is the state
 * blobs' (BLOB_SIGNING_KEY); every message starts with `slug`, which no state-blob message does, so a signature of
 * one kind is never valid for the other.
 */
import type { Bindings } from "../env";
import { sign, verifySignature, type SignedQuery } from "../platform/signature";

/** An upload URL lives as long as a state upload URL (25 hours); a download URL only for the redirect to be followed. */
export const SLUG_UPLOAD_TTL_SECONDS = 25 * 60 * 60;
export const SLUG_DOWNLOAD_TTL_SECONDS = 10 * 60;

export type SlugMethod = "GET" | "PUT";

const message = (method: SlugMethod, workspaceId: string, cvId: string, exp: number) => `slug\n${method}\n${workspaceId}\n${cvId}\n${exp}`;

/** An absolute URL of this service for uploading (PUT) or downloading (GET) one configuration version's archive. */
export async function signedSlugUrl(
  env: Bindings,
  origin: string,
  method: SlugMethod,
  workspaceId: string,
  cvId: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): Promise<string> {
  const exp = nowSeconds + (method === "PUT" ? SLUG_UPLOAD_TTL_SECONDS : SLUG_DOWNLOAD_TTL_SECONDS);
  const sig = await sign(env, message(method, workspaceId, cvId, exp));
  return `${origin}/_slugs/${workspaceId}/${cvId}?method=${method}&exp=${exp}&sig=${sig}`;
}

/** Checks a request's signature and expiry in constant time. */
export async function verifySlugUrl(env: Bindings, method: SlugMethod, workspaceId: string, cvId: string, signed: SignedQuery): Promise<boolean> {
  return signed.method === method && verifySignature(env, signed.exp, signed.sig, (exp) => message(method, workspaceId, cvId, exp));
}
