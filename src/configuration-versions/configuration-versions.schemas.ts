/** Request and response schemas of configuration versions (HCP Terraform API docs: Configuration Versions). */
import { z } from "@hono/zod-openapi";
import { attr, resourceSchema } from "../jsonapi/schemas";

export const cvIdParam = z.object({ configuration_version_id: z.string().regex(/^cv-[A-Za-z0-9]{1,64}$/) });

export const cvCreateBody = z
  .object({
    data: z.object({
      type: z.literal("configuration-versions"),
      attributes: z
        .object({
          "auto-queue-runs": z.boolean().optional(),
          speculative: z.boolean().optional(),
          provisional: z.boolean().optional(),
        })
        .optional(),
    }),
  })
  .openapi("ConfigurationVersionCreate");
export type CvCreateAttributes = NonNullable<z.infer<typeof cvCreateBody>["data"]["attributes"]>;

export const configurationVersionResource = resourceSchema("ConfigurationVersion", "configuration-versions", {
  "auto-queue-runs": attr.boolean,
  error: attr.nullableString,
  "error-message": attr.nullableString,
  source: attr.string,
  speculative: attr.boolean,
  provisional: attr.boolean,
  status: z.enum(["pending", "uploaded", "errored", "archived"]),
  "status-timestamps": z.record(z.string(), z.string()),
  /** Only in the response to the create: a signed absolute URL taking the archive by PUT, without a token. */
  "upload-url": attr.string.optional(),
});

export const ingressAttributesResource = resourceSchema("IngressAttributes", "ingress-attributes", {
  branch: attr.nullableString,
  "clone-url": attr.nullableString,
  "commit-message": attr.nullableString,
  "commit-sha": attr.string,
  "commit-url": attr.nullableString,
  "compare-url": attr.nullableString,
  identifier: attr.string,
  "is-pull-request": attr.boolean,
  "on-default-branch": attr.boolean,
  "pull-request-number": attr.nullableInt,
  "pull-request-url": attr.nullableString,
  "pull-request-title": attr.nullableString,
  "pull-request-body": attr.nullableString,
  tag: attr.nullableString,
  "sender-username": attr.nullableString,
  "sender-avatar-url": attr.nullableString,
  "sender-html-url": attr.nullableString,
});
