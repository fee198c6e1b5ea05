import type { Bindings } from "../env";
import type { WorkspaceObject } from "../workspaces/workspace.object";

/** The configuration-version RPC surface of the workspace's Durable Object, with its declared types. */
export type ConfigurationVersionApi = Pick<
  WorkspaceObject,
  | "createConfigurationVersion"
  | "getConfigurationVersion"
  | "listConfigurationVersions"
  | "archiveConfigurationVersion"
  | "manageCvBackingData"
  | "appendCvUpload"
  | "abortCvUpload"
  | "completeCvUpload"
  | "readCvPart"
>;

export function cvStub(env: Bindings, workspaceId: string): ConfigurationVersionApi {
  return env.WORKSPACES.getByName(workspaceId) as unknown as ConfigurationVersionApi;
}
