/**
 * The signed configuration-archive URLs (outside /api/v2: no bearer token, raw tar.gz bodies, their own size limit).
 * Uploads stream into the workspace's Durable Object in 1 MiB pieces, staged per upload; downloads stream back out
 * in parts, so no single RPC carries a whole archive.
 */
import { Hono, type Context } from "hono";
import { organizationIsLive } from "../blobs/blobs.d1";
import { piecesResponse, stagePieces } from "../platform/pieces";
import type { AppEnv, Bindings } from "../env";
import { ApiError, unwrap } from "../errors";
import { nowIso } from "../ids";
import { LIMITS } from "../limits";
import { workspaceStub } from "../workspaces/workspaces.service";
import { CV_PART_BYTES } from "./configuration-versions.store";
import { cvStub } from "./configuration-versions.stub";
import { verifySlugUrl, type SlugMethod } from "./configuration-versions.urls";

export const slugs = new Hono<AppEnv>();

/** The URL's target, once its signature holds and the workspace and its organisation still exist. */
async function authorise(c: Context<AppEnv>, method: SlugMethod): Promise<{ ws: string; cv: string }> {
  const ws = c.req.param("ws") ?? "";
  const cv = c.req.param("cv") ?? "";
  if (!/^ws-[A-Za-z0-9]{1,64}$/.test(ws) || !/^cv-[A-Za-z0-9]{1,64}$/.test(cv)) throw ApiError.of("not_found");
  const signed = { method: c.req.query("method"), exp: c.req.query("exp"), sig: c.req.query("sig") };
  if (!(await verifySlugUrl(c.env, method, ws, cv, signed))) {
    throw ApiError.of("forbidden", { detail: "The URL is not signed for this request, or it has expired" });
  }
  // A signature outlives nothing it names: a deleted workspace, or one of a deleted organisation, is gone.
  const w = await workspaceStub(c.env, ws).get();
  if (!w.ok || !(await organizationIsLive(c.env.DB.withSession("first-primary"), w.value.organizationId))) throw ApiError.of("not_found");
  return { ws, cv };
}

const tooLarge = () => ApiError.of("payload_too_large", { detail: `Configuration uploads are limited to ${LIMITS.configurationBodyBytes} bytes` });

slugs.put("/_slugs/:ws/:cv", async (c) => {
  const t = await authorise(c, "PUT");
  if (Number(c.req.header("Content-Length") ?? "0") > LIMITS.configurationBodyBytes) throw tooLarge();
  const stub = cvStub(c.env, t.ws);
  // A fresh staging area per request: two uploads to the same URL never interleave their pieces.
  const upload = crypto.randomUUID();
  const digest = new crypto.DigestStream("SHA-256");
  const hasher = digest.getWriter();
  const last = await stagePieces(
    c.req.raw.body,
    { size: CV_PART_BYTES, maxBytes: LIMITS.configurationBodyBytes, tooLarge },
    {
      append: async (bytes) => void unwrap(await stub.appendCvUpload({ id: t.cv, upload, bytes })),
      abort: () => stub.abortCvUpload({ id: t.cv, upload }),
    },
    (piece) => hasher.write(piece),
  );
  await hasher.close();
  const sha256 = [...new Uint8Array(await digest.digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
  unwrap(await stub.completeCvUpload({ id: t.cv, upload, bytes: last, sha256, now: nowIso() }));
  return c.body(null, 200);
});

slugs.get("/_slugs/:ws/:cv", async (c) => {
  const t = await authorise(c, "GET");
  return archiveResponse(c.env, t.ws, t.cv);
});

/**
 * The uploaded archive of a configuration version as a streamed 200 response (404 unless uploaded), read from the
 * workspace's object a few MiB per call. Also for the agent's configuration download, once it has authorised the job.
 */
export async function archiveResponse(env: Bindings, workspaceId: string, cvId: string): Promise<Response> {
  const stub = cvStub(env, workspaceId);
  return piecesResponse((fromSeq) => stub.readCvPart({ id: cvId, fromSeq }), "application/octet-stream", "configuration archive vanished while streaming");
}
