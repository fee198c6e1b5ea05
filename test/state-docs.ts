// Terraform state documents for tests: a version 4 state with the fields a test cares about, and the envelope
// OpenTofu uploads when it encrypts its state (not a state the service can read).

export const NULL_PROVIDER = 'provider["registry.terraform.io/hashicorp/null"]';

/** A version 4 Terraform state, serialised; what is not given is empty (serial 1, lineage "abc", Terraform 1.9.0). */
export function stateDoc(
  fields: { serial?: number; lineage?: string; terraformVersion?: string; outputs?: Record<string, unknown>; resources?: unknown[] } = {},
): string {
  return JSON.stringify({
    version: 4,
    terraform_version: fields.terraformVersion ?? "1.9.0",
    serial: fields.serial ?? 1,
    lineage: fields.lineage ?? "abc",
    outputs: fields.outputs ?? {},
    resources: fields.resources ?? [],
  });
}

/** The outputs `url` (plain) and `secret` (sensitive), both strings. */
export const urlAndSecret = (url: string, secret: string) => ({
  url: { value: url, type: "string" },
  secret: { value: secret, type: "string", sensitive: true },
});

/** A null_resource `a` with the given instances. */
export const nullResource = (instances: unknown[]) => ({ mode: "managed", type: "null_resource", name: "a", provider: NULL_PROVIDER, instances });

/** What OpenTofu uploads as the raw state with `encryption { state { method = aes_gcm } }` (pbkdf2 key provider). */
export const tofuEnvelope = (fields: { serial: number; lineage: string; key: string; data: string }): string =>
  JSON.stringify({
    serial: fields.serial,
    lineage: fields.lineage,
    meta: { "key_provider.pbkdf2.k": fields.key },
    encrypted_data: fields.data,
    encryption_version: "v0",
  });
