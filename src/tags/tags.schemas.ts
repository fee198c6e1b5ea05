/** Response schemas of organisation tags, tag bindings and reserved tag keys (./tags.serialize.ts). */
import { attr, resourceSchema } from "../jsonapi/schemas";

export const tagResource = resourceSchema("Tag", "tags", {
  name: attr.string,
  "created-at": attr.time,
  "instance-count": attr.int,
});

/** A direct binding; `value` is "" for a key-only one. */
export const tagBindingResource = resourceSchema("TagBinding", "tag-bindings", {
  key: attr.string,
  value: attr.string,
  "created-at": attr.time,
});

/** An effective binding: a direct one, or one inherited from the project (`links.inherited-from`). */
export const effectiveTagBindingResource = resourceSchema("EffectiveTagBinding", "effective-tag-bindings", {
  key: attr.string,
  value: attr.string,
});

export const reservedTagKeyResource = resourceSchema("ReservedTagKey", "reserved-tag-keys", {
  key: attr.string,
  "disable-overrides": attr.boolean,
  "is-registry-tag": attr.boolean,
  "created-at": attr.time,
  "updated-at": attr.time,
});
