/**
 * The registry's signed object URLs: uploads of module archives (checked as they stream in: ./module-archive.parse.ts),
 * provider checksums and signatures, and provider binaries (their SHA-256 computed on the way and compared with the
 * platform's shasum); downloads for Terraform. No principal: the signature and the target's existence authorise.
 */
import type { SignedQuery } from "../platform/signature";
import { pieces } from "../platform/pieces";
import type { Bindings } from "../env";
import { ApiError } from "../errors";
import { nowIso } from "../ids";
import { LIMITS } from "../limits";
import { findGpgKey } from "./gpg-keys.d1";
import { verifiesDetached } from "./gpg-keys.openpgp";
import { ModuleArchiveReader } from "./module-archive.parse";
import { moduleDetails } from "./module-config.parse";
import { findModuleById, findModuleVersionById, type ModuleVersion, type RegistryModule, recordModuleUpload } from "./registry-modules.d1";
import {
  findPlatformById,
  findProviderById,
  findProviderVersionById,
  type ProviderPlatform,
  type ProviderVersion,
  type RegistryProvider,
  setPlatformBinary,
  setVersionObject,
} from "./registry-providers.d1";
import { deleteObjects, newObjectKey, objectBody, streamToObject } from "./registry-objects.r2";
import { type ObjectKind, type ObjectMethod, verifyObjectUrl } from "./registry-urls";
import { parseShasums } from "./registry.rules";

type Target =
  | { kind: "module"; version: ModuleVersion; module: RegistryModule }
  | { kind: "shasums" | "shasums-sig"; version: ProviderVersion; provider: RegistryProvider }
  | { kind: "binary"; platform: ProviderPlatform; version: ProviderVersion; provider: RegistryProvider };

/** The object a signed URL names, once its signature holds and what it names still exists (its organisation too). */
export async function authoriseObject(env: Bindings, method: ObjectMethod, kind: ObjectKind, id: string, signed: SignedQuery): Promise<Target> {
  if (!(await verifyObjectUrl(env, method, kind, id, signed))) {
    throw ApiError.of("forbidden", { detail: "The URL is not signed for this request, or it has expired" });
  }
  const db = env.DB.withSession("first-primary");
  // The rows are read joined to their organisation: a deleted organisation's are gone with it (migration 0032).
  if (kind === "module") {
    const version = await findModuleVersionById(db, id);
    const module = version ? await findModuleById(db, version.moduleId) : null;
    if (!version || !module) throw ApiError.of("not_found");
    return { kind, version, module };
  }
  if (kind === "binary") {
    const platform = await findPlatformById(db, id);
    const version = platform ? await findProviderVersionById(db, platform.versionId) : null;
    const provider = version ? await findProviderById(db, version.providerId) : null;
    if (!platform || !version || !provider) throw ApiError.of("not_found");
    return { kind, platform, version, provider };
  }
  const version = await findProviderVersionById(db, id);
  const provider = version ? await findProviderById(db, version.providerId) : null;
  if (!version || !provider) throw ApiError.of("not_found");
  return { kind, version, provider };
}

/**
 * The upload's announced length (null for a body sent without one, chunked: go-tfe uploads a file so), and its bound;
 * 413 at once when the announced length is past it.
 */
function uploadSize(headers: Headers, max: number, what: string): { length: number | null; maxBytes: number; tooLarge: () => ApiError } {
  const tooLarge = () => ApiError.of("payload_too_large", { detail: `${what} uploads are limited to ${max} bytes` });
  const raw = headers.get("Content-Length");
  if (raw === null) return { length: null, maxBytes: max, tooLarge };
  if (!/^\d{1,15}$/.test(raw)) throw ApiError.of("bad_request", { detail: "Content-Length is not a number" });
  if (Number(raw) > max) throw tooLarge();
  return { length: Number(raw), maxBytes: max, tooLarge };
}

const emptyBody = () => new ReadableStream<Uint8Array>({ start: (c) => c.close() });

/** Reads a small body whole (checksums, signatures: at most LIMITS.registryShasumsBytes). */
async function smallBody(body: ReadableStream<Uint8Array> | null, size: ReturnType<typeof uploadSize>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for await (const piece of pieces(body, 64 * 1024, size.maxBytes, size.tooLarge)) chunks.push(piece);
  const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let off = 0;
  for (const c of chunks) {
    bytes.set(c, off);
    off += c.length;
  }
  if (size.length !== null && bytes.length !== size.length) throw ApiError.of("bad_request", { detail: "The body's length differs from its Content-Length" });
  return bytes;
}

const refused = (detail: string) => ApiError.of("registry_upload_invalid", { detail });

export async function uploadObject(env: Bindings, t: Target, headers: Headers, body: ReadableStream<Uint8Array> | null): Promise<void> {
  switch (t.kind) {
    case "module":
      return uploadModuleArchive(env, t.module, t.version, headers, body);
    case "shasums":
    case "shasums-sig":
      return uploadChecksums(env, t.kind, t.provider, t.version, headers, body);
    case "binary":
      return uploadBinary(env, t.provider, t.platform, headers, body);
  }
}

/**
 * A module version's archive: streamed into R2 and read as it arrives. A valid module becomes the version's archive
 * (status ok, its inputs, outputs, submodules and examples recorded); anything else is deleted again, the version is
 * marked `reg_ingress_failed` with the reason, and the upload answers 422 with it.
 */
async function uploadModuleArchive(env: Bindings, module: RegistryModule, version: ModuleVersion, headers: Headers, body: ReadableStream<Uint8Array> | null) {
  const size = uploadSize(headers, LIMITS.registryModuleBytes, "Module archive");
  const reader = new ModuleArchiveReader({
    maxEntries: LIMITS.registryModuleEntries,
    maxUnpackedBytes: LIMITS.registryModuleUnpackedBytes,
    maxKeptFileBytes: LIMITS.registryModuleKeptFileBytes,
    maxKeptBytes: LIMITS.registryModuleKeptBytes,
  });
  const key = newObjectKey("module", module.organizationId, version.id);
  let length = 0;
  await streamToObject(env, key, body ?? emptyBody(), size, "application/gzip", async (piece) => {
    length += piece.length;
    await reader.write(piece);
  });
  const verdict = await reader.close();
  const db = env.DB.withSession("first-primary");
  if (!verdict.ok) {
    await deleteObjects(env, [key]);
    await recordModuleUpload(db, version.id, {
      status: "reg_ingress_failed",
      error: verdict.reason,
      archiveKey: null,
      archiveBytes: null,
      details: null,
      at: nowIso(),
    });
    throw refused(verdict.reason);
  }
  const replaced = await recordModuleUpload(db, version.id, {
    status: "ok",
    error: null,
    archiveKey: key,
    archiveBytes: length,
    details: moduleDetails(verdict.files, module.name),
    at: nowIso(),
  });
  // The version was deleted meanwhile: its new archive is no one's.
  await deleteObjects(env, [replaced === undefined ? key : replaced]);
  if (replaced === undefined) throw ApiError.of("not_found");
}

/** A provider version's SHA256SUMS (checked for its format) or its detached signature (checked when the key is known). */
async function uploadChecksums(
  env: Bindings,
  kind: "shasums" | "shasums-sig",
  provider: RegistryProvider,
  version: ProviderVersion,
  headers: Headers,
  body: ReadableStream<Uint8Array> | null,
) {
  const bytes = await smallBody(body, uploadSize(headers, LIMITS.registryShasumsBytes, kind === "shasums" ? "Checksum file" : "Signature"));
  if (kind === "shasums") {
    const parsed = parseShasums(new TextDecoder().decode(bytes));
    if (!parsed.ok) throw refused(parsed.reason);
  } else {
    if (bytes.length === 0) throw refused("The signature is empty");
    const key = await findGpgKey(env.DB.withSession("first-primary"), provider.organizationId, version.keyId);
    const sums = key && version.shasumsKey ? await objectBody(env, version.shasumsKey) : null;
    if (key && sums && !(await verifiesDetached(key.asciiArmor, new Uint8Array(await sums.arrayBuffer()), bytes))) {
      throw refused(`The signature is not a valid detached signature of this version's SHA256SUMS by key ${version.keyId}`);
    }
  }
  const objectKey = newObjectKey(kind, provider.organizationId, version.id);
  await env.REGISTRY.put(objectKey, bytes, { httpMetadata: { contentType: kind === "shasums" ? "text/plain" : "application/octet-stream" } });
  const replaced = await setVersionObject(env.DB.withSession("first-primary"), version.id, kind, objectKey, nowIso());
  await deleteObjects(env, [replaced === undefined ? objectKey : replaced]);
  if (replaced === undefined) throw ApiError.of("not_found");
}

/** A platform's binary: streamed into R2 with its SHA-256 computed on the way; kept only if it matches the shasum. */
async function uploadBinary(env: Bindings, provider: RegistryProvider, platform: ProviderPlatform, headers: Headers, body: ReadableStream<Uint8Array> | null) {
  const size = uploadSize(headers, LIMITS.registryProviderBinaryBytes, "Provider binary");
  const digest = new crypto.DigestStream("SHA-256");
  const hasher = digest.getWriter();
  const key = newObjectKey("binary", provider.organizationId, platform.id);
  await streamToObject(env, key, body ?? emptyBody(), size, "application/zip", (piece) => hasher.write(piece));
  await hasher.close();
  const sha256 = [...new Uint8Array(await digest.digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
  if (sha256 !== platform.shasum.toLowerCase()) {
    await deleteObjects(env, [key]);
    throw refused(`The binary's SHA-256 is ${sha256}, not the platform's shasum ${platform.shasum}`);
  }
  const replaced = await setPlatformBinary(env.DB.withSession("first-primary"), platform.id, key, nowIso());
  await deleteObjects(env, [replaced === undefined ? key : replaced]);
  if (replaced === undefined) throw ApiError.of("not_found");
}

/** The object a download URL names, streamed (404 until it is uploaded). */
export async function downloadObject(env: Bindings, t: Target): Promise<Response> {
  const key =
    t.kind === "module"
      ? t.version.status === "ok"
        ? t.version.archiveKey
        : null
      : t.kind === "binary"
        ? t.platform.binaryKey
        : t.kind === "shasums"
          ? t.version.shasumsKey
          : t.version.shasumsSigKey;
  const object = key ? await objectBody(env, key) : null;
  if (!object) throw ApiError.of("not_found");
  const type = object.httpMetadata?.contentType ?? "application/octet-stream";
  const name = t.kind === "binary" ? t.platform.filename : t.kind === "module" ? `${t.module.name}-${t.version.version}.tar.gz` : null;
  return new Response(object.body, {
    status: 200,
    headers: {
      "Content-Type": type,
      "Content-Length": String(object.size),
      ...(name ? { "Content-Disposition": `attachment; filename="${name}"` } : {}),
    },
  });
}
