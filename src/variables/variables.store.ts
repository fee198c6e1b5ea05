/**
 * The SQL of the variables table in the workspace's object (VARIABLE_TABLES in src/workspaces/workspace.migrations.ts).
 * Synchronous helpers its capability (variables.object.ts) calls in its critical sections: none awaits, so the
 * uniqueness check and the write of one request run with no other request in between, and N racing creates of one key
 * end as some serial order would. Values arrive sealed.
 */
import { nextSeq } from "../platform/sql-records";
import { fail, type Failure } from "../errors";
import { LIMITS } from "../limits";
import { isFailure } from "../workspaces/workspace.rules";
import type { WorkspaceRecord } from "../workspaces/workspace.types";
import { applyPatch, checkKey } from "./variables.rules";
import { variableColumns, variableFromRow, type StoredVariable, type VariablePatch, type VariableRow } from "./variables.types";

type Row = VariableRow;

const toVariable = variableFromRow;

export function listVariables(sql: SqlStorage): StoredVariable[] {
  return sql.exec<Row>("SELECT * FROM variables ORDER BY seq").toArray().map(toVariable);
}

export function getVariable(sql: SqlStorage, id: string): StoredVariable | null {
  const row = sql.exec<Row>("SELECT * FROM variables WHERE id = ?", id).toArray()[0];
  return row ? toVariable(row) : null;
}

const keyTaken = (sql: SqlStorage, v: StoredVariable) =>
  sql.exec("SELECT 1 FROM variables WHERE category = ? AND key = ? AND id <> ?", v.category, v.key, v.id).toArray().length > 0;

/** The ids in creation order: the workspace's `vars` relationship. */
function ids(sql: SqlStorage): string[] {
  return sql
    .exec<{ id: string }>("SELECT id FROM variables ORDER BY seq")
    .toArray()
    .map((r) => r.id);
}

/** Adds a variable to the record's workspace (inside `mutate`): the record then lists its id. */
export function insertVariable(sql: SqlStorage, w: WorkspaceRecord, v: StoredVariable): WorkspaceRecord | Failure {
  const bad = checkKey(v.key, v.category);
  if (bad) return bad;
  if (keyTaken(sql, v)) return fail("key_taken", undefined, "/data/attributes/key");
  const count = sql.exec<{ n: number }>("SELECT count(*) AS n FROM variables").one().n;
  if (count >= LIMITS.variablesPerWorkspace) return fail("invalid_attribute", `A workspace has at most ${LIMITS.variablesPerWorkspace} variables`, "/data");
  const seq = nextSeq(sql, "variables");
  sql.exec(
    "INSERT INTO variables (id, seq, key, category, value, description, hcl, sensitive, version_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    v.id,
    seq,
    ...variableColumns(v),
    v.createdAt,
  );
  w.varIds = ids(sql);
  return w;
}

/** Changes one variable; the record does not change (its `vars` list is the same). */
export function updateVariable(sql: SqlStorage, id: string, patch: VariablePatch): StoredVariable | Failure {
  const current = getVariable(sql, id);
  if (!current) return fail("not_found");
  const next = applyPatch(current, patch);
  if (isFailure(next)) return next;
  if (keyTaken(sql, next)) return fail("key_taken", undefined, "/data/attributes/key");
  sql.exec(
    "UPDATE variables SET key = ?, category = ?, value = ?, description = ?, hcl = ?, sensitive = ?, version_id = ? WHERE id = ?",
    ...variableColumns(next),
    id,
  );
  return next;
}

/** Removes a variable (inside `mutate`): the record then no longer lists its id. */
export function deleteVariable(sql: SqlStorage, w: WorkspaceRecord, id: string): WorkspaceRecord | Failure {
  if (!getVariable(sql, id)) return fail("not_found");
  sql.exec("DELETE FROM variables WHERE id = ?", id);
  w.varIds = ids(sql);
  return w;
}

/** A deleted workspace keeps only its tombstone. */
export function eraseVariables(sql: SqlStorage): void {
  sql.exec("DELETE FROM variables");
}
