/**
 * Signed registry object URLs (`/_registry/object/<kind>/<id>`): `links.upload` and the download locations the
 * registry protocols hand to Terraform, which sends no token to them. Each carries an HMAC-SHA256 signature and an
 * expiry, with the state blobs' key (BLOB_SIGNING_KEY, src/platform/signature.ts); every message starts with
 * `registry`, which no other kind of signed URL's does, so a signature of one kind is never valid for another. The
 * path holds `/object/`, as the real service's upload links do (go-tfe's tests check it).
 */
import type { Bindings } from "../env";
import { sign, verifySignature, type SignedQuery } from "../platform/signature";

/** An upload link lives as long as a state upload URL (25 hours); a download location only for Terraform to follow it. */
export const REGISTRY_UPLOAD_TTL_SECONDS = 25 * 60 * 60;
export const REGISTRY_DOWNLOAD_TTL_SECONDS = 10 * 60;

/** What an object URL names: a module version's archive, a provider version's checksums or signature, a platform's binary. */
export type ObjectKind = "module" | "shasums" | "shasums-sig" | "binary";
export const OBJECT_KINDS: readonly ObjectKind[] = ["module", "shasums", "shasums-sig", "binary"];
export type ObjectMethod = "GET" | "PUT";

const message = (method: ObjectMethod, kind: ObjectKind, id: string, exp: number) => `registry\n${method}\n${kind}\n${id}\n${exp}`;

/** An absolute URL of this service for uploading (PUT) or downloading (GET) one registry object. */
export async function signedObjectUrl(
  env: Bindings,
  origin: string,
  method: ObjectMethod,
  kind: ObjectKind,
  id: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): Promise<string> {
  const exp = nowSeconds + (method === "PUT" ? REGISTRY_UPLOAD_TTL_SECONDS : REGISTRY_DOWNLOAD_TTL_SECONDS);
  const sig = await sign(env, message(method, kind, id, exp));
  return `${origin}/_registry/object/${kind}/${id}?method=${method}&exp=${exp}&sig=${sig}`;
}

/** Checks a request's signature and expiry in constant time. */
export async function verifyObjectUrl(env: Bindings, method: ObjectMethod, kind: ObjectKind, id: string, signed: SignedQuery): Promise<boolean> {
  return signed.method === method && verifySignature(env, signed.exp, signed.sig, (exp) => message(method, kind, id, exp));
}
