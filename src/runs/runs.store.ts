/** The runs of one workspace, inside its Durable Object (docs/runs.md). */

/** Schema 9: the run tables. */
export function migrateRuns(_sql: SqlStorage): void {}
