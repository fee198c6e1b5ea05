/**
 * What a workspace's connected repository looks like to the people who may read the workspace: the repository, the
 * hook delivering its events (registered or why not yet) and its latest deliveries. The connection itself is the
 * workspace's `vcs-repo`, changed through the workspace's update like any other attribute.
 */
import type { Caller } from "../caller";
import { readByName, type Readable } from "../workspaces/workspaces.service";
import { hookFor, recentDeliveries, type Delivery } from "./vcs.d1";

export interface VcsView {
  readable: Readable;
  /** The repository's hook, once the host has it (until then the workspace's object keeps trying). */
  hook: { id: string; registeredAt: string } | null;
  deliveries: Delivery[];
}

export async function readVcs(caller: Caller, organization: string, name: string): Promise<VcsView> {
  const readable = await readByName(caller, organization, name);
  const repo = readable.record.settings["vcs-repo"];
  const tokenId = repo?.["oauth-token-id"];
  if (!repo || !tokenId) return { readable, hook: null, deliveries: [] };
  const hook = await hookFor(caller.db, tokenId, repo.identifier);
  if (!hook) return { readable, hook: null, deliveries: [] };
  return {
    readable,
    hook: { id: hook.id, registeredAt: hook.registeredAt },
    deliveries: await recentDeliveries(caller.db, hook.id, 20),
  };
}
