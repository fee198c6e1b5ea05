/** The configuration versions of one workspace, inside its Durable Object (docs/runs.md). */

/** Schema 9: the configuration version tables. */
export function migrateConfigurationVersions(_sql: SqlStorage): void {}
