/**
 * GPG keys of the private registry (HCP Terraform API docs: GPG Keys): a key is added to a namespace (an organisation
 * the caller manages providers in), and signs that organisation's provider versions; members read them.
 */
import { requireOrgAccess } from "../auth/access";
import { allows, authorize } from "../auth/requirements";
import type { Caller } from "../caller";
import { ApiError } from "../errors";
import { newId, nowIso } from "../ids";
import { deleteGpgKey, findGpgKey, type GpgKey, insertGpgKey, listGpgKeys, moveGpgKey } from "./gpg-keys.d1";
import { publicKeyId } from "./gpg-keys.openpgp";
import { namespaceAccess } from "./registry-providers.service";

const invalid = (detail: string, attribute: string) => ApiError.of("invalid_attribute", { detail, pointer: `/data/attributes/${attribute}` });

export async function listKeys(caller: Caller, namespaces: string[], page: { number: number; size: number }): Promise<{ items: GpgKey[]; total: number }> {
  if (namespaces.length === 0) throw ApiError.of("bad_request", { detail: "filter[namespace] is required", parameter: "filter[namespace]" });
  // One namespace per page (several: the first, as the real service answers); each must be one the caller stands in.
  const accesses = [];
  for (const ns of namespaces) accesses.push(await requireOrgAccess(caller, { name: ns }));
  return listGpgKeys(caller.near, accesses[0].organization.externalId, page);
}

export async function addKey(caller: Caller, input: { namespace?: string; asciiArmor?: string }): Promise<GpgKey> {
  if (!input.namespace) throw invalid("Namespace can't be blank", "namespace");
  const access = await requireOrgAccess(caller, { name: input.namespace });
  authorize(caller, "registry-providers.manage", { access });
  if (!input.asciiArmor) throw invalid("ASCII armor can't be blank", "ascii-armor");
  const keyId = await publicKeyId(input.asciiArmor);
  if (!keyId) throw invalid("ASCII armor is not an ASCII-armored OpenPGP public key", "ascii-armor");
  const at = nowIso();
  const key = { id: newId("gpgkey"), organizationId: access.organization.externalId, keyId, asciiArmor: input.asciiArmor, createdAt: at, updatedAt: at };
  if (!(await insertGpgKey(caller.db, key))) throw invalid(`Key ${keyId} has already been added to this namespace`, "ascii-armor");
  return { ...key, namespace: access.organization.name };
}

async function loadKey(caller: Caller, namespace: string, keyId: string) {
  const access = await requireOrgAccess(caller, { name: namespace });
  const key = await findGpgKey(caller.db, access.organization.externalId, keyId);
  if (!key) throw ApiError.of("not_found");
  return { access, key };
}

export async function showKey(caller: Caller, namespace: string, keyId: string): Promise<GpgKey> {
  return (await loadKey(caller, namespace, keyId)).key;
}

/** Moves a key to another namespace: the caller must manage providers in both (go-tfe matches "namespace not authorized"). */
export async function updateKey(caller: Caller, namespace: string, keyId: string, input: { namespace?: string }): Promise<GpgKey> {
  const { access, key } = await loadKey(caller, namespace, keyId);
  authorize(caller, "registry-providers.manage", { access });
  if (!input.namespace || input.namespace === key.namespace) return key;
  const target = await namespaceAccess(caller, input.namespace);
  if (!target || !allows(caller.principal, "registry-providers.manage", { access: target })) throw ApiError.of("namespace_not_authorized");
  const at = nowIso();
  if (!(await moveGpgKey(caller.db, key.id, target.organization.externalId, at))) {
    throw invalid(`Key ${key.keyId} has already been added to namespace ${target.organization.name}`, "namespace");
  }
  return { ...key, organizationId: target.organization.externalId, namespace: target.organization.name, updatedAt: at };
}

export async function removeKey(caller: Caller, namespace: string, keyId: string): Promise<void> {
  const { access, key } = await loadKey(caller, namespace, keyId);
  authorize(caller, "registry-providers.manage", { access });
  await deleteGpgKey(caller.db, key.id);
}
