/** The signed state-blob URLs' work: authorise by signature and the target's liveness (no principal), then stream in or out. */
import type { SignedQuery } from "../platform/signature";
import type { Bindings } from "../env";
import { ApiError, unwrap } from "../errors";
import { nowIso } from "../ids";
import { LIMITS } from "../limits";
import { piecesResponse, stagePieces } from "../platform/pieces";
import { CHUNK_BYTES } from "../state-versions/state-versions.store";
import { organizationIsLive } from "./blobs.d1";
import { verifyBlobUrl, type BlobKind } from "./blobs.urls";
import { workspaceObject } from "../workspaces/workspace.stub";

export interface BlobTarget {
  ws: string;
  sv: string;
  kind: BlobKind;
}

/** The URL's signature parameters as sent (`method`, `exp`, `sig`). */
export async function authoriseBlob(env: Bindings, method: "GET" | "PUT", t: BlobTarget, signed: SignedQuery): Promise<void> {
  const ok = signed.method === method && (await verifyBlobUrl(env, method, t.ws, t.sv, t.kind, signed.exp, signed.sig));
  if (!ok) throw ApiError.of("forbidden", { detail: "The URL is not signed for this request, or it has expired" });
  // A signature outlives nothing it names: the workspace must still be live and its
  // organisation the very one it was created in (a deleted, or deleted and re-created, one is not).
  const ws = await workspaceObject(env, t.ws).get();
  if (!ws.ok) throw ApiError.of("not_found");
  if (!(await organizationIsLive(env.DB.withSession("first-primary"), ws.value.organizationId))) throw ApiError.of("not_found");
}

const tooLarge = () => ApiError.of("payload_too_large", { detail: `State uploads are limited to ${LIMITS.stateBodyBytes} bytes` });

/** Streams an upload into the workspace's object in pieces, staged per request, then completes the blob. */
export async function uploadBlob(env: Bindings, t: BlobTarget, body: ReadableStream<Uint8Array> | null, contentLength: number): Promise<void> {
  if (contentLength > LIMITS.stateBodyBytes) throw tooLarge();
  const stub = workspaceObject(env, t.ws);
  // A fresh staging area per request: two uploads to the same URL never interleave their pieces.
  const upload = crypto.randomUUID();
  const last = await stagePieces(
    body,
    { size: CHUNK_BYTES, maxBytes: LIMITS.stateBodyBytes, tooLarge },
    {
      append: async (bytes) => void unwrap(await stub.appendBlob({ id: t.sv, kind: t.kind, upload, bytes })),
      abort: () => stub.abortBlob({ id: t.sv, kind: t.kind, upload }),
    },
  );
  unwrap(await stub.completeBlob({ id: t.sv, kind: t.kind, upload, bytes: last, now: nowIso() }));
}

/** The blob as a streamed response, read from the workspace's object a few pieces per call. */
export function blobResponse(env: Bindings, t: BlobTarget): Promise<Response> {
  const stub = workspaceObject(env, t.ws);
  return piecesResponse((fromSeq) => stub.readBlobPart({ id: t.sv, kind: t.kind, fromSeq }), "application/json", "state blob vanished while streaming");
}
