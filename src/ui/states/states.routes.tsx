/** @jsxImportSource hono/jsx */
/**
 * A workspace's state versions (with a resource-count chart), one version's page and rollback, through the state
 * versions API's own services: the list is `listStateVersions` (GET /state-versions), the page reads the version as
 * `GET /state-versions/:id` does (the same serialiser gives its resources and signed download URL), and the rollback
 * form calls `rollbackStateVersion` as `PATCH /workspaces/:id/state-versions` does, its refusals shown with the API's
 * reasons and status.
 */
import { Hono } from "hono";
import { lockHolderOf, type Principal } from "../../auth/principal";
import type { Caller } from "../../caller";
import type { AppEnv } from "../../env";
import { ApiError } from "../../errors";
import { Included } from "../../jsonapi/document";
import { pageOf } from "../../jsonapi/schemas";
import { includeUsers } from "../../runs/runs.include";
import { serializeOutputs, serializeStateVersion } from "../../state-versions/state-versions.serialize";
import { listStateVersions, readWorkspaceStateVersion, rollbackStateVersion } from "../../state-versions/state-versions.service";
import type { StateVersionView } from "../../state-versions/state-versions.store";
import { resourcesUnknown } from "../../state-versions/state.parse";
import type { WorkspaceRecord } from "../../workspaces/workspace.types";
import { lockHolderNameOf } from "../../workspaces/lock.service";
import type { ChartPoint } from "./state-chart.view";
import { callerOf, type Ctx } from "../context";
import { definePage } from "../define-page";
import { RollbackPage, type StateListRow, StateVersionPage as StatePage, StatesPage, statePath } from "./states.view";

export const statesUi = new Hono<AppEnv>();

/** How many of the newest state versions the chart draws. */
const CHART_VERSIONS = 50;
const SV_ID = /^sv-[A-Za-z0-9]{1,64}$/;

const refOf = (c: Ctx) => ({ organization: c.req.param("organization") ?? "", name: c.req.param("name") ?? "" });
function svIdOf(c: Ctx): string {
  const id = c.req.param("sv_id") ?? "";
  if (!SV_ID.test(id)) throw ApiError.of("not_found");
  return id;
}

/** A version's resource count; null when nobody could read its resources (or its state never arrived). */
const countOf = (sv: StateVersionView): number | null =>
  sv.status !== "finalized" || !sv.parsed || resourcesUnknown(sv.parsed) ? null : sv.parsed.resourceCount;

/** The caller holds the workspace's lock, as the object checks it for a new state version. */
function holdsLock(p: Principal, record: WorkspaceRecord): boolean {
  const h = record.lock.locked ? record.lock.holder : null;
  const me = lockHolderOf(p);
  return !!h && h.type === me.type && h.id === me.id;
}

definePage(statesUi, "get", "/:organization/workspaces/:name/states", "state.read", async (c) => {
  const ref = refOf(c);
  const pg = pageOf(c.req.query());
  const caller = callerOf(c);
  const origin = new URL(c.req.url).origin;
  // The chart's span is the first page of 50; the list reuses it when it lies within.
  const reuse = pg.number === 1 && pg.size <= CHART_VERSIONS;
  const recent = await listStateVersions(caller, ref, undefined, { number: 1, size: CHART_VERSIONS });
  const listed = reuse ? { ...recent, items: recent.items.slice(0, pg.size) } : await listStateVersions(caller, ref, undefined, pg);
  const { record, scope } = recent.readable;
  const rows: StateListRow[] = await Promise.all(
    listed.items.map(async (sv) => {
      const a = (await serializeStateVersion(c.env, origin, listed.workspaceId, sv, { canUpload: false })).attributes as Record<string, unknown>;
      return {
        id: sv.id,
        serial: sv.serial,
        status: sv.status,
        createdAt: sv.created_at,
        resourceCount: countOf(sv),
        current: sv.id === record.currentStateVersionId,
        download: (a["hosted-state-download-url"] as string | null) ?? null,
      };
    }),
  );
  const drawn = recent.items.filter((sv) => countOf(sv) !== null);
  const chart: ChartPoint[] = drawn.map((sv) => ({ id: sv.id, serial: sv.serial, createdAt: sv.created_at, count: countOf(sv)! })).reverse();
  return c.html(
    <StatesPage
      principal={caller.principal}
      organization={scope.access.organization.name}
      workspace={record.name}
      rows={rows}
      total={listed.total}
      page={pg}
      query={new URL(c.req.url).searchParams}
      chart={chart}
      chartLeftOut={recent.items.length - drawn.length}
    />,
  );
});

/** Usernames of the users who created versions (a team's or organisation's service user by its API name). */
async function usernameOf(caller: Caller, userId: string | null): Promise<string | null> {
  if (!userId) return null;
  const included = new Included();
  await includeUsers(caller, [{ type: "users", id: userId }], included);
  const u = included.items[0];
  return u ? String((u.attributes as { username?: unknown }).username ?? userId) : userId;
}

definePage(statesUi, "get", "/:organization/workspaces/:name/states/:sv_id", "state.read", async (c) => {
  const ref = refOf(c);
  const caller = callerOf(c);
  // As GET /state-versions/:id: state read on the workspace; a version of another workspace is not found here.
  const read = await readWorkspaceStateVersion(caller, ref, svIdOf(c));
  const { sv, record } = read;
  const { scope } = read.readable;
  const flags = (scope.serialize(record).attributes as { permissions: Record<string, boolean> }).permissions;
  const [doc, createdBy] = await Promise.all([
    serializeStateVersion(c.env, new URL(c.req.url).origin, read.workspaceId, sv, { canUpload: false }),
    usernameOf(caller, sv.created_by),
  ]);
  const a = doc.attributes as Record<string, unknown>;
  const finalized = sv.status === "finalized";
  // Outputs as GET /state-versions/:id/outputs gives them to this caller, except that sensitive values are never shown.
  const outputs = flags["can-read-state-outputs"]
    ? serializeOutputs(sv, "state-version-outputs", false).map((o) => {
        const x = o.attributes as { name: string; sensitive: boolean; value: unknown; "output-type": string };
        return { name: x.name, sensitive: x.sensitive, type: x["output-type"], value: x.sensitive ? null : JSON.stringify(x.value) };
      })
    : null;
  return c.html(
    <StatePage
      principal={caller.principal}
      sv={{
        organization: scope.access.organization.name,
        workspace: record.name,
        id: sv.id,
        serial: sv.serial,
        status: sv.status,
        createdAt: sv.created_at,
        current: sv.id === record.currentStateVersionId,
        currentId: record.currentStateVersionId,
        runId: sv.run_id,
        createdBy,
        rollbackOf: sv.rollback_of,
        resourceCount: countOf(sv),
        terraformVersion: (a["terraform-version"] as string | null) ?? null,
        lineage: sv.lineage,
        size: sv.size,
        outputs,
        resources: a.resources as Array<{ module: string; type: string; name: string; provider: string; count: number }>,
        download: read.canReadState ? ((a["hosted-state-download-url"] as string | null) ?? null) : null,
        canRollBack: flags["can-create-state-versions"] === true && finalized && sv.id !== record.currentStateVersionId,
        lockedByYou: holdsLock(caller.principal, record),
      }}
    />,
  );
});

/** The rollback confirmation; `refusal` shows a refused rollback's reasons with the API's status. */
async function rollbackPage(c: Ctx, refusal?: { errors: string[]; status: number }): Promise<Response> {
  const ref = refOf(c);
  const caller = callerOf(c);
  // The power to roll back (state.create, as PATCH /workspaces/:id/state-versions): a reader gets the API's refusal.
  const read = await readWorkspaceStateVersion(caller, ref, svIdOf(c), "state.create");
  const { sv, record } = read;
  const currentId = record.currentStateVersionId;
  const [current, holderName] = await Promise.all([
    currentId && currentId !== sv.id ? readWorkspaceStateVersion(caller, ref, currentId).then((r) => r.sv) : sv,
    lockHolderNameOf(caller, { ...read.readable, record }),
  ]);
  return c.html(
    <RollbackPage
      principal={caller.principal}
      rb={{
        organization: read.readable.scope.access.organization.name,
        workspace: record.name,
        id: sv.id,
        serial: sv.serial,
        createdAt: sv.created_at,
        resourceCount: countOf(sv),
        lineage: sv.lineage,
        isCurrent: sv.id === currentId,
        finalized: sv.status === "finalized",
        current: currentId ? { id: currentId, serial: current.serial } : null,
        lock: record.lock,
        holderName,
        lockedByYou: holdsLock(caller.principal, record),
        errors: refusal?.errors,
      }}
    />,
    (refusal?.status ?? 200) as 200,
  );
}

definePage(statesUi, "get", "/:organization/workspaces/:name/states/:sv_id/rollback", "state.create", (c) => rollbackPage(c));

/** Refusals shown on the confirmation page: the lock (409) or the version (422); others are the API's error page. */
const refusesRollback = (e: ApiError) => e.status === 409 || e.status === 422 || e.status === 400;

definePage(statesUi, "post", "/:organization/workspaces/:name/states/:sv_id/rollback", "state.create", async (c) => {
  const ref = refOf(c);
  const caller = callerOf(c);
  const form = await c.req.parseBody();
  const id = svIdOf(c);
  let created: StateVersionView;
  try {
    // Authorises first (a caller who may not roll back learns nothing more), then the page's own confirmation.
    const read = await readWorkspaceStateVersion(caller, ref, id, "state.create");
    if (form.confirm !== "on") throw ApiError.of("invalid_attribute", { detail: "Tick the box to confirm the rollback." });
    // The form is offered only for an older version; a repeated submission must not stack copies of the current one.
    if (id === read.record.currentStateVersionId) throw ApiError.of("conflict", { detail: "This state version is already the workspace's current state." });
    created = await rollbackStateVersion(caller, read.workspaceId, id);
  } catch (e) {
    if (e instanceof ApiError && refusesRollback(e)) return rollbackPage(c, { errors: e.errors.map((x) => x.detail ?? x.title), status: e.status });
    throw e;
  }
  return c.redirect(statePath(ref.organization, ref.name, created.id), 303);
});
