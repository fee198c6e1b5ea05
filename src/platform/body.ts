/**
 * Request bodies the service answers before reading them. workerd (like most HTTP servers) closes the connection
 * when a response is sent while more than a few KiB of the request body are still unread, and the kernel answers
 * the client's next bytes with a reset: the client sees EPIPE/ECONNRESET instead of our 413, 401 or 415. Reading
 * and discarding the rest of the body first (up to LIMITS.drainBodyBytes) lets the answer through and keeps the
 * connection usable.
 */
import type { Context, MiddlewareHandler } from "hono";
import { LIMITS } from "../limits";

/** Reads and discards what is left on `reader`, `read` bytes having been read already; cancels past the bound. */
export async function discardRest(reader: ReadableStreamDefaultReader<Uint8Array>, read = 0): Promise<void> {
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      read += value.byteLength;
      if (read > LIMITS.drainBodyBytes) {
        await reader.cancel();
        return;
      }
    }
  } catch {
    // The client went away: nothing left to protect.
  }
}

function declaredLength(req: Request): number | null {
  if (req.headers.has("transfer-encoding")) return null;
  const length = req.headers.get("content-length");
  return length === null ? null : Number(length);
}

/** Discards a body nothing has touched, unless its declared length is past the bound (then the close is unavoidable). */
async function discardUnread(req: Request): Promise<void> {
  if (!req.body || req.bodyUsed || req.body.locked) return;
  const length = declaredLength(req);
  if (length !== null && !(length <= LIMITS.drainBodyBytes)) return;
  await discardRest(req.body.getReader());
}

/** Outermost: whatever answered, the body it left unread is discarded before the answer goes out. */
export const drainUnreadBody: MiddlewareHandler = async (c, next) => {
  const raw = c.req.raw;
  await next();
  await discardUnread(raw);
};

/**
 * hono/body-limit's contract (413 through `onError` past `maxSize`, the body buffered for the handlers otherwise), but
 * an oversize body is read to its end (within the drain bound) before `onError` answers, so the client receives it.
 */
export function limitBody(maxSize: number, onError: (c: Context) => Response | Promise<Response>): MiddlewareHandler {
  return async (c, next) => {
    const raw = c.req.raw;
    if (!raw.body) return next();
    const length = declaredLength(raw);
    if (length !== null) {
      if (!(length > maxSize)) return next();
      await discardUnread(raw);
      return onError(c);
    }
    const reader = raw.body.getReader();
    let buffer = new Uint8Array(0);
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (size + value.byteLength > maxSize) {
        await discardRest(reader, size + value.byteLength);
        return onError(c);
      }
      if (size + value.byteLength > buffer.length) {
        const grown = new Uint8Array(Math.min(maxSize, Math.max(size + value.byteLength, buffer.length * 2)));
        grown.set(buffer.subarray(0, size));
        buffer = grown;
      }
      buffer.set(value, size);
      size += value.byteLength;
    }
    c.req.raw = new Request(raw, { body: buffer.subarray(0, size) });
    return next();
  };
}

/** A body read whole, up to `maxBytes` (then `tooLarge()` is thrown and the rest is not read). */
export async function readLimited(body: ReadableStream<Uint8Array> | null, maxBytes: number, tooLarge: () => Error): Promise<Uint8Array> {
  if (!body) return new Uint8Array();
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const step = await reader.read();
    if (step.done) break;
    size += step.value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(step.value);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
