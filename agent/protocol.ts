/**
 * The agent protocol as the agent sees it (docs/runs.md, "Agent protocol"). The agent is a separate Node process
 * and must not import the Worker's modules; the Worker imports the job's shape from here (`import type` only).
 */

export type Phase = "plan" | "apply";
export type Signal = null | "cancel" | "force-cancel";
export type ArtifactKind = "plan-json" | "plan-json-redacted" | "plan-binary" | "lock-file" | "errored-state";
export type AgentStatus = "idle" | "busy" | "exited";

export interface JobVariable {
  key: string;
  value: string;
  category: "terraform" | "env";
  hcl: boolean;
  sensitive: boolean;
}

export interface JobOperation {
  isDestroy: boolean;
  refresh: boolean;
  refreshOnly: boolean;
  targetAddrs: string[];
  replaceAddrs: string[];
  planOnly: boolean;
  savePlan: boolean;
  allowEmptyApply: boolean;
  allowConfigGeneration: boolean;
}

/**
 * What `register` answers: the agent's id and the pool its token serves. `pool.organizationId` null: the operator's
 * default pool, which serves every organisation's `remote` workspaces (an agent for it must sandbox its jobs). An
 * answer without `pool` (an older service) counts as that shared pool.
 */
export interface Registration {
  id: string;
  pool?: { id: string | null; organizationId: string | null };
}

/** A build of a Terraform release the agent may download (the admin API's `archs`). */
export interface TerraformBuild {
  url: string;
  /** SHA-256 of the zip, hex. */
  sha: string;
  os: string;
  arch: string;
}

/**
 * The Terraform a job runs, resolved by the service from the run's or the workspace's `terraform-version` when the
 * job was handed out: the exact version, its builds (none: the service lists no download, so only an agent pinned to
 * a binary of that version can run it), where the release's SHA256SUMS and its signature are (releases read from a
 * releases index), or `error`: why nothing can run (the agent fails the plan with it before Terraform starts).
 */
export interface JobTerraform {
  version: string;
  archs: TerraformBuild[];
  shasumsUrl: string | null;
  shasumsSignatureUrl: string | null;
  error?: string;
}

/** What `jobs/next` answers once the claim has happened. */
export interface Job {
  run: string;
  phase: Phase;
  claim: string;
  /** The run token: bearer for every call about this job, and Terraform's credentials for the service. */
  token: string;
  leaseSeconds: number;
  /** The host Terraform's `cloud` block names (service discovery key), e.g. `localhost:8787` or `tf.example.com`. */
  hostname: string;
  /** The API's base URL, e.g. `http://localhost:8787/api/v2/`; plain http needs a `host` block in the CLI config. */
  apiBase: string;
  organization: string;
  /**
   * `structuredRunOutput`: Terraform's `cloud` block renders the log as JSON lines (`-json`) and the plan from the
   * redacted JSON plan when the workspace's `structured-run-output-enabled` is on; absent counts as off.
   */
  workspace: { id: string; name: string; workingDirectory: string; terraformVersion: string; projectName?: string | null; structuredRunOutput?: boolean };
  /** Absent from an older service: the agent then runs its own Terraform, if it is the version asked for. */
  terraform?: JobTerraform;
  operation: JobOperation;
  variables: JobVariable[];
  /** HCL literals given with the run (`-var` on the CLI, `variables` in the API). */
  runVariables: { key: string; value: string }[];
}

export type FinishStatus = "finished" | "errored" | "canceled";

export interface Finish {
  status: FinishStatus;
  error?: string;
  hasChanges: boolean;
  resourceAdditions: number;
  resourceChanges: number;
  resourceDestructions: number;
  resourceImports: number;
  /** The Terraform version that ran the phase (absent when none started): the run's `terraform-version` from then on. */
  terraformVersion?: string;
}

export const AGENT_VERSION = "0.2.0";
