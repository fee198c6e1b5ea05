/**
 * Variable values at rest: AES-256-GCM through Web Crypto, the key derived (HKDF-SHA-256) from the
 * `VARIABLES_ENCRYPTION_KEY` secret. Every value is sealed, sensitive or not, so making a variable sensitive
 * later needs no re-encryption inside the Durable Object's synchronous critical section. The variable's id is
 * the associated data: a sealed value copied onto another variable does not open.
 */
import type { Bindings } from "../env";

const VERSION = "v1";
const encoder = new TextEncoder();
const decoder = new TextDecoder();

let cached: { secret: string; key: CryptoKey } | null = null;

async function keyOf(env: Bindings): Promise<CryptoKey> {
  const secret = env.VARIABLES_ENCRYPTION_KEY;
  // A deployment without the secret must fail loudly rather than store values it could not protect.
  if (!secret) throw new Error("VARIABLES_ENCRYPTION_KEY is not set");
  if (cached?.secret === secret) return cached.key;
  const material = await crypto.subtle.importKey("raw", encoder.encode(secret), "HKDF", false, ["deriveKey"]);
  const key = await crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: encoder.encode("workspace-service/variables"), info: encoder.encode("aes-256-gcm/v1") },
    material,
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt", "decrypt"],
  );
  cached = { secret, key };
  return key;
}

function toBase64(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

function fromBase64(text: string): Uint8Array {
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** `v1.<iv>.<ciphertext>` (base64), bound to the variable's id. */
export async function sealValue(env: Bindings, variableId: string, plaintext: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: encoder.encode(variableId) }, await keyOf(env), encoder.encode(plaintext));
  return `${VERSION}.${toBase64(iv)}.${toBase64(new Uint8Array(sealed))}`;
}

export async function openValue(env: Bindings, variableId: string, sealed: string): Promise<string> {
  const [version, iv, body] = sealed.split(".");
  if (version !== VERSION || !iv || body === undefined) throw new Error(`unreadable sealed value of ${variableId}`);
  const params = { name: "AES-GCM", iv: fromBase64(iv), additionalData: encoder.encode(variableId) };
  const plain = await crypto.subtle.decrypt(params, await keyOf(env), fromBase64(body));
  return decoder.decode(plain);
}
