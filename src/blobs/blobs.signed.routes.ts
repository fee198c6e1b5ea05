/**
 * The signed state-blob URLs (outside /api/v2: no bearer token, no JSON:API media type, their own
 * size limit). Uploads stream into the workspace's Durable Object in 1 MiB pieces, staged per
 * upload; downloads stream back out in pieces, so no single RPC carries a whole large state.
 */
import { signedQuery } from "../platform/signature";
import { Hono, type Context } from "hono";
import type { AppEnv } from "../env";
import type { BlobKind } from "./blobs.urls";
import { ApiError } from "../errors";
import { authoriseBlob, blobResponse, uploadBlob } from "./blobs.service";

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
  await authoriseBlob(c.env, method, t, signedQuery(c));
  return t;
}

blobs.put("/_blobs/:ws/:sv/:kind", async (c) => {
  const t = await authorise(c, "PUT");
  await uploadBlob(c.env, t, c.req.raw.body, Number(c.req.header("Content-Length") ?? "0"));
  return c.body(null, 200);
});

blobs.get("/_blobs/:ws/:sv/:kind", async (c) => blobResponse(c.env, await authorise(c, "GET")));
