/**
 * Runs, plans, applies, run events and comments as JSON:API resources (HCP Terraform API docs: Runs, Plans,
 * Applies, Run Events, Comments). Relationships clients dereference without `include` always carry data.
 */
import type { Resource } from "../jsonapi/document";
import { runActions } from "./runs.rules";
import type { Actor, PhaseRecord, RunComment, RunEvent, RunRecord } from "./runs.types";

const API = "/api/v2";

/** What the caller may do with a run: computed by the service from the requirement table (src/auth/requirements.ts). */
export interface RunPermissions {
  "can-apply": boolean;
  "can-cancel": boolean;
  "can-comment": boolean;
  "can-discard": boolean;
  "can-force-execute": boolean;
  "can-force-cancel": boolean;
  "can-override-policy-check": boolean;
}

export interface RunContext {
  permissions: RunPermissions;
  /** The run's events, oldest first; absent, the relationship shows its link only (lists). */
  eventIds?: string[];
  now: string;
}

const actorData = (a: Actor | null) => (a ? { id: a.id, type: "users" } : null);

export function serializeRun(run: RunRecord, ctx: RunContext): Resource {
  const self = `${API}/runs/${run.id}`;
  return {
    id: run.id,
    type: "runs",
    attributes: {
      actions: runActions(run, ctx.now),
      "allow-config-generation": run.allowConfigGeneration,
      "allow-empty-apply": run.allowEmptyApply,
      "auto-apply": run.autoApply,
      "canceled-at": run.canceledAt,
      "created-at": run.createdAt,
      "force-cancel-available-at": run.forceCancelAvailableAt,
      "has-changes": run.hasChanges,
      "is-destroy": run.isDestroy,
      message: run.message,
      permissions: ctx.permissions,
      "plan-only": run.planOnly,
      "position-in-queue": run.positionInQueue,
      refresh: run.refresh,
      "refresh-only": run.refreshOnly,
      "replace-addrs": run.replaceAddrs,
      "save-plan": run.savePlan,
      source: run.source,
      status: run.status,
      "status-timestamps": run.statusTimestamps,
      "target-addrs": run.targetAddrs,
      "terraform-version": run.terraformVersion,
      "trigger-reason": run.triggerReason,
      variables: run.variables.map((v) => ({ key: v.key, value: v.value })),
    },
    relationships: {
      workspace: { data: { id: run.workspaceId, type: "workspaces" } },
      "configuration-version": {
        data: { id: run.configurationVersionId, type: "configuration-versions" },
        links: { related: `${self}/configuration-version` },
      },
      plan: { data: { id: run.plan.id, type: "plans" }, links: { related: `${self}/plan` } },
      apply: { data: { id: run.apply.id, type: "applies" }, links: { related: `${self}/apply` } },
      "created-by": { data: actorData(run.createdBy) },
      "confirmed-by": { data: actorData(run.confirmedBy) },
      "cost-estimate": { data: null },
      "input-state-version": { data: null },
      "policy-checks": { data: [] },
      "task-stages": { data: (run.taskStages ?? []).map((t) => ({ id: t.id, type: "task-stages" })) },
      "tf-policy-evaluations": { data: [] },
      "workspace-run-alerts": { data: [] },
      "run-events": {
        ...(ctx.eventIds ? { data: ctx.eventIds.map((id) => ({ id, type: "run-events" })) } : {}),
        links: { related: `${self}/run-events` },
      },
      comments: { data: run.commentIds.map((id) => ({ id, type: "comments" })), links: { related: `${self}/comments` } },
    },
    links: { self },
  };
}

function executionDetails(phase: PhaseRecord) {
  const a = phase.agent;
  if (!a) return { mode: "remote" as const };
  return {
    mode: a.poolId ? ("agent" as const) : ("remote" as const),
    "agent-id": a.id,
    "agent-name": a.name,
    "agent-pool-id": a.poolId,
    "agent-pool-name": a.poolName,
  };
}

function phaseAttributes(phase: PhaseRecord, logReadUrl: string) {
  return {
    "execution-details": executionDetails(phase),
    "log-read-url": logReadUrl,
    "resource-additions": phase.resourceAdditions,
    "resource-changes": phase.resourceChanges,
    "resource-destructions": phase.resourceDestructions,
    "resource-imports": phase.resourceImports,
    status: phase.status,
    "status-timestamps": phase.statusTimestamps,
  };
}

/** A plan; `logReadUrl` is absolute and signed (./runs.urls.ts). */
export function serializePlan(run: RunRecord, logReadUrl: string): Resource {
  const self = `${API}/plans/${run.plan.id}`;
  return {
    id: run.plan.id,
    type: "plans",
    attributes: {
      ...phaseAttributes(run.plan, logReadUrl),
      "has-changes": run.plan.hasChanges ?? false,
      "generated-configuration": false,
    },
    relationships: {
      run: { data: { id: run.id, type: "runs" } },
      "state-versions": { data: [] },
      exports: { data: [] },
    },
    links: { self, "json-output": `${self}/json-output` },
  };
}

export function serializeApply(run: RunRecord, logReadUrl: string): Resource {
  return {
    id: run.apply.id,
    type: "applies",
    attributes: phaseAttributes(run.apply, logReadUrl),
    relationships: { run: { data: { id: run.id, type: "runs" } }, "state-versions": { data: [] } },
    links: { self: `${API}/applies/${run.apply.id}` },
  };
}

export function serializeRunEvent(e: RunEvent): Resource {
  return {
    id: e.id,
    type: "run-events",
    attributes: { action: e.action, "created-at": e.createdAt, description: e.description },
    relationships: {
      actor: { data: actorData(e.actor) },
      comment: { data: e.commentId ? { id: e.commentId, type: "comments" } : null },
    },
    links: { self: `${API}/run-events/${e.id}` },
  };
}

export function serializeComment(c: RunComment): Resource {
  return {
    id: c.id,
    type: "comments",
    attributes: { body: c.body },
    relationships: {
      run: { data: { id: c.runId, type: "runs" } },
      "run-event": { data: { id: c.runEventId, type: "run-events" }, links: { related: `${API}/run-events/${c.runEventId}` } },
    },
    links: { self: `${API}/comments/${c.id}` },
  };
}

export function serializeCapacity(organization: string, counts: { pending: number; running: number }): Resource {
  return {
    id: organization,
    type: "organization-capacity",
    attributes: { pending: counts.pending, running: counts.running },
    relationships: { organization: { data: { id: organization, type: "organizations" } } },
  };
}
