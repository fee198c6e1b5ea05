/**
 * Configuration versions across the Durable Object boundary (both sides import these with `import type`).
 * The design: docs/runs.md.
 */
import type { RunActor } from "../runs/runs.types";

export type CvStatus = "pending" | "uploaded" | "errored" | "archived";

/**
 * The commit a configuration version from a repository was made of (HCP Terraform API docs: Configuration Versions,
 * "Ingress Attributes"), kept with the version under the API's attribute names.
 */
export interface IngressAttributes {
  /** `ia-<16>`. */
  id: string;
  branch: string | null;
  "clone-url": string | null;
  "commit-message": string | null;
  "commit-sha": string;
  "commit-url": string | null;
  "compare-url": string | null;
  identifier: string;
  "is-pull-request": boolean;
  "on-default-branch": boolean;
  "pull-request-number": number | null;
  "pull-request-url": string | null;
  "pull-request-title": string | null;
  "pull-request-body": string | null;
  tag: string | null;
  "sender-username": string | null;
  "sender-avatar-url": string | null;
  "sender-html-url": string | null;
}

export interface ConfigurationVersionRecord {
  /** `cv-<16>`. */
  id: string;
  workspaceId: string;
  status: CvStatus;
  source: string;
  speculative: boolean;
  provisional: boolean;
  autoQueueRuns: boolean;
  error: string | null;
  errorMessage: string | null;
  /** `<status>-at` keys, ISO 8601 with `Z`. */
  statusTimestamps: Record<string, string>;
  createdAt: string;
  /** The upload's size and SHA-256 once uploaded. */
  size: number | null;
  sha256: string | null;
  /**
   * Who created it, and whether they could apply: the run its upload queues (`auto-queue-runs`) is theirs, so it
   * auto-applies as a run they created would. Absent on versions stored before it was recorded: nobody.
   */
  creator?: RunActor;
  /**
   * The agent pool the run its upload queues goes to (null: the default pool), resolved from the workspace's execution
   * mode, inherited included, when it was created. Absent on versions stored before: the workspace's own pool.
   */
  agentPoolId?: string | null;
  /**
   * Terraform Enterprise's data retention: the archive's bytes soft deleted (restorable) or deleted for good.
   * Absent while the bytes are there.
   */
  backing?: "soft_deleted" | "deleted";
  /** The commit, for a version made from a repository (absent for the API's and the CLI's). */
  ingress?: IngressAttributes;
}
