/** All SQL of Terraform versions (D1 `terraform_versions`, `terraform_versions_seen`, `terraform_versions_sync`: migration 0031). */
import type { Db } from "../caller";
import type { Page } from "../jsonapi/document";
import type { Arch, Candidate } from "./terraform-versions.rules";

interface VersionRow {
  id: string;
  version: string;
  sort_key: string;
  prerelease: number;
  url: string;
  sha: string;
  archs: string;
  official: number;
  enabled: number;
  beta: number;
  deprecated: number;
  deprecated_reason: string | null;
  shasums_url: string | null;
  shasums_signature_url: string | null;
  created_at: string;
}

export interface TerraformVersion {
  id: string;
  version: string;
  sortKey: string;
  prerelease: boolean;
  /** The linux/amd64 build's URL and SHA-256 ("" when `archs` has none). */
  url: string;
  sha: string;
  archs: Arch[];
  official: boolean;
  enabled: boolean;
  beta: boolean;
  deprecated: boolean;
  deprecatedReason: string | null;
  /** The release's SHA256SUMS and its signature (versions read from a releases index). */
  shasumsUrl: string | null;
  shasumsSignatureUrl: string | null;
  createdAt: string;
}

function toVersion(row: VersionRow): TerraformVersion {
  return {
    id: row.id,
    version: row.version,
    sortKey: row.sort_key,
    prerelease: row.prerelease === 1,
    url: row.url,
    sha: row.sha,
    archs: JSON.parse(row.archs) as Arch[],
    official: row.official === 1,
    enabled: row.enabled === 1,
    beta: row.beta === 1,
    deprecated: row.deprecated === 1,
    deprecatedReason: row.deprecated_reason,
    shasumsUrl: row.shasums_url,
    shasumsSignatureUrl: row.shasums_signature_url,
    createdAt: row.created_at,
  };
}

const COLUMNS =
  "id, version, sort_key, prerelease, url, sha, archs, official, enabled, beta, deprecated, deprecated_reason, shasums_url, shasums_signature_url, created_at";

const bind = (v: TerraformVersion) => [
  v.id,
  v.version,
  v.sortKey,
  v.prerelease ? 1 : 0,
  v.url,
  v.sha,
  JSON.stringify(v.archs),
  v.official ? 1 : 0,
  v.enabled ? 1 : 0,
  v.beta ? 1 : 0,
  v.deprecated ? 1 : 0,
  v.deprecatedReason,
  v.shasumsUrl,
  v.shasumsSignatureUrl,
  v.createdAt,
];

/** Inserts a version unless one of that number exists; answers whether it did. */
export async function insertVersion(db: Db, v: TerraformVersion): Promise<boolean> {
  const res = await db
    .prepare(
      `INSERT INTO terraform_versions (${COLUMNS}) VALUES (${COLUMNS.split(",")
        .map(() => "?")
        .join(", ")}) ON CONFLICT (version) DO NOTHING`,
    )
    .bind(...bind(v))
    .run();
  return (res.meta.changes ?? 0) > 0;
}

/** Writes every column of an existing version; false when another version already has its (new) number. */
export async function updateVersion(db: Db, v: TerraformVersion): Promise<boolean> {
  const res = await db
    .prepare(
      `UPDATE terraform_versions SET version = ?2, sort_key = ?3, prerelease = ?4, url = ?5, sha = ?6, archs = ?7, official = ?8, enabled = ?9,
       beta = ?10, deprecated = ?11, deprecated_reason = ?12, shasums_url = ?13, shasums_signature_url = ?14
       WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM terraform_versions WHERE version = ?2 AND id != ?1)`,
    )
    .bind(...bind(v).slice(0, 14))
    .run();
  return (res.meta.changes ?? 0) > 0;
}

export async function deleteVersion(db: Db, id: string): Promise<void> {
  await db.prepare("DELETE FROM terraform_versions WHERE id = ?").bind(id).run();
}

export async function findVersion(db: Db, id: string): Promise<TerraformVersion | null> {
  const row = await db.prepare(`SELECT ${COLUMNS} FROM terraform_versions WHERE id = ?`).bind(id).first<VersionRow>();
  return row ? toVersion(row) : null;
}

export async function findVersionByNumber(db: Db, version: string): Promise<TerraformVersion | null> {
  const row = await db.prepare(`SELECT ${COLUMNS} FROM terraform_versions WHERE version = ?`).bind(version).first<VersionRow>();
  return row ? toVersion(row) : null;
}

/**
 * One page of versions, newest first: `filter` an exact version (it wins over `search`), `search` a substring.
 */
export async function listVersions(db: Db, q: { filter?: string; search?: string }, page: Page): Promise<{ versions: TerraformVersion[]; total: number }> {
  const where = q.filter !== undefined ? "version = ?1" : q.search !== undefined ? "instr(version, ?1) > 0" : "?1 IS NULL";
  const arg = q.filter ?? q.search ?? null;
  const [rows, count] = await db.batch([
    db
      .prepare(`SELECT ${COLUMNS} FROM terraform_versions WHERE ${where} ORDER BY sort_key DESC, id LIMIT ?2 OFFSET ?3`)
      .bind(arg, page.size, (page.number - 1) * page.size),
    db.prepare(`SELECT count(*) AS n FROM terraform_versions WHERE ${where}`).bind(arg),
  ]);
  return {
    versions: ((rows?.results ?? []) as VersionRow[]).map(toVersion),
    total: ((count?.results?.[0] ?? { n: 0 }) as { n: number }).n,
  };
}

/** Every listed version as resolution reads it (numbers and flags only). */
export async function candidates(db: Db): Promise<Candidate[]> {
  const rows = await db
    .prepare("SELECT version, enabled, official, beta FROM terraform_versions")
    .all<{ version: string; enabled: number; official: number; beta: number }>();
  return rows.results.map((r) => ({ version: r.version, enabled: r.enabled === 1, official: r.official === 1, beta: r.beta === 1 }));
}

/**
 * How many workspaces name each of these versions as their `terraform-version` (exactly; constraints count for
 * none). Reads every workspace's index document: a site-admin read, not a hot path.
 */
export async function usageOf(db: Db, versions: string[]): Promise<Map<string, number>> {
  if (versions.length === 0) return new Map();
  const rows = await db
    .prepare(
      `SELECT json_extract(doc, '$.settings."engine-version"') AS v, count(*) AS n FROM workspaces
       WHERE json_extract(doc, '$.settings."engine-version"') IN (SELECT value FROM json_each(?)) GROUP BY v`,
    )
    .bind(JSON.stringify(versions))
    .all<{ v: string; n: number }>();
  return new Map(rows.results.map((r) => [r.v, r.n]));
}

// ---- the sync from a releases index ----

export interface SyncState {
  source: string;
  startedAt: string;
  succeededAt: string | null;
  error: string | null;
  /** Releases of the index still waiting for their SHA256SUMS (a sync reads a bounded number of them). */
  pending: number;
}

export async function syncState(db: Db): Promise<SyncState | null> {
  const row = await db
    .prepare("SELECT source, started_at, succeeded_at, error, pending FROM terraform_versions_sync WHERE id = 1")
    .first<{ source: string; started_at: string; succeeded_at: string | null; error: string | null; pending: number }>();
  return row ? { source: row.source, startedAt: row.started_at, succeededAt: row.succeeded_at, error: row.error, pending: row.pending } : null;
}

/**
 * Takes the sync's lease: true when no sync started since `staleBefore` (or the source changed), in one statement,
 * so two requests that both find the list stale start one sync between them.
 */
export async function claimSync(db: Db, source: string, now: string, staleBefore: string): Promise<boolean> {
  const res = await db
    .prepare(
      `INSERT INTO terraform_versions_sync (id, source, started_at) VALUES (1, ?1, ?2)
       ON CONFLICT (id) DO UPDATE SET source = ?1, started_at = ?2
       WHERE terraform_versions_sync.started_at < ?3 OR terraform_versions_sync.source != ?1`,
    )
    .bind(source, now, staleBefore)
    .run();
  return (res.meta.changes ?? 0) > 0;
}

/** `read`: the index was read (the sync succeeded, perhaps with some releases left for later). */
export async function endSync(db: Db, outcome: { at: string; read: boolean; error: string | null; pending: number }): Promise<void> {
  await db
    .prepare("UPDATE terraform_versions_sync SET succeeded_at = CASE WHEN ?1 THEN ?2 ELSE succeeded_at END, error = ?3, pending = ?4 WHERE id = 1")
    .bind(outcome.read ? 1 : 0, outcome.at, outcome.error, outcome.pending)
    .run();
}

/** The versions a sync ever added (an admin's delete does not make the next sync add it again). */
export async function seenVersions(db: Db): Promise<Set<string>> {
  const rows = await db.prepare("SELECT version FROM terraform_versions_seen").all<{ version: string }>();
  return new Set(rows.results.map((r) => r.version));
}

/** Adds versions read from the index, each once: a version already listed (an admin's) is left as it is. */
export async function addSynced(db: Db, versions: TerraformVersion[]): Promise<void> {
  if (versions.length === 0) return;
  const insert = db.prepare(
    `INSERT INTO terraform_versions (${COLUMNS}) VALUES (${COLUMNS.split(",")
      .map(() => "?")
      .join(", ")}) ON CONFLICT (version) DO NOTHING`,
  );
  const seen = db.prepare("INSERT INTO terraform_versions_seen (version) VALUES (?) ON CONFLICT (version) DO NOTHING");
  await db.batch(versions.flatMap((v) => [insert.bind(...bind(v)), seen.bind(v.version)]));
}
