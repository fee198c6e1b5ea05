/**
 * Registry providers, their versions and platforms (HCP Terraform API docs: Registry Providers, Private Provider
 * Versions and Platforms): members of the organisation read them; owners, the organisation token and teams with
 * manage-providers create and delete them. A version's SHA256SUMS and its signature, and each platform's binary, are
 * uploaded through their signed links (./registry-objects.service.ts).
 */
import { loadOrgAccess, requireOrgAccess } from "../auth/access";
import type { OrgAccess } from "../auth/permissions";
import { allows, authorize } from "../auth/requirements";
import type { Caller } from "../caller";
import { ApiError, type ErrorObject } from "../errors";
import { newId, nowIso } from "../ids";
import { listRegistryTagBindings, type RegistryTagBinding } from "./registry-modules.d1";
import { replaceBindings } from "./registry-modules.service";
import { deleteObjects } from "./registry-objects.r2";
import {
  deletePlatform,
  deleteProvider,
  deleteProviderVersion,
  findPlatform,
  findProvider,
  findProviderById,
  findProviderVersion,
  insertPlatform,
  insertProvider,
  insertProviderVersion,
  listPlatforms,
  listProviders,
  listProviderVersions,
  type ProviderPlatform,
  type ProviderVersion,
  providerObjectKeys,
  providerVersionsByIds,
  type RegistryProvider,
} from "./registry-providers.d1";
import { FILENAME_PATTERN, NAME_PATTERN, NAMESPACE_PATTERN, parseVersion, PLATFORM_PART_PATTERN, type RegistryName } from "./registry.rules";

export interface ProviderRef {
  organization: string;
  registryName: RegistryName;
  namespace: string;
  name: string;
}

const canManage = (caller: Caller, access: OrgAccess) => allows(caller.principal, "registry-providers.manage", { access });
const invalid = (detail: string, attribute: string) => ApiError.of("invalid_attribute", { detail, pointer: `/data/attributes/${attribute}` });

async function loadProvider(caller: Caller, ref: Omit<ProviderRef, "organization">, access: OrgAccess): Promise<RegistryProvider> {
  if (ref.registryName === "private" && ref.namespace !== access.organization.name) throw ApiError.of("not_found");
  const p = await findProvider(caller.db, { organizationId: access.organization.externalId, ...ref });
  if (!p) throw ApiError.of("not_found");
  return p;
}

export async function createProvider(caller: Caller, organization: string, input: { name?: string; namespace?: string; registryName?: string }) {
  const access = await requireOrgAccess(caller, { name: organization });
  authorize(caller, "registry-providers.manage", { access });
  const registryName = input.registryName ?? "";
  if (registryName !== "private" && registryName !== "public") {
    // The real service's texts (go-tfe's tests match them whole).
    const errors: ErrorObject[] = [];
    const pointer = { pointer: "/data/attributes/registry-name" };
    if (registryName === "") errors.push({ status: "422", title: "invalid attribute", detail: "Registry name can't be blank", source: pointer });
    errors.push({ status: "422", title: "invalid attribute", detail: "Registry name is not included in the list", source: pointer });
    throw new ApiError(422, errors);
  }
  if (!input.name || !NAME_PATTERN.test(input.name)) throw invalid("Name may contain letters, numbers, dashes and underscores, at most 64 characters", "name");
  if (!input.namespace || !NAMESPACE_PATTERN.test(input.namespace)) throw invalid("Namespace is invalid", "namespace");
  if (registryName === "private" && input.namespace !== access.organization.name) {
    throw invalid("The namespace of a private provider is its organization's name", "namespace");
  }
  const at = nowIso();
  const row = {
    id: newId("prov"),
    organizationId: access.organization.externalId,
    registryName,
    namespace: input.namespace,
    name: input.name,
    createdAt: at,
    updatedAt: at,
  } as const;
  if (!(await insertProvider(caller.db, row))) throw ApiError.of("name_taken", { pointer: "/data/attributes/name" });
  return { provider: { ...row, organizationName: access.organization.name, versionIds: [] }, canManage: true };
}

export async function listOrgProviders(
  caller: Caller,
  organization: string,
  filters: { q?: string; registryName?: string; organizationName?: string; withVersions: boolean },
  page: { number: number; size: number },
) {
  const access = await requireOrgAccess(caller, { name: organization });
  const manage = canManage(caller, access);
  if (filters.organizationName !== undefined && filters.organizationName !== access.organization.name) {
    return { items: [] as RegistryProvider[], total: 0, canManage: manage, versions: [] as ProviderVersion[] };
  }
  const { items, total } = await listProviders(caller.near, access.organization.externalId, filters, page);
  const versions = filters.withVersions
    ? await providerVersionsByIds(
        caller.near,
        items.flatMap((p) => p.versionIds),
      )
    : [];
  return { items, total, canManage: manage, versions };
}

export async function showProvider(caller: Caller, ref: ProviderRef, withVersions: boolean) {
  const access = await requireOrgAccess(caller, { name: ref.organization });
  const provider = await loadProvider(caller, ref, access);
  const versions = withVersions ? await providerVersionsByIds(caller.db, provider.versionIds) : [];
  return { provider, canManage: canManage(caller, access), versions };
}

export async function showProviderById(caller: Caller, id: string, withVersions: boolean) {
  const provider = await findProviderById(caller.db, id);
  if (!provider) throw ApiError.of("not_found");
  const access = await requireOrgAccess(caller, { id: provider.organizationId });
  const versions = withVersions ? await providerVersionsByIds(caller.db, provider.versionIds) : [];
  return { provider, canManage: canManage(caller, access), versions };
}

export async function updateProvider(caller: Caller, ref: ProviderRef, tagBindings: Array<{ key: string; value?: string | null }> | undefined) {
  const access = await requireOrgAccess(caller, { name: ref.organization });
  const provider = await loadProvider(caller, ref, access);
  authorize(caller, "registry-providers.manage", { access });
  if (tagBindings) await replaceBindings(caller, provider.id, tagBindings);
  return { provider, canManage: true, versions: [] as ProviderVersion[] };
}

export async function providerTagBindings(caller: Caller, id: string): Promise<RegistryTagBinding[]> {
  const provider = await findProviderById(caller.db, id);
  if (!provider) throw ApiError.of("not_found");
  await requireOrgAccess(caller, { id: provider.organizationId });
  return listRegistryTagBindings(caller.db, provider.id);
}

export async function removeProvider(caller: Caller, ref: ProviderRef): Promise<void> {
  const access = await requireOrgAccess(caller, { name: ref.organization });
  const provider = await loadProvider(caller, ref, access);
  authorize(caller, "registry-providers.manage", { access });
  const keys = await providerObjectKeys(caller.db, { providerId: provider.id });
  await deleteProvider(caller.db, provider.id);
  await deleteObjects(caller.env, keys);
}

// ---- versions ----

/** The provider of a version route: private only (the versions of public providers are the public registry's). */
async function loadPrivateProvider(caller: Caller, ref: ProviderRef, access: OrgAccess): Promise<RegistryProvider> {
  if (ref.registryName !== "private") throw ApiError.of("not_found");
  return loadProvider(caller, ref, access);
}

export async function createProviderVersion(caller: Caller, ref: ProviderRef, input: { version?: string; keyId?: string; protocols?: string[] | null }) {
  const access = await requireOrgAccess(caller, { name: ref.organization });
  const provider = await loadPrivateProvider(caller, ref, access);
  authorize(caller, "registry-providers.manage", { access });
  if (!input.version || !parseVersion(input.version)) throw invalid("Version must be a valid semantic version (for example 1.2.3)", "version");
  if (!input.keyId || !/^[A-Za-z0-9_-]{1,64}$/.test(input.keyId)) throw invalid("Key id must be the id of the GPG key that signs the version", "key-id");
  const protocols = input.protocols ?? [];
  for (const [i, p] of protocols.entries()) {
    if (!/^\d{1,3}(\.\d{1,3})?$/.test(p))
      throw ApiError.of("invalid_attribute", { detail: "Protocols are plugin protocol versions such as 5.0", pointer: `/data/attributes/protocols/${i}` });
  }
  const at = nowIso();
  const v = {
    id: newId("provver"),
    providerId: provider.id,
    version: input.version,
    keyId: input.keyId,
    protocols,
    shasumsKey: null,
    shasumsSigKey: null,
    createdAt: at,
    updatedAt: at,
  };
  if (!(await insertProviderVersion(caller.db, v))) throw ApiError.of("version_taken", { pointer: "/data/attributes/version" });
  return { version: { ...v, platformIds: [] }, provider, canManage: true };
}

export async function providerVersions(caller: Caller, ref: ProviderRef) {
  const access = await requireOrgAccess(caller, { name: ref.organization });
  const provider = await loadPrivateProvider(caller, ref, access);
  return { provider, versions: await listProviderVersions(caller.db, provider.id), canManage: canManage(caller, access) };
}

async function loadVersion(caller: Caller, ref: ProviderRef, version: string, access: OrgAccess) {
  const provider = await loadPrivateProvider(caller, ref, access);
  const v = await findProviderVersion(caller.db, provider.id, version);
  if (!v) throw ApiError.of("not_found");
  return { provider, version: v };
}

export async function showProviderVersion(caller: Caller, ref: ProviderRef, version: string) {
  const access = await requireOrgAccess(caller, { name: ref.organization });
  return { ...(await loadVersion(caller, ref, version, access)), canManage: canManage(caller, access) };
}

export async function removeProviderVersion(caller: Caller, ref: ProviderRef, version: string): Promise<void> {
  const access = await requireOrgAccess(caller, { name: ref.organization });
  const { version: v } = await loadVersion(caller, ref, version, access);
  authorize(caller, "registry-providers.manage", { access });
  const keys = await providerObjectKeys(caller.db, { versionId: v.id });
  await deleteProviderVersion(caller.db, v.id);
  await deleteObjects(caller.env, keys);
}

// ---- platforms ----

export async function createPlatform(
  caller: Caller,
  ref: ProviderRef,
  version: string,
  input: { os?: string; arch?: string; shasum?: string; filename?: string },
): Promise<{ platform: ProviderPlatform; canManage: boolean }> {
  const access = await requireOrgAccess(caller, { name: ref.organization });
  const { version: v } = await loadVersion(caller, ref, version, access);
  authorize(caller, "registry-providers.manage", { access });
  if (!input.os || !PLATFORM_PART_PATTERN.test(input.os)) throw invalid("OS must be an operating system name such as linux", "os");
  if (!input.arch || !PLATFORM_PART_PATTERN.test(input.arch)) throw invalid("Arch must be an architecture name such as amd64", "arch");
  // The shasum is what Terraform checks the binary against; an upload whose SHA-256 differs is refused.
  if (!input.shasum || !/^[A-Za-z0-9]{1,128}$/.test(input.shasum)) throw invalid("Shasum must be the binary's SHA-256, in hexadecimal", "shasum");
  if (!input.filename || !FILENAME_PATTERN.test(input.filename)) throw invalid("Filename must be the binary's file name", "filename");
  const at = nowIso();
  const platform: ProviderPlatform = {
    id: newId("provpltfrm"),
    versionId: v.id,
    os: input.os,
    arch: input.arch,
    filename: input.filename,
    shasum: input.shasum,
    binaryKey: null,
    createdAt: at,
    updatedAt: at,
  };
  if (!(await insertPlatform(caller.db, platform))) {
    throw ApiError.of("invalid_attribute", {
      detail: `Platform ${input.os}/${input.arch} has already been taken for this version`,
      pointer: "/data/attributes/os",
    });
  }
  return { platform, canManage: true };
}

export async function versionPlatforms(caller: Caller, ref: ProviderRef, version: string) {
  const access = await requireOrgAccess(caller, { name: ref.organization });
  const { version: v } = await loadVersion(caller, ref, version, access);
  return { platforms: await listPlatforms(caller.db, [v.id]), canManage: canManage(caller, access) };
}

async function loadPlatform(caller: Caller, ref: ProviderRef, version: string, os: string, arch: string, access: OrgAccess) {
  const { version: v } = await loadVersion(caller, ref, version, access);
  const platform = await findPlatform(caller.db, v.id, os, arch);
  if (!platform) throw ApiError.of("not_found");
  return platform;
}

export async function showPlatform(caller: Caller, ref: ProviderRef, version: string, os: string, arch: string) {
  const access = await requireOrgAccess(caller, { name: ref.organization });
  return { platform: await loadPlatform(caller, ref, version, os, arch, access), canManage: canManage(caller, access) };
}

export async function removePlatform(caller: Caller, ref: ProviderRef, version: string, os: string, arch: string): Promise<void> {
  const access = await requireOrgAccess(caller, { name: ref.organization });
  const platform = await loadPlatform(caller, ref, version, os, arch, access);
  authorize(caller, "registry-providers.manage", { access });
  await deletePlatform(caller.db, platform.id);
  await deleteObjects(caller.env, [platform.binaryKey]);
}

/** The caller's standing in the organisation named by a namespace, or null (not authorised for it). */
export async function namespaceAccess(caller: Caller, namespace: string): Promise<OrgAccess | null> {
  return loadOrgAccess(caller.db, caller.principal, { name: namespace });
}

/** A private provider with every version and its platforms (the web UI's provider page). */
export async function providerOverview(caller: Caller, ref: ProviderRef) {
  const access = await requireOrgAccess(caller, { name: ref.organization });
  const provider = await loadProvider(caller, ref, access);
  const versions = await listProviderVersions(caller.db, provider.id);
  const platforms = await listPlatforms(
    caller.db,
    versions.map((v) => v.id),
  );
  return { access, provider, versions, platforms };
}
