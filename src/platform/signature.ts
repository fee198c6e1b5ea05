/**
 * The signature every signed URL carries (state blobs, configuration archives, registry objects, run logs and
 * artifacts): HMAC-SHA256 with BLOB_SIGNING_KEY over a message each kind of URL starts with its own prefix, so no
 * signature of one kind is valid for another, and an expiry in seconds since the epoch.
 */
import type { Context } from "hono";
import type { Bindings } from "../env";

/** What a signed URL's query carries: the method it was signed for, its expiry and its signature. */
export interface SignedQuery {
  method: string | undefined;
  exp: string | undefined;
  sig: string | undefined;
}

export const signedQuery = (c: Context): SignedQuery => ({ method: c.req.query("method"), exp: c.req.query("exp"), sig: c.req.query("sig") });

function signingKey(env: Bindings): string {
  if (!env.BLOB_SIGNING_KEY) throw new Error("BLOB_SIGNING_KEY is not configured");
  return env.BLOB_SIGNING_KEY;
}

/** HMAC-SHA256 of `message`, hex. */
async function hmacHex(key: string, message: string): Promise<string> {
  const k = await crypto.subtle.importKey("raw", new TextEncoder().encode(key), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const sig = await crypto.subtle.sign("HMAC", k, new TextEncoder().encode(message));
  return [...new Uint8Array(sig)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Whether two 64-digit hex signatures are equal, in constant time. */
function sameHex(expected: string, sig: string): boolean {
  if (expected.length !== 64 || sig.length !== 64) return false;
  let diff = 0;
  for (let i = 0; i < 64; i++) diff |= expected.charCodeAt(i) ^ sig.charCodeAt(i);
  return diff === 0;
}

/** The signature of one URL's message. */
export const sign = (env: Bindings, message: string): Promise<string> => hmacHex(signingKey(env), message);

/**
 * Whether `sig` signs the message of expiry `exp` (compared in constant time) and `exp` is yet to come; a missing or
 * malformed expiry or signature is false.
 */
export async function verifySignature(env: Bindings, exp: string | undefined, sig: string | undefined, message: (exp: number) => string): Promise<boolean> {
  if (!exp || !sig || !/^\d{1,12}$/.test(exp) || !/^[0-9a-f]{64}$/.test(sig)) return false;
  if (Number(exp) < Math.floor(Date.now() / 1000)) return false;
  return sameHex(await sign(env, message(Number(exp))), sig);
}
