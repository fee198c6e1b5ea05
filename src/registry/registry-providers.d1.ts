/** D1 statements of registry providers, their versions and platforms (migration 0032). */
import type { Db } from "../caller";
import { offsetOf, pageWithTotal } from "../platform/paging";
import { appendTo, textMatchSql } from "../platform/text-match";
import { type RegistryEntry, type RegistryEntryRow, storedNamespace, toEntry } from "./registry.d1";
import { compareVersions, type RegistryName } from "./registry.rules";

interface ProviderRow extends RegistryEntryRow {
  version_ids: string;
}

export interface RegistryProvider extends RegistryEntry {
  versionIds: string[];
}

function toProvider(row: ProviderRow): RegistryProvider {
  return { ...toEntry(row), versionIds: JSON.parse(row.version_ids ?? "[]") as string[] };
}

const PROVIDER_SELECT = `SELECT p.*, o.name AS organization_name,
  (SELECT json_group_array(v.id) FROM registry_provider_versions v WHERE v.provider_id = p.id) AS version_ids
FROM registry_providers p JOIN organizations o ON o.external_id = p.organization_id`;

export interface ProviderKey {
  organizationId: string;
  registryName: RegistryName;
  namespace: string;
  name: string;
}

export async function findProvider(db: Db, k: ProviderKey): Promise<RegistryProvider | null> {
  const row = await db
    .prepare(`${PROVIDER_SELECT} WHERE p.organization_id = ? AND p.registry_name = ? AND p.namespace = ? AND p.name = ?`)
    .bind(k.organizationId, k.registryName, storedNamespace(k), k.name)
    .first<ProviderRow>();
  return row ? toProvider(row) : null;
}

export async function findProviderById(db: Db, id: string): Promise<RegistryProvider | null> {
  const row = await db.prepare(`${PROVIDER_SELECT} WHERE p.id = ?`).bind(id).first<ProviderRow>();
  return row ? toProvider(row) : null;
}

export async function listProviders(
  db: Db,
  organizationId: string,
  f: { q?: string; registryName?: string },
  page: { number: number; size: number },
): Promise<{ items: RegistryProvider[]; total: number }> {
  const binds: unknown[] = [organizationId];
  const where = ["p.organization_id = ?"];
  if (f.registryName !== undefined) {
    where.push("p.registry_name = ?");
    binds.push(f.registryName);
  }
  if (f.q) where.push(textMatchSql("p.name", f.q, "contains", appendTo(binds)));
  const cond = where.join(" AND ");
  const { rows, total } = await pageWithTotal<ProviderRow>(
    db,
    db.prepare(`${PROVIDER_SELECT} WHERE ${cond} ORDER BY p.name, p.registry_name, p.namespace LIMIT ? OFFSET ?`).bind(...binds, page.size, offsetOf(page)),
    db.prepare(`SELECT count(*) AS n FROM registry_providers p WHERE ${cond}`).bind(...binds),
  );
  return { items: rows.map(toProvider), total };
}

export async function insertProvider(db: Db, p: Omit<RegistryProvider, "organizationName" | "versionIds">): Promise<boolean> {
  const res = await db
    .prepare(
      `INSERT INTO registry_providers (id, organization_id, registry_name, namespace, name, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    )
    .bind(p.id, p.organizationId, p.registryName, storedNamespace(p), p.name, p.createdAt, p.updatedAt)
    .run();
  return res.meta.changes > 0;
}

/** Deletes a provider (its versions and platforms go with it: migration 0032's triggers); false if it was gone. */
export async function deleteProvider(db: Db, id: string): Promise<boolean> {
  return (await db.prepare("DELETE FROM registry_providers WHERE id = ?").bind(id).run()).meta.changes > 0;
}

// ---- versions ----

interface VersionRow {
  id: string;
  provider_id: string;
  version: string;
  key_id: string;
  protocols: string;
  shasums_key: string | null;
  shasums_sig_key: string | null;
  created_at: string;
  updated_at: string;
  platform_ids: string;
}

export interface ProviderVersion {
  id: string;
  providerId: string;
  version: string;
  keyId: string;
  protocols: string[];
  shasumsKey: string | null;
  shasumsSigKey: string | null;
  createdAt: string;
  updatedAt: string;
  platformIds: string[];
}

function toVersion(row: VersionRow): ProviderVersion {
  return {
    id: row.id,
    providerId: row.provider_id,
    version: row.version,
    keyId: row.key_id,
    protocols: JSON.parse(row.protocols) as string[],
    shasumsKey: row.shasums_key,
    shasumsSigKey: row.shasums_sig_key,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    platformIds: JSON.parse(row.platform_ids ?? "[]") as string[],
  };
}

const VERSION_SELECT = `SELECT v.*, (SELECT json_group_array(pl.id) FROM registry_provider_platforms pl WHERE pl.version_id = v.id) AS platform_ids
FROM registry_provider_versions v`;

export async function insertProviderVersion(db: Db, v: Omit<ProviderVersion, "platformIds">): Promise<boolean> {
  const res = await db
    .prepare(
      `INSERT INTO registry_provider_versions (id, provider_id, version, key_id, protocols, shasums_key, shasums_sig_key, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, NULL, NULL, ?, ?) ON CONFLICT DO NOTHING`,
    )
    .bind(v.id, v.providerId, v.version, v.keyId, JSON.stringify(v.protocols), v.createdAt, v.updatedAt)
    .run();
  return res.meta.changes > 0;
}

export async function findProviderVersion(db: Db, providerId: string, version: string): Promise<ProviderVersion | null> {
  const row = await db.prepare(`${VERSION_SELECT} WHERE v.provider_id = ? AND v.version = ?`).bind(providerId, version).first<VersionRow>();
  return row ? toVersion(row) : null;
}

export async function findProviderVersionById(db: Db, id: string): Promise<ProviderVersion | null> {
  const row = await db.prepare(`${VERSION_SELECT} WHERE v.id = ?`).bind(id).first<VersionRow>();
  return row ? toVersion(row) : null;
}

/** A provider's versions, newest first. */
export async function listProviderVersions(db: Db, providerId: string): Promise<ProviderVersion[]> {
  const rows = await db.prepare(`${VERSION_SELECT} WHERE v.provider_id = ?`).bind(providerId).all<VersionRow>();
  return rows.results.map(toVersion).sort((a, b) => compareVersions(b.version, a.version));
}

/** The versions with these ids (a provider's `include`). */
export async function providerVersionsByIds(db: Db, ids: string[]): Promise<ProviderVersion[]> {
  if (ids.length === 0) return [];
  const rows = await db.prepare(`${VERSION_SELECT} WHERE v.id IN (SELECT value FROM json_each(?))`).bind(JSON.stringify(ids)).all<VersionRow>();
  return rows.results.map(toVersion).sort((a, b) => compareVersions(b.version, a.version));
}

/** Points a version's checksums or signature at a new object; answers the key it replaced, or undefined if the version is gone. */
export async function setVersionObject(db: Db, id: string, which: "shasums" | "shasums-sig", key: string, at: string): Promise<string | null | undefined> {
  const column = which === "shasums" ? "shasums_key" : "shasums_sig_key";
  const [before, update] = await db.batch([
    db.prepare(`SELECT ${column} AS k FROM registry_provider_versions WHERE id = ?`).bind(id),
    db.prepare(`UPDATE registry_provider_versions SET ${column} = ?, updated_at = ? WHERE id = ?`).bind(key, at, id),
  ]);
  if (update.meta.changes === 0) return undefined;
  return (before.results[0] as { k: string | null } | undefined)?.k ?? null;
}

export async function deleteProviderVersion(db: Db, id: string): Promise<boolean> {
  return (await db.prepare("DELETE FROM registry_provider_versions WHERE id = ?").bind(id).run()).meta.changes > 0;
}

// ---- platforms ----

interface PlatformRow {
  id: string;
  version_id: string;
  os: string;
  arch: string;
  filename: string;
  shasum: string;
  binary_key: string | null;
  created_at: string;
  updated_at: string;
}

export interface ProviderPlatform {
  id: string;
  versionId: string;
  os: string;
  arch: string;
  filename: string;
  shasum: string;
  binaryKey: string | null;
  createdAt: string;
  updatedAt: string;
}

function toPlatform(row: PlatformRow): ProviderPlatform {
  return {
    id: row.id,
    versionId: row.version_id,
    os: row.os,
    arch: row.arch,
    filename: row.filename,
    shasum: row.shasum,
    binaryKey: row.binary_key,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export async function insertPlatform(db: Db, p: ProviderPlatform): Promise<boolean> {
  const res = await db
    .prepare(
      `INSERT INTO registry_provider_platforms (id, version_id, os, arch, filename, shasum, binary_key, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?) ON CONFLICT DO NOTHING`,
    )
    .bind(p.id, p.versionId, p.os, p.arch, p.filename, p.shasum, p.createdAt, p.updatedAt)
    .run();
  return res.meta.changes > 0;
}

export async function findPlatform(db: Db, versionId: string, os: string, arch: string): Promise<ProviderPlatform | null> {
  const row = await db
    .prepare("SELECT * FROM registry_provider_platforms WHERE version_id = ? AND os = ? AND arch = ?")
    .bind(versionId, os, arch)
    .first<PlatformRow>();
  return row ? toPlatform(row) : null;
}

export async function findPlatformById(db: Db, id: string): Promise<ProviderPlatform | null> {
  const row = await db.prepare("SELECT * FROM registry_provider_platforms WHERE id = ?").bind(id).first<PlatformRow>();
  return row ? toPlatform(row) : null;
}

/** The platforms of these versions, by os and arch. */
export async function listPlatforms(db: Db, versionIds: string[]): Promise<ProviderPlatform[]> {
  if (versionIds.length === 0) return [];
  const rows = await db
    .prepare("SELECT * FROM registry_provider_platforms WHERE version_id IN (SELECT value FROM json_each(?)) ORDER BY os, arch")
    .bind(JSON.stringify(versionIds))
    .all<PlatformRow>();
  return rows.results.map(toPlatform);
}

export async function setPlatformBinary(db: Db, id: string, key: string, at: string): Promise<string | null | undefined> {
  const [before, update] = await db.batch([
    db.prepare("SELECT binary_key AS k FROM registry_provider_platforms WHERE id = ?").bind(id),
    db.prepare("UPDATE registry_provider_platforms SET binary_key = ?, updated_at = ? WHERE id = ?").bind(key, at, id),
  ]);
  if (update.meta.changes === 0) return undefined;
  return (before.results[0] as { k: string | null } | undefined)?.k ?? null;
}

export async function deletePlatform(db: Db, id: string): Promise<boolean> {
  return (await db.prepare("DELETE FROM registry_provider_platforms WHERE id = ?").bind(id).run()).meta.changes > 0;
}

/** Every object key under a provider, or under one of its versions (removed from R2 once the rows are gone). */
export async function providerObjectKeys(db: Db, scope: { providerId: string } | { versionId: string }): Promise<string[]> {
  const versions = "providerId" in scope ? "SELECT id FROM registry_provider_versions WHERE provider_id = ?1" : "SELECT ?1";
  const id = "providerId" in scope ? scope.providerId : scope.versionId;
  const rows = await db
    .prepare(
      `SELECT shasums_key AS k FROM registry_provider_versions WHERE id IN (${versions}) AND shasums_key IS NOT NULL
       UNION ALL SELECT shasums_sig_key FROM registry_provider_versions WHERE id IN (${versions}) AND shasums_sig_key IS NOT NULL
       UNION ALL SELECT binary_key FROM registry_provider_platforms WHERE version_id IN (${versions}) AND binary_key IS NOT NULL`,
    )
    .bind(id)
    .all<{ k: string }>();
  return rows.results.map((r) => r.k);
}
