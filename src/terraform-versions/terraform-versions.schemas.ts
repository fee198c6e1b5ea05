/** Schemas of the site-admin Terraform versions API (Terraform Enterprise's /api/v2/admin/terraform-versions). */
import { z } from "@hono/zod-openapi";
import { attr, resourceSchema } from "../jsonapi/schemas";

const arch = z.object({
  url: z.string().max(2048),
  sha: z.string().max(128),
  os: z.string().max(32),
  arch: z.string().max(32),
});

export const terraformVersionResource = resourceSchema("TerraformVersion", "terraform-versions", {
  version: attr.string,
  url: attr.string,
  sha: attr.string,
  deprecated: attr.boolean,
  "deprecated-reason": attr.nullableString,
  official: attr.boolean,
  enabled: attr.boolean,
  beta: attr.boolean,
  usage: attr.int,
  "created-at": attr.time,
  archs: z.array(arch),
});

const attributes = z.object({
  version: z.string().max(128).optional(),
  url: z.string().max(2048).optional(),
  sha: z.string().max(128).optional(),
  official: z.boolean().optional(),
  enabled: z.boolean().optional(),
  beta: z.boolean().optional(),
  deprecated: z.boolean().optional(),
  "deprecated-reason": z.string().max(1024).nullable().optional(),
  archs: z.array(arch).max(8).optional(),
});
export type VersionAttributes = z.infer<typeof attributes>;

export const versionCreateBody = z.object({ data: z.object({ type: z.literal("terraform-versions"), attributes }) }).openapi("TerraformVersionCreate");
export const versionUpdateBody = z
  .object({ data: z.object({ type: z.literal("terraform-versions"), attributes: attributes.optional() }) })
  .openapi("TerraformVersionUpdate");

export const versionIdParam = z.object({ version_id: z.string().min(1).max(64) });
