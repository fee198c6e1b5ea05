/**
 * The signed configuration-archive URLs' work: authorise by signature and the target's liveness (no principal), then
 * stream the archive into the workspace's Durable Object in 1 MiB pieces staged per upload, or back out in parts, so
 * no single RPC carries a whole archive.
 */
import type { SignedQuery } from "../platform/signature";
import { organizationIsLive } from "../blobs/blobs.d1";
import type { Bindings } from "../env";
import { ApiError, unwrap } from "../errors";
import { nowIso } from "../ids";
import { LIMITS } from "../limits";
import { piecesResponse, stagePieces } from "../platform/pieces";
import { workspaceObject } from "../workspaces/workspace.stub";
import { CV_PART_BYTES } from "./configuration-versions.store";
import { verifySlugUrl, type SlugMethod } from "./configuration-versions.urls";

export interface SlugTarget {
  ws: string;
  cv: string;
}

/** The URL's target is usable once its signature holds and the workspace and its organisation still exist. */
export async function authoriseSlug(env: Bindings, method: SlugMethod, t: SlugTarget, signed: SignedQuery): Promise<void> {
  if (!(await verifySlugUrl(env, method, t.ws, t.cv, signed))) {
    throw ApiError.of("forbidden", { detail: "The URL is not signed for this request, or it has expired" });
  }
  // A signature outlives nothing it names: a deleted workspace, or one of a deleted organisation, is gone.
  const w = await workspaceObject(env, t.ws).get();
  if (!w.ok || !(await organizationIsLive(env.DB.withSession("first-primary"), w.value.organizationId))) throw ApiError.of("not_found");
}

const tooLarge = () => ApiError.of("payload_too_large", { detail: `Configuration uploads are limited to ${LIMITS.configurationBodyBytes} bytes` });

/** Streams an upload in, hashing it on the way, and completes the configuration version with its SHA-256. */
export async function uploadArchive(env: Bindings, t: SlugTarget, body: ReadableStream<Uint8Array> | null, contentLength: number): Promise<void> {
  if (contentLength > LIMITS.configurationBodyBytes) throw tooLarge();
  const stub = workspaceObject(env, t.ws);
  // A fresh staging area per request: two uploads to the same URL never interleave their pieces.
  const upload = crypto.randomUUID();
  const digest = new crypto.DigestStream("SHA-256");
  const hasher = digest.getWriter();
  const last = await stagePieces(
    body,
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
}

/**
 * The uploaded archive of a configuration version as a streamed 200 response (404 unless uploaded), read from the
 * workspace's object a few MiB per call. Also for the agent's configuration download, once it has authorised the job.
 */
export async function archiveResponse(env: Bindings, workspaceId: string, cvId: string): Promise<Response> {
  const stub = workspaceObject(env, workspaceId);
  return piecesResponse((fromSeq) => stub.readCvPart({ id: cvId, fromSeq }), "application/octet-stream", "configuration archive vanished while streaming");
}
