/** Response schemas of state versions, their outputs and the workspace's resources (./state-versions.serialize.ts). */
import { z } from "@hono/zod-openapi";
import { attr, resourceSchema } from "../jsonapi/schemas";

export const stateVersionResource = resourceSchema("StateVersion", "state-versions", {
  "created-at": attr.time,
  size: attr.int,
  serial: attr.int,
  lineage: attr.nullableString,
  status: z.enum(["pending", "finalized", "discarded"]),
  intermediate: attr.boolean,
  "state-version": attr.int,
  "terraform-version": attr.nullableString,
  "resources-processed": attr.boolean,
  resources: z.array(z.object({ name: z.string(), type: z.string(), count: z.number().int(), module: z.string(), provider: z.string() })),
  providers: z.record(z.string(), attr.json),
  modules: z.record(z.string(), attr.json),
  // Signed URLs of the state's bodies, each only while it may be used.
  "hosted-state-download-url": attr.nullableString,
  "hosted-state-upload-url": attr.nullableString,
  "hosted-json-state-download-url": attr.nullableString,
  "hosted-json-state-upload-url": attr.nullableString,
  "vcs-commit-sha": attr.nullableString,
  "vcs-commit-url": attr.nullableString,
});

/** `output-type` is the real service's `type` attribute, which JSON:API reserves; a hidden sensitive value is null. */
export const stateVersionOutputResource = resourceSchema("StateVersionOutput", "state-version-outputs", {
  name: attr.string,
  sensitive: attr.boolean,
  "output-type": attr.string,
  "detailed-type": attr.json,
  value: attr.json,
});

/** A managed resource instance of the workspace's current state. */
export const stateResource = resourceSchema("StateResource", "resources", {
  address: attr.string,
  name: attr.string,
  "created-at": attr.time,
  "updated-at": attr.time,
  module: attr.string,
  provider: attr.string,
  "provider-type": attr.string,
  "modified-by-state-version-id": attr.string,
  "name-index": attr.nullableString,
});
