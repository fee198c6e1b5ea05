import type { Bindings } from "../env";
import type { WorkspaceObject } from "../workspaces/workspace.object";

/**
 * The state-version RPC surface with its declared types: the RPC stub's mapped types recurse too
 * deeply on JSON-valued state (outputs), so callers see the methods' own signatures instead.
 */
export type StateVersionApi = Pick<
  WorkspaceObject,
  | "getStateVersion"
  | "listStateVersions"
  | "createStateVersion"
  | "rollbackStateVersion"
  | "readBlobPart"
  | "appendBlob"
  | "completeBlob"
  | "abortBlob"
  | "manageBackingData"
>;

export function stateStub(env: Bindings, workspaceId: string): StateVersionApi {
  return env.WORKSPACES.getByName(workspaceId) as unknown as StateVersionApi;
}
