/**
 * The registry's R2 bucket (binding REGISTRY), its repository as `<resource>.d1.ts` files are D1's: module archives,
 * provider checksums, signatures and binaries. Every upload is written under a fresh key
 * (`<kind>/<organisation id>/<owner id>/<uuid>`) and only then named by its row, so a row always names a complete
 * object and two uploads to one URL never mix; the object a row stops naming is deleted after the row changed.
 */
import { pieces } from "../platform/pieces";
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

/** A body of unknown length goes to R2 as a multipart upload in parts of this size (R2: at least 5 MiB but the last). */
const PART_BYTES = 8 * 1024 * 1024;

/**
 * Streams `body` into a new object, showing each piece to `seen` on the way (to check or digest it); nothing holds more
 * than a piece. With its `length` announced the object is written as one stream of that length (rejected when the body
 * is shorter or longer); without, as a multipart upload, refused with `tooLarge()` past `maxBytes`. When `seen` throws
 * or the body fails, the object is not written.
 */
export async function streamToObject(
  env: Bindings,
  key: string,
  body: ReadableStream<Uint8Array>,
  size: { length: number | null; maxBytes: number; tooLarge: () => Error },
  contentType: string,
  seen: (piece: Uint8Array) => Promise<void>,
): Promise<void> {
  if (size.length === null) return multipart(env, key, body, size, contentType, seen);
  const { readable, writable } = new FixedLengthStream(size.length);
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

async function multipart(
  env: Bindings,
  key: string,
  body: ReadableStream<Uint8Array>,
  size: { maxBytes: number; tooLarge: () => Error },
  contentType: string,
  seen: (piece: Uint8Array) => Promise<void>,
): Promise<void> {
  const upload = await env.REGISTRY.createMultipartUpload(key, { httpMetadata: { contentType } });
  const parts: R2UploadedPart[] = [];
  try {
    for await (const piece of pieces(body, PART_BYTES, size.maxBytes, size.tooLarge)) {
      await seen(piece);
      parts.push(await upload.uploadPart(parts.length + 1, piece));
    }
    if (parts.length === 0) parts.push(await upload.uploadPart(1, new Uint8Array()));
    await upload.complete(parts);
  } catch (err) {
    await upload.abort().catch(() => undefined);
    throw err;
  }
}

/** An object as a streamed response body, or null when it is gone. */
export async function objectBody(env: Bindings, key: string): Promise<R2ObjectBody | null> {
  return env.REGISTRY.get(key);
}
