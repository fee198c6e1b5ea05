/**
 * Runs across the Durable Object boundary (both sides import these with `import type`). The design and the agent
 * protocol: docs/runs.md.
 */
import type { Result } from "../errors";
import type { Guard, WorkspaceRecord } from "../workspaces/workspace.types";

export type RunStatus =
  | "pending"
  | "plan_queued"
  | "planning"
  | "planned"
  | "planned_and_finished"
  | "planned_and_saved"
  | "confirmed"
  | "apply_queued"
  | "applying"
  | "applied"
  | "discarded"
  | "errored"
  | "canceled"
  // Waiting on, or done with, the run tasks of a stage (src/run-tasks/run-tasks.object.ts).
  | "pre_plan_running"
  | "pre_plan_completed"
  | "post_plan_running"
  | "post_plan_completed"
  | "pre_apply_running"
  | "pre_apply_completed"
  | "post_apply_running"
  | "post_apply_completed";

export type PhaseStatus = "pending" | "queued" | "running" | "finished" | "errored" | "canceled" | "unreachable";
export type Phase = "plan" | "apply";
export type RunSource = "tfe-api" | "tfe-ui" | "tfe-configuration-version" | "tfe-run-trigger" | "terraform";
export type CancelSignal = null | "cancel" | "force-cancel";

/** Who did something to a run (the `created-by`, `confirmed-by` and event `actor` relationships). */
export interface Actor {
  type: "users";
  id: string;
}

export interface PhaseRecord {
  /** `plan-<16>` or `apply-<16>`: the run's 16 characters. */
  id: string;
  status: PhaseStatus;
  /** `<status>-at` keys (`queued-at`, `started-at`, `finished-at`, …), ISO 8601 with `Z`. */
  statusTimestamps: Record<string, string>;
  resourceAdditions: number;
  resourceChanges: number;
  resourceDestructions: number;
  resourceImports: number;
  /** Plans only. */
  hasChanges?: boolean;
  /** The agent that ran the phase (`execution-details`). */
  agent: { id: string; name: string; poolId: string | null; poolName: string | null } | null;
}

export interface RunOptions {
  message: string;
  isDestroy: boolean;
  refresh: boolean;
  refreshOnly: boolean;
  planOnly: boolean;
  savePlan: boolean;
  autoApply: boolean;
  allowEmptyApply: boolean;
  allowConfigGeneration: boolean;
  /** Echoed as sent; null when not sent. */
  targetAddrs: string[] | null;
  replaceAddrs: string[] | null;
  /** HCL literals, echoed verbatim. */
  variables: { key: string; value: string }[];
  terraformVersion: string | null;
  source: RunSource;
  triggerReason: string;
}

export interface RunRecord extends RunOptions {
  /** `run-<16>`. */
  id: string;
  workspaceId: string;
  organizationId: string;
  configurationVersionId: string;
  status: RunStatus;
  /** `<status>-at` keys (`plan-queueable-at` from creation). */
  statusTimestamps: Record<string, string>;
  createdAt: string;
  createdBy: Actor | null;
  confirmedBy: Actor | null;
  canceledAt: string | null;
  forceCancelAvailableAt: string | null;
  /** Set by a cancel of a running phase until the agent stops. */
  signal: CancelSignal;
  hasChanges: boolean;
  positionInQueue: number;
  plan: PhaseRecord;
  apply: PhaseRecord;
  /** Ids of the run's comments, oldest first. */
  commentIds: string[];
  /** The run's task stages (`ts-…`), made at creation for the stages with attached run tasks; absent in older runs. */
  taskStages?: Array<{ id: string; stage: "pre_plan" | "post_plan" | "pre_apply" | "post_apply" }>;
}

export interface RunEvent {
  /** `re-<16 of the run><4>`. */
  id: string;
  runId: string;
  action: string;
  description: string | null;
  createdAt: string;
  actor: Actor | null;
  commentId: string | null;
}

export interface RunComment {
  /** `wsc-<16 of the run><4>`. */
  id: string;
  runId: string;
  body: string;
  createdAt: string;
  runEventId: string;
}

/** What a run action needs to know of its caller (the service has authorised it already). */
export interface RunActor {
  actor: Actor | null;
  /** Whether the caller may apply (auto-apply needs its creator to). */
  canApply: boolean;
}

export interface CreateRunInput {
  id: string;
  now: string;
  /** null: the workspace's latest configuration version. */
  configurationVersionId: string | null;
  options: Partial<RunOptions>;
  creator: RunActor;
  /**
   * The agent pool its jobs go to when the service resolved the workspace's inherited execution mode (null: the
   * default pool). Absent: the workspace's own setting (its `agent-pool-id` in agent mode, else the default pool).
   */
  agentPoolId?: string | null;
  guard?: Guard;
}

export type RunAction = "apply" | "discard" | "cancel" | "force-cancel" | "force-execute";

export interface RunActionInput {
  runId: string;
  action: RunAction;
  comment?: string | null;
  now: string;
  by: RunActor;
  guard?: Guard;
}

export interface Job {
  runId: string;
  phase: Phase;
  claimId: string;
  leaseUntil: string;
  run: RunRecord;
  workspace: WorkspaceRecord;
}

export interface ClaimInput {
  runId: string;
  phase: Phase;
  agent: { id: string; name: string; poolId: string | null; poolName: string | null };
  now: string;
}

export interface FinishInput {
  runId: string;
  phase: Phase;
  claimId: string;
  now: string;
  status: "finished" | "errored" | "canceled";
  error?: string | null;
  hasChanges?: boolean;
  resourceAdditions?: number;
  resourceChanges?: number;
  resourceDestructions?: number;
  resourceImports?: number;
  /** The Terraform version the agent ran: the run's `terraform-version` from then on (the apply log's header names it). */
  terraformVersion?: string;
}

/**
 * What a run keeps besides its logs: the plan phase's plan, JSON plans and lock file; `errored-state`, the state an
 * apply could not save (Terraform's errored.tfstate), kept for a workspace admin to recover.
 */
export type ArtifactKind = "plan-json" | "plan-json-redacted" | "plan-binary" | "lock-file" | "errored-state";

/** The phase that stores each kind of artifact. */
export const ARTIFACT_PHASE: Record<ArtifactKind, Phase> = {
  "plan-json": "plan",
  "plan-json-redacted": "plan",
  "plan-binary": "plan",
  "lock-file": "plan",
  "errored-state": "apply",
};

/** One piece of an artifact upload by a job (`upload` names the request's staging area). */
export interface ArtifactUploadInput {
  runId: string;
  phase: Phase;
  claimId: string;
  kind: ArtifactKind;
  upload: string;
  bytes: Uint8Array;
  /** Where a part request of an upload sent in several begins (its first piece only). */
  at?: number;
}

/**
 * The RPC methods of the workspace's Durable Object for runs (src/workspaces/workspace.object.ts implements them;
 * the logic is in src/runs/*.store.ts and runs.rules.ts).
 */
export interface RunsRpc {
  createRun(input: CreateRunInput): Promise<Result<{ run: RunRecord; workspace: WorkspaceRecord }>>;
  getRun(runId: string): Promise<Result<{ run: RunRecord; workspace: WorkspaceRecord }>>;
  listRuns(input: { offset: number; limit: number; includePlanOnly: boolean }): Promise<Result<{ items: RunRecord[]; total: number }>>;
  runAction(input: RunActionInput): Promise<Result<{ run: RunRecord }>>;
  listRunEvents(runId: string): Promise<Result<RunEvent[]>>;
  getComment(id: string): Promise<Result<RunComment>>;
  addComment(input: { runId: string; id: string; body: string; now: string; actor: Actor | null }): Promise<Result<RunComment>>;
  /** `offset` bytes into the phase's framed log; at most `limit` bytes (the client's buffer). */
  readLog(input: { runId: string; phase: Phase; offset: number; limit: number }): Promise<Result<{ bytes: Uint8Array }>>;
  claimJob(input: ClaimInput): Promise<Result<Job>>;
  /** Renews the lease; answers the run's signal. A lost claim is a failure (`job_lost`). */
  heartbeat(input: { runId: string; phase: Phase; claimId: string; now: string }): Promise<Result<{ signal: CancelSignal }>>;
  appendLog(input: {
    runId: string;
    phase: Phase;
    claimId: string;
    offset: number;
    bytes: Uint8Array;
    now: string;
  }): Promise<Result<{ size: number; signal: CancelSignal }>>;
  /** A small artifact in one call. */
  putArtifact(input: { runId: string; claimId: string; kind: ArtifactKind; bytes: Uint8Array }): Promise<Result<null>>;
  appendArtifact(input: ArtifactUploadInput): Promise<Result<null>>;
  abortArtifact(input: { runId: string; kind: ArtifactKind; upload: string }): Promise<Result<null>>;
  completeArtifact(input: ArtifactUploadInput): Promise<Result<null>>;
  /** The whole artifact, or only its size when it is larger than `maxBytes`. */
  getArtifact(input: { runId: string; kind: ArtifactKind; maxBytes?: number }): Promise<Result<{ bytes: Uint8Array | null; size: number }>>;
  readArtifactPart(input: { runId: string; kind: ArtifactKind; fromSeq: number }): Promise<Result<{ bytes: Uint8Array; next: number | null }>>;
  finishJob(input: FinishInput): Promise<Result<{ run: RunRecord }>>;
}
