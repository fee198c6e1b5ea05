/**
 * Runs through the API (HCP Terraform API docs: Runs, Plans, Applies, Run Events, Comments): find the run's
 * workspace in the D1 index, authorise on it, then ask the workspace's Durable Object, which owns its runs.
 */
import { audited } from "../audit/audit.service";
import type { Capabilities, OrgAccess } from "../auth/permissions";
import type { Principal } from "../auth/principal";
import { allows, authorize, type Action } from "../auth/requirements";
import { requireUsableVersion } from "../terraform-versions/terraform-versions.service";
import type { Caller } from "../caller";
import type { Bindings } from "../env";
import type { ConfigurationVersionRecord } from "../configuration-versions/configuration-versions.types";
import { ApiError, unwrap, type Result } from "../errors";
import { newId, nowIso, randomBase62 } from "../ids";
import type { Page } from "../jsonapi/document";
import { LIMITS } from "../limits";
import { executionOf, loadScope, mutateAs, readById, readRef, type Readable, type WorkspaceRef, type WorkspaceScope } from "../workspaces/workspaces.service";
import { requireOrgAccess } from "../auth/access";
import { parseDoc, workspaceDocsByIds, workspaceDocsByNames } from "../workspaces/workspaces.d1";
import type { WorkspaceRecord } from "../workspaces/workspace.types";
import { archiveUrl } from "../configuration-versions/configuration-versions.service";
import { actorOf, runActor } from "./run-actor.rules";
import { runIndexRow } from "./runs.d1";
import { agentPoolIdsByName, capacityCounts, organizationRunSlice } from "./runs.list.d1";
import type { CreateRunBody } from "./runs.schemas";
import type { RunPermissions } from "./runs.serialize";
import type { ArtifactKind, Phase, RunAction, RunComment, RunEvent, RunOptions, RunRecord, RunStatus } from "./runs.types";
import { matchesFilters, parseRunFilters, RUN_OPERATIONS, type RunFilters } from "./runs.filters";
import { workspaceObject } from "../workspaces/workspace.stub";
import { piecesResponse } from "../platform/pieces";
import type { SignedArtifact } from "./runs.urls";

/** A run with the caller's standing on its workspace. */
export interface RunRead {
  run: RunRecord;
  readable: Readable;
  /** The run's events (single reads: the `run-events` relationship lists them). */
  eventIds?: string[];
}

/** The caller's `permissions` on the runs of a workspace, from the same requirement table the actions are checked with. */
export function runPermissions(principal: Principal, target: { access: OrgAccess; caps: Capabilities }): RunPermissions {
  const apply = allows(principal, "runs.apply", target);
  return {
    "can-apply": apply,
    "can-cancel": apply,
    "can-comment": allows(principal, "runs.queue", target),
    "can-discard": apply,
    "can-force-execute": apply,
    "can-force-cancel": allows(principal, "runs.force-cancel", target),
    // No policy checks run here; owners and holders of the organisation's policy-override permission could override them.
    "can-override-policy-check": target.access.isOwner || target.access.orgPermissions["manage-policy-overrides"] === true,
  };
}

/** `run-<16>` of a plan, apply, run event or comment id (docs/runs.md, "Identifiers"). */
export function runIdOf(id: string): string {
  const rest = id.slice(id.indexOf("-") + 1);
  return `run-${rest.slice(0, 16)}`;
}

/**
 * Each run's workspace, as this isolate has learnt it. A run never moves, so an entry never goes stale (a deleted
 * run's object answers 404 itself); clients poll a run's reads every second or two while it moves on, and each poll
 * after the first then costs the access batch and the object, with no index read ahead of them.
 */
const RUN_WORKSPACES = new Map<string, string>();
const RUN_WORKSPACES_MAX = 10_000;

/** The run's workspace: remembered, else from the nearest index instance, else (a run newer than it) the primary. */
async function workspaceOf(caller: Caller, runId: string): Promise<string> {
  const known = RUN_WORKSPACES.get(runId);
  if (known) return known;
  const row = (await runIndexRow(caller.near, runId)) ?? (await runIndexRow(caller.db, runId));
  if (!row) throw ApiError.of("not_found");
  if (RUN_WORKSPACES.size >= RUN_WORKSPACES_MAX) RUN_WORKSPACES.delete(RUN_WORKSPACES.keys().next().value as string);
  RUN_WORKSPACES.set(runId, row.workspaceId);
  return row.workspaceId;
}

/** A run the caller may act on with `action` (404 when it may not see it). */
export async function readRun(caller: Caller, runId: string, action: Action = "runs.read", opts: { events?: boolean } = {}): Promise<RunRead> {
  const workspaceId = await workspaceOf(caller, runId);
  const stub = workspaceObject(caller.env, workspaceId);
  // The object's answers ride beside the access batch (one step, not two, for every poll) and are used only once it
  // has authorised the caller.
  const [readable, got, events] = await Promise.all([
    readById(caller, workspaceId, action),
    stub.getRun(runId),
    opts.events ? stub.listRunEvents(runId) : null,
  ]);
  const run = unwrap(got).value.run;
  return { run, readable, ...(events?.ok ? { eventIds: events.value.map((e) => e.id) } : {}) };
}

const A = "/data/attributes";

/** The options a create request sends (unsent ones take the engine's defaults). */
function optionsOf(a: NonNullable<CreateRunBody["data"]["attributes"]>): Partial<RunOptions> {
  const o: Partial<RunOptions> = { source: "tfe-api" };
  const set = <K extends keyof RunOptions>(key: K, value: RunOptions[K] | null | undefined) => {
    if (value !== null && value !== undefined) o[key] = value;
  };
  set("message", a.message);
  set("isDestroy", a["is-destroy"]);
  set("refresh", a.refresh);
  set("refreshOnly", a["refresh-only"]);
  set("planOnly", a["plan-only"]);
  set("savePlan", a["save-plan"]);
  set("autoApply", a["auto-apply"]);
  set("allowEmptyApply", a["allow-empty-apply"]);
  set("allowConfigGeneration", a["allow-config-generation"]);
  set("targetAddrs", a["target-addrs"]);
  set("replaceAddrs", a["replace-addrs"]);
  set("terraformVersion", a["terraform-version"]);
  if (a.variables) o.variables = a.variables.map((v) => ({ key: v.key, value: v.value }));
  return o;
}

/** Why a run cannot be queued in a workspace whose (effective) execution mode is `local`. */
export const LOCAL_EXECUTION = "The workspace uses local execution: Terraform runs where it is invoked and only stores its state here, so no run is queued";

/**
 * POST /runs: queues a run in the workspace (queue plans; destroy plans also need runs.destroy). `source`: `tfe-ui` for
 * the web UI's "New run", as HCP's UI runs are.
 */
export async function createRun(caller: Caller, body: CreateRunBody, source: "tfe-api" | "tfe-ui" = "tfe-api"): Promise<RunRead> {
  const attributes = body.data.attributes ?? {};
  const workspaceId = body.data.relationships.workspace.data.id;
  const cvId = body.data.relationships["configuration-version"]?.data?.id ?? null;
  const id = newId("run");
  const { readable, value } = await mutateAs(caller, workspaceId, "runs.queue", async (r, guard) => {
    if (attributes["is-destroy"]) authorize(caller, "runs.destroy", { access: r.scope.access, caps: r.caps });
    // Only after authorising: who may not queue runs here learns nothing of the request's shape.
    if (attributes["terraform-version"] && attributes["plan-only"] !== true)
      throw ApiError.of("invalid_attribute", { detail: "terraform-version is only valid for plan-only runs", pointer: `${A}/terraform-version` });
    // Its jobs go where the workspace's execution mode says, inherited from its project or organisation included.
    const exec = executionOf(r);
    if (exec.mode === "local") throw ApiError.of("invalid_attribute", { detail: LOCAL_EXECUTION, pointer: "/data/relationships/workspace" });
    if (attributes["terraform-version"]) await requireUsableVersion(caller, attributes["terraform-version"], `${A}/terraform-version`);
    return workspaceObject(caller.env, r.record.id).createRun({
      id,
      now: nowIso(),
      configurationVersionId: cvId,
      options: { ...optionsOf(attributes), source },
      creator: runActor(caller, r),
      agentPoolId: exec.agentPoolId,
      guard: audited(caller, guard, {
        id,
        type: "run",
        action: "create",
        meta: { workspace_id: r.record.id, is_destroy: attributes["is-destroy"] === true, plan_only: attributes["plan-only"] === true },
      }),
    });
  });
  const events = await workspaceObject(caller.env, readable.record.id).listRunEvents(value.run.id);
  return { run: value.run, readable, ...(events.ok ? { eventIds: events.value.map((e) => e.id) } : {}) };
}

/** What each run action needs (HCP Terraform API docs: Runs; force-cancel is for workspace admins). */
const ACTION_REQUIREMENT: Record<RunAction, Action> = {
  apply: "runs.apply",
  discard: "runs.apply",
  cancel: "runs.apply",
  "force-cancel": "runs.force-cancel",
  "force-execute": "runs.apply",
};

/** A run action; `body` is the request's optional `{comment}`, reported bad only to a caller allowed the action. */
export async function runAction(caller: Caller, runId: string, action: RunAction, body: Result<{ comment?: string | null } | undefined>): Promise<void> {
  const workspaceId = await workspaceOf(caller, runId);
  await mutateAs(caller, workspaceId, ACTION_REQUIREMENT[action], (r, guard) => {
    const comment = unwrap(body).value?.comment ?? null;
    return workspaceObject(caller.env, r.record.id).runAction({
      runId,
      action,
      comment,
      now: nowIso(),
      by: runActor(caller, r),
      guard: audited(caller, guard, { id: runId, type: "run", action: action.replace("-", "_"), meta: { workspace_id: r.record.id } }),
    });
  });
}

/**
 * A page of the workspace's runs, newest first. Without filters the object pages them itself; with filters they are
 * read in slices until the page is complete (at most LIMITS.runListScanMax runs are looked at).
 */
export async function listWorkspaceRuns(
  caller: Caller,
  workspace: WorkspaceRef,
  filters: RunFilters,
  page: Page,
): Promise<{ readable: Readable; items: RunRecord[]; total: number }> {
  // By id (the API) or by organisation and name (the UI): one D1 batch either way.
  const readable = await readRef(caller, workspace, "runs.read");
  const stub = workspaceObject(caller.env, readable.record.id);
  const offset = (page.number - 1) * page.size;
  if (unfiltered(filters)) {
    const res = unwrap(await stub.listRuns({ offset, limit: page.size, includePlanOnly: false })).value;
    return { readable, items: res.items, total: res.total };
  }
  if (filters.agentPoolNames) {
    const pools = await agentPoolIdsByName(caller.db, readable.record.organizationId, filters.agentPoolNames);
    const pool = effectivePoolId(readable.scope, readable.record);
    if (!pool || !pools.has(pool)) return { readable, items: [], total: 0 };
  }
  const matched: RunRecord[] = [];
  const step = LIMITS.pageSizeMax;
  for (let at = 0; at < LIMITS.runListScanMax; at += step) {
    const res = unwrap(await stub.listRuns({ offset: at, limit: step, includePlanOnly: true })).value;
    for (const run of res.items) if (matchesFilters(run, filters)) matched.push(run);
    if (at + step >= res.total) break;
  }
  return { readable, items: matched.slice(offset, offset + page.size), total: matched.length };
}

const unfiltered = (f: RunFilters) =>
  !f.operations &&
  !f.statuses &&
  !f.sources &&
  !f.statusGroup &&
  !f.since &&
  !f.until &&
  !f.agentPoolNames &&
  f.user === null &&
  f.commit === null &&
  f.basic === null;

/** The agent pool a workspace's runs execute in (its own or its project's or organisation's default; null: none). */
function effectivePoolId(scope: WorkspaceScope, record: WorkspaceRecord): string | null {
  const rel = scope.serialize(record).relationships?.["agent-pool"] as { data: { id: string } | null } | undefined;
  return rel?.data?.id ?? null;
}

/**
 * The organisation's runs the caller may read, in list order, matching the filters: D1 slices, each slice's
 * workspaces authorised in one batch (at most LIMITS.runListScanMax runs are looked at). `want`: how many to collect.
 */
async function scanOrganization(
  caller: Caller,
  access: OrgAccess,
  filters: RunFilters,
  opts: { statuses: RunStatus[] | null; oldestFirst: boolean; want: number },
): Promise<RunRead[]> {
  const organizationId = access.organization.externalId;
  let workspaceIds: string[] | null = null;
  if (filters.workspaceNames) {
    workspaceIds = (await workspaceDocsByNames(caller.db, organizationId, filters.workspaceNames)).map((d) => parseDoc(d).id);
    if (!workspaceIds.length) return [];
  }
  const pools = filters.agentPoolNames ? await agentPoolIdsByName(caller.db, organizationId, filters.agentPoolNames) : null;
  const statuses = opts.statuses ?? (filters.statuses as RunStatus[] | null);
  const out: RunRead[] = [];
  const step = LIMITS.pageSizeMax;
  for (let at = 0; at < LIMITS.runListScanMax && out.length < opts.want; at += step) {
    const slice = await organizationRunSlice(caller.db, {
      organizationId,
      workspaceIds,
      statuses,
      since: filters.since,
      until: filters.until,
      oldestFirst: opts.oldestFirst,
      offset: at,
      limit: step,
    });
    const candidates = slice.filter((run) => matchesFilters(run, filters));
    if (candidates.length) {
      const ids = [...new Set(candidates.map((r) => r.workspaceId))];
      const records = (await workspaceDocsByIds(caller.db, organizationId, ids)).map(parseDoc);
      const scope = await loadScope(caller, organizationId, records);
      const byId = new Map(records.map((r) => [r.id, r]));
      for (const run of candidates) {
        const record = byId.get(run.workspaceId);
        if (!record || !scope) continue;
        const caps = scope.capsOf(record);
        if (caps.runs < 1) continue;
        if (pools && !pools.has(effectivePoolId(scope, record) ?? "")) continue;
        out.push({ run, readable: { record, scope, caps } });
        if (out.length >= opts.want) break;
      }
    }
    if (slice.length < step) break;
  }
  return out;
}

/** GET /organizations/:name/runs: newest first, past year unless `filter[timeframe]` says otherwise; no totals. */
export async function listOrganizationRuns(
  caller: Caller,
  organization: string,
  filters: RunFilters,
  page: Page,
): Promise<{ reads: RunRead[]; hasNext: boolean }> {
  // Any member may list; each run is shown only to readers of its workspace's runs.
  const access = await requireOrgAccess(caller, { name: organization });
  const offset = (page.number - 1) * page.size;
  const found = await scanOrganization(caller, access, filters, { statuses: null, oldestFirst: false, want: offset + page.size + 1 });
  return { reads: found.slice(offset, offset + page.size), hasNext: found.length > offset + page.size };
}

/** GET /organizations/:name/runs/queue: runs waiting for or held by an agent, oldest first, each with its place. */
export async function organizationQueue(caller: Caller, organization: string, page: Page): Promise<{ reads: RunRead[]; total: number }> {
  const access = await requireOrgAccess(caller, { name: organization });
  const filters = parseRunFilters({ "filter[operation]": RUN_OPERATIONS.join(",") }, Date.now(), false);
  if ("bad" in filters) throw ApiError.of("internal");
  const found = await scanOrganization(caller, access, filters, {
    statuses: ["plan_queued", "apply_queued", "planning", "applying"],
    oldestFirst: true,
    want: LIMITS.runListScanMax,
  });
  // Queued runs are numbered in the order agents take them; executing ones are at the head (0).
  let place = 0;
  const placed = found.map((r) => ({ ...r, run: { ...r.run, positionInQueue: r.run.status.endsWith("_queued") ? ++place : 0 } }));
  const offset = (page.number - 1) * page.size;
  return { reads: placed.slice(offset, offset + page.size), total: placed.length };
}

/** GET /organizations/:name/capacity. */
export async function organizationCapacity(caller: Caller, organization: string): Promise<{ name: string; pending: number; running: number }> {
  const access = await requireOrgAccess(caller, { name: organization });
  return { name: access.organization.name, ...(await capacityCounts(caller.db, access.organization.externalId)) };
}

// ---- plans and applies ----

/** The run of a plan or apply, and which phase the id names. */
export async function readPhase(caller: Caller, phaseId: string, action: Action = "runs.read"): Promise<RunRead & { phase: Phase }> {
  const phase: Phase = phaseId.startsWith("plan-") ? "plan" : "apply";
  const read = await readRun(caller, runIdOf(phaseId), action);
  if (read.run[phase].id !== phaseId) throw ApiError.of("not_found");
  return { ...read, phase };
}

/**
 * An artifact of the run, or null while there is none yet. Past `maxBytes` (default LIMITS.runArtifactReadBytes) only
 * its size is answered: a large one is read through its signed URL, streamed.
 */
export async function readArtifact(
  caller: Caller,
  read: RunRead,
  kind: ArtifactKind,
  maxBytes: number = LIMITS.runArtifactReadBytes,
): Promise<{ bytes: Uint8Array | null; size: number } | null> {
  const res = await workspaceObject(caller.env, read.readable.record.id).getArtifact({ runId: read.run.id, kind, maxBytes });
  if (!res.ok) {
    if (res.code === "not_found") return null;
    unwrap(res);
  }
  return res.ok ? res.value : null;
}

// ---- run events and comments ----

export async function listRunEvents(caller: Caller, runId: string): Promise<{ read: RunRead; events: RunEvent[] }> {
  const read = await readRun(caller, runId);
  const events = unwrap(await workspaceObject(caller.env, read.readable.record.id).listRunEvents(runId)).value;
  return { read, events };
}

/** `GET /runs/:id/configuration-version/download`: the run's configuration archive, once the run is readable. */
export async function runConfigurationDownloadUrl(caller: Caller, runId: string, origin: string): Promise<string> {
  const { run } = await readRun(caller, runId);
  return archiveUrl(caller, run.workspaceId, run.configurationVersionId, origin);
}

export async function readRunEvent(caller: Caller, eventId: string): Promise<{ read: RunRead; event: RunEvent }> {
  const { read, events } = await listRunEvents(caller, runIdOf(eventId));
  const event = events.find((e) => e.id === eventId);
  if (!event) throw ApiError.of("not_found");
  return { read, event };
}

/** Comments by id, from the run's workspace object (in parallel: a run has few). */
export async function commentsOf(caller: Caller, workspaceId: string, ids: string[]): Promise<RunComment[]> {
  const stub = workspaceObject(caller.env, workspaceId);
  const got = await Promise.all(ids.map((id) => stub.getComment(id)));
  return got.flatMap((r) => (r.ok ? [r.value] : []));
}

export async function listComments(caller: Caller, runId: string): Promise<RunComment[]> {
  const read = await readRun(caller, runId);
  return commentsOf(caller, read.readable.record.id, read.run.commentIds);
}

export async function readComment(caller: Caller, commentId: string): Promise<RunComment> {
  const read = await readRun(caller, runIdOf(commentId));
  return unwrap(await workspaceObject(caller.env, read.readable.record.id).getComment(commentId)).value;
}

/** POST /runs/:id/comments: whoever may queue runs may comment (can-comment). */
export async function addComment(caller: Caller, runId: string, body: string): Promise<RunComment> {
  const workspaceId = await workspaceOf(caller, runId);
  const { value } = await mutateAs(caller, workspaceId, "runs.queue", (r) =>
    workspaceObject(caller.env, r.record.id).addComment({
      runId,
      id: `wsc-${runId.slice("run-".length)}${randomBase62(4)}`,
      body,
      now: nowIso(),
      actor: actorOf(caller.principal),
    }),
  );
  return value;
}

// ---- logs ----

/** Bytes of a phase's framed log from `offset` (the signed URL was checked by the route). */
export async function readLog(
  caller: Pick<Caller, "env">,
  workspaceId: string,
  runId: string,
  phase: Phase,
  offset: number,
  limit: number,
): Promise<Uint8Array> {
  return unwrap(await workspaceObject(caller.env, workspaceId).readLog({ runId, phase, offset, limit })).value.bytes;
}

/** The bytes of a phase's log from `offset`, for its signed URL (the caller verified the signature). */
export async function signedLogRead(env: Bindings, workspaceId: string, runId: string, phase: Phase, offset: number, limit: number): Promise<Uint8Array> {
  return unwrap(await workspaceObject(env, workspaceId).readLog({ runId, phase, offset, limit })).value.bytes;
}

/** A plan artifact's bytes, for its signed URL (the caller verified the signature). */
export function signedArtifact(env: Bindings, workspaceId: string, runId: string, kind: SignedArtifact): Promise<Response> {
  const stub = workspaceObject(env, workspaceId);
  return piecesResponse((fromSeq) => stub.readArtifactPart({ runId, kind, fromSeq }), "application/json", "artifact vanished while streaming");
}

/** The configuration version a run uses, once the caller may read the run. */
export async function runConfigurationVersion(caller: Caller, runId: string): Promise<ConfigurationVersionRecord> {
  const { run } = await readRun(caller, runId);
  return unwrap(await workspaceObject(caller.env, run.workspaceId).getConfigurationVersion(run.configurationVersionId)).value.cv;
}
