/**
 * Types shared across the Durable Object boundary (both sides import them with `import type`).
 * A workspace record is the DO's truth and, as `doc`, the D1 index row's copy.
 */
import type { AuditEvent } from "../audit/audit.rules";
import type { ExecutionMode, VcsRepo, WorkspaceSettings } from "./workspace.fields";

/** The settings are declared once, in the field table (workspace.fields.ts), keyed by their wire names. */
export type { ExecutionMode, VcsRepo, WorkspaceSettings };

export interface LockHolder {
  type: "users" | "teams" | "runs";
  id: string;
}

export interface LockState {
  locked: boolean;
  reason: string | null;
  holder: LockHolder | null;
  lockedAt: string | null;
}

/**
 * A flat tag (one of the workspace's two tag sets): a name, which is an organisation tag.
 * `tagId` is that organisation tag's id (`tag-…`); the entry is dead once the tag is deleted
 * (src/tags/tags.d1.ts).
 */
export interface TagEntry {
  key: string;
  tagId: string | null;
  createdAt: string;
}

/** A tag binding (the other set): key → value, the value "" for a key-only binding. */
export interface BindingEntry {
  key: string;
  value: string;
  /** `tb-…` id. */
  id: string;
  createdAt: string;
}

export interface DataRetentionPolicy {
  id: string;
  type: "data-retention-policy-delete-olders" | "data-retention-policy-dont-deletes";
  deleteOlderThanNDays: number | null;
}

export interface WorkspaceRecord {
  id: string;
  /**
   * The external id of the organisation the workspace was created in (a re-created org differs): the record's only
   * reference to its organisation. Its name is not kept (schema 6, migration 0016): a rename changes only the
   * organisations row, and readers show the name they read there.
   */
  organizationId: string;
  projectId: string;
  name: string;
  createdAt: string;
  updatedAt: string;
  latestChangeAt: string;
  version: number;
  settings: WorkspaceSettings;
  lock: LockState;
  sshKeyId: string | null;
  /** Flat tags, in the order they were added (`tag-names`). */
  tags: TagEntry[];
  /** Direct tag bindings, in the order they were added; independent of `tags`. */
  tagBindings: BindingEntry[];
  remoteStateConsumers: string[];
  dataRetentionPolicy: DataRetentionPolicy | null;
  resourceCount: number;
  currentStateVersionId: string | null;
  /** Output ids of the current state version (the `outputs` relationship). */
  outputIds?: string[];
  currentRun: { id: string; status: string; createdAt: string } | null;
  /** The configuration version runs use by default (`current-configuration-version`); absent in older records. */
  currentConfigurationVersionId?: string | null;
  /** Over the latest 30 runs that applied or errored (durations in ms); absent until a run ends so. */
  runMetrics?: { applyDurationAverage: number | null; planDurationAverage: number | null; runFailures: number; runsCount: number };
  source: string;
  /** Ids of the workspace's own variables in creation order (the `vars` relationship). */
  varIds?: string[];
  /** The automatic destroy last acted on: the time it fell due (src/workspaces/auto-destroy.ts); absent: none yet. */
  autoDestroyDoneFor?: string;
}

export interface CreateInput {
  id: string;
  organizationId: string;
  projectId: string;
  name: string;
  settings: WorkspaceSettings;
  tags: TagEntry[];
  /** Optional for callers that only set flat tags (the bench's bulk loader). */
  tagBindings?: BindingEntry[];
  now: string;
  /** The service's origin as the request reached it: a connected repository's webhook delivers there. */
  origin?: string;
  /** The audit trail's event of the creation, committed with it (src/audit/audit.object.ts). */
  audit?: AuditEvent;
}

/** A patch already validated against the request; the DO checks rules that need current state. */
export interface UpdateInput {
  name?: string;
  /** When the Worker claimed the new name (epoch ms), for lease checks. */
  nameClaimedAt?: number;
  projectId?: string;
  attributes: NormalisedAttributes;
  /** `relationships.tag-bindings`: replaces the direct bindings only (`[]` clears them). */
  tagBindings?: BindingInput[];
  /** `relationships.tags`: replaces the flat tags only. */
  tags?: FlatInput[];
  now: string;
  guard?: Guard;
  /** As CreateInput's. */
  origin?: string;
}

/**
 * What the Worker authorised a mutation against (read from the D1 index): the DO refuses the write
 * (`stale_authorization`) if the workspace has since moved project or organisation.
 */
export interface Guard {
  projectId: string;
  organizationId: string;
  /** The audit trail's event of the change, committed with it (src/audit/audit.object.ts); none for unaudited changes. */
  audit?: AuditEvent;
}

/**
 * Test-only fault injection from a request's X-Fault-* headers (honoured only when FAULT_INJECTION=1). It rides on the
 * request's `Caller`; the workspace stubs hand it to the object (`WorkspaceObject.withFaults`), never a method's input.
 */
export interface Faults {
  /** Index writes of this object to fail (the alarm retries them). */
  failIndexWrites?: number;
  /**
   * The DO's create fails: "result" answers a failure before committing, "throw" throws before committing,
   * "throw-after-commit" throws once the workspace is committed (its answer lost, as when the call breaks).
   */
  failCreate?: "result" | "throw" | "throw-after-commit";
  /** Holds the index write after the commit (the crash test kills the process inside that window). */
  delayIndexWritesMs?: number;
}

/** A flat tag to add, resolved by the Worker to its organisation tag id. */
export interface FlatInput {
  key: string;
  tagId: string | null;
  /** Index of the entry in the request body (for `source.pointer`). */
  index: number;
}

/** A binding to set, validated by the Worker; `value` "" is a key-only binding. */
export interface BindingInput {
  key: string;
  value: string;
  index: number;
}

/** Workspace attributes after the pure rules normalised a request (src/workspaces/workspace.rules.ts). */
export interface NormalisedAttributes {
  name?: string;
  settings: Partial<WorkspaceSettings>;
  overwrites?: { "execution-mode"?: boolean; "agent-pool"?: boolean };
  vcsRepo?: Partial<VcsRepo> | null;
  /** `operations` as sent (deprecated; maps to execution-mode). */
  operations?: boolean;
}
