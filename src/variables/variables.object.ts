/**
 * The workspace object's variables: the methods behind its variable RPCs, on the table it makes on first use
 * (VARIABLE_TABLES). Values arrive sealed. The record lists the variables' ids (`varIds`), so a create or delete is
 * committed with it and the index follows; nothing else of them is in D1. The SQL is in variables.store.ts.
 */
import { fail, ok, type Result } from "../errors";
import type { WorkspaceHost, WorkspaceResult } from "../workspaces/workspace.host";
import { ensure, present, VARIABLE_TABLES } from "../workspaces/workspace.migrations";
import { isFailure } from "../workspaces/workspace.rules";
import type { Guard, WorkspaceRecord } from "../workspaces/workspace.types";
import { deleteVariable, eraseVariables, getVariable, insertVariable, listVariables, updateVariable } from "./variables.store";
import type { StoredVariable, VariablePatch } from "./variables.types";

export type VariableResult = Result<{ workspace: WorkspaceRecord; variable: StoredVariable }>;

export class Variables {
  constructor(private readonly host: WorkspaceHost) {}

  private get made(): boolean {
    return present(this.host.sql, VARIABLE_TABLES);
  }

  /** Creates a variable; the key check and the insert are one critical section, so racing creates serialise. */
  async create(input: { variable: StoredVariable; guard?: Guard }): Promise<VariableResult> {
    const result = await this.host.mutate(input, (w) => insertVariable(ensure(this.host.sql, VARIABLE_TABLES), w, input.variable));
    return result.ok ? ok({ workspace: result.value, variable: input.variable }, result.bookmark) : result;
  }

  /**
   * Updates a variable; the workspace record (its list of variable ids) is unchanged, so nothing is indexed, unless the
   * update is audited: then it commits with the record, so its event goes out through the outbox with it.
   */
  async update(input: { id: string; patch: VariablePatch; guard?: Guard }): Promise<VariableResult> {
    if (input.guard?.audit) {
      let variable: StoredVariable | undefined;
      const result = await this.host.mutate(input, (w) => {
        const v = this.made ? updateVariable(this.host.sql, input.id, input.patch) : fail("not_found");
        if (isFailure(v)) return v;
        variable = v;
        return w;
      });
      return result.ok ? ok({ workspace: result.value, variable: variable! }, result.bookmark) : result;
    }
    const w = this.host.guarded(input.guard);
    if (isFailure(w)) return w;
    const variable = this.made ? updateVariable(this.host.sql, input.id, input.patch) : fail("not_found");
    return isFailure(variable) ? variable : ok({ workspace: w, variable });
  }

  delete(input: { id: string; guard?: Guard }): Promise<WorkspaceResult> {
    return this.host.mutate(input, (w) => (this.made ? deleteVariable(this.host.sql, w, input.id) : fail("not_found")));
  }

  list(): Result<{ workspace: WorkspaceRecord; variables: StoredVariable[] }> {
    const w = this.host.live();
    return isFailure(w) ? w : ok({ workspace: w, variables: this.made ? listVariables(this.host.sql) : [] });
  }

  get(id: string): VariableResult {
    const w = this.host.live();
    if (isFailure(w)) return w;
    const variable = this.made ? getVariable(this.host.sql, id) : null;
    return variable ? ok({ workspace: w, variable }) : fail("not_found");
  }

  /** A deleted workspace keeps only its tombstone. */
  erase(): void {
    if (this.made) eraseVariables(this.host.sql);
  }
}
