/** The SSH key resource: its name only (the key value is write-only). */
import type { Resource } from "../jsonapi/document";
import type { SshKey } from "./ssh-keys.d1";

export const serializeSshKey = (k: SshKey): Resource => ({
  id: k.id,
  type: "ssh-keys",
  attributes: { name: k.name },
  links: { self: `/api/v2/ssh-keys/${k.id}` },
});
