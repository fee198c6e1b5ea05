/** What the registry's module and provider tables share: an entry of an organisation's private or public registry. */
import type { RegistryName } from "./registry.rules";

/** The columns of an entry's row (with its organisation's name joined). */
export interface RegistryEntryRow {
  id: string;
  organization_id: string;
  organization_name: string;
  registry_name: string;
  namespace: string;
  name: string;
  created_at: string;
  updated_at: string;
}

export interface RegistryEntry {
  id: string;
  organizationId: string;
  organizationName: string;
  registryName: RegistryName;
  /** The organisation's name for a private entry. */
  namespace: string;
  name: string;
  createdAt: string;
  updatedAt: string;
}

export function toEntry(row: RegistryEntryRow): RegistryEntry {
  return {
    id: row.id,
    organizationId: row.organization_id,
    organizationName: row.organization_name,
    registryName: row.registry_name as RegistryName,
    namespace: row.registry_name === "private" ? row.organization_name : row.namespace,
    name: row.name,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The namespace as stored: '' for a private entry (its organisation's name is shown instead). */
export const storedNamespace = (k: { registryName: RegistryName; namespace: string }) => (k.registryName === "private" ? "" : k.namespace);
