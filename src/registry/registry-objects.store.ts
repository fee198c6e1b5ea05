/**
 * The registry's R2 bucket (binding REGISTRY): module archives, provider checksums, signatures and binaries. Every
 * upload is written under a fresh key (`<kind>/<organisation id>/<owner id>/<uuid>`) and only then named by its row,
 * so a row always names a complete object and two uploads to one URL never mix; the object a row stops naming is
 * deleted after the row changed.
 */
import type { Bindings } from "../env";
import { ApiError } from "../errors";
import type { ObjectKind } from "./registry-urls";

export function newObjectKey(kind: ObjectKind, organizationId: string, ownerId: string): string {
  return `${kind}/${organizationId}/${ownerId}/${crypto.randomUUID()}`;
}

/** Deletes objects no row names any more (best effort: an object left behind is unreachable, never served). */
export async function deleteObjects(env: Bindings, keys: Array<string | null | undefined>): Promise<void> {
  const list = keys.filter((k): k is string => !!k);
  for (let i = 0; i < list.length; i += 1000) {
    await env.REGISTRY.delete(list.slice(i, i + 1000)).catch((err: unknown) => {
      console.log(JSON.stringify({ level: "warn", error: `registry object delete failed: ${String(err)}` }));
    });
  }
}

/**
 * Streams `body` (exactly `length` bytes) into a new object, showing each piece to `seen` on the way (to check or
 * digest it); nothing holds more than a piece. Rejects when the body is shorter or longer than announced, or when
 * `seen` throws (the object is then not written).
 */
export async function streamToObject(
  env: Bindings,
  key: string,
  body: ReadableStream<Uint8Array>,
  length: number,
  contentType: string,
  seen: (piece: Uint8Array) => Promise<void>,
): Promise<void> {
  const { readable, writable } = new FixedLengthStream(length);
  const put = env.REGISTRY.put(key, readable, { httpMetadata: { contentType } });
  const writer = writable.getWriter();
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      await seen(value);
      await writer.write(value);
    }
    await writer.close();
  } catch (err) {
    await writer.abort(err).catch(() => undefined);
    await reader.cancel().catch(() => undefined);
    await put.catch(() => undefined);
    if (err instanceof ApiError) throw err;
    throw ApiError.of("bad_request", { detail: "The upload's body differs from its Content-Length" });
  }
  await put;
}

/** An object as a streamed response body, or null when it is gone. */
export async function objectBody(env: Bindings, key: string): Promise<R2ObjectBody | null> {
  return env.REGISTRY.get(key);
}
