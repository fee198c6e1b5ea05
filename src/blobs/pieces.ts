/** Upload bodies re-cut into the fixed-size pieces the workspace's Durable Object stores (state blobs, configuration archives). */
import { discardRest } from "../body";

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
