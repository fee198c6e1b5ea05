/** @jsxImportSource hono/jsx */
/**
 * A workspace's runs and each run's page, through the runs API's own services: the list is `listWorkspaceRuns` with
 * the API's query, the page reads the run, its logs, its redacted JSON plan's changes and its comments as the API's
 * reads do, and each action form calls `runAction` as `POST /runs/:id/actions/*` does. Terraform prints
 * `https://<host>/app/<org>/<workspace>/runs/<run>` for every run it starts; that address leads here.
 */
import { listRunTaskStages } from "../../run-tasks/run-tasks.service";
import { Hono } from "hono";
import type { Action } from "../../auth/requirements";
import type { Caller } from "../../caller";
import type { AppEnv } from "../../env";
import { ApiError, fail, ok } from "../../errors";
import { Included } from "../../jsonapi/document";
import { pageOf } from "../../jsonapi/schemas";
import { validationError } from "../../jsonapi/validation";
import { LIMITS } from "../../limits";
import { signedLogUrl } from "../../runs/runs.urls";
import { includeUsers } from "../../runs/runs.include";
import { isFinal, runActions } from "../../runs/runs.rules";
import { createRunBody, runActionBody } from "../../runs/runs.schemas";
import {
  commentsOf,
  createRun,
  listWorkspaceRuns,
  runConfigurationVersion,
  readArtifact,
  readLog,
  readRun,
  runAction,
  runPermissions,
} from "../../runs/runs.service";
import { readByName } from "../../workspaces/workspaces.service";
import type { Actor, Phase, PhaseRecord, RunStatus } from "../../runs/runs.types";
import { parseRunFilters } from "../../runs/runs.filters";
import { callerOf, type Ctx, flagsOf } from "../context";
import { reasonsOf, refusesInput } from "../forms";
import { decodeLog, renderLog } from "./run-log.view";
import { planView } from "./run-plan.view";
import { definePage } from "../define-page";
import { type Counts, type PhaseView, type RunForm, RunListPage, RunPage, type RunRefusal, type RunRowView, runPath } from "./runs.view";

export const runsUi = new Hono<AppEnv>();

const refOf = (c: Ctx) => ({ organization: c.req.param("organization") ?? "", name: c.req.param("name") ?? "", runId: c.req.param("run_id") ?? "" });

const countsOf = (p: PhaseRecord): Counts => ({
  additions: p.resourceAdditions,
  changes: p.resourceChanges,
  destructions: p.resourceDestructions,
  imports: p.resourceImports,
});

/** Usernames of the actors (the users `include=created_by` would bring; a service user by its API name). */
async function usernames(caller: Caller, actors: (Actor | null)[]): Promise<Map<string, string>> {
  const included = new Included();
  await includeUsers(caller, actors, included);
  return new Map(included.items.map((u) => [u.id, String((u.attributes as { username?: unknown }).username ?? u.id)]));
}

/** The workspace's runs; `refusal`: a refused "New run" form, its reasons shown beside it (answered 422). */
async function runListPage(c: Ctx, refusal?: { values: Record<string, string>; errors: string[] }): Promise<Response> {
  const { organization, name } = refOf(c);
  const q = c.req.query();
  // The API's own filters (GET /workspaces/:id/runs): an empty form field is no filter there too.
  const filters = parseRunFilters(q, Date.now(), false);
  if ("bad" in filters) throw ApiError.of("bad_request", { detail: `${filters.bad}: ${filters.detail}`, parameter: filters.bad });
  const pg = pageOf(q);
  const caller = callerOf(c);
  const { readable, items, total } = await listWorkspaceRuns(caller, { organization, name }, filters, pg);
  const names = await usernames(
    caller,
    items.map((r) => r.createdBy),
  );
  const rows: RunRowView[] = items.map((r) => ({
    id: r.id,
    status: r.status,
    message: r.message,
    createdAt: r.createdAt,
    createdBy: r.createdBy ? (names.get(r.createdBy.id) ?? r.createdBy.id) : null,
    planOnly: r.planOnly,
    isDestroy: r.isDestroy,
    plan: { status: r.plan.status, counts: countsOf(r.plan) },
    apply: { status: r.apply.status, counts: countsOf(r.apply) },
  }));
  return c.html(
    <RunListPage
      principal={caller.principal}
      organization={readable.scope.access.organization.name}
      workspace={readable.record.name}
      rows={rows}
      total={total}
      page={pg}
      query={new URL(c.req.url).searchParams}
      newRun={
        flagsOf(readable)["can-queue-run"] === true
          ? { destroy: flagsOf(readable)["can-queue-destroy"] === true, open: q["new-run"] !== undefined, refusal }
          : null
      }
    />,
    refusal ? 422 : 200,
  );
}

definePage(runsUi, "get", "/:organization/workspaces/:name/runs", "runs.read", (c) => runListPage(c));

const lines = (raw: string) =>
  raw
    .split(/[\n,]/)
    .map((x) => x.trim())
    .filter((x) => x !== "");

/**
 * "New run", as POST /runs queues one from the workspace's current configuration version: the kinds HCP's page offers
 * (plan and apply, plan only, refresh only, destroy), a message, target and replace addresses, run variables
 * (`key = value` lines, values as HCL). The service authorises as for the API (a destroy needs the destroy right).
 */
definePage(runsUi, "post", "/:organization/workspaces/:name/runs/new", "runs.queue", async (c) => {
  const { organization, name } = refOf(c);
  const form = (await c.req.parseBody()) as Record<string, string>;
  const values = Object.fromEntries(["kind", "message", "target-addrs", "replace-addrs", "variables"].map((k) => [k, String(form[k] ?? "")]));
  const kind = values.kind;
  const variables: Array<{ key: string; value: string }> = [];
  const errors: string[] = [];
  for (const line of values.variables
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)) {
    const eq = line.indexOf("=");
    if (eq <= 0) errors.push(`Run variable "${line}" is not written as key = value`);
    else variables.push({ key: line.slice(0, eq).trim(), value: line.slice(eq + 1).trim() });
  }
  if (!["apply", "plan-only", "refresh-only", "destroy"].includes(kind)) errors.push("Choose the kind of run");
  if (errors.length) return runListPage(c, { values, errors });
  const caller = callerOf(c);
  const readable = await readByName(caller, organization, name, "runs.read");
  const attributes = {
    ...(values.message.trim() ? { message: values.message.trim() } : {}),
    ...(kind === "plan-only" ? { "plan-only": true } : {}),
    ...(kind === "refresh-only" ? { "refresh-only": true } : {}),
    ...(kind === "destroy" ? { "is-destroy": true } : {}),
    ...(lines(values["target-addrs"]).length ? { "target-addrs": lines(values["target-addrs"]) } : {}),
    ...(lines(values["replace-addrs"]).length ? { "replace-addrs": lines(values["replace-addrs"]) } : {}),
    ...(variables.length ? { variables } : {}),
  };
  const parsed = createRunBody.safeParse({
    data: { type: "runs", attributes, relationships: { workspace: { data: { type: "workspaces", id: readable.record.id } } } },
  });
  if (!parsed.success) return runListPage(c, { values, errors: reasonsOf(validationError(parsed.error, "json")) });
  try {
    const created = await createRun(caller, parsed.data, "tfe-ui");
    return c.redirect(runPath(readable.scope.access.organization.name, readable.record.name, created.run.id), 303);
  } catch (e) {
    if (refusesInput(e)) return runListPage(c, { values, errors: reasonsOf(e) });
    throw e;
  }
});

/** Statuses in which the run waits for someone: the page stops refreshing (it would wipe a comment being typed). */
const AWAITING: ReadonlySet<RunStatus> = new Set(["planned", "planned_and_saved"]);
/** A phase has a log once an agent claimed it (or it ended without one, which writes a line). */
const UNSTARTED: ReadonlySet<string> = new Set(["pending", "queued"]);

/** The run page; `refusal` shows a refused action's reasons (answered with its status, 409 or 422). */
async function runPage(c: Ctx, refusal?: { value: RunRefusal; status: number }): Promise<Response> {
  const { organization, name, runId } = refOf(c);
  const caller = callerOf(c);
  const read = await readRun(caller, runId);
  const { run, readable } = read;
  const orgName = readable.scope.access.organization.name;
  // The run is found by its id; an address naming another workspace (renamed since, say) leads to the run's own.
  if (!refusal && (orgName.toLowerCase() !== organization.toLowerCase() || readable.record.name.toLowerCase() !== name.toLowerCase()))
    return c.redirect(runPath(orgName, readable.record.name, run.id), 303);
  const workspaceId = readable.record.id;
  const origin = new URL(c.req.url).origin;
  const logOf = async (phase: Phase) => {
    if (UNSTARTED.has(run[phase].status)) return null;
    // One byte more than shown tells whether there is more.
    return readLog(caller, workspaceId, run.id, phase, 0, LIMITS.uiRunLogBytes + 1);
  };
  const [planLog, applyLog, planJson, comments, names, planUrl, applyUrl, cv, stages] = await Promise.all([
    logOf("plan"),
    run.planOnly ? null : logOf("apply"),
    // The redacted plan, as `json-output-redacted` gives any reader of the run: the full one is for workspace admins.
    run.plan.status === "finished" ? readArtifact(caller, read, "plan-json-redacted") : null,
    run.commentIds.length ? commentsOf(caller, workspaceId, run.commentIds) : [],
    usernames(caller, [run.createdBy, run.confirmedBy]),
    signedLogUrl(c.env, origin, workspaceId, run.id, "plan"),
    signedLogUrl(c.env, origin, workspaceId, run.id, "apply"),
    runConfigurationVersion(caller, run.id).catch(() => null),
    run.taskStages?.length ? listRunTaskStages(caller, run.id) : [],
  ]);
  const ia = cv?.ingress;
  const phaseView = (phase: Phase, bytes: Uint8Array | null, rawUrl: string): PhaseView => {
    const p = run[phase];
    const truncated = !!bytes && bytes.byteLength > LIMITS.uiRunLogBytes;
    return {
      id: p.id,
      status: p.status,
      statusTimestamps: p.statusTimestamps,
      counts: countsOf(p),
      log: bytes ? renderLog(decodeLog(truncated ? bytes.subarray(0, LIMITS.uiRunLogBytes) : bytes)) : null,
      truncated,
      rawUrl,
    };
  };
  const changesPage = Math.max(1, Number.parseInt(c.req.query("changes-page") ?? "1", 10) || 1);
  const plan = planJson?.bytes ? planView(planJson.bytes, changesPage, LIMITS.uiResourceChangesPage) : null;
  const perms = runPermissions(caller.principal, { access: readable.scope.access, caps: readable.caps });
  const acts = runActions(run, new Date().toISOString());
  const actor = (a: Actor | null) => (a ? (names.get(a.id) ?? a.id) : null);
  return c.html(
    <RunPage
      principal={caller.principal}
      run={{
        organization: orgName,
        workspace: readable.record.name,
        id: run.id,
        status: run.status,
        message: run.message,
        source: run.source,
        createdAt: run.createdAt,
        createdBy: actor(run.createdBy),
        confirmedBy: actor(run.confirmedBy),
        statusTimestamps: run.statusTimestamps,
        planOnly: run.planOnly,
        savePlan: run.savePlan,
        isDestroy: run.isDestroy,
        autoApply: run.autoApply,
        hasChanges: run.hasChanges,
        final: isFinal(run.status),
        live: !isFinal(run.status) && !AWAITING.has(run.status),
        plan: phaseView("plan", planLog, planUrl),
        apply: phaseView("apply", applyLog, applyUrl),
        commit: ia
          ? {
              sha: ia["commit-sha"],
              url: ia["commit-url"],
              branch: ia.branch,
              tag: ia.tag,
              message: ia["commit-message"],
              author: ia["sender-username"],
              pullRequestNumber: ia["pull-request-number"],
              pullRequestUrl: ia["pull-request-url"],
            }
          : null,
        diff: plan ? { ...plan, size: LIMITS.uiResourceChangesPage } : null,
        comments: comments.map((x) => ({ body: x.body, createdAt: x.createdAt })),
        taskStages: stages.map((s) => ({
          stage: s.stage.stage,
          status: s.stage.status,
          results: s.results.map((t) => ({
            name: t.taskName,
            enforcement: t.enforcementLevel,
            status: t.status,
            message: t.message,
            // The integration's link, shown only as a web address.
            url: /^https?:\/\//i.test(t.url) ? t.url : "",
            outcomes: t.outcomes.length,
          })),
        })),
        // The same flags the API shows the caller: its `permissions` and the run's `actions`.
        offered: {
          apply: perms["can-apply"] && acts["is-confirmable"],
          discard: perms["can-discard"] && acts["is-discardable"],
          cancel: perms["can-cancel"] && acts["is-cancelable"],
          "force-cancel": perms["can-force-cancel"] && acts["is-force-cancelable"],
        },
        refusal: refusal?.value,
      }}
    />,
    (refusal?.status ?? 200) as 200,
  );
}

definePage(runsUi, "get", "/:organization/workspaces/:name/runs/:run_id", "runs.read", (c) => runPage(c));

// The address Terraform prints (internal/cloud: runURL) has no `workspaces` segment; it names the same page.
definePage(runsUi, "get", "/:organization/:name/runs/:run_id{run-[A-Za-z0-9]+}", "authenticated", (c) => {
  const { organization, name, runId } = refOf(c);
  return c.redirect(runPath(organization, name, runId), 302);
});

/** A refusal the page shows next to its forms: the run's status does not allow it (409), or its input is bad. */
const refusesAction = (e: ApiError) => e.status === 409 || e.status === 422 || e.status === 400;

/** A run action's form: `POST /runs/:id/actions/<action>` with the form's comment, as the API's body. */
function actionForm(form: RunForm) {
  return async (c: Ctx) => {
    const { organization, name, runId } = refOf(c);
    const body = await c.req.parseBody();
    const comment = typeof body.comment === "string" ? body.comment.trim() : "";
    const parsed = runActionBody.safeParse(comment ? { comment } : undefined);
    const input = parsed.success ? ok(parsed.data) : fail("invalid_attribute", validationError(parsed.error, "json").errors[0]?.detail, "/comment");
    try {
      await runAction(callerOf(c), runId, form, input);
    } catch (e) {
      if (e instanceof ApiError && refusesAction(e))
        return runPage(c, { value: { form, values: { comment }, errors: e.errors.map((x) => x.detail ?? x.title) }, status: e.status });
      throw e;
    }
    return c.redirect(runPath(organization, name, runId), 303);
  };
}

const ACTIONS: Array<[RunForm, Action]> = [
  ["apply", "runs.apply"],
  ["discard", "runs.apply"],
  ["cancel", "runs.apply"],
  ["force-cancel", "runs.force-cancel"],
];
for (const [form, action] of ACTIONS) definePage(runsUi, "post", `/:organization/workspaces/:name/runs/:run_id/${form}`, action, actionForm(form));
