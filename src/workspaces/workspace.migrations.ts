/**
 * The schema of the workspace's object. Each capability makes its own tables on first use, in their latest shape (a
 * `TableSet`, made by `ensure` in the synchronous section of its first write): a new workspace writes only its record's
 * table, and one that never had a run never holds the run tables. A store keeps its schema version in the record's row
 * (in `meta` before schema 14); the steps below bring a store written by earlier code up to SCHEMA_VERSION on the first
 * start after an upgrade (in the constructor, under `blockConcurrencyWhile`): a change to a table such a store already
 * holds, or to the data in it. A table set names the version that introduced it; it needs no step, since a store
 * without it makes it on first use.
 */
import { resealCvParts } from "../configuration-versions/configuration-versions.store";
import { currentKeyId } from "../platform/seal";
import { resealRunBlobs } from "../runs/logs.store";
import { migrateReparse, recount, resealStateVersions } from "../state-versions/state-versions.store";
import type { WorkspaceHost } from "./workspace.host";
import { upgradeRecord } from "./workspace.record";
import type { WorkspaceRecord } from "./workspace.types";

export const SCHEMA_VERSION = 14;

export interface TableSet {
  /** The schema version that introduced it (the store's history: nothing runs for it at start). */
  since: number;
  /** Its tables; the first says whether the set was made. */
  tables: readonly [string, ...string[]];
  /** Makes the tables in their latest shape. */
  create(sql: SqlStorage): void;
}

/** Per object (its SQL handle): the sets known to be made or not, read from the schema once per start. */
const made = new WeakMap<SqlStorage, Map<TableSet, boolean>>();

/** Whether the set's tables exist. Readers of a set not made yet answer as for an empty one; no read makes it. */
export function present(sql: SqlStorage, set: TableSet): boolean {
  const known = made.get(sql) ?? new Map<TableSet, boolean>();
  made.set(sql, known);
  let is = known.get(set);
  if (is === undefined) {
    is = sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", set.tables[0]).toArray().length > 0;
    known.set(set, is);
  }
  return is;
}

/** Makes the set's tables unless they exist (a write's first step); answers the SQL handle. */
export function ensure(sql: SqlStorage, set: TableSet): SqlStorage {
  if (!present(sql, set)) {
    set.create(sql);
    made.get(sql)!.set(set, true);
  }
  return sql;
}

// ---- the table sets, each owned by one capability ----

/**
 * The record's one row, made by the first commit (or name lease): the record, the name claims it settles, the schema
 * version of the store, and its outbox — `outbox` says what D1 lacks of the record ('upsert' or 'delete'; null once
 * D1 has it), `audit` the events of committed changes not yet in D1 (a JSON array). A commit rewrites only this row, so
 * a new workspace writes one table (before schema 14 the outbox and its events were tables of their own).
 */
export const RECORD_TABLES: TableSet = {
  since: 1,
  tables: ["workspace"],
  create(sql) {
    sql.exec(`CREATE TABLE IF NOT EXISTS workspace (
      singleton INTEGER PRIMARY KEY CHECK (singleton = 1), kind TEXT NOT NULL, record TEXT, disowned TEXT NOT NULL DEFAULT '{}',
      schema INTEGER NOT NULL DEFAULT ${SCHEMA_VERSION}, outbox TEXT, attempts INTEGER NOT NULL DEFAULT 0, audit TEXT)`);
  },
};

/** The object's own keys (what the index has of the state versions, the key the store is sealed under): made by the first that writes one. */
export const META_TABLES: TableSet = {
  since: 1,
  tables: ["meta"],
  create(sql) {
    sql.exec("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
  },
};

/** A key of `meta`, or null. */
export function metaValue(sql: SqlStorage, key: string): string | null {
  if (!present(sql, META_TABLES)) return null;
  return sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = ?", key).toArray()[0]?.value ?? null;
}

/** Sets a key of `meta` (in the caller's synchronous section). */
export function setMeta(sql: SqlStorage, key: string, value: string): void {
  ensure(sql, META_TABLES).exec("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", key, value);
}

/** State versions (src/state-versions/state-versions.object.ts) and their blobs in chunks below the 2 MB row limit. */
export const STATE_VERSION_TABLES: TableSet = {
  since: 2,
  tables: ["state_versions", "state_chunks"],
  create(sql) {
    sql.exec(`CREATE TABLE IF NOT EXISTS state_versions (
      id TEXT PRIMARY KEY, seq INTEGER NOT NULL UNIQUE, serial INTEGER NOT NULL, md5 TEXT NOT NULL, lineage TEXT,
      status TEXT NOT NULL, intermediate INTEGER NOT NULL, created_at TEXT NOT NULL, size INTEGER NOT NULL DEFAULT 0,
      parsed TEXT, json_present INTEGER NOT NULL DEFAULT 0, created_by TEXT,
      backing TEXT NOT NULL DEFAULT 'present', rollback_of TEXT, run_id TEXT)`);
    // kind: "state" | "json" | "outputs" once complete; "<kind>~<upload id>" while an upload is being received.
    sql.exec(`CREATE TABLE IF NOT EXISTS state_chunks (
      sv_id TEXT NOT NULL, kind TEXT NOT NULL, seq INTEGER NOT NULL, data BLOB NOT NULL, sealed INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (sv_id, kind, seq))`);
  },
};

/** The workspace's variables (src/variables/variables.object.ts), values sealed by the Worker. */
export const VARIABLE_TABLES: TableSet = {
  since: 4,
  tables: ["variables"],
  create(sql) {
    sql.exec(`CREATE TABLE IF NOT EXISTS variables (
      id TEXT PRIMARY KEY, seq INTEGER NOT NULL UNIQUE, key TEXT NOT NULL, category TEXT NOT NULL, value TEXT NOT NULL,
      description TEXT, hcl INTEGER NOT NULL, sensitive INTEGER NOT NULL, version_id TEXT NOT NULL, created_at TEXT NOT NULL)`);
    sql.exec("CREATE UNIQUE INDEX IF NOT EXISTS variables_key ON variables(category, key)");
  },
};

/** Configuration versions (src/configuration-versions/configuration-versions.object.ts); `upload` is '' once stored. */
export const CONFIGURATION_VERSION_TABLES: TableSet = {
  since: 9,
  tables: ["configuration_versions", "cv_parts"],
  create(sql) {
    sql.exec("CREATE TABLE IF NOT EXISTS configuration_versions (id TEXT PRIMARY KEY, seq INTEGER NOT NULL UNIQUE, record TEXT NOT NULL)");
    sql.exec(`CREATE TABLE IF NOT EXISTS cv_parts (
      cv_id TEXT NOT NULL, upload TEXT NOT NULL, seq INTEGER NOT NULL, data BLOB NOT NULL, sealed INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (cv_id, upload, seq))`);
  },
};

/** Runs (src/runs/runs.object.ts): their records, events, comments, jobs, logs, artifacts and index marks. */
export const RUN_TABLES: TableSet = {
  since: 9,
  tables: ["runs", "run_events", "run_comments", "run_jobs", "run_logs", "run_artifacts", "runs_unindexed"],
  create(sql) {
    // `active`: the run holds the workspace's queue (and, while it is not final, its lock). `bypass`: plan-only or
    // save-plan (plans without the queue). `version` orders the run's index writes.
    sql.exec(`CREATE TABLE IF NOT EXISTS runs (
      id TEXT PRIMARY KEY, seq INTEGER NOT NULL UNIQUE, record TEXT NOT NULL, status TEXT NOT NULL,
      bypass INTEGER NOT NULL, plan_only INTEGER NOT NULL, active INTEGER NOT NULL DEFAULT 0,
      can_auto_apply INTEGER NOT NULL DEFAULT 0, pool_id TEXT, version INTEGER NOT NULL DEFAULT 1)`);
    sql.exec("CREATE INDEX IF NOT EXISTS runs_status ON runs (status, seq)");
    sql.exec("CREATE TABLE IF NOT EXISTS run_events (id TEXT PRIMARY KEY, run_id TEXT NOT NULL, seq INTEGER NOT NULL, record TEXT NOT NULL)");
    sql.exec("CREATE INDEX IF NOT EXISTS run_events_run ON run_events (run_id, seq)");
    sql.exec("CREATE TABLE IF NOT EXISTS run_comments (id TEXT PRIMARY KEY, run_id TEXT NOT NULL, record TEXT NOT NULL)");
    // lease_until: epoch ms. agent_bytes: how much of the log the agent has sent (its offsets count only its bytes).
    sql.exec(`CREATE TABLE IF NOT EXISTS run_jobs (
      run_id TEXT NOT NULL, phase TEXT NOT NULL, status TEXT NOT NULL, agent_id TEXT, claim_id TEXT,
      lease_until INTEGER, attempt INTEGER NOT NULL DEFAULT 0, pool_id TEXT, queued_at TEXT NOT NULL,
      agent_bytes INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (run_id, phase))`);
    // agent: 1 for the agent's bytes, 0 for the framing the service adds (STX, the apply preamble, ETX).
    sql.exec(`CREATE TABLE IF NOT EXISTS run_logs (
      run_id TEXT NOT NULL, phase TEXT NOT NULL, start INTEGER NOT NULL, bytes BLOB NOT NULL, agent INTEGER NOT NULL,
      sealed INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (run_id, phase, start))`);
    sql.exec(`CREATE TABLE IF NOT EXISTS run_artifacts (
      run_id TEXT NOT NULL, kind TEXT NOT NULL, seq INTEGER NOT NULL, bytes BLOB NOT NULL, sealed INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (run_id, kind, seq))`);
    // Runs whose D1 rows (runs, run_jobs) trail the object: the next index flush upserts them.
    sql.exec("CREATE TABLE IF NOT EXISTS runs_unindexed (run_id TEXT PRIMARY KEY, version INTEGER NOT NULL)");
  },
};

/**
 * The workspace's connected repository (src/vcs/vcs.object.ts): deliveries waiting for the alarm, the hook it last
 * synced, the commits it already ran, and the commit statuses it owes the host.
 */
export const VCS_TABLES: TableSet = {
  since: 11,
  tables: ["vcs_inbox", "vcs_link", "vcs_commits", "vcs_reports"],
  create(sql) {
    sql.exec(`CREATE TABLE IF NOT EXISTS vcs_inbox (
      seq INTEGER PRIMARY KEY AUTOINCREMENT, delivery_id TEXT NOT NULL UNIQUE, event TEXT NOT NULL, origin TEXT NOT NULL,
      received_at TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, next_at INTEGER NOT NULL)`);
    // The (token, repository, branch) the workspace's hook and head commit were last synced for.
    sql.exec(`CREATE TABLE IF NOT EXISTS vcs_link (
      singleton INTEGER PRIMARY KEY CHECK (singleton = 1), token_id TEXT NOT NULL, repo TEXT NOT NULL, branch TEXT NOT NULL,
      synced INTEGER NOT NULL DEFAULT 0, attempts INTEGER NOT NULL DEFAULT 0, next_at INTEGER NOT NULL DEFAULT 0, error TEXT)`);
    sql.exec("CREATE TABLE IF NOT EXISTS vcs_commits (kind TEXT NOT NULL, sha TEXT NOT NULL, at TEXT NOT NULL, PRIMARY KEY (kind, sha))");
    // posted: the last `state description` the host accepted for the version's run; done once a final one was.
    sql.exec(`CREATE TABLE IF NOT EXISTS vcs_reports (
      cv_id TEXT PRIMARY KEY, token_id TEXT NOT NULL, repo TEXT NOT NULL, sha TEXT NOT NULL, origin TEXT NOT NULL, pr INTEGER,
      posted TEXT, done INTEGER NOT NULL DEFAULT 0, attempts INTEGER NOT NULL DEFAULT 0, next_at INTEGER NOT NULL DEFAULT 0)`);
  },
};

/**
 * Run triggers (src/run-triggers/run-triggers.object.ts): as a source, the applies whose targets are still to be
 * told (`next_at`: epoch ms of the next attempt); as a target, the source runs already acted on (a delivery repeated
 * after a lost answer queues nothing twice).
 */
export const RUN_TRIGGER_TABLES: TableSet = {
  since: 11,
  tables: ["run_trigger_outbox", "run_trigger_received"],
  create(sql) {
    sql.exec(`CREATE TABLE IF NOT EXISTS run_trigger_outbox (
      source_run_id TEXT PRIMARY KEY, message TEXT NOT NULL, created_at TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, next_at INTEGER NOT NULL)`);
    sql.exec("CREATE TABLE IF NOT EXISTS run_trigger_received (source_run_id TEXT PRIMARY KEY, run_id TEXT, received_at TEXT NOT NULL)");
  },
};

/**
 * Notification configurations (src/notifications/notifications.object.ts) and the deliveries still to make: one row
 * per configuration and run event, `next_at` the epoch ms of its next attempt.
 */
export const NOTIFICATION_TABLES: TableSet = {
  since: 11,
  tables: ["notification_configs", "notification_deliveries"],
  create(sql) {
    sql.exec("CREATE TABLE IF NOT EXISTS notification_configs (id TEXT PRIMARY KEY, seq INTEGER NOT NULL UNIQUE, record TEXT NOT NULL)");
    sql.exec(`CREATE TABLE IF NOT EXISTS notification_deliveries (
      seq INTEGER PRIMARY KEY AUTOINCREMENT, config_id TEXT NOT NULL, event TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, next_at INTEGER NOT NULL)`);
  },
};

/**
 * Run tasks (src/run-tasks/run-tasks.object.ts): the workspace's attachments of its organisation's tasks, and each
 * run's task stages and results. `send_at`: epoch ms the result's request is due (null once sent or given up);
 * `deadline`: epoch ms the integration's callback must come by while the result runs.
 */
export const RUN_TASK_TABLES: TableSet = {
  since: 12,
  tables: ["workspace_tasks", "task_stages", "task_results"],
  create(sql) {
    sql.exec("CREATE TABLE IF NOT EXISTS workspace_tasks (id TEXT PRIMARY KEY, seq INTEGER NOT NULL UNIQUE, record TEXT NOT NULL)");
    sql.exec("CREATE TABLE IF NOT EXISTS task_stages (id TEXT PRIMARY KEY, run_id TEXT NOT NULL, seq INTEGER NOT NULL, record TEXT NOT NULL)");
    sql.exec("CREATE INDEX IF NOT EXISTS task_stages_run ON task_stages (run_id, seq)");
    sql.exec(`CREATE TABLE IF NOT EXISTS task_results (
      id TEXT PRIMARY KEY, stage_id TEXT NOT NULL, record TEXT NOT NULL, send_at INTEGER, attempts INTEGER NOT NULL DEFAULT 0, deadline INTEGER)`);
    sql.exec("CREATE INDEX IF NOT EXISTS task_results_stage ON task_results (stage_id)");
  },
};

// ---- the steps of stores written by earlier code ----

/** What a step may use of the object. */
export type MigrationHost = Pick<WorkspaceHost, "sql" | "load" | "commit">;

/** A step: true when it committed a record the index must follow (the object then flushes at once). */
type Step = (m: MigrationHost) => boolean;

/** A column a later version added to a table an older store already holds (a store without the table makes it whole). */
const addColumn =
  (set: TableSet, table: string, column: string, definition: string): Step =>
  ({ sql }) => {
    if (!present(sql, set)) return false;
    const columns = sql.exec<{ name: string }>(`PRAGMA table_info(${table})`).toArray();
    if (!columns.some((c) => c.name === column)) sql.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${definition}`);
    return false;
  };

/**
 * Schema 3: the one stored tag set becomes two — valued entries become bindings, key-only entries flat tags (nothing
 * is lost). A live record is committed as a new version with its outbox entry, so the index (doc and workspace_tags
 * rows) follows on the flush.
 */
const splitTagSets: Step = (m) => {
  const sql = m.sql;
  const row = sql.exec<{ kind: string; record: string | null }>("SELECT kind, record FROM workspace WHERE singleton = 1").toArray()[0];
  if (!row?.record || (row.kind !== "live" && row.kind !== "deleted")) return false;
  const stored = JSON.parse(row.record) as WorkspaceRecord;
  const upgraded = upgradeRecord(stored);
  if (upgraded === stored) return false;
  if (row.kind === "deleted") {
    // A tombstone is never indexed again: only its shape changes.
    sql.exec("UPDATE workspace SET record = ? WHERE singleton = 1", JSON.stringify(upgraded));
    return false;
  }
  m.commit("live", { ...upgraded, version: stored.version + 1 });
  return true;
};

/**
 * Schema 6: the record names its organisation by its immutable id (`organizationId`) alone, so an organisation rename
 * never has to visit it; the name it also kept is dropped from the stored record (whose row is also its outbox entry
 * once `foldOutbox` ran). Nothing else changes, so no new version is committed: D1 migration 0016 drops the name from
 * the index documents in the same way, and readers ignore it wherever it is left (`upgradeRecord`).
 */
const dropOrganizationName: Step = ({ sql }) => {
  const row = sql.exec<{ record: string | null }>("SELECT record FROM workspace WHERE singleton = 1").toArray()[0];
  if (!row?.record) return false;
  const stored = JSON.parse(row.record) as WorkspaceRecord;
  const next = upgradeRecord(stored);
  if (next !== stored) sql.exec("UPDATE workspace SET record = ? WHERE singleton = 1", JSON.stringify(next));
  return false;
};

/**
 * Schema 7: state versions read again (`migrateReparse`). A version once taken for empty may now be unknown (safe
 * delete refuses it; the record is unchanged) or show the resources and outputs of its JSON state: a live record then
 * follows its current version, committed as a new version with its outbox entry.
 */
const reparseStates: Step = (m) => {
  const sql = m.sql;
  if (!present(sql, STATE_VERSION_TABLES)) return false;
  migrateReparse(sql);
  const s = m.load();
  if (s.kind !== "live") return false;
  const next = structuredClone(s.record);
  if (!recount(sql, next)) return false;
  m.commit("live", { ...next, version: s.record.version + 1 });
  return true;
};

/**
 * Schema 13: blob rows say whether they are sealed (src/platform/seal.ts); those written in clear before are sealed by
 * the object's start (`resealAll` in workspace.object.ts), which also reseals after a rotation of the secret.
 */
const sealedFlags: Step[] = [
  addColumn(STATE_VERSION_TABLES, "state_chunks", "sealed", "INTEGER NOT NULL DEFAULT 0"),
  addColumn(CONFIGURATION_VERSION_TABLES, "cv_parts", "sealed", "INTEGER NOT NULL DEFAULT 0"),
  addColumn(RUN_TABLES, "run_logs", "sealed", "INTEGER NOT NULL DEFAULT 0"),
  addColumn(RUN_TABLES, "run_artifacts", "sealed", "INTEGER NOT NULL DEFAULT 0"),
];

/** Each step at the version that introduced it (versions 1, 2, 4, 9, 11 and 12 only added table sets; 14 is `foldOutbox`). */
const STEPS: Array<[version: number, step: Step]> = [
  [3, splitTagSets],
  [5, addColumn(STATE_VERSION_TABLES, "state_versions", "backing", "TEXT NOT NULL DEFAULT 'present'")],
  [6, dropOrganizationName],
  [7, reparseStates],
  [8, addColumn(STATE_VERSION_TABLES, "state_versions", "rollback_of", "TEXT")],
  [10, addColumn(STATE_VERSION_TABLES, "state_versions", "run_id", "TEXT")],
  ...sealedFlags.map((step): [number, Step] => [13, step]),
];

/**
 * Schema 14: the outbox and the audit events waiting for D1 move from tables of their own into the record's row
 * (RECORD_TABLES). It runs before the other steps, since those commit through today's `commit`. Every commit wrote the
 * record and its outbox entry together, so the newest entry is the stored record: its op and attempts are what is kept.
 * True when an entry is left pending.
 */
function foldOutbox(sql: SqlStorage): boolean {
  const columns = sql.exec<{ name: string }>("PRAGMA table_info(workspace)").toArray();
  if (columns.some((c) => c.name === "schema")) return false;
  sql.exec("ALTER TABLE workspace ADD COLUMN schema INTEGER NOT NULL DEFAULT 0");
  sql.exec("ALTER TABLE workspace ADD COLUMN outbox TEXT");
  sql.exec("ALTER TABLE workspace ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0");
  sql.exec("ALTER TABLE workspace ADD COLUMN audit TEXT");
  const has = (table: string) => sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", table).toArray().length > 0;
  if (has("outbox")) {
    const latest = sql.exec<{ op: string; attempts: number }>("SELECT op, attempts FROM outbox ORDER BY seq DESC LIMIT 1").toArray()[0];
    if (latest) sql.exec("UPDATE workspace SET outbox = ?, attempts = ? WHERE singleton = 1", latest.op, latest.attempts);
    sql.exec("DROP TABLE outbox");
  }
  if (has("audit_outbox")) {
    const events = sql.exec<{ event: string }>("SELECT event FROM audit_outbox ORDER BY seq").toArray();
    // Events wait for the flush of an outbox entry: with none left, one more (idempotent) index write carries them.
    if (events.length > 0)
      sql.exec("UPDATE workspace SET audit = ?, outbox = coalesce(outbox, 'upsert') WHERE singleton = 1", `[${events.map((e) => e.event).join(",")}]`);
    sql.exec("DROP TABLE audit_outbox");
  }
  // Whatever it left pending is flushed at once (a store may hold no alarm for it).
  return sql.exec<{ n: number }>("SELECT count(*) AS n FROM workspace WHERE outbox IS NOT NULL").one().n > 0;
}

/** The store's schema version: the record row's since schema 14, `meta`'s before. */
function storedVersion(sql: SqlStorage): number {
  const row = sql.exec<{ schema?: number }>("SELECT * FROM workspace WHERE singleton = 1").toArray()[0];
  return row?.schema ?? Number(metaValue(sql, "schema_version") ?? 0);
}

/**
 * Brings the store up to SCHEMA_VERSION; true when a step committed a record for the index. Every start of the object
 * runs this: a new object costs one read, a current store two, and neither writes.
 */
export function migrate(m: MigrationHost): boolean {
  if (!present(m.sql, RECORD_TABLES)) return false;
  const current = storedVersion(m.sql);
  if (current >= SCHEMA_VERSION) return false;
  let committed = foldOutbox(m.sql);
  for (const [version, step] of STEPS) if (current < version) committed = step(m) || committed;
  m.sql.exec("UPDATE workspace SET schema = ? WHERE singleton = 1", SCHEMA_VERSION);
  if (present(m.sql, META_TABLES)) m.sql.exec("DELETE FROM meta WHERE key = 'schema_version'");
  return committed;
}

/**
 * Seals what is not sealed under the current key: rows an earlier version stored in clear, and after a rotation of
 * STATE_ENCRYPTION_KEY those sealed under STATE_ENCRYPTION_KEY_PREVIOUS. `meta.sealed_with` names the key the whole store
 * is sealed under, so a start with nothing to do costs one read. Without the secret nothing is sealed (and writes fail).
 * Every start of an object runs it, so a deploy (which restarts every object) and a visit of each workspace (the
 * consistency check, docs/operations.md) complete a rotation.
 */
export function resealAll(sql: SqlStorage): void {
  const id = currentKeyId(sql);
  if (!id || !present(sql, RECORD_TABLES)) return;
  if (metaValue(sql, "sealed_with") === id) return;
  const keyId = Uint8Array.from(id.match(/../g)!, (h) => Number.parseInt(h, 16));
  let failed = 0;
  if (present(sql, STATE_VERSION_TABLES)) failed += resealStateVersions(sql, keyId).failed;
  if (present(sql, CONFIGURATION_VERSION_TABLES)) failed += resealCvParts(sql).failed;
  if (present(sql, RUN_TABLES)) failed += resealRunBlobs(sql).failed;
  // A row that did not open (each is logged) keeps the store unmarked: the next start tries it again.
  if (failed === 0) setMeta(sql, "sealed_with", id);
}
