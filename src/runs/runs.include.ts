/**
 * `include` on run reads (HCP Terraform API docs: Runs, "Available Related Resources"). Terraform asks for
 * `task_stages` and `tf_policy_evaluations` and gives up on a 400, so every value is accepted and those this service
 * has nothing for (cost estimates, policy evaluations) include nothing. `task_stages` includes the run's task stages.
 */
import type { Caller } from "../caller";
import { serializeConfigurationVersion, serializeIngressAttributes } from "../configuration-versions/configuration-versions.serialize";
import { Included, type Resource } from "../jsonapi/document";
import { serializeUser, serializeUserRow } from "../users/users.serialize";
import { includeUsersStatement, includedRows } from "../workspaces/workspaces.list.d1";
import type { WorkspaceRecord } from "../workspaces/workspace.types";
import type { WorkspaceScope } from "../workspaces/workspaces.service";
import { signedLogUrl } from "./runs.urls";
import { serializeApply, serializePlan, serializeRun } from "./runs.serialize";
import { runPermissions, type RunRead } from "./runs.service";
import type { Actor } from "./runs.types";
import { workspaceObject } from "../workspaces/workspace.stub";
import { serializeTaskStage } from "../run-tasks/run-tasks.serialize";

export function parseRunInclude(raw: string | undefined): Set<string> {
  return new Set(
    (raw ?? "")
      .split(",")
      .map((v) => v.trim())
      .filter(Boolean),
  );
}

/** Users as `created_by` and a run event's `actor` include them; a service user (no users row) by its id. */
export async function includeUsers(caller: Caller, actors: (Actor | null)[], included: Included): Promise<void> {
  const ids = [...new Set(actors.filter((a): a is Actor => !!a).map((a) => a.id))];
  if (!ids.length) return;
  const rows = new Map(includedRows.users(await includeUsersStatement(caller.db, ids).all()).map((u) => [u.id, u]));
  for (const id of ids) {
    const u = rows.get(id);
    included.add(
      u
        ? serializeUserRow(u)
        : serializeUser({
            id,
            username: `api-${id}`,
            email: null,
            isSiteAdmin: false,
            isService: true,
            authenticated: { id, type: "users" },
            unconfirmedEmail: null,
          }),
    );
  }
}

/** The included resources of runs read by the caller (each read carries the standing it was authorised with). */
export async function includeForRuns(caller: Caller, origin: string, reads: RunRead[], raw: string | undefined): Promise<Resource[] | undefined> {
  const values = parseRunInclude(raw);
  if (!values.size || !reads.length) return undefined;
  const included = new Included();
  for (const { run, readable } of reads) {
    if (values.has("workspace")) included.add(readable.scope.serialize(readable.record));
    if (values.has("plan")) included.add(serializePlan(run, await signedLogUrl(caller.env, origin, run.workspaceId, run.id, "plan")));
    if (values.has("apply")) included.add(serializeApply(run, await signedLogUrl(caller.env, origin, run.workspaceId, run.id, "apply")));
  }
  if (values.has("created_by"))
    await includeUsers(
      caller,
      reads.map((r) => r.run.createdBy),
      included,
    );
  if (values.has("configuration_version") || values.has("configuration_version.ingress_attributes")) {
    const got = await Promise.all(reads.map(({ run }) => workspaceObject(caller.env, run.workspaceId).getConfigurationVersion(run.configurationVersionId)));
    for (const res of got) {
      if (!res.ok) continue;
      included.add(serializeConfigurationVersion(res.value.cv));
      if (values.has("configuration_version.ingress_attributes") && res.value.cv.ingress) included.add(serializeIngressAttributes(res.value.cv.ingress));
    }
  }
  if (values.has("task_stages")) {
    const got = await Promise.all(
      reads.filter(({ run }) => run.taskStages?.length).map(({ run }) => workspaceObject(caller.env, run.workspaceId).listTaskStages(run.id)),
    );
    for (const res of got) if (res.ok) for (const s of res.value.stages) included.add(serializeTaskStage(s));
  }
  return included.items.length ? included.items : undefined;
}

/**
 * `include=current_run` (and `latest_run`, its alias, with `.plan`, `.apply`) on workspace reads: each workspace's
 * current run from its object, shown with the caller's permissions on that workspace.
 */
export async function includeCurrentRuns(
  caller: Caller,
  origin: string,
  records: WorkspaceRecord[],
  scope: WorkspaceScope,
  values: Set<string>,
  included: Included,
): Promise<void> {
  const wants = (suffix: string) => values.has(`current_run${suffix}`) || values.has(`latest_run${suffix}`);
  const any = ["", ".plan", ".apply", ".configuration_version", ".configuration_version.ingress_attributes"].some(wants);
  if (!any) return;
  const withRun = records.filter((r) => r.currentRun && scope.capsOf(r).runs >= 1);
  const got = await Promise.all(withRun.map((r) => workspaceObject(caller.env, r.id).getRun(r.currentRun!.id)));
  const now = new Date().toISOString();
  for (const [i, res] of got.entries()) {
    if (!res.ok) continue;
    const run = res.value.run;
    const record = withRun[i]!;
    if (wants(""))
      included.add(serializeRun(run, { permissions: runPermissions(caller.principal, { access: scope.access, caps: scope.capsOf(record) }), now }));
    if (wants(".plan")) included.add(serializePlan(run, await signedLogUrl(caller.env, origin, run.workspaceId, run.id, "plan")));
    if (wants(".apply")) included.add(serializeApply(run, await signedLogUrl(caller.env, origin, run.workspaceId, run.id, "apply")));
    if (wants(".configuration_version") || wants(".configuration_version.ingress_attributes")) {
      const cv = await workspaceObject(caller.env, run.workspaceId).getConfigurationVersion(run.configurationVersionId);
      if (cv.ok) included.add(serializeConfigurationVersion(cv.value.cv));
      if (cv.ok && cv.value.cv.ingress && wants(".configuration_version.ingress_attributes")) included.add(serializeIngressAttributes(cv.value.cv.ingress));
    }
  }
}
