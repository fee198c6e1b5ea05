/**
 * The signed state-blob URLs (outside /api/v2: no bearer token, no JSON:API media type, their own
 * size limit). Uploads stream into the workspace's Durable Object in 1 MiB pieces.
 */
import { Hono, type Context } from "hono";
import type { AppEnv } from "../env";
import { ApiError, unwrap } from "../errors";
import { nowIso } from "../ids";
import { LIMITS } from "../limits";
import { CHUNK_BYTES } from "../state-versions/state-versions.store";
import { stateStub } from "../state-versions/state-versions.stub";
import { verifyBlobUrl, type BlobKind } from "./blob-urls";

export const blobs = new Hono<AppEnv>();

function target(c: Context<AppEnv>): { ws: string; sv: string; kind: BlobKind } {
  const ws = c.req.param("ws") ?? "";
  const sv = c.req.param("sv") ?? "";
  const kind = c.req.param("kind");
  if (!/^ws-[A-Za-z0-9]{1,64}$/.test(ws) || !/^sv-[A-Za-z0-9]{1,64}$/.test(sv) || (kind !== "state" && kind !== "json")) throw ApiError.of("not_found");
  return { ws, sv, kind };
}

async function authorise(c: Context<AppEnv>, method: "GET" | "PUT") {
  const t = target(c);
  const ok = c.req.query("method") === method && (await verifyBlobUrl(c.env, method, t.ws, t.sv, t.kind, c.req.query("exp"), c.req.query("sig")));
  if (!ok) throw ApiError.of("forbidden", { detail: "The URL is not signed for this request, or it has expired" });
  return t;
}

blobs.put("/_blobs/:ws/:sv/:kind", async (c) => {
  const t = await authorise(c, "PUT");
  const length = Number(c.req.header("Content-Length") ?? "0");
  if (length > LIMITS.stateBodyBytes) throw ApiError.of("payload_too_large", { detail: `State uploads are limited to ${LIMITS.stateBodyBytes} bytes` });
  const stub = stateStub(c.env, t.ws);
  let seq = 0;
  let total = 0;
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  const flushPiece = async () => {
    const piece = new Uint8Array(pendingBytes);
    let off = 0;
    for (const p of pending) {
      piece.set(p, off);
      off += p.byteLength;
    }
    unwrap(await stub.appendBlob({ id: t.sv, kind: t.kind, seq, bytes: piece }));
    seq++;
    pending = [];
    pendingBytes = 0;
  };
  if (c.req.raw.body) {
    const reader = c.req.raw.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > LIMITS.stateBodyBytes) throw ApiError.of("payload_too_large", { detail: `State uploads are limited to ${LIMITS.stateBodyBytes} bytes` });
      pending.push(value);
      pendingBytes += value.byteLength;
      if (pendingBytes >= CHUNK_BYTES) await flushPiece();
    }
  }
  if (pendingBytes > 0 || seq === 0) await flushPiece();
  unwrap(await stub.completeBlob({ id: t.sv, kind: t.kind, now: nowIso() }));
  return c.body(null, 200);
});

blobs.get("/_blobs/:ws/:sv/:kind", async (c) => {
  const t = await authorise(c, "GET");
  const res = unwrap(await stateStub(c.env, t.ws).readStateBlob({ id: t.sv, kind: t.kind }));
  return c.body(res.bytes as Uint8Array<ArrayBuffer>, 200, { "Content-Type": "application/json" });
});
