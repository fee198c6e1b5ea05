/** The reserved tag key resource. */
import type { Resource } from "../jsonapi/document";
import type { ReservedTagKey } from "./reserved-tag-keys.d1";

export function serializeReservedTagKey(r: ReservedTagKey): Resource {
  return {
    id: r.id,
    type: "reserved-tag-keys",
    attributes: {
      key: r.key,
      "disable-overrides": r.disableOverrides,
      // Registry environment tags are a hosted-registry feature this service does not have.
      "is-registry-tag": false,
      "created-at": r.createdAt,
      "updated-at": r.updatedAt,
    },
  };
}
