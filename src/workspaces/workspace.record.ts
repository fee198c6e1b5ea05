import { upgradeSettings } from "./workspace.fields";
import { splitLegacyTags } from "../tags/workspace-tags.rules";
import type { CreateInput, WorkspaceRecord } from "./workspace.types";

/** The record a new workspace starts with (the DO's create, and the bench's bulk loader). */
export function initialRecord(input: CreateInput): WorkspaceRecord {
  return {
    id: input.id,
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
    // Callers that still pass one tag set with values (the bench's loader) get it split into the two sets.
    ...(input.tagBindings ? { tags: input.tags, tagBindings: input.tagBindings } : splitLegacyTags(input.tags)),
    remoteStateConsumers: [],
    dataRetentionPolicy: null,
    resourceCount: 0,
    currentStateVersionId: null,
    currentRun: null,
    source: "tfe-api",
  };
}

/**
 * A record as stored, brought to the current shape: one written before tags were split in two has a single tag
 * set (`tags` with values, no `tagBindings`), split as the schema migration does (valued entries
 * become bindings, key-only ones flat tags); one written before organisation renames also names its organisation
 * (`organization`), which the record no longer keeps (schema 6: it names it by `organizationId` alone).
 * Used on the DO's stored record and outbox, and on D1 docs. Returns `raw` itself when already current.
 */
export function upgradeRecord(raw: WorkspaceRecord): WorkspaceRecord {
  const legacy = raw as WorkspaceRecord & { organization?: unknown };
  const split = !Array.isArray((raw as Partial<WorkspaceRecord>).tagBindings);
  // A record without settings at all (hand-written in older stores) gets every default.
  const settings = upgradeSettings(raw.settings ?? ({} as WorkspaceRecord["settings"]));
  if (!split && legacy.organization === undefined && settings === raw.settings) return raw;
  const { organization: _name, ...rest } = legacy;
  const current = settings === raw.settings ? rest : { ...rest, settings };
  return split ? { ...current, ...splitLegacyTags((raw.tags ?? []) as Parameters<typeof splitLegacyTags>[0]) } : current;
}
