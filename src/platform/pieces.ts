/**
 * Bodies stored in the workspace's Durable Object in fixed-size pieces (state blobs, configuration archives): uploads
 * re-cut and staged piece by piece, downloads streamed back a part per call, so no single RPC carries a whole body.
 */
import { discardRest } from "./body";
import { type Result, unwrap } from "../errors";

/**
 * Re-cuts a byte stream into pieces of exactly `size` bytes (the last one shorter). Past `maxBytes` the rest of the
 * body is read and discarded (within the drain bound), so the client receives `tooLarge()` rather than a reset.
 */
export async function* pieces(body: ReadableStream<Uint8Array> | null, size: number, maxBytes: number, tooLarge: () => Error): AsyncGenerator<Uint8Array> {
  if (!body) return;
  let buf = new Uint8Array(size);
  let fill = 0;
  let total = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await discardRest(reader, total);
      throw tooLarge();
    }
    let off = 0;
    while (off < value.byteLength) {
      const n = Math.min(size - fill, value.byteLength - off);
      buf.set(value.subarray(off, off + n), fill);
      fill += n;
      off += n;
      if (fill === size) {
        yield buf;
        buf = new Uint8Array(size);
        fill = 0;
      }
    }
  }
  if (fill > 0) yield buf.subarray(0, fill);
}

/** Where an upload's pieces go: one staging area of the workspace's object, for this request only. */
export interface PieceSink {
  append(bytes: Uint8Array): Promise<void>;
  abort(): Promise<unknown>;
}

/**
 * Stages `body` piece by piece and answers the last piece (empty for an empty body), which the caller sends with the
 * completion. Each piece is sent once the next one exists, so the last one travels with the completion. On failure
 * the staged pieces are dropped and the error is rethrown. `seen` sees every piece in order (e.g. to hash the body).
 */
export async function stagePieces(
  body: ReadableStream<Uint8Array> | null,
  limits: { size: number; maxBytes: number; tooLarge: () => Error },
  sink: PieceSink,
  seen?: (piece: Uint8Array) => Promise<void>,
): Promise<Uint8Array> {
  let held: Uint8Array | null = null;
  try {
    for await (const piece of pieces(body, limits.size, limits.maxBytes, limits.tooLarge)) {
      if (held) await sink.append(held);
      await seen?.(piece);
      held = piece;
    }
  } catch (err) {
    if (held) await sink.abort().catch(() => undefined);
    throw err;
  }
  return held ?? new Uint8Array();
}

/**
 * A stored body as a streamed 200 response, read a part per call from `fromSeq` 0 until `next` is null. The first
 * part is read before answering, so a missing body is its failure (a 404) rather than a broken stream; one that
 * vanishes later errors the stream with `vanished`.
 */
export async function piecesResponse(
  readPart: (fromSeq: number) => Promise<Result<{ bytes: Uint8Array; next: number | null }>>,
  contentType: string,
  vanished: string,
): Promise<Response> {
  const first = unwrap(await readPart(0));
  let next = first.value.next;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(first.value.bytes);
      if (next === null) controller.close();
    },
    async pull(controller) {
      if (next === null) return;
      const part = await readPart(next);
      if (!part.ok) {
        controller.error(new Error(vanished));
        return;
      }
      controller.enqueue(part.value.bytes);
      next = part.value.next;
      if (next === null) controller.close();
    },
  });
  return new Response(body, { status: 200, headers: { "Content-Type": contentType } });
}
