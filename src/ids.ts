const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** A random base62 string (rejection sampling keeps it uniform). */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    const bytes = crypto.getRandomValues(new Uint8Array(length * 2));
    for (const b of bytes) {
      if (b < 248 && out.length < length) out += ALPHABET[b % 62];
    }
  }
  return out;
}

/** Opaque, prefixed, random identifiers as the real service uses (`ws-`, `prj-`, ...). */
export function newId(prefix: string): string {
  return `${prefix}-${randomBase62(16)}`;
}

const CHILD_OF = /^[a-z]+-([A-Za-z0-9]{16})$/;
const PARENT_IN = /^[a-z]+-[A-Za-z0-9]{16}([A-Za-z0-9]{16})$/;

/**
 * An id of a resource that lives in its parent's Durable Object (a state version in its workspace's): the random part,
 * then the parent's. A request that names it finds the object without reading an index the object may not have
 * written yet (docs/consistency.md). A parent id of another shape gets a plain id.
 */
export function newChildId(prefix: string, parentId: string): string {
  const parent = CHILD_OF.exec(parentId)?.[1];
  return parent ? `${newId(prefix)}${parent}` : newId(prefix);
}

/** The parent an id from `newChildId` names (`parentPrefix` and its part), or null for a plain id. */
export function parentOfId(id: string, parentPrefix: string): string | null {
  const part = PARENT_IN.exec(id)?.[1];
  return part ? `${parentPrefix}-${part}` : null;
}

/** An API token in the real service's shape: `<14>.atlasv1.<67>`. */
export function newTokenSecret(): string {
  return `${randomBase62(14)}.atlasv1.${randomBase62(67)}`;
}

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));
/** Recent digests: every API request hashes its bearer token, and clients send the same few tokens over and over. */
const recentDigests = new Map<string, string>();
const RECENT_DIGESTS_MAX = 256;

export async function sha256Hex(value: string): Promise<string> {
  const known = recentDigests.get(value);
  if (known !== undefined) return known;
  const bytes = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value)));
  let hex = "";
  for (const b of bytes) hex += HEX[b];
  if (recentDigests.size >= RECENT_DIGESTS_MAX) recentDigests.delete(recentDigests.keys().next().value as string);
  recentDigests.set(value, hex);
  return hex;
}

/** ISO 8601 with milliseconds and a literal `Z` (go-tfe's iso8601 decoder needs the Z). */
export function nowIso(): string {
  return new Date().toISOString();
}
