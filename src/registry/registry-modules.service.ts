/**
 * Registry modules (HCP Terraform API docs: Registry Modules): members of the organisation read them; owners, the
 * organisation token and teams with manage-modules create, version and delete them. A module's archive is uploaded
 * through its version's signed `links.upload` (./registry-objects.service.ts).
 */
import { requireOrgAccess } from "../auth/access";
import type { OrgAccess } from "../auth/permissions";
import { allows, authorize } from "../auth/requirements";
import type { Caller } from "../caller";
import { ApiError } from "../errors";
import { newId, nowIso } from "../ids";
import { checkBindings } from "../tags/tags.rules";
import {
  deleteModuleVersion,
  deleteModules,
  findModule,
  findModuleById,
  findModulesByName,
  findModulesNamed,
  findModuleVersion,
  insertModule,
  insertModuleVersion,
  listModules,
  listModuleVersions,
  listRegistryTagBindings,
  moduleArchiveKeys,
  type ModuleFilters,
  type ModuleVersion,
  type RegistryModule,
  type RegistryTagBinding,
  replaceRegistryTagBindings,
} from "./registry-modules.d1";
import { deleteObjects } from "./registry-objects.r2";
import { MODULE_PROVIDER_PATTERN, NAME_PATTERN, NAMESPACE_PATTERN, parseVersion, type RegistryName } from "./registry.rules";

/** How a route names a module: by organisation, registry, namespace, name and provider. */
export interface ModuleRef {
  organization: string;
  registryName: RegistryName;
  namespace: string;
  name: string;
  provider: string;
}

export interface ModuleView {
  module: RegistryModule;
  canManage: boolean;
}

const canManage = (caller: Caller, access: OrgAccess) => allows(caller.principal, "registry-modules.manage", { access });

/** The module a request names (404 when absent, or when a private module's namespace is not its organisation). */
async function loadModule(caller: Caller, ref: Omit<ModuleRef, "organization">, access: OrgAccess): Promise<RegistryModule> {
  if (ref.registryName === "private" && ref.namespace !== access.organization.name) throw ApiError.of("not_found");
  const m = await findModule(caller.db, { organizationId: access.organization.externalId, ...ref });
  if (!m) throw ApiError.of("not_found");
  return m;
}

const invalid = (detail: string, attribute: string) => ApiError.of("invalid_attribute", { detail, pointer: `/data/attributes/${attribute}` });

export async function createModule(
  caller: Caller,
  organization: string,
  input: { name?: string; provider?: string; registryName?: string; namespace?: string; noCode?: boolean },
): Promise<ModuleView> {
  const access = await requireOrgAccess(caller, { name: organization });
  authorize(caller, "registry-modules.manage", { access });
  const registryName = input.registryName ?? "private";
  if (registryName !== "private" && registryName !== "public") throw invalid("Registry name is not included in the list", "registry-name");
  if (!input.name) throw invalid("Name can't be blank", "name");
  if (!NAME_PATTERN.test(input.name)) {
    throw invalid("Name may contain letters, numbers, dashes and underscores (not leading or trailing), at most 64 characters", "name");
  }
  if (!input.provider) throw invalid("Provider can't be blank", "provider");
  if (!MODULE_PROVIDER_PATTERN.test(input.provider)) throw invalid("Provider may contain lowercase letters and numbers, at most 64 characters", "provider");
  let namespace = access.organization.name;
  if (registryName === "private") {
    if (input.namespace && input.namespace !== access.organization.name) throw invalid("Namespace cannot be set for a private module", "namespace");
  } else {
    if (!input.namespace) throw invalid("Namespace can't be blank for a public module", "namespace");
    if (!NAMESPACE_PATTERN.test(input.namespace)) throw invalid("Namespace is invalid", "namespace");
    namespace = input.namespace;
  }
  // No-code provisioning (workspaces created from a module) is a workflow this service does not run.
  if (input.noCode) throw invalid("No-code provisioning is not available on this service", "no-code");
  const at = nowIso();
  const row = {
    id: newId("mod"),
    organizationId: access.organization.externalId,
    registryName,
    namespace,
    name: input.name,
    provider: input.provider,
    createdAt: at,
    updatedAt: at,
  } as const;
  if (!(await insertModule(caller.db, row))) throw ApiError.of("name_taken", { pointer: "/data/attributes/name" });
  return { module: { ...row, organizationName: access.organization.name, versions: [] }, canManage: true };
}

export async function listOrgModules(
  caller: Caller,
  organization: string,
  filters: ModuleFilters & { organizationName?: string },
  page: { number: number; size: number },
): Promise<{ items: RegistryModule[]; total: number; canManage: boolean }> {
  const access = await requireOrgAccess(caller, { name: organization });
  const manage = canManage(caller, access);
  // Every module of this list belongs to the organisation named in the path.
  if (filters.organizationName !== undefined && filters.organizationName !== access.organization.name) return { items: [], total: 0, canManage: manage };
  const { items, total } = await listModules(caller.near, access.organization.externalId, filters, page);
  return { items, total, canManage: manage };
}

export async function showModule(caller: Caller, ref: ModuleRef): Promise<ModuleView> {
  const access = await requireOrgAccess(caller, { name: ref.organization });
  return { module: await loadModule(caller, ref, access), canManage: canManage(caller, access) };
}

export async function showModuleById(caller: Caller, id: string): Promise<ModuleView> {
  const m = await findModuleById(caller.db, id);
  if (!m) throw ApiError.of("not_found");
  const access = await requireOrgAccess(caller, { id: m.organizationId });
  return { module: m, canManage: canManage(caller, access) };
}

export async function updateModule(
  caller: Caller,
  ref: ModuleRef,
  input: { noCode?: boolean; testConfig?: unknown; vcsRepo?: unknown; tagBindings?: Array<{ key: string; value?: string | null }> },
): Promise<ModuleView> {
  const access = await requireOrgAccess(caller, { name: ref.organization });
  const m = await loadModule(caller, ref, access);
  authorize(caller, "registry-modules.manage", { access });
  if (input.noCode) throw invalid("No-code provisioning is not available on this service", "no-code");
  if (input.testConfig !== undefined) throw invalid("Module tests are not available on this service", "test-config");
  if (input.vcsRepo !== undefined) throw invalid("Modules are published through the API on this service, not from a VCS repository", "vcs-repo");
  if (input.tagBindings) await replaceBindings(caller, m.id, input.tagBindings);
  return { module: m, canManage: true };
}

/** Validates and stores a module's or provider's tag bindings (they replace the ones it had). */
export async function replaceBindings(caller: Caller, resourceId: string, bindings: Array<{ key: string; value?: string | null }>): Promise<void> {
  const bad = checkBindings(bindings, "/data/relationships/tag-bindings/data");
  if (bad) throw ApiError.of(bad.code, { detail: bad.detail, pointer: bad.pointer });
  const existing = new Map((await listRegistryTagBindings(caller.db, resourceId)).map((b) => [b.key, b]));
  const at = nowIso();
  const next: RegistryTagBinding[] = [...new Map(bindings.map((b) => [b.key, b.value ?? ""])).entries()].map(([key, value]) => {
    const kept = existing.get(key);
    return kept && kept.value === value ? kept : { id: newId("tb"), key, value, createdAt: kept?.createdAt ?? at };
  });
  await replaceRegistryTagBindings(caller.db, resourceId, next);
}

export async function moduleTagBindings(caller: Caller, id: string): Promise<RegistryTagBinding[]> {
  const m = await findModuleById(caller.db, id);
  if (!m) throw ApiError.of("not_found");
  await requireOrgAccess(caller, { id: m.organizationId });
  return listRegistryTagBindings(caller.db, m.id);
}

// ---- versions ----

export interface VersionView {
  version: ModuleVersion;
  module: RegistryModule;
  canManage: boolean;
}

export async function createModuleVersion(caller: Caller, ref: ModuleRef, input: { version?: string; commitSha?: string | null }): Promise<VersionView> {
  const access = await requireOrgAccess(caller, { name: ref.organization });
  const m = await loadModule(caller, ref, access);
  authorize(caller, "registry-modules.manage", { access });
  // Public modules are curated references: their versions live in the public registry (docs: 403).
  if (m.registryName !== "private") throw ApiError.of("forbidden", { detail: "Versions can only be created for private modules" });
  if (!input.version) throw invalid("Version can't be blank", "version");
  if (!parseVersion(input.version)) throw invalid("Version must be a valid semantic version (for example 1.2.3)", "version");
  const at = nowIso();
  const v: ModuleVersion = {
    id: newId("modver"),
    moduleId: m.id,
    version: input.version,
    status: "pending",
    error: null,
    commitSha: input.commitSha ?? null,
    archiveKey: null,
    archiveBytes: null,
    details: null,
    createdAt: at,
    updatedAt: at,
  };
  if (!(await insertModuleVersion(caller.db, v))) throw ApiError.of("version_taken", { pointer: "/data/attributes/version" });
  return { version: v, module: m, canManage: true };
}

export async function showModuleVersion(caller: Caller, ref: ModuleRef, version: string): Promise<VersionView> {
  const access = await requireOrgAccess(caller, { name: ref.organization });
  const m = await loadModule(caller, ref, access);
  const v = await findModuleVersion(caller.db, m.id, version);
  if (!v) throw ApiError.of("not_found");
  return { version: v, module: m, canManage: canManage(caller, access) };
}

export async function moduleVersions(caller: Caller, ref: ModuleRef): Promise<{ module: RegistryModule; versions: ModuleVersion[]; canManage: boolean }> {
  const access = await requireOrgAccess(caller, { name: ref.organization });
  const m = await loadModule(caller, ref, access);
  return { module: m, versions: await listModuleVersions(caller.db, m.id), canManage: canManage(caller, access) };
}

// ---- deletes (docs: "Delete a Module"): a version, a provider with its versions, or every provider of a name ----

async function removeModules(caller: Caller, modules: RegistryModule[]): Promise<void> {
  const ids = modules.map((m) => m.id);
  const keys = await moduleArchiveKeys(caller.db, ids);
  await deleteModules(caller.db, ids);
  await deleteObjects(caller.env, keys);
}

export async function deleteModuleByName(caller: Caller, ref: Omit<ModuleRef, "provider">): Promise<void> {
  const access = await requireOrgAccess(caller, { name: ref.organization });
  if (ref.registryName === "private" && ref.namespace !== access.organization.name) throw ApiError.of("not_found");
  const modules = await findModulesByName(caller.db, { organizationId: access.organization.externalId, ...ref });
  if (modules.length === 0) throw ApiError.of("not_found");
  authorize(caller, "registry-modules.manage", { access });
  await removeModules(caller, modules);
}

/** The deprecated `POST /registry-modules/actions/delete/:organization/:name`: the name in every registry of the organisation. */
export async function deleteModulesNamed(caller: Caller, organization: string, name: string): Promise<void> {
  const access = await requireOrgAccess(caller, { name: organization });
  const modules = await findModulesNamed(caller.db, access.organization.externalId, name);
  if (modules.length === 0) throw ApiError.of("not_found");
  authorize(caller, "registry-modules.manage", { access });
  await removeModules(caller, modules);
}

export async function deleteModuleProvider(caller: Caller, ref: ModuleRef): Promise<void> {
  const access = await requireOrgAccess(caller, { name: ref.organization });
  const m = await loadModule(caller, ref, access);
  authorize(caller, "registry-modules.manage", { access });
  await removeModules(caller, [m]);
}

export async function deleteModuleVersionOf(caller: Caller, ref: ModuleRef, version: string): Promise<void> {
  const access = await requireOrgAccess(caller, { name: ref.organization });
  const m = await loadModule(caller, ref, access);
  const v = await findModuleVersion(caller.db, m.id, version);
  if (!v || m.registryName !== "private") throw ApiError.of("not_found");
  authorize(caller, "registry-modules.manage", { access });
  // Docs: a version delete that would leave the provider without versions deletes the provider.
  if (m.versions.length <= 1) return removeModules(caller, [m]);
  await deleteModuleVersion(caller.db, v.id);
  if (v.archiveKey) await deleteObjects(caller.env, [v.archiveKey]);
}
