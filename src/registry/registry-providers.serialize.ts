/** Registry providers, their versions and platforms, and GPG keys as JSON:API resources. */
import type { Resource } from "../jsonapi/document";
import type { GpgKey } from "./gpg-keys.d1";
import type { ProviderPlatform, ProviderVersion, RegistryProvider } from "./registry-providers.d1";

export const providerPath = (p: RegistryProvider) =>
  `/api/v2/organizations/${p.organizationName}/registry-providers/${p.registryName}/${p.namespace}/${p.name}`;

export function serializeProvider(p: RegistryProvider, canManage: boolean): Resource {
  return {
    id: p.id,
    type: "registry-providers",
    attributes: {
      name: p.name,
      namespace: p.namespace,
      "registry-name": p.registryName,
      permissions: { "can-delete": canManage },
      "created-at": p.createdAt,
      "updated-at": p.updatedAt,
    },
    relationships: {
      organization: { data: { id: p.organizationName, type: "organizations" } },
      "registry-provider-versions": { data: p.versionIds.map((id) => ({ id, type: "registry-provider-versions" })) },
      "tag-bindings": { links: { related: `/api/v2/registry-providers/${p.id}/tag-bindings` } },
    },
    links: { self: providerPath(p) },
  };
}

/** `links`: the version's upload links (for callers who may upload) and download links of what is uploaded. */
export function serializeProviderVersion(v: ProviderVersion, p: RegistryProvider, canManage: boolean, links: Record<string, string>): Resource {
  return {
    id: v.id,
    type: "registry-provider-versions",
    attributes: {
      version: v.version,
      "key-id": v.keyId,
      protocols: v.protocols,
      "shasums-uploaded": v.shasumsKey !== null,
      "shasums-sig-uploaded": v.shasumsSigKey !== null,
      permissions: { "can-delete": canManage, "can-upload-asset": canManage },
      "created-at": v.createdAt,
      "updated-at": v.updatedAt,
    },
    relationships: {
      "registry-provider": { data: { id: p.id, type: "registry-providers" } },
      platforms: {
        data: v.platformIds.map((id) => ({ id, type: "registry-provider-platforms" })),
        links: { related: `${providerPath(p)}/versions/${v.version}/platforms` },
      },
    },
    links,
  };
}

export function serializePlatform(pl: ProviderPlatform, canManage: boolean, links: Record<string, string>): Resource {
  return {
    id: pl.id,
    type: "registry-provider-platforms",
    attributes: {
      os: pl.os,
      arch: pl.arch,
      filename: pl.filename,
      shasum: pl.shasum,
      "provider-binary-uploaded": pl.binaryKey !== null,
      permissions: { "can-delete": canManage, "can-upload-asset": canManage },
    },
    relationships: { "registry-provider-version": { data: { id: pl.versionId, type: "registry-provider-versions" } } },
    links,
  };
}

export function serializeGpgKey(k: GpgKey): Resource {
  return {
    id: k.id,
    type: "gpg-keys",
    attributes: {
      "ascii-armor": k.asciiArmor,
      "created-at": k.createdAt,
      "key-id": k.keyId,
      namespace: k.namespace,
      source: "",
      "source-url": null,
      "trust-signature": "",
      "updated-at": k.updatedAt,
    },
    links: { self: `/api/registry/private/v2/gpg-keys/${k.namespace}/${k.keyId}` },
  };
}
