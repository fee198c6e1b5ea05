/** Registry modules and their versions as JSON:API resources (HCP Terraform API docs: Registry Modules). */
import type { Resource } from "../jsonapi/document";
import type { ModuleVersion, RegistryModule, RegistryTagBinding } from "./registry-modules.d1";
import { moduleStatus } from "./registry.rules";

export const modulePath = (m: RegistryModule) =>
  `/api/v2/organizations/${m.organizationName}/registry-modules/${m.registryName}/${m.namespace}/${m.name}/${m.provider}`;

export function serializeModule(m: RegistryModule, canManage: boolean): Resource {
  return {
    id: m.id,
    type: "registry-modules",
    attributes: {
      name: m.name,
      namespace: m.namespace,
      provider: m.provider,
      "registry-name": m.registryName,
      status: m.registryName === "public" ? "setup_complete" : moduleStatus(m.versions),
      "version-statuses": m.versions.map((v) => ({ version: v.version, status: v.status, ...(v.error ? { error: v.error } : {}) })),
      "version-tags": [],
      "no-code": false,
      permissions: { "can-delete": canManage, "can-resync": canManage, "can-retry": canManage },
      "created-at": m.createdAt,
      "updated-at": m.updatedAt,
    },
    relationships: {
      organization: { data: { id: m.organizationName, type: "organizations" } },
      "tag-bindings": { links: { related: `/api/v2/registry-modules/${m.id}/tag-bindings` } },
    },
    links: { self: modulePath(m) },
  };
}

/** `upload`: the signed upload link, for callers who may upload. */
export function serializeModuleVersion(v: ModuleVersion, upload: string | null): Resource {
  return {
    id: v.id,
    type: "registry-module-versions",
    attributes: {
      source: "tfe-api",
      status: v.status,
      version: v.version,
      error: v.error,
      "commit-sha": v.commitSha,
      "created-at": v.createdAt,
      "updated-at": v.updatedAt,
    },
    relationships: { "registry-module": { data: { id: v.moduleId, type: "registry-modules" } } },
    ...(upload ? { links: { upload } } : {}),
  };
}

export const serializeRegistryTagBinding = (b: RegistryTagBinding): Resource => ({
  id: b.id,
  type: "tag-bindings",
  attributes: { key: b.key, value: b.value, "created-at": b.createdAt },
});
