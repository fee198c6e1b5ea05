/**
 * Request and response schemas of registry modules and their versions (HCP Terraform API docs: Registry Modules).
 * Names, providers and versions are checked by the service (./registry.rules.ts) for the real texts and pointers.
 */
import { z } from "@hono/zod-openapi";
import { attr, orgParam, pageQuery, resourceSchema } from "../jsonapi/schemas";
import { registryEntryParams, segment, tagBindingInput } from "./registry.schemas";

export const moduleParams = registryEntryParams.extend({ provider: segment });
export const moduleVersionParams = moduleParams.extend({ version: segment });
/** The deprecated `/registry-modules/…` paths, which name the organisation (the namespace of its private modules). */
export const legacyModuleParams = orgParam.extend({ name: segment, provider: segment });
export const moduleIdParam = z.object({ module_id: z.string().regex(/^mod-[A-Za-z0-9]{1,64}$/) });

export const moduleListQuery = pageQuery.extend({
  q: z.string().max(255).optional(),
  "filter[provider]": z.string().max(128).optional(),
  "filter[registry_name]": z.string().max(16).optional(),
  "filter[organization_name]": z.string().max(255).optional(),
  include: z.string().max(200).optional(),
});

export const moduleCreateBody = z
  .object({
    data: z.object({
      type: z.literal("registry-modules"),
      attributes: z.object({
        name: z.string().max(255).optional(),
        provider: z.string().max(255).optional(),
        "registry-name": z.string().max(16).optional(),
        namespace: z.string().max(255).optional(),
        "no-code": z.boolean().optional(),
      }),
    }),
  })
  .openapi("RegistryModuleCreate");

export const moduleUpdateBody = z
  .object({
    data: z.object({
      type: z.literal("registry-modules"),
      attributes: z
        .object({
          "no-code": z.boolean().optional(),
          "test-config": z.unknown().optional(),
          "vcs-repo": z.unknown().optional(),
        })
        .optional(),
      relationships: z.object({ "tag-bindings": z.object({ data: z.array(tagBindingInput).max(100) }).optional() }).optional(),
    }),
  })
  .openapi("RegistryModuleUpdate");

export const moduleVersionCreateBody = z
  .object({
    data: z.object({
      type: z.literal("registry-module-versions"),
      attributes: z.object({ version: z.string().max(255).optional(), "commit-sha": z.string().max(255).nullable().optional() }),
    }),
  })
  .openapi("RegistryModuleVersionCreate");

export const moduleVersionQuery = z.object({ module_version: z.string().max(128) });

export const registryModuleResource = resourceSchema("RegistryModule", "registry-modules", {
  name: attr.string,
  namespace: attr.string,
  provider: attr.string,
  "registry-name": attr.string,
  status: attr.string,
  "version-statuses": z.array(z.object({ version: z.string(), status: z.string(), error: z.string().optional() })),
  "version-tags": z.array(z.object({ version: z.string(), tag: z.string() })),
  "no-code": attr.boolean,
  permissions: attr.permissions,
  "created-at": attr.time,
  "updated-at": attr.time,
});

export const registryModuleVersionResource = resourceSchema("RegistryModuleVersion", "registry-module-versions", {
  source: attr.string,
  status: attr.string,
  version: attr.string,
  error: attr.nullableString,
  "commit-sha": attr.nullableString,
  "created-at": attr.time,
  "updated-at": attr.time,
});
