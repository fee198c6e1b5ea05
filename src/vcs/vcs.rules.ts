/**
 * Which deliveries start runs on a connected workspace, what their configuration version records of the commit, and
 * what commit status a run shows: HCP Terraform's rules (docs: "UI and VCS-driven run workflow", "Automatically
 * starting runs", "Rules for triggering pull request plans"; workspace VCS settings), pure.
 */
import type { IngressAttributes } from "../configuration-versions/configuration-versions.types";
import { newId } from "../ids";
import type { RunRecord } from "../runs/runs.types";
import type { WorkspaceRecord } from "../workspaces/workspace.types";
import type { StatusState, VcsEvent } from "./vcs.types";

/** What a delivery means for one workspace: a run of the commit, a speculative plan of it, or nothing (why). */
export type Decision = { kind: "run" } | { kind: "speculative" } | { kind: "skip"; reason: string };

export function decide(w: WorkspaceRecord, e: VcsEvent): Decision {
  const repo = w.settings["vcs-repo"];
  if (!repo || repo.identifier.toLowerCase() !== e.repo.toLowerCase()) return { kind: "skip", reason: "the workspace is not connected to this repository" };
  const branch = repo.branch || e.defaultBranch;
  const tags = repo["tags-regex"];
  if (e.type === "pull_request") {
    const pr = e.pullRequest;
    if (!pr || !["opened", "updated", "reopened"].includes(e.action)) return { kind: "skip", reason: `pull request ${e.action}` };
    if (!w.settings["speculative-enabled"]) return { kind: "skip", reason: "speculative plans are disabled" };
    if (pr.fromFork) return { kind: "skip", reason: "pull requests from forks are not planned" };
    if (pr.baseBranch !== branch) return { kind: "skip", reason: `the pull request targets ${pr.baseBranch}, not ${branch}` };
    return { kind: "speculative" };
  }
  // Locking a workspace stops automatic runs (docs: VCS connections, "Webhooks"); a run's own lock only queues them.
  if (w.lock.locked && w.lock.holder?.type !== "runs") return { kind: "skip", reason: "the workspace is locked" };
  if (e.action === "deleted") return { kind: "skip", reason: `${e.type === "tag" ? "tag" : "branch"} deleted` };
  if (e.type === "tag") {
    if (!tags || !e.tag) return { kind: "skip", reason: "the workspace does not run on tags" };
    let matches = false;
    try {
      matches = new RegExp(tags).test(e.tag);
    } catch {
      matches = false;
    }
    return matches ? { kind: "run" } : { kind: "skip", reason: `tag ${e.tag} does not match ${tags}` };
  }
  if (tags) return { kind: "skip", reason: "the workspace runs on tags only" };
  if (e.branch !== branch) return { kind: "skip", reason: `a push to ${e.branch}, not ${branch}` };
  return { kind: "run" };
}

/** The version's commit, under the API's attribute names. */
export function ingressOf(e: VcsEvent): IngressAttributes {
  const pr = e.pullRequest;
  return {
    id: newId("ia"),
    branch: e.branch,
    "clone-url": e.cloneUrl,
    "commit-message": e.commitMessage,
    "commit-sha": e.sha,
    "commit-url": e.commitUrl ?? (e.repoUrl ? `${e.repoUrl}/commit/${e.sha}` : null),
    "compare-url": pr ? pr.url : e.compareUrl,
    identifier: e.repo,
    "is-pull-request": pr !== null,
    "on-default-branch": e.branch !== null && e.branch === e.defaultBranch,
    "pull-request-number": pr?.number ?? null,
    "pull-request-url": pr?.url ?? null,
    "pull-request-title": pr?.title ?? null,
    "pull-request-body": pr?.body ?? null,
    tag: e.tag,
    "sender-username": e.sender.username,
    "sender-avatar-url": e.sender.avatarUrl,
    "sender-html-url": e.sender.htmlUrl,
  };
}

/** HCP's status context per workspace (non-aggregated): `Terraform Cloud/<organization>/<workspace>`. */
export function statusContext(organization: string, workspace: string): string {
  return `Terraform Cloud/${organization}/${workspace}`;
}

const PLANNING = new Set([
  "pending",
  "fetching",
  "queuing",
  "plan_queued",
  "planning",
  "cost_estimating",
  "policy_checking",
  "pre_plan_running",
  "post_plan_running",
]);

/**
 * The status a run's commit shows: pending until its plan ends, then the plan's outcome, which an apply never changes
 * (docs: "does not update the status checks … with the status of an associated apply"). `final`: nothing later changes it.
 */
export function statusOf(run: RunRecord): { state: StatusState; description: string; final: boolean } {
  const plan = run.plan;
  const counts = `+${plan.resourceAdditions} ~${plan.resourceChanges} -${plan.resourceDestructions}`;
  if (PLANNING.has(run.status)) return { state: "pending", description: "Terraform plan is running", final: false };
  if (run.status === "errored") {
    const planFailed = plan.status === "errored" || plan.status === "canceled" || plan.status === "unreachable";
    return { state: "failure", description: planFailed ? "Terraform plan errored" : "Terraform apply errored", final: true };
  }
  if (run.status === "canceled") return { state: "error", description: "Terraform run canceled", final: true };
  if (!run.hasChanges) return { state: "success", description: "Terraform plan has no changes", final: true };
  return { state: "success", description: `Terraform plan: ${counts}`, final: true };
}
