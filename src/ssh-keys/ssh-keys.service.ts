/** SSH keys (HCP Terraform API docs: SSH Keys): who may see and manage them. */
import { authorize } from "../auth/requirements";
import { loadOwned, requireOrgAccess } from "../auth/access";
import type { Caller } from "../caller";
import { newId, nowIso } from "../ids";
import { deleteSshKey, findSshKey, insertSshKey, listSshKeys, renameSshKey, type SshKey } from "./ssh-keys.d1";

export async function createSshKey(caller: Caller, organization: string, name: string): Promise<SshKey> {
  const access = await requireOrgAccess(caller, { name: organization });
  // The real service refuses organisation tokens here.
  authorize(caller, "ssh-keys.create", { access });
  const key: SshKey = { id: newId("sshkey"), organizationId: access.organization.externalId, name, createdAt: nowIso() };
  await insertSshKey(caller.db, key);
  return key;
}

export async function listOrgSshKeys(caller: Caller, organization: string): Promise<SshKey[]> {
  const access = await requireOrgAccess(caller, { name: organization });
  return listSshKeys(caller.db, access.organization.externalId);
}

export async function showSshKey(caller: Caller, id: string): Promise<SshKey> {
  return (await loadOwned(caller, findSshKey, id)).item;
}

export async function updateSshKey(caller: Caller, id: string, name: string | undefined): Promise<SshKey> {
  const { item: key, access } = await loadOwned(caller, findSshKey, id);
  authorize(caller, "vcs.manage", { access });
  const next = { ...key, name: name ?? key.name };
  await renameSshKey(caller.db, key.id, next.name);
  return next;
}

export async function removeSshKey(caller: Caller, id: string): Promise<void> {
  const { item: key, access } = await loadOwned(caller, findSshKey, id);
  authorize(caller, "vcs.manage", { access });
  // No fan-out: workspaces still naming this key resolve it as unassigned when read.
  await deleteSshKey(caller.db, key.id);
}
