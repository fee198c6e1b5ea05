/**
 * What the run engine needs of the workspace's configuration versions.
 *
 * TODO(configuration versions): the configuration-version store (src/configuration-versions/) owns these tables and
 * rules; once it exports its own lookups, replace these two functions by calls to them. Until then they read the
 * `configuration_versions` table of docs/runs.md (record JSON, seq) if it exists.
 */
import type { ConfigurationVersionRecord } from "../configuration-versions/configuration-versions.types";
import type { WorkspaceRecord } from "../workspaces/workspace.types";

function hasTable(sql: SqlStorage): boolean {
  return sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'configuration_versions'").toArray().length > 0;
}

function read(sql: SqlStorage, query: string, ...binds: string[]): ConfigurationVersionRecord | null {
  if (!hasTable(sql)) return null;
  const row = sql.exec<{ record: string }>(query, ...binds).toArray()[0];
  return row ? (JSON.parse(row.record) as ConfigurationVersionRecord) : null;
}

/** The configuration version a new run uses: the one named, else the workspace's latest. */
export function configurationVersionForRun(sql: SqlStorage, id: string | null): ConfigurationVersionRecord | null {
  return id === null
    ? read(sql, "SELECT record FROM configuration_versions ORDER BY seq DESC LIMIT 1")
    : read(sql, "SELECT record FROM configuration_versions WHERE id = ?", id);
}

/**
 * A run applied: a provisional configuration version becomes the workspace's current one, unless a newer version
 * exists (runs-notes: `provisional`).
 */
export function onConfigurationApplied(sql: SqlStorage, w: WorkspaceRecord, cvId: string): void {
  const cv = configurationVersionForRun(sql, cvId);
  if (!cv?.provisional) return;
  const newer = read(
    sql,
    "SELECT record FROM configuration_versions WHERE seq > (SELECT seq FROM configuration_versions WHERE id = ?) AND json_extract(record, '$.provisional') = 0 LIMIT 1",
    cvId,
  );
  if (!newer) w.currentConfigurationVersionId = cvId;
}
