/** Response schema of SSH keys: the key's name only (its value is write-only). */
import { attr, resourceSchema } from "../jsonapi/schemas";

export const sshKeyResource = resourceSchema("SshKey", "ssh-keys", { name: attr.string });
