/** A listed Terraform version → the admin API's `terraform-versions` resource. */
import type { Resource } from "../jsonapi/document";
import type { TerraformVersion } from "./terraform-versions.d1";

export function serializeTerraformVersion(v: TerraformVersion, usage: number): Resource {
  return {
    id: v.id,
    type: "terraform-versions",
    attributes: {
      version: v.version,
      url: v.url,
      sha: v.sha,
      deprecated: v.deprecated,
      "deprecated-reason": v.deprecated ? v.deprecatedReason : null,
      official: v.official,
      enabled: v.enabled,
      beta: v.beta,
      usage,
      "created-at": v.createdAt,
      archs: v.archs.map((a) => ({ url: a.url, sha: a.sha, os: a.os, arch: a.arch })),
    },
    links: { self: `/api/v2/admin/terraform-versions/${v.id}` },
  };
}
