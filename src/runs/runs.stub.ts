import type { Bindings } from "../env";
import type { RunsRpc } from "./runs.types";

/** The workspace object's run methods with their declared types (docs/runs.md; the object implements RunsRpc). */
export function runsStub(env: Bindings, workspaceId: string): RunsRpc {
  return env.WORKSPACES.getByName(workspaceId) as unknown as RunsRpc;
}
