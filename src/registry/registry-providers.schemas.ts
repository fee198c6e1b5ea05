/**
 * Request and response schemas of registry providers, their versions and platforms, and GPG keys (HCP Terraform API
 * docs: Registry Providers, Private Provider Versions and Platforms, GPG Keys). Values are checked by the services
 * for the real texts and pointers. go-tfe sends version and platform documents without a `type`.
 */
import { z } from "@hono/zod-openapi";
import { attr, pageQuery, resourceSchema } from "../jsonapi/schemas";
import { registryEntryParams, segment, tagBindingInput } from "./registry.schemas";

/** A provider is named by its entry's path alone. */
export const providerParams = registryEntryParams;
export const providerVersionParams = providerParams.extend({ version: segment });
export const platformParams = providerVersionParams.extend({ os: segment, arch: segment });
export const providerIdParam = z.object({ provider_id: z.string().regex(/^prov-[A-Za-z0-9]{1,64}$/) });

export const providerListQuery = pageQuery.extend({
  q: z.string().max(255).optional(),
  "filter[registry_name]": z.string().max(16).optional(),
  "filter[organization_name]": z.string().max(255).optional(),
  include: z.string().max(200).optional(),
});
export const providerReadQuery = z.object({ include: z.string().max(200).optional() });

const untyped = (type: string) => z.union([z.literal(type), z.literal("")]).optional();

export const providerCreateBody = z
  .object({
    data: z.object({
      type: z.literal("registry-providers"),
      attributes: z.object({ name: z.string().max(255).optional(), namespace: z.string().max(255).optional(), "registry-name": z.string().max(16).optional() }),
    }),
  })
  .openapi("RegistryProviderCreate");

export const providerUpdateBody = z
  .object({
    data: z.object({
      type: untyped("registry-providers"),
      relationships: z.object({ "tag-bindings": z.object({ data: z.array(tagBindingInput).max(100) }).optional() }).optional(),
    }),
  })
  .openapi("RegistryProviderUpdate");

export const providerVersionCreateBody = z
  .object({
    data: z.object({
      type: untyped("registry-provider-versions"),
      attributes: z.object({
        version: z.string().max(255).optional(),
        "key-id": z.string().max(255).optional(),
        protocols: z.array(z.string().max(16)).max(16).nullable().optional(),
      }),
    }),
  })
  .openapi("RegistryProviderVersionCreate");

export const platformCreateBody = z
  .object({
    data: z.object({
      type: untyped("registry-provider-platforms"),
      attributes: z.object({
        os: z.string().max(255).optional(),
        arch: z.string().max(255).optional(),
        shasum: z.string().max(255).optional(),
        filename: z.string().max(512).optional(),
      }),
    }),
  })
  .openapi("RegistryProviderPlatformCreate");

export const registryProviderResource = resourceSchema("RegistryProvider", "registry-providers", {
  name: attr.string,
  namespace: attr.string,
  "registry-name": attr.string,
  permissions: attr.permissions,
  "created-at": attr.time,
  "updated-at": attr.time,
});

export const registryProviderVersionResource = resourceSchema("RegistryProviderVersion", "registry-provider-versions", {
  version: attr.string,
  "key-id": attr.string,
  protocols: attr.strings,
  "shasums-uploaded": attr.boolean,
  "shasums-sig-uploaded": attr.boolean,
  permissions: attr.permissions,
  "created-at": attr.time,
  "updated-at": attr.time,
});

export const registryProviderPlatformResource = resourceSchema("RegistryProviderPlatform", "registry-provider-platforms", {
  os: attr.string,
  arch: attr.string,
  filename: attr.string,
  shasum: attr.string,
  "provider-binary-uploaded": attr.boolean,
  permissions: attr.permissions,
});

// ---- GPG keys (/api/registry/{registry_name}/v2/gpg-keys) ----

export const gpgRegistryParam = z.object({ registry_name: z.literal("private") });
export const gpgKeyParams = gpgRegistryParam.extend({ namespace: segment, key_id: segment });
export const gpgListQuery = pageQuery.extend({ "filter[namespace]": z.string().max(2000).optional() });

export const gpgKeyCreateBody = z
  .object({
    data: z.object({
      type: z.literal("gpg-keys"),
      attributes: z.object({
        namespace: z.string().max(255).optional(),
        "ascii-armor": z
          .string()
          .max(64 * 1024)
          .optional(),
      }),
    }),
  })
  .openapi("GpgKeyCreate");

export const gpgKeyUpdateBody = z
  .object({ data: z.object({ type: z.literal("gpg-keys"), attributes: z.object({ namespace: z.string().max(255).optional() }) }) })
  .openapi("GpgKeyUpdate");

export const gpgKeyResource = resourceSchema("GpgKey", "gpg-keys", {
  "ascii-armor": attr.string,
  "created-at": attr.time,
  "key-id": attr.string,
  namespace: attr.string,
  source: attr.string,
  "source-url": attr.nullableString,
  "trust-signature": attr.string,
  "updated-at": attr.time,
});
