/** Runs, plans, applies, run events and comments (HCP Terraform API docs: Runs, Plans, Applies, Run Events, Comments). */
import type { Context } from "hono";
import { callerOf } from "../auth/caller.http";
import type { AppEnv } from "../env";
import { configurationVersionResource } from "../configuration-versions/configuration-versions.schemas";
import { serializeConfigurationVersion } from "../configuration-versions/configuration-versions.serialize";
import { ApiError } from "../errors";
import { Included, jsonapi, paginated } from "../jsonapi/document";
import { defineRoutes } from "../jsonapi/define-route";
import { includeQuery, listDocument, orgParam, pageOf, pageQuery, resourceDocument } from "../jsonapi/schemas";
import { jsonBody, ok, optionalJsonBody, router } from "../jsonapi/validation";
import { workspaceIdParam } from "../workspaces/workspaces.schemas";
import { type SignedArtifact, signedArtifactUrl, signedLogUrl } from "./runs.urls";
import { includeForRuns, includeUsers, parseRunInclude } from "./runs.include";
import {
  applyIdParam,
  applyResource,
  capacityResource,
  commentIdParam,
  commentResource,
  createCommentBody,
  createRunBody,
  planIdParam,
  planResource,
  runActionBody,
  runEventIdParam,
  runEventResource,
  runIdParam,
  orgRunListQuery,
  organizationRunListDocument,
  runListQuery,
  runResource,
} from "./runs.schemas";
import { serializeApply, serializeCapacity, serializeComment, serializePlan, serializeRun, serializeRunEvent } from "./runs.serialize";
import {
  addComment,
  commentsOf,
  createRun,
  listComments,
  listOrganizationRuns,
  listRunEvents,
  listWorkspaceRuns,
  organizationCapacity,
  organizationQueue,
  readArtifact,
  readComment,
  readPhase,
  readRun,
  readRunEvent,
  runAction,
  runConfigurationDownloadUrl,
  runPermissions,
  type RunRead,
  runConfigurationVersion,
} from "./runs.service";
import type { RunAction } from "./runs.types";
import { parseRunFilters } from "./runs.filters";

const defineRoute = defineRoutes({ tags: ["Runs"] });
export const runs = router();

const origin = (c: Context<AppEnv>) => new URL(c.req.url).origin;

/** The run as the caller sees it (its permissions are the caller's). */
export function runResourceOf(c: Context<AppEnv>, read: RunRead) {
  return serializeRun(read.run, {
    permissions: runPermissions(c.get("principal"), { access: read.readable.scope.access, caps: read.readable.caps }),
    eventIds: read.eventIds,
    now: new Date().toISOString(),
  });
}

async function runDocument(c: Context<AppEnv>, read: RunRead, include: string | undefined, status: 200 | 201 = 200) {
  const included = await includeForRuns(callerOf(c), origin(c), [read], include);
  return jsonapi(c, { data: runResourceOf(c, read), ...(included ? { included } : {}) }, status);
}

runs.openapi(
  defineRoute({
    method: "post",
    path: "/runs",
    action: "runs.queue",
    summary: "Create a run in the workspace of relationships.workspace (a destroy run also needs runs.destroy)",
    request: { body: jsonBody(createRunBody) },
    responses: ok("The run", resourceDocument(runResource), 201),
  }),
  async (c) => runDocument(c, await createRun(callerOf(c), c.req.valid("json")), undefined, 201),
);

runs.openapi(
  defineRoute({
    method: "get",
    path: "/runs/{run_id}",
    action: "runs.read",
    summary: "Show a run",
    request: { params: runIdParam, query: includeQuery },
    responses: ok("The run", resourceDocument(runResource)),
  }),
  async (c) => runDocument(c, await readRun(callerOf(c), c.req.valid("param").run_id, "runs.read", { events: true }), c.req.valid("query").include),
);

runs.openapi(
  defineRoute({
    method: "get",
    path: "/workspaces/{workspace_id}/runs",
    action: "runs.read",
    summary: "List a workspace's runs, newest first (plan-only runs only when filter[operation] names them)",
    request: { params: workspaceIdParam, query: runListQuery },
    responses: ok("A page of runs", listDocument(runResource)),
  }),
  async (c) => {
    const q = c.req.valid("query");
    const filters = parseRunFilters(q, Date.now(), false);
    if ("bad" in filters) throw ApiError.of("bad_request", { detail: `${filters.bad}: ${filters.detail}`, parameter: filters.bad });
    const page = pageOf(q);
    const caller = callerOf(c);
    const { readable, items, total } = await listWorkspaceRuns(caller, c.req.valid("param").workspace_id, filters, page);
    const reads = items.map((run) => ({ run, readable }));
    const included = await includeForRuns(caller, origin(c), reads, q.include);
    return jsonapi(
      c,
      paginated(
        c,
        reads.map((r) => runResourceOf(c, r)),
        page,
        total,
        { included },
      ),
    );
  },
);

// ---- actions ----

const ACTIONS: Array<{ action: RunAction; summary: string; requirement: "runs.apply" | "runs.force-cancel" }> = [
  { action: "apply", summary: "Confirm a run awaiting confirmation: its apply is queued", requirement: "runs.apply" },
  { action: "discard", summary: "Discard a pending run or one awaiting confirmation", requirement: "runs.apply" },
  { action: "cancel", summary: "Cancel a run: at once when queued, by interrupting Terraform when running", requirement: "runs.apply" },
  { action: "force-cancel", summary: "End a run whose cancel is under way, at once (workspace admins)", requirement: "runs.force-cancel" },
  {
    action: "force-execute",
    summary: "Start a pending run now, discarding the runs ahead of it (403 unless pending behind another run)",
    requirement: "runs.apply",
  },
];
for (const { action, summary, requirement } of ACTIONS) {
  runs.openapi(
    defineRoute({
      method: "post",
      path: `/runs/{run_id}/actions/${action}`,
      action: requirement,
      summary,
      // Plain JSON `{"comment": "..."}`, `{}` or no body at all, under the JSON:API media type: read by the handler.
      description: 'Body (optional): `{"comment":"..."}`.',
      request: { params: runIdParam },
      responses: {
        202: { description: "Accepted; no body" },
        403: { description: "Not allowed in the run's state" },
        409: { description: "Not allowed in the run's state" },
      },
    }),
    async (c) => {
      await runAction(callerOf(c), c.req.valid("param").run_id, action, await optionalJsonBody(c, runActionBody));
      return c.body(null, 202);
    },
  );
}

runs.openapi(
  defineRoute({
    method: "get",
    path: "/runs/{run_id}/configuration-version",
    action: "runs.read",
    summary: "Show the configuration version a run uses",
    request: { params: runIdParam },
    responses: ok("The configuration version", resourceDocument(configurationVersionResource)),
  }),
  async (c) => {
    const cv = await runConfigurationVersion(callerOf(c), c.req.valid("param").run_id);
    return jsonapi(c, { data: serializeConfigurationVersion(cv) });
  },
);

runs.openapi(
  defineRoute({
    method: "get",
    path: "/runs/{run_id}/configuration-version/download",
    action: "runs.read",
    summary: "Redirect to a short-lived signed URL of the run's configuration archive",
    request: { params: runIdParam },
    responses: { 302: { description: "Redirect to the tar.gz" } },
  }),
  async (c) => c.redirect(await runConfigurationDownloadUrl(callerOf(c), c.req.valid("param").run_id, origin(c)), 302),
);

// ---- plans and applies ----

async function phaseDocument(c: Context<AppEnv>, read: RunRead, phase: "plan" | "apply") {
  const url = await signedLogUrl(c.env, origin(c), read.run.workspaceId, read.run.id, phase);
  return jsonapi(c, { data: phase === "plan" ? serializePlan(read.run, url) : serializeApply(read.run, url) });
}

runs.openapi(
  defineRoute({
    method: "get",
    path: "/plans/{plan_id}",
    action: "runs.read",
    tags: ["Plans"],
    summary: "Show a plan",
    request: { params: planIdParam },
    responses: ok("The plan", resourceDocument(planResource)),
  }),
  async (c) => phaseDocument(c, await readPhase(callerOf(c), c.req.valid("param").plan_id), "plan"),
);

runs.openapi(
  defineRoute({
    method: "get",
    path: "/runs/{run_id}/plan",
    action: "runs.read",
    tags: ["Plans"],
    summary: "Show a run's plan",
    request: { params: runIdParam },
    responses: ok("The plan", resourceDocument(planResource)),
  }),
  async (c) => phaseDocument(c, await readRun(callerOf(c), c.req.valid("param").run_id), "plan"),
);

runs.openapi(
  defineRoute({
    method: "get",
    path: "/applies/{apply_id}",
    action: "runs.read",
    tags: ["Applies"],
    summary: "Show an apply",
    request: { params: applyIdParam },
    responses: ok("The apply", resourceDocument(applyResource)),
  }),
  async (c) => phaseDocument(c, await readPhase(callerOf(c), c.req.valid("param").apply_id), "apply"),
);

runs.openapi(
  defineRoute({
    method: "get",
    path: "/runs/{run_id}/apply",
    action: "runs.read",
    tags: ["Applies"],
    summary: "Show a run's apply",
    request: { params: runIdParam },
    responses: ok("The apply", resourceDocument(applyResource)),
  }),
  async (c) => phaseDocument(c, await readRun(callerOf(c), c.req.valid("param").run_id), "apply"),
);

const jsonOutputResponses = {
  204: { description: "The plan has not finished" },
  307: { description: "Redirect to a short-lived signed URL of the JSON plan" },
};

/** 204 until the plan finished and its JSON plan is stored, then a redirect to a signed URL of it. */
async function jsonOutput(c: Context<AppEnv>, read: RunRead, kind: SignedArtifact = "plan-json") {
  const stored = read.run.plan.status === "finished" && (await readArtifact(callerOf(c), read, kind, 0)) !== null;
  if (!stored) return c.body(null, 204);
  return c.redirect(await signedArtifactUrl(c.env, origin(c), read.run.workspaceId, read.run.id, kind), 307);
}

runs.openapi(
  defineRoute({
    method: "get",
    path: "/plans/{plan_id}/json-output",
    action: "runs.read-json-plan",
    tags: ["Plans"],
    summary: "The plan's JSON execution plan (workspace admins)",
    request: { params: planIdParam },
    responses: jsonOutputResponses,
  }),
  async (c) => jsonOutput(c, await readPhase(callerOf(c), c.req.valid("param").plan_id, "runs.read-json-plan")),
);

runs.openapi(
  defineRoute({
    method: "get",
    path: "/runs/{run_id}/plan/json-output",
    action: "runs.read-json-plan",
    tags: ["Plans"],
    summary: "The JSON execution plan of a run's plan (workspace admins)",
    request: { params: runIdParam },
    responses: jsonOutputResponses,
  }),
  async (c) => jsonOutput(c, await readRun(callerOf(c), c.req.valid("param").run_id, "runs.read-json-plan")),
);

runs.openapi(
  defineRoute({
    method: "get",
    path: "/runs/{run_id}/errored-state",
    action: "runs.read-errored-state",
    tags: ["Runs"],
    summary: "The state an apply could not save (Terraform's errored.tfstate), for recovery with a state version",
    description:
      "When an apply's state upload is refused (the lock was lost, or another state version came first), the agent keeps the state Terraform could not save with the run. A workspace admin who may read state downloads it here and, once the workspace is locked, pushes it back as a new state version (`terraform state push`). 204 when the run kept none.",
    request: { params: runIdParam },
    responses: {
      204: { description: "The run kept no errored state" },
      307: { description: "Redirect to a short-lived signed URL of the state" },
    },
  }),
  async (c) => {
    const read = await readRun(callerOf(c), c.req.valid("param").run_id, "runs.read-errored-state");
    if ((await readArtifact(callerOf(c), read, "errored-state", 0)) === null) return c.body(null, 204);
    return c.redirect(await signedArtifactUrl(c.env, origin(c), read.run.workspaceId, read.run.id, "errored-state"), 307);
  },
);

runs.openapi(
  defineRoute({
    method: "get",
    path: "/plans/{plan_id}/json-output-redacted",
    action: "runs.read",
    tags: ["Plans"],
    summary: "The plan's redacted JSON plan, as Terraform renders it: 204 until available, then a redirect to a signed URL",
    request: { params: planIdParam },
    responses: jsonOutputResponses,
  }),
  async (c) => jsonOutput(c, await readPhase(callerOf(c), c.req.valid("param").plan_id), "plan-json-redacted"),
);

runs.openapi(
  defineRoute({
    method: "get",
    path: "/applies/{apply_id}/errored-state",
    action: "runs.read",
    tags: ["Applies"],
    summary: "The state of an apply that failed to upload it (404: none; this service keeps no errored states)",
    request: { params: applyIdParam },
    responses: { 307: { description: "Redirect to the errored state" } },
  }),
  async (c) => {
    await readPhase(callerOf(c), c.req.valid("param").apply_id);
    // Terraform uploads state through the API as it applies; an upload that failed leaves nothing here.
    throw ApiError.of("not_found");
  },
);

// ---- run events ----

async function eventsDocument(c: Context<AppEnv>, read: RunRead, events: Parameters<typeof serializeRunEvent>[0][], include: string | undefined, one: boolean) {
  const values = parseRunInclude(include);
  const included = new Included();
  const caller = callerOf(c);
  if (values.has("actor"))
    await includeUsers(
      caller,
      events.map((e) => e.actor),
      included,
    );
  if (values.has("comment")) {
    const ids = events.map((e) => e.commentId).filter((id): id is string => !!id);
    for (const comment of await commentsOf(caller, read.readable.record.id, ids)) included.add(serializeComment(comment));
  }
  const data = events.map(serializeRunEvent);
  return jsonapi(c, { data: one ? data[0] : data, ...(included.items.length ? { included: included.items } : {}) });
}

runs.openapi(
  defineRoute({
    method: "get",
    path: "/runs/{run_id}/run-events",
    action: "runs.read",
    tags: ["Run events"],
    summary: "List a run's events, oldest first (include: actor, comment)",
    request: { params: runIdParam, query: includeQuery },
    responses: ok("The run's events", listDocument(runEventResource)),
  }),
  async (c) => {
    const { read, events } = await listRunEvents(callerOf(c), c.req.valid("param").run_id);
    return eventsDocument(c, read, events, c.req.valid("query").include, false);
  },
);

runs.openapi(
  defineRoute({
    method: "get",
    path: "/run-events/{run_event_id}",
    action: "runs.read",
    tags: ["Run events"],
    summary: "Show a run event (include: actor, comment)",
    request: { params: runEventIdParam, query: includeQuery },
    responses: ok("The run event", resourceDocument(runEventResource)),
  }),
  async (c) => {
    const { read, event } = await readRunEvent(callerOf(c), c.req.valid("param").run_event_id);
    return eventsDocument(c, read, [event], c.req.valid("query").include, true);
  },
);

// ---- comments ----

runs.openapi(
  defineRoute({
    method: "get",
    path: "/runs/{run_id}/comments",
    action: "runs.read",
    tags: ["Comments"],
    summary: "List a run's comments, oldest first",
    request: { params: runIdParam },
    responses: ok("The run's comments", listDocument(commentResource)),
  }),
  async (c) => jsonapi(c, { data: (await listComments(callerOf(c), c.req.valid("param").run_id)).map(serializeComment) }),
);

runs.openapi(
  defineRoute({
    method: "post",
    path: "/runs/{run_id}/comments",
    action: "runs.queue",
    tags: ["Comments"],
    summary: "Comment on a run (whoever may queue runs: can-comment)",
    request: { params: runIdParam, body: jsonBody(createCommentBody) },
    responses: ok("The comment", resourceDocument(commentResource), 201),
  }),
  async (c) => {
    const comment = await addComment(callerOf(c), c.req.valid("param").run_id, c.req.valid("json").data.attributes.body);
    return jsonapi(c, { data: serializeComment(comment) }, 201);
  },
);

runs.openapi(
  defineRoute({
    method: "get",
    path: "/comments/{comment_id}",
    action: "runs.read",
    tags: ["Comments"],
    summary: "Show a comment",
    request: { params: commentIdParam },
    responses: ok("The comment", resourceDocument(commentResource)),
  }),
  async (c) => jsonapi(c, { data: serializeComment(await readComment(callerOf(c), c.req.valid("param").comment_id)) }),
);

// ---- the organisation's runs, queue and capacity ----

runs.openapi(
  defineRoute({
    method: "get",
    path: "/organizations/{organization_name}/runs",
    action: "organization.read",
    summary: "List the organisation's runs the caller may read, newest first (the past year by default; no totals)",
    request: { params: orgParam, query: orgRunListQuery },
    responses: ok("A page of runs", organizationRunListDocument),
  }),
  async (c) => {
    const q = c.req.valid("query");
    const filters = parseRunFilters(q, Date.now(), true);
    if ("bad" in filters) throw ApiError.of("bad_request", { detail: `${filters.bad}: ${filters.detail}`, parameter: filters.bad });
    const page = pageOf(q);
    const caller = callerOf(c);
    const { reads, hasNext } = await listOrganizationRuns(caller, c.req.valid("param").organization_name, filters, page);
    const included = await includeForRuns(caller, origin(c), reads, q.include);
    const link = (n: number) => {
      const url = new URL(c.req.url);
      url.searchParams.set("page[number]", String(n));
      url.searchParams.set("page[size]", String(page.size));
      return url.toString();
    };
    return jsonapi(c, {
      data: reads.map((r) => runResourceOf(c, r)),
      ...(included ? { included } : {}),
      links: { self: link(page.number), prev: page.number > 1 ? link(page.number - 1) : null, next: hasNext ? link(page.number + 1) : null },
      meta: {
        pagination: {
          "current-page": page.number,
          "page-size": page.size,
          "prev-page": page.number > 1 ? page.number - 1 : null,
          "next-page": hasNext ? page.number + 1 : null,
        },
      },
    });
  },
);

runs.openapi(
  defineRoute({
    method: "get",
    path: "/organizations/{organization_name}/runs/queue",
    action: "organization.read",
    summary: "The organisation's runs waiting for or held by an agent, oldest first, with their position-in-queue",
    request: { params: orgParam, query: pageQuery },
    responses: ok("A page of runs", listDocument(runResource)),
  }),
  async (c) => {
    const page = pageOf(c.req.valid("query"));
    const { reads, total } = await organizationQueue(callerOf(c), c.req.valid("param").organization_name, page);
    return jsonapi(
      c,
      paginated(
        c,
        reads.map((r) => runResourceOf(c, r)),
        page,
        total,
      ),
    );
  },
);

runs.openapi(
  defineRoute({
    method: "get",
    path: "/organizations/{organization_name}/capacity",
    action: "organization.read",
    summary: "How many of the organisation's runs wait for an agent (pending) and how many execute (running)",
    request: { params: orgParam },
    responses: ok("The organisation's capacity", resourceDocument(capacityResource)),
  }),
  async (c) => {
    const { name, pending, running } = await organizationCapacity(callerOf(c), c.req.valid("param").organization_name);
    return jsonapi(c, { data: serializeCapacity(name, { pending, running }) });
  },
);
