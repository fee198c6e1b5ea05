import type { Bindings } from "../env";
import type { WorkspaceHost } from "./workspace.host";
import type { WorkspaceObject } from "./workspace.object";

/**
 * The workspace object's RPC methods with their declared types: the generated stub's mapped types recurse too deeply
 * on JSON-valued fields (state outputs, run variables), so callers see the methods' own signatures. The host's
 * members and the test-only wrappers are the object's own, not its RPC surface.
 */
export type WorkspaceApi = Omit<
  WorkspaceObject,
  keyof WorkspaceHost | "alarm" | "fetch" | "webSocketMessage" | "webSocketClose" | "webSocketError" | "withFaults" | "traced"
>;

/** The one way to reach a workspace's Durable Object (named by the workspace's id). */
export function workspaceObject(env: Bindings, workspaceId: string): WorkspaceApi {
  return env.WORKSPACES.getByName(workspaceId) as unknown as WorkspaceApi;
}
