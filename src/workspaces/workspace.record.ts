import type { CreateInput, WorkspaceRecord } from "./workspace.types";

/** The record a new workspace starts with (the DO's create, and the bench's bulk loader). */
export function initialRecord(input: CreateInput): WorkspaceRecord {
  return {
    id: input.id,
    organization: input.organization,
    organizationId: input.organizationId,
    projectId: input.projectId,
    name: input.name,
    createdAt: input.now,
    updatedAt: input.now,
    latestChangeAt: input.now,
    version: 1,
    settings: input.settings,
    lock: { locked: false, reason: null, holder: null, lockedAt: null },
    sshKeyId: null,
    tags: input.tags,
    remoteStateConsumers: [],
    dataRetentionPolicy: null,
    resourceCount: 0,
    currentStateVersionId: null,
    currentRun: null,
    source: "tfe-api",
  };
}
