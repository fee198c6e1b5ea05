/** D1 statements of registry modules, their versions and the tag bindings of modules and providers (migration 0032). */
import type { Db } from "../caller";
import { offsetOf, pageWithTotal } from "../platform/paging";
import { appendTo, textMatchSql } from "../platform/text-match";
import type { ModuleDetails } from "./module-config.parse";
import { type RegistryEntry, type RegistryEntryRow, storedNamespace, toEntry } from "./registry.d1";
import { compareVersions, type RegistryName } from "./registry.rules";

interface ModuleRow extends RegistryEntryRow {
  provider: string;
  version_statuses: string;
}

export interface VersionStatus {
  version: string;
  status: string;
  error: string | null;
}

export interface RegistryModule extends RegistryEntry {
  provider: string;
  /** Newest first. */
  versions: VersionStatus[];
}

function toModule(row: ModuleRow): RegistryModule {
  const versions = (JSON.parse(row.version_statuses ?? "[]") as VersionStatus[]).sort((a, b) => compareVersions(b.version, a.version));
  return { ...toEntry(row), provider: row.provider, versions };
}

const MODULE_SELECT = `SELECT m.*, o.name AS organization_name,
  (SELECT json_group_array(json_object('version', v.version, 'status', v.status, 'error', v.error))
     FROM registry_module_versions v WHERE v.module_id = m.id) AS version_statuses
FROM registry_modules m JOIN organizations o ON o.external_id = m.organization_id`;

/** How a request names a module: its organisation, registry, namespace ('' for private), name and provider. */
export interface ModuleKey {
  organizationId: string;
  registryName: RegistryName;
  namespace: string;
  name: string;
  provider: string;
}

export async function findModule(db: Db, k: ModuleKey): Promise<RegistryModule | null> {
  const row = await db
    .prepare(`${MODULE_SELECT} WHERE m.organization_id = ? AND m.registry_name = ? AND m.namespace = ? AND m.name = ? AND m.provider = ?`)
    .bind(k.organizationId, k.registryName, storedNamespace(k), k.name, k.provider)
    .first<ModuleRow>();
  return row ? toModule(row) : null;
}

export async function findModuleById(db: Db, id: string): Promise<RegistryModule | null> {
  const row = await db.prepare(`${MODULE_SELECT} WHERE m.id = ?`).bind(id).first<ModuleRow>();
  return row ? toModule(row) : null;
}

/** Every provider of a module name (a delete by name removes them all). */
export async function findModulesByName(db: Db, k: Omit<ModuleKey, "provider">): Promise<RegistryModule[]> {
  const rows = await db
    .prepare(`${MODULE_SELECT} WHERE m.organization_id = ? AND m.registry_name = ? AND m.namespace = ? AND m.name = ? ORDER BY m.provider`)
    .bind(k.organizationId, k.registryName, storedNamespace(k), k.name)
    .all<ModuleRow>();
  return rows.results.map(toModule);
}

/** Every module of a name in the organisation, private and public (the deprecated delete by name removes them all). */
export async function findModulesNamed(db: Db, organizationId: string, name: string): Promise<RegistryModule[]> {
  const rows = await db.prepare(`${MODULE_SELECT} WHERE m.organization_id = ? AND m.name = ?`).bind(organizationId, name).all<ModuleRow>();
  return rows.results.map(toModule);
}

export interface ModuleFilters {
  q?: string;
  provider?: string;
  registryName?: string;
}

/** A page of the organisation's modules (by name, then provider) and how many match in all. */
export async function listModules(db: Db, organizationId: string, f: ModuleFilters, page: { number: number; size: number }) {
  const binds: unknown[] = [organizationId];
  const where = ["m.organization_id = ?"];
  if (f.provider !== undefined) {
    where.push("m.provider = ?");
    binds.push(f.provider);
  }
  if (f.registryName !== undefined) {
    where.push("m.registry_name = ?");
    binds.push(f.registryName);
  }
  if (f.q) {
    const bind = appendTo(binds);
    const namespace = "CASE m.registry_name WHEN 'private' THEN o.name ELSE m.namespace END";
    where.push(
      `(${textMatchSql("m.name", f.q, "contains", bind)} OR ${textMatchSql("m.provider", f.q, "contains", bind)} OR ${textMatchSql(namespace, f.q, "contains", bind)})`,
    );
  }
  const cond = where.join(" AND ");
  const { rows, total } = await pageWithTotal<ModuleRow>(
    db,
    db
      .prepare(`${MODULE_SELECT} WHERE ${cond} ORDER BY m.name, m.provider, m.registry_name, m.namespace LIMIT ? OFFSET ?`)
      .bind(...binds, page.size, offsetOf(page)),
    db.prepare(`SELECT count(*) AS n FROM registry_modules m JOIN organizations o ON o.external_id = m.organization_id WHERE ${cond}`).bind(...binds),
  );
  return { items: rows.map(toModule), total };
}

/** Inserts the module; false when one of that name and provider exists in the registry already. */
export async function insertModule(db: Db, m: Omit<RegistryModule, "organizationName" | "versions">): Promise<boolean> {
  const res = await db
    .prepare(
      `INSERT INTO registry_modules (id, organization_id, registry_name, namespace, name, provider, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    )
    .bind(m.id, m.organizationId, m.registryName, storedNamespace(m), m.name, m.provider, m.createdAt, m.updatedAt)
    .run();
  return res.meta.changes > 0;
}

/** Deletes modules (their versions and tag bindings go with them: migration 0032's triggers). */
export async function deleteModules(db: Db, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await db
    .prepare(`DELETE FROM registry_modules WHERE id IN (${ids.map(() => "?").join(",")})`)
    .bind(...ids)
    .run();
}

// ---- versions ----

interface VersionRow {
  id: string;
  module_id: string;
  version: string;
  status: string;
  error: string | null;
  commit_sha: string | null;
  archive_key: string | null;
  archive_bytes: number | null;
  details: string | null;
  created_at: string;
  updated_at: string;
}

export interface ModuleVersion {
  id: string;
  moduleId: string;
  version: string;
  status: string;
  error: string | null;
  commitSha: string | null;
  archiveKey: string | null;
  archiveBytes: number | null;
  details: ModuleDetails | null;
  createdAt: string;
  updatedAt: string;
}

function toVersion(row: VersionRow): ModuleVersion {
  return {
    id: row.id,
    moduleId: row.module_id,
    version: row.version,
    status: row.status,
    error: row.error,
    commitSha: row.commit_sha,
    archiveKey: row.archive_key,
    archiveBytes: row.archive_bytes,
    details: row.details ? (JSON.parse(row.details) as ModuleDetails) : null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Inserts the version; false when the module has that version already. */
export async function insertModuleVersion(db: Db, v: ModuleVersion): Promise<boolean> {
  const res = await db
    .prepare(
      `INSERT INTO registry_module_versions (id, module_id, version, status, error, commit_sha, archive_key, archive_bytes, details, created_at, updated_at)
       VALUES (?, ?, ?, ?, NULL, ?, NULL, NULL, NULL, ?, ?) ON CONFLICT DO NOTHING`,
    )
    .bind(v.id, v.moduleId, v.version, v.status, v.commitSha, v.createdAt, v.updatedAt)
    .run();
  return res.meta.changes > 0;
}

export async function findModuleVersion(db: Db, moduleId: string, version: string): Promise<ModuleVersion | null> {
  const row = await db.prepare("SELECT * FROM registry_module_versions WHERE module_id = ? AND version = ?").bind(moduleId, version).first<VersionRow>();
  return row ? toVersion(row) : null;
}

export async function findModuleVersionById(db: Db, id: string): Promise<ModuleVersion | null> {
  const row = await db.prepare("SELECT * FROM registry_module_versions WHERE id = ?").bind(id).first<VersionRow>();
  return row ? toVersion(row) : null;
}

/** A module's versions, newest first. */
export async function listModuleVersions(db: Db, moduleId: string): Promise<ModuleVersion[]> {
  const rows = await db.prepare("SELECT * FROM registry_module_versions WHERE module_id = ?").bind(moduleId).all<VersionRow>();
  return rows.results.map(toVersion).sort((a, b) => compareVersions(b.version, a.version));
}

/**
 * Records an upload's outcome, if the version still exists: its archive (or none, when refused), status, error and
 * details, and the module's update time. Answers the archive key it replaced (null if none), or undefined when the
 * version is gone.
 */
export async function recordModuleUpload(
  db: Db,
  id: string,
  outcome: { status: string; error: string | null; archiveKey: string | null; archiveBytes: number | null; details: ModuleDetails | null; at: string },
): Promise<string | null | undefined> {
  const [before, update] = await db.batch([
    db.prepare("SELECT archive_key FROM registry_module_versions WHERE id = ?").bind(id),
    db
      .prepare(
        `UPDATE registry_module_versions SET status = ?, error = ?,
           archive_key = CASE WHEN ?3 IS NULL THEN archive_key ELSE ?3 END,
           archive_bytes = CASE WHEN ?3 IS NULL THEN archive_bytes ELSE ?4 END,
           details = CASE WHEN ?3 IS NULL THEN details ELSE ?5 END, updated_at = ?6
         WHERE id = ?7`,
      )
      .bind(outcome.status, outcome.error, outcome.archiveKey, outcome.archiveBytes, outcome.details ? JSON.stringify(outcome.details) : null, outcome.at, id),
    db.prepare("UPDATE registry_modules SET updated_at = ? WHERE id = (SELECT module_id FROM registry_module_versions WHERE id = ?)").bind(outcome.at, id),
  ]);
  if (update.meta.changes === 0) return undefined;
  return (before.results[0] as { archive_key: string | null } | undefined)?.archive_key ?? null;
}

export async function deleteModuleVersion(db: Db, id: string): Promise<void> {
  await db.prepare("DELETE FROM registry_module_versions WHERE id = ?").bind(id).run();
}

/** The archive keys of every version of these modules (removed from R2 once their rows are gone). */
export async function moduleArchiveKeys(db: Db, moduleIds: string[]): Promise<string[]> {
  if (moduleIds.length === 0) return [];
  const rows = await db
    .prepare(`SELECT archive_key FROM registry_module_versions WHERE archive_key IS NOT NULL AND module_id IN (${moduleIds.map(() => "?").join(",")})`)
    .bind(...moduleIds)
    .all<{ archive_key: string }>();
  return rows.results.map((r) => r.archive_key);
}

// ---- tag bindings of modules and providers ----

export interface RegistryTagBinding {
  id: string;
  key: string;
  value: string;
  createdAt: string;
}

export async function listRegistryTagBindings(db: Db, resourceId: string): Promise<RegistryTagBinding[]> {
  const rows = await db
    .prepare("SELECT id, key, value, created_at FROM registry_tag_bindings WHERE resource_id = ? ORDER BY key")
    .bind(resourceId)
    .all<{ id: string; key: string; value: string; created_at: string }>();
  return rows.results.map((r) => ({ id: r.id, key: r.key, value: r.value, createdAt: r.created_at }));
}

/** Replaces a resource's tag bindings with these (a binding whose key and value stay keeps its id). */
export async function replaceRegistryTagBindings(db: Db, resourceId: string, bindings: RegistryTagBinding[]): Promise<void> {
  const keys = bindings.map((b) => b.key);
  await db.batch([
    db
      .prepare(`DELETE FROM registry_tag_bindings WHERE resource_id = ? AND key NOT IN (SELECT value FROM json_each(?))`)
      .bind(resourceId, JSON.stringify(keys)),
    ...bindings.map((b) =>
      db
        .prepare(
          `INSERT INTO registry_tag_bindings (id, resource_id, key, value, created_at) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (resource_id, key) DO UPDATE SET value = excluded.value`,
        )
        .bind(b.id, resourceId, b.key, b.value, b.createdAt),
    ),
  ]);
}
