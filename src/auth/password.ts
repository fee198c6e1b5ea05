/**
 * Password hashes: WebCrypto PBKDF2-SHA-256 with a random 16-byte salt, stored as
 * `pbkdf2-sha256$<iterations>$<salt, base64>$<hash, base64>`. Each hash records its own iteration count, so the
 * count can be raised later: a hash made with fewer iterations than `PASSWORD_ITERATIONS` still verifies, and the
 * caller re-hashes the password it just verified (docs/ui.md, "Passwords").
 */

/**
 * 100,000: the most PBKDF2 iterations Cloudflare's runtime accepts (higher counts throw on the platform, though local
 * workerd allows them); about 12 ms of CPU per hash locally, well under a request's CPU budget.
 */
export const PASSWORD_ITERATIONS = 100_000;
/** Hashes naming more iterations than the platform accepts, or fewer than this, are refused (a crafted row cannot cost more). */
const MIN_ITERATIONS = 1_000;
const MAX_ITERATIONS = 100_000;
const SALT_BYTES = 16;
const HASH_BITS = 256;
const SCHEME = "pbkdf2-sha256";

export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 256;

const toBase64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
function fromBase64(text: string): Uint8Array | null {
  try {
    return Uint8Array.from(atob(text), (ch) => ch.charCodeAt(0));
  } catch {
    return null;
  }
}

async function derive(password: string, salt: Uint8Array, iterations: number): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(password), "PBKDF2", false, ["deriveBits"]);
  return new Uint8Array(await crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt, iterations }, key, HASH_BITS));
}

export async function hashPassword(password: string, iterations = PASSWORD_ITERATIONS): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(SALT_BYTES));
  return `${SCHEME}$${iterations}$${toBase64(salt)}$${toBase64(await derive(password, salt, iterations))}`;
}

interface Parsed {
  iterations: number;
  salt: Uint8Array;
  hash: Uint8Array;
}

export function parsePasswordHash(stored: string): Parsed | null {
  const [scheme, count, salt, hash, ...rest] = stored.split("$");
  if (scheme !== SCHEME || rest.length || !/^\d{1,7}$/.test(count ?? "")) return null;
  const iterations = Number(count);
  const s = fromBase64(salt ?? "");
  const h = fromBase64(hash ?? "");
  if (iterations < MIN_ITERATIONS || iterations > MAX_ITERATIONS || !s || s.length === 0 || !h || h.length * 8 !== HASH_BITS) return null;
  return { iterations, salt: s, hash: h };
}

/** Compares every byte whatever the first difference, so the time taken tells nothing of where they differ. */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}

/**
 * Whether `password` matches `stored`, and whether `stored` should be replaced by a fresh hash (it was made with
 * fewer iterations than today's). An unreadable hash matches nothing.
 */
export async function verifyPassword(password: string, stored: string): Promise<{ ok: boolean; rehash: boolean }> {
  const parsed = parsePasswordHash(stored);
  if (!parsed) return { ok: false, rehash: false };
  const ok = sameBytes(await derive(password, parsed.salt, parsed.iterations), parsed.hash);
  return { ok, rehash: ok && parsed.iterations < PASSWORD_ITERATIONS };
}

let dummy: Promise<string> | null = null;
/**
 * A hash no password is known to match: an unknown user's sign-in verifies against it, so the answer takes as long
 * as a known user's and its timing does not tell whether the account exists.
 */
export function dummyPasswordHash(): Promise<string> {
  dummy ??= hashPassword(crypto.randomUUID());
  return dummy;
}

/** The password rules a new password must meet: the reasons it does not (empty: it does). */
export function passwordProblems(password: string, confirmation: string): string[] {
  const problems: string[] = [];
  if (password.length < PASSWORD_MIN_LENGTH) problems.push(`Password is too short (minimum is ${PASSWORD_MIN_LENGTH} characters)`);
  if (password.length > PASSWORD_MAX_LENGTH) problems.push(`Password is too long (maximum is ${PASSWORD_MAX_LENGTH} characters)`);
  if (password !== confirmation) problems.push("Password confirmation doesn't match Password");
  return problems;
}
