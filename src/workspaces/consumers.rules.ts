/** Remote-state consumers, SSH key and retention policy changes: pure rules over a workspace record. */
import { fail, type Failure } from "../errors";
import type { DataRetentionPolicy, WorkspaceRecord } from "./workspace.types";

export type ConsumerChange = { op: "add" | "remove" | "replace"; ids: string[] };

/** Consumer lists can be changed only while neither global nor project sharing is on. */
export function changeConsumers(w: WorkspaceRecord, change: ConsumerChange): WorkspaceRecord | Failure {
  if (w.settings["global-remote-state"]) {
    return fail("invalid_attribute", "Remote state consumers cannot be changed while global remote state sharing is enabled", "/data");
  }
  if (w.settings["project-remote-state"]) {
    return fail("invalid_attribute", "Remote state consumers cannot be changed while project remote state sharing is enabled", "/data");
  }
  const self = change.ids.indexOf(w.id);
  if (self >= 0) return fail("invalid_attribute", "A workspace cannot be a remote state consumer of itself", `/data/${self}/id`);
  const current = w.remoteStateConsumers;
  if (change.op === "add") w.remoteStateConsumers = [...current, ...change.ids.filter((id, i) => !current.includes(id) && change.ids.indexOf(id) === i)];
  else if (change.op === "remove") w.remoteStateConsumers = current.filter((id) => !change.ids.includes(id));
  else w.remoteStateConsumers = [...new Set(change.ids)];
  return w;
}

export function setSshKey(w: WorkspaceRecord, keyId: string | null): WorkspaceRecord {
  w.sshKeyId = keyId;
  return w;
}

export function setRetention(w: WorkspaceRecord, policy: DataRetentionPolicy | null): WorkspaceRecord {
  w.dataRetentionPolicy = policy;
  return w;
}
