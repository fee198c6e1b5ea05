/**
 * The workspace object's bytes at rest: state blobs, what was read of them, run logs and artifacts, configuration
 * archives. AES-256-GCM under a key of the workspace's own, derived (HKDF-SHA-256 through Web Crypto, as the
 * variables' key is) from the operator's `STATE_ENCRYPTION_KEY` and the object's id, once per start of the object.
 *
 * Inside the stores' read-check-write sections, which never await (src/workspaces/workspace.object.ts), the cipher is
 * synchronous (@noble/ciphers); the bulk paths (a state's upload and download, an archive's download, a run's artifacts) seal and open through Web Crypto outside
 * them (`sealAsync`, `openRowAsync`), some sixty times faster in workerd. Both write the same bytes.
 *
 * A sealed value is `key id (4 bytes) ‖ IV (12) ‖ ciphertext ‖ tag (16)`: the key id names the operator secret it was
 * sealed under, so a rotation knows what to reseal (docs/operations.md) and a value under a secret the deployment no
 * longer has fails with a clear error instead of reading as nothing. The associated data names the value's place
 * (table, kind, position), so a sealed chunk moved to another place does not open.
 */
import { gcm } from "@noble/ciphers/aes.js";
import type { Bindings } from "../env";

/** What sealing adds to a value's length (key id, IV, tag): size queries on sealed rows subtract it. */
export const SEAL_OVERHEAD = 32;
const KEY_ID_BYTES = 4;
const IV_BYTES = 12;

interface SealKey {
  /** Hex of the 4 key-id bytes (the same for every workspace under one operator secret). */
  id: string;
  idBytes: Uint8Array;
  key: Uint8Array;
  /** The same key for Web Crypto. */
  webKey: CryptoKey;
}

export interface Sealer {
  /** Null when STATE_ENCRYPTION_KEY is unset: reading clear rows works, sealing and opening fail. */
  current: SealKey | null;
  /** STATE_ENCRYPTION_KEY_PREVIOUS during a rotation: still opens what it sealed. */
  previous: SealKey | null;
}

/** Thrown when a sealed value cannot be opened: never read as empty. */
export class SealError extends Error {
  override name = "SealError";
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");

async function derive(secret: string, scope: string): Promise<SealKey> {
  const material = await crypto.subtle.importKey("raw", encoder.encode(secret), "HKDF", false, ["deriveBits"]);
  const salt = encoder.encode("workspace-service/sealed-stores");
  const bits = async (info: string, n: number) =>
    new Uint8Array(await crypto.subtle.deriveBits({ name: "HKDF", hash: "SHA-256", salt, info: encoder.encode(info) }, material, n * 8));
  const idBytes = await bits("key-id/v1", KEY_ID_BYTES);
  const key = await bits(`aes-256-gcm/v1/${scope}`, 32);
  const webKey = await crypto.subtle.importKey("raw", key, "AES-GCM", false, ["encrypt", "decrypt"]);
  return { id: hex(idBytes), idBytes, key, webKey };
}

/** The keys of one workspace object (`scope`: its Durable Object id). */
export async function deriveSealer(env: Pick<Bindings, "STATE_ENCRYPTION_KEY" | "STATE_ENCRYPTION_KEY_PREVIOUS">, scope: string): Promise<Sealer> {
  return {
    current: env.STATE_ENCRYPTION_KEY ? await derive(env.STATE_ENCRYPTION_KEY, scope) : null,
    previous: env.STATE_ENCRYPTION_KEY_PREVIOUS ? await derive(env.STATE_ENCRYPTION_KEY_PREVIOUS, scope) : null,
  };
}

/** Per object (its SQL handle): the keys its stores seal with, set when the object starts. */
const sealers = new WeakMap<SqlStorage, Sealer>();

export function useSealer(sql: SqlStorage, sealer: Sealer): void {
  sealers.set(sql, sealer);
}

function currentKey(sql: SqlStorage): SealKey {
  const key = sealers.get(sql)?.current;
  // A deployment without the secret must fail loudly rather than store state it could not protect.
  if (!key) throw new SealError("STATE_ENCRYPTION_KEY is not set: the workspace's state cannot be sealed or opened");
  return key;
}

/** The id of the key values are sealed under now (null without the secret). */
export function currentKeyId(sql: SqlStorage): string | null {
  return sealers.get(sql)?.current?.id ?? null;
}

/** Seals `plain` for the place `aad` names. */
export function seal(sql: SqlStorage, plain: Uint8Array, aad: string): Uint8Array {
  const key = currentKey(sql);
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const body = gcm(key.key, iv, encoder.encode(aad)).encrypt(plain);
  const out = new Uint8Array(KEY_ID_BYTES + IV_BYTES + body.byteLength);
  out.set(key.idBytes, 0);
  out.set(iv, KEY_ID_BYTES);
  out.set(body, KEY_ID_BYTES + IV_BYTES);
  return out;
}

/** `seal` through Web Crypto (outside a critical section). */
export async function sealAsync(sql: SqlStorage, plain: Uint8Array, aad: string): Promise<Uint8Array> {
  const key = currentKey(sql);
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const body = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: encoder.encode(aad) }, key.webKey, plain));
  const out = new Uint8Array(KEY_ID_BYTES + IV_BYTES + body.byteLength);
  out.set(key.idBytes, 0);
  out.set(iv, KEY_ID_BYTES);
  out.set(body, KEY_ID_BYTES + IV_BYTES);
  return out;
}

/** The key a sealed value names: the current secret's or the previous one's. */
function keyOf(sql: SqlStorage, sealed: Uint8Array, aad: string): SealKey {
  if (sealed.byteLength < SEAL_OVERHEAD) throw new SealError(`a sealed value of ${aad} is truncated`);
  const id = hex(sealed.subarray(0, KEY_ID_BYTES));
  const sealer = sealers.get(sql);
  const key = [sealer?.current, sealer?.previous].find((k) => k?.id === id);
  if (!key) {
    throw new SealError(`${aad} is sealed under key ${id}, which neither STATE_ENCRYPTION_KEY nor STATE_ENCRYPTION_KEY_PREVIOUS is (docs/operations.md)`);
  }
  return key;
}

/** `openRow` through Web Crypto (outside a critical section). */
export async function openRowAsync(sql: SqlStorage, data: ArrayBuffer, sealed: number, aad: string): Promise<Uint8Array> {
  if (sealed !== 1) return new Uint8Array(data);
  const bytes = new Uint8Array(data);
  const key = keyOf(sql, bytes, aad);
  try {
    const params = { name: "AES-GCM", iv: bytes.subarray(KEY_ID_BYTES, KEY_ID_BYTES + IV_BYTES), additionalData: encoder.encode(aad) };
    return new Uint8Array(await crypto.subtle.decrypt(params, key.webKey, bytes.subarray(KEY_ID_BYTES + IV_BYTES)));
  } catch {
    throw new SealError(`${aad} does not open under key ${key.id}: the stored value was altered or belongs elsewhere`);
  }
}

/** Opens a value `seal` made for the same place, under the current secret or the previous one. */
export function open(sql: SqlStorage, sealed: Uint8Array, aad: string): Uint8Array {
  const key = keyOf(sql, sealed, aad);
  const id = key.id;
  try {
    return gcm(key.key, sealed.subarray(KEY_ID_BYTES, KEY_ID_BYTES + IV_BYTES), encoder.encode(aad)).decrypt(sealed.subarray(KEY_ID_BYTES + IV_BYTES));
  } catch {
    throw new SealError(`${aad} does not open under key ${id}: the stored value was altered or belongs elsewhere`);
  }
}

/** A stored blob column: sealed bytes when `sealed` is 1, else bytes stored in clear by earlier code. */
export function openRow(sql: SqlStorage, data: ArrayBuffer, sealed: number, aad: string): Uint8Array {
  return sealed === 1 ? open(sql, new Uint8Array(data), aad) : new Uint8Array(data);
}

/** A text column: sealed bytes (a BLOB) or, as earlier code stored it, the text itself. */
export function sealText(sql: SqlStorage, text: string, aad: string): Uint8Array {
  return seal(sql, encoder.encode(text), aad);
}

/**
 * Texts opened lately, by the key id, IV and tag of their sealed value (an IV is drawn anew for every seal, so a
 * rewritten value never hits an old entry; the tag authenticates the rest): a state version's `parsed` is read on every
 * show, list and promotion, and the synchronous cipher is slow on a large one. Bounded by total length.
 */
const opened = new Map<string, string>();
const OPENED_CHARS = 16 * 1024 * 1024;
let openedChars = 0;

export function openText(sql: SqlStorage, stored: string | ArrayBuffer, aad: string): string {
  if (typeof stored === "string") return stored;
  const bytes = new Uint8Array(stored);
  const tag = `${aad}:${bytes.byteLength}:${hex(bytes.subarray(0, KEY_ID_BYTES + IV_BYTES))}:${hex(bytes.subarray(bytes.byteLength - 16))}`;
  const hit = opened.get(tag);
  // The key must still be one this deployment has (a rotation that dropped it fails as an uncached read does).
  if (hit !== undefined && keyOf(sql, bytes, aad)) return hit;
  const text = decoder.decode(open(sql, bytes, aad));
  if (text.length <= OPENED_CHARS / 4) {
    opened.set(tag, text);
    openedChars += text.length;
    for (const [k, v] of opened) {
      if (openedChars <= OPENED_CHARS) break;
      opened.delete(k);
      openedChars -= v.length;
    }
  }
  return text;
}

/** The length of the plain value of a sealed blob column `column` whose flag is `flag`, as SQL. */
export const plainLength = (column: string, flag = "sealed") => `(length(${column}) - ${SEAL_OVERHEAD} * ${flag})`;

/**
 * Reseals every row of one blob table that is clear or under another key than the current one (an upgrade from a store
 * written in clear, or a rotation). One row at a time, so a large store never sits in memory whole. A row that does not
 * open stays as it is (its reads fail) and is counted in `failed`, so the object tries again on its next start.
 */
export function resealTable(
  sql: SqlStorage,
  table: string,
  keyColumns: readonly string[],
  column: string,
  aadOf: (row: Record<string, SqlStorageValue>) => string,
): { resealed: number; failed: number } {
  const key = currentKey(sql);
  const keys = keyColumns.join(", ");
  const stale = sql
    .exec<Record<string, SqlStorageValue>>(`SELECT ${keys} FROM ${table} WHERE sealed = 0 OR substr(${column}, 1, ${KEY_ID_BYTES}) <> ?`, key.idBytes)
    .toArray();
  const where = keyColumns.map((c) => `${c} = ?`).join(" AND ");
  let failed = 0;
  for (const k of stale) {
    const binds = keyColumns.map((c) => k[c]);
    const row = sql.exec<{ data: ArrayBuffer; sealed: number }>(`SELECT ${column} AS data, sealed FROM ${table} WHERE ${where}`, ...binds).one();
    const aad = aadOf(k);
    const plain = tryOpen(() => openRow(sql, row.data, row.sealed, aad));
    if (plain) sql.exec(`UPDATE ${table} SET ${column} = ?, sealed = 1 WHERE ${where}`, seal(sql, plain, aad), ...binds);
    else failed++;
  }
  return { resealed: stale.length - failed, failed };
}

/** The opened value, or null (logged) when it does not open: a reseal leaves such a row alone. */
export function tryOpen<T>(read: () => T): T | null {
  try {
    return read();
  } catch (err) {
    if (!(err instanceof SealError)) throw err;
    console.error(JSON.stringify({ level: "error", event: "reseal", error: err.message }));
    return null;
  }
}
