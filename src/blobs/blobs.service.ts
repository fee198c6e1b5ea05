/** Authorises a signed state-blob URL: no principal, only the signature and the target's liveness. */
import type { Bindings } from "../env";
import { ApiError } from "../errors";
import { workspaceStub } from "../workspaces/workspaces.service";
import { organizationIsLive } from "./blobs.d1";
import { verifyBlobUrl, type BlobKind } from "./blobs.urls";

export interface BlobTarget {
  ws: string;
  sv: string;
  kind: BlobKind;
}

/** The URL's signature parameters as sent (`method`, `exp`, `sig`). */
export interface BlobSignature {
  method: string | undefined;
  exp: string | undefined;
  sig: string | undefined;
}

export async function authoriseBlob(env: Bindings, method: "GET" | "PUT", t: BlobTarget, signed: BlobSignature): Promise<void> {
  const ok = signed.method === method && (await verifyBlobUrl(env, method, t.ws, t.sv, t.kind, signed.exp, signed.sig));
  if (!ok) throw ApiError.of("forbidden", { detail: "The URL is not signed for this request, or it has expired" });
  // A signature outlives nothing it names: the workspace must still be live and its
  // organisation the very one it was created in (a deleted, or deleted and re-created, one is not).
  const ws = await workspaceStub(env, t.ws).get();
  if (!ws.ok) throw ApiError.of("not_found");
  if (!(await organizationIsLive(env.DB.withSession("first-primary"), ws.value.organizationId))) throw ApiError.of("not_found");
}
