/**
 * Terraform's module and provider registry protocols over the private registry (Terraform docs: Module Registry
 * Protocol, Provider Registry Protocol; HCP Terraform API docs: "HCP Terraform Registry Implementation"): the namespace
 * is the organisation's name, and the caller must stand in it (404 otherwise, as every other read of the registry).
 * Only what is complete is served: module versions whose archive was accepted, provider versions with their checksums
 * and signature, on the platforms whose binary is uploaded.
 */
import { requireOrgAccess } from "../auth/access";
import type { Caller } from "../caller";
import { ApiError } from "../errors";
import { findGpgKey } from "./gpg-keys.d1";
import type { ModuleDetails } from "./module-config.parse";
import { findModule, findModuleVersion, listModuleVersions } from "./registry-modules.d1";
import { findPlatform, findProvider, findProviderVersion, listPlatforms, listProviderVersions } from "./registry-providers.d1";
import { signedObjectUrl } from "./registry-urls";

async function privateModule(caller: Caller, namespace: string, name: string, provider: string) {
  const access = await requireOrgAccess(caller, { name: namespace });
  const m = await findModule(caller.db, { organizationId: access.organization.externalId, registryName: "private", namespace: "", name, provider });
  if (!m) throw ApiError.of("not_found");
  return m;
}

export async function moduleVersionList(caller: Caller, namespace: string, name: string, provider: string) {
  const m = await privateModule(caller, namespace, name, provider);
  const versions = (await listModuleVersions(caller.db, m.id)).filter((v) => v.status === "ok");
  return { modules: [{ source: `${m.namespace}/${m.name}/${m.provider}`, versions: versions.map((v) => ({ version: v.version })) }] };
}

/** The signed, short-lived location of a version's archive; `archive=tar.gz` tells Terraform's getter how to unpack it. */
export async function moduleDownloadLocation(caller: Caller, origin: string, namespace: string, name: string, provider: string, version: string) {
  const m = await privateModule(caller, namespace, name, provider);
  const v = await findModuleVersion(caller.db, m.id, version);
  if (v?.status !== "ok") throw ApiError.of("not_found");
  return `${await signedObjectUrl(caller.env, origin, "GET", "module", v.id)}&archive=tar.gz`;
}

/** A version's details in the module registry's shape (root module, submodules, examples, every published version). */
export async function moduleVersionDetails(caller: Caller, namespace: string, name: string, provider: string, version: string) {
  const m = await privateModule(caller, namespace, name, provider);
  const versions = (await listModuleVersions(caller.db, m.id)).filter((v) => v.status === "ok");
  const v = versions.find((x) => x.version === version);
  if (!v) throw ApiError.of("not_found");
  const details: ModuleDetails = v.details ?? {
    root: { path: "", name: m.name, readme: "", empty: true, inputs: [], outputs: [], dependencies: [], provider_dependencies: [], resources: [] },
    submodules: [],
    examples: [],
  };
  return {
    id: `${m.namespace}/${m.name}/${m.provider}/${v.version}`,
    owner: "",
    namespace: m.namespace,
    name: m.name,
    version: v.version,
    provider: m.provider,
    provider_logo_url: "",
    description: "",
    source: "",
    tag: "",
    published_at: v.updatedAt,
    downloads: 0,
    verified: false,
    root: details.root,
    submodules: details.submodules,
    examples: details.examples,
    providers: [m.provider],
    versions: versions.map((x) => x.version),
  };
}

async function privateProvider(caller: Caller, namespace: string, type: string) {
  const access = await requireOrgAccess(caller, { name: namespace });
  const p = await findProvider(caller.db, { organizationId: access.organization.externalId, registryName: "private", namespace: "", name: type });
  if (!p) throw ApiError.of("not_found");
  return p;
}

export async function providerVersionList(caller: Caller, namespace: string, type: string) {
  const p = await privateProvider(caller, namespace, type);
  const versions = (await listProviderVersions(caller.db, p.id)).filter((v) => v.shasumsKey && v.shasumsSigKey);
  const platforms = (
    await listPlatforms(
      caller.db,
      versions.map((v) => v.id),
    )
  ).filter((pl) => pl.binaryKey);
  return {
    versions: versions
      .map((v) => ({
        version: v.version,
        protocols: v.protocols,
        platforms: platforms.filter((pl) => pl.versionId === v.id).map((pl) => ({ os: pl.os, arch: pl.arch })),
      }))
      .filter((v) => v.platforms.length > 0),
  };
}

/** What Terraform needs to download, check and verify one platform's package (signed, short-lived URLs). */
export async function providerDownload(caller: Caller, origin: string, namespace: string, type: string, version: string, os: string, arch: string) {
  const p = await privateProvider(caller, namespace, type);
  const v = await findProviderVersion(caller.db, p.id, version);
  const pl = v ? await findPlatform(caller.db, v.id, os, arch) : null;
  if (!v || !pl?.binaryKey || !v.shasumsKey || !v.shasumsSigKey) throw ApiError.of("not_found");
  const key = await findGpgKey(caller.db, p.organizationId, v.keyId);
  // Terraform refuses a package it cannot verify: without the signing key the version cannot be installed.
  if (!key) throw ApiError.of("not_found", { detail: `The signing key ${v.keyId} of this version is not among the registry's GPG keys` });
  return {
    protocols: v.protocols,
    os: pl.os,
    arch: pl.arch,
    filename: pl.filename,
    download_url: await signedObjectUrl(caller.env, origin, "GET", "binary", pl.id),
    shasums_url: await signedObjectUrl(caller.env, origin, "GET", "shasums", v.id),
    shasums_signature_url: await signedObjectUrl(caller.env, origin, "GET", "shasums-sig", v.id),
    shasum: pl.shasum.toLowerCase(),
    signing_keys: { gpg_public_keys: [{ key_id: key.keyId, ascii_armor: key.asciiArmor, trust_signature: "", source: "", source_url: null }] },
  };
}
