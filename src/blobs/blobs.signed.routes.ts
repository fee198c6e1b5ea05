/**
 * The signed state-blob URLs (outside /api/v2: no bearer token, no JSON:API media type, their own
 * size limit). Uploads stream into the workspace's Durable Object in 1 MiB pieces, staged per
 * upload; downloads stream back out in pieces, so no single RPC carries a whole large state.
 */
import { Hono, type Context } from "hono";
import type { AppEnv } from "../env";
import { ApiError, unwrap } from "../errors";
import { nowIso } from "../ids";
import { LIMITS } from "../limits";
import { CHUNK_BYTES } from "../state-versions/state-versions.store";
import { stateStub } from "../state-versions/state-versions.stub";
import type { BlobKind } from "./blobs.urls";
import { authoriseBlob } from "./blobs.service";
import { piecesResponse, stagePieces } from "../platform/pieces";

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
  await authoriseBlob(c.env, method, t, { method: c.req.query("method"), exp: c.req.query("exp"), sig: c.req.query("sig") });
  return t;
}

const tooLarge = () => ApiError.of("payload_too_large", { detail: `State uploads are limited to ${LIMITS.stateBodyBytes} bytes` });

blobs.put("/_blobs/:ws/:sv/:kind", async (c) => {
  const t = await authorise(c, "PUT");
  if (Number(c.req.header("Content-Length") ?? "0") > LIMITS.stateBodyBytes) throw tooLarge();
  const stub = stateStub(c.env, t.ws);
  // A fresh staging area per request: two uploads to the same URL never interleave their pieces.
  const upload = crypto.randomUUID();
  const last = await stagePieces(
    c.req.raw.body,
    { size: CHUNK_BYTES, maxBytes: LIMITS.stateBodyBytes, tooLarge },
    {
      append: async (bytes) => void unwrap(await stub.appendBlob({ id: t.sv, kind: t.kind, upload, bytes })),
      abort: () => stub.abortBlob({ id: t.sv, kind: t.kind, upload }),
    },
  );
  unwrap(await stub.completeBlob({ id: t.sv, kind: t.kind, upload, bytes: last, now: nowIso() }));
  return c.body(null, 200);
});

blobs.get("/_blobs/:ws/:sv/:kind", async (c) => {
  const t = await authorise(c, "GET");
  const stub = stateStub(c.env, t.ws);
  return piecesResponse((fromSeq) => stub.readBlobPart({ id: t.sv, kind: t.kind, fromSeq }), "application/json", "state blob vanished while streaming");
});
