import { DISPLAY_NAMES as OAUTH_DISPLAY_NAMES } from "../oauth/oauth.serialize";
import type { Edition } from "../env";
import type { PermissionFlags } from "../auth/permissions";
import type { Resource } from "../jsonapi/document";
import { fieldRows, shownIn, wireNames } from "./workspace.fields";
import { effectiveExecution, type Defaults } from "./workspace.rules";
import type { WorkspaceRecord } from "./workspace.types";

export interface SerializeContext {
  /** The organisation's name (the record names it by id; a rename shows at once). */
  organization: string;
  flags: PermissionFlags;
  /** Execution defaults of the workspace's project, else its organisation. */
  defaults: Defaults;
  edition: Edition;
  /** Whether the SSH key the record points at still exists (deleted keys are unassigned at read time). */
  sshKeyExists?: boolean;
}

const API = "/api/v2";

function vcsRepoView(r: Pick<WorkspaceRecord, "settings">) {
  const v = r.settings["vcs-repo"];
  if (!v) return null;
  return {
    branch: v.branch,
    "display-identifier": v.identifier,
    identifier: v.identifier,
    "ingress-submodules": v["ingress-submodules"],
    "oauth-token-id": v["oauth-token-id"],
    "vcs-app-installation-id": v["vcs-app-installation-id"],
    "github-app-installation-id": v["vcs-app-installation-id"],
    "repository-http-url": v["repository-http-url"] ?? `https://github.com/${v.identifier}`,
    "service-provider": v["service-provider"] ?? "github",
    "tags-regex": v["tags-regex"],
    "webhook-url": null,
  };
}

/** The complete workspace resource: every attribute and relationship, every time. */
/** The workspace view needs no bindings (they are read through their own endpoints and include). */
export function serializeWorkspace(r: Omit<WorkspaceRecord, "tagBindings">, ctx: SerializeContext): Resource {
  const s = r.settings;
  const exec = effectiveExecution(s, ctx.defaults);
  const self = `${API}/workspaces/${r.id}`;
  const sshKeyId = r.sshKeyId && ctx.sshKeyExists !== false ? r.sshKeyId : null;
  const attributes: Record<string, unknown> = {
    actions: { "is-destroyable": true },
    "auto-destroy-status": null,
    "can-queue-destroy-plan": s["allow-destroy-plan"],
    "created-at": r.createdAt,
    environment: "default",
    "execution-mode": exec.mode,
    "latest-change-at": r.latestChangeAt,
    "last-assessment-result-at": null,
    locked: r.lock.locked,
    "locked-reason": r.lock.locked ? (r.lock.reason ?? "") : null,
    name: r.name,
    "oauth-client-name": s["vcs-repo"] ? ((OAUTH_DISPLAY_NAMES as Record<string, string>)[s["vcs-repo"]["service-provider"] ?? "github"] ?? "GitHub") : null,
    operations: exec.mode !== "local",
    permissions: ctx.flags,
    // Over the workspace's latest runs that applied or errored (kept by the run engine with the record).
    "apply-duration-average": r.runMetrics?.applyDurationAverage ?? null,
    "plan-duration-average": r.runMetrics?.planDurationAverage ?? null,
    "policy-check-failures": null,
    "resource-count": r.resourceCount,
    "run-failures": r.runMetrics?.runFailures ?? null,
    source: r.source,
    // Flat tags only (never binding keys), in the order they were added.
    "tag-names": r.tags.map((t) => t.key),
    "updated-at": r.updatedAt,
    "vcs-repo": vcsRepoView(r),
    "vcs-repo-identifier": s["vcs-repo"]?.identifier ?? null,
    "workspace-kpis-runs-count": r.runMetrics?.runsCount ?? null,
    "setting-overwrites": {
      "execution-mode": s["execution-mode"] !== null,
      "agent-pool": s["execution-mode"] !== null,
    },
  };
  // Every setting the field table shows as stored, under its names, in the editions that show it.
  for (const [key, row] of fieldRows) {
    if (shownIn(row, ctx.edition)) for (const name of wireNames(key, row)) attributes[name] = s[key];
  }

  const relationships: Record<string, unknown> = {
    "agent-pool": { data: exec.agentPoolId ? { id: exec.agentPoolId, type: "agent-pools" } : null },
    "current-configuration-version": {
      data: r.currentConfigurationVersionId ? { id: r.currentConfigurationVersionId, type: "configuration-versions" } : null,
    },
    "current-run": { data: r.currentRun ? { id: r.currentRun.id, type: "runs" } : null },
    "latest-run": { data: r.currentRun ? { id: r.currentRun.id, type: "runs" } : null },
    "current-state-version": {
      data: r.currentStateVersionId ? { id: r.currentStateVersionId, type: "state-versions" } : null,
      links: { related: `${self}/current-state-version` },
    },
    "current-assessment-result": { data: null },
    "effective-tag-bindings": { links: { related: `${self}/effective-tag-bindings` } },
    "tag-bindings": { links: { related: `${self}/tag-bindings` } },
    organization: { data: { id: ctx.organization, type: "organizations" } },
    outputs: { data: (r.outputIds ?? []).map((id) => ({ id, type: "workspace-outputs" })), links: { related: `${self}/current-state-version-outputs` } },
    project: { data: { id: r.projectId, type: "projects" } },
    readme: { data: null },
    "remote-state-consumers": { links: { related: `${self}/relationships/remote-state-consumers` } },
    "ssh-key": sshKeyId ? { data: { id: sshKeyId, type: "ssh-keys" }, links: { related: `${API}/ssh-keys/${sshKeyId}` } } : { data: null },
    "locked-by":
      r.lock.locked && r.lock.holder
        ? { data: { id: r.lock.holder.id, type: r.lock.holder.type }, links: { related: `${API}/${r.lock.holder.type}/${r.lock.holder.id}` } }
        : { data: null },
    // The workspace's own variables, shown to callers who may read them (can-read-variable).
    vars: { data: ctx.flags["can-read-variable"] ? (r.varIds ?? []).map((id) => ({ id, type: "vars" })) : [] },
  };
  if (ctx.edition === "self-hosted") {
    relationships["data-retention-policy"] = {
      data: r.dataRetentionPolicy ? { id: r.dataRetentionPolicy.id, type: r.dataRetentionPolicy.type } : null,
    };
  }
  return {
    id: r.id,
    type: "workspaces",
    attributes,
    relationships,
    links: {
      self: `${API}/organizations/${ctx.organization}/workspaces/${r.name}`,
      "self-html": `/app/${ctx.organization}/workspaces/${r.name}`,
    },
  };
}
