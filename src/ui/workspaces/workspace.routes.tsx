/** @jsxImportSource hono/jsx */
/**
 * The workspace page and its forms. Each form calls the service its API endpoint calls, naming the
 * workspace by organisation and name, so the service's own read authorises it (no lookup first). A refusal of
 * the form's input re-renders the page with the API's reasons next to the form (422); a caller who may not
 * act gets the API's answer (404 for a workspace it may not administer) as an error page.
 */
import { Hono } from "hono";
import { z } from "zod";
import type { Caller } from "../../caller";
import type { AppEnv } from "../../env";
import { ApiError } from "../../errors";
import { validationError } from "../../jsonapi/validation";
import { listOrgPools } from "../../agent-pools/agent-pools.service";
import { listProjectsFor } from "../../projects/projects.service";
import { currentStateVersion, listStateVersions } from "../../state-versions/state-versions.service";
import { serializeOutputs, serializeStateVersion } from "../../state-versions/state-versions.serialize";
import { workspaceEffectiveTagBindings } from "../../tags/tags.service";
import { WS_LEVELS } from "../../team-access/team-access.rules";
import { changeTeamWorkspace, createTeamWorkspace, removeTeamWorkspace, workspaceTeamAccesses } from "../../team-access/team-access.service";
import { listTeams } from "../../teams/teams.service";
import { listWorkspaceVariables } from "../../variables/variables.service";
import { changeConsumers, listConsumers } from "../../workspaces/consumers.service";
import { forceUnlockWorkspace, lockHolderNameOf, lockWorkspace, safeDeleteWorkspace, unlockWorkspace } from "../../workspaces/lock.service";
import { workspaceAttributesInput } from "../../workspaces/workspaces.schemas";
import { readByName, type WorkspaceRef } from "../../workspaces/workspaces.service";
import { updateWorkspace } from "../../workspaces/workspaces.write.service";
import { definePage } from "../define-page";
import { type Form, reasonsOf, refusesInput, text } from "../forms";
import { callerOf, type Ctx, orgPath, wsPath } from "../context";
import { type FormName, type Refusal, type StateRow, WorkspacePage } from "./workspace.view";

export const workspaceUi = new Hono<AppEnv>();

/** Null when the read is not found (no current state, say); other errors propagate. */
async function orNull<T>(p: Promise<T>): Promise<T | null> {
  try {
    return await p;
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return null;
    throw e;
  }
}

const refOf = (c: Ctx): { organization: string; name: string } => ({ organization: c.req.param("organization") ?? "", name: c.req.param("name") ?? "" });

/** The workspace page; `refusal` shows a refused form again with what was sent and why. */
async function workspacePage(c: Ctx, refusal?: Refusal): Promise<Response> {
  const { organization, name } = refOf(c);
  const caller = callerOf(c);
  const readable = await readByName(caller, organization, name);
  const { record, scope } = readable;
  const resource = scope.serialize(record);
  const attributes = resource.attributes as Record<string, unknown>;
  const flags = attributes.permissions as Record<string, boolean>;
  const origin = new URL(c.req.url).origin;
  const page100 = { number: 1, size: 100 };
  const [variables, states, current, effective, consumers, accesses, teams, holderName, pools, projects] = await Promise.all([
    flags["can-read-variable"] ? listWorkspaceVariables(caller, record.id) : null,
    flags["can-read-state-versions"] ? listStateVersions(caller, { organization, name: record.name }, undefined, { number: 1, size: 10 }) : null,
    // Outputs need only read-outputs; as GET .../current-state-version-outputs, sensitive values are never shown.
    flags["can-read-state-outputs"] && record.currentStateVersionId ? orNull(currentStateVersion(caller, record.id, 1)) : null,
    workspaceEffectiveTagBindings(caller, record.id),
    listConsumers(caller, caller.db, record.id, page100),
    workspaceTeamAccesses(caller, record.id),
    listTeams(caller, organization, {}, page100).catch(() => ({ teams: [] })),
    lockHolderNameOf(caller, readable),
    // The settings form offers the pools this workspace may use (GET .../agent-pools?filter[allowed_workspaces][name]=).
    flags["can-update"] ? listOrgPools(caller, organization, { allowedWorkspaceName: record.name }, page100) : null,
    // The settings form's project choices: those the caller reads (the move itself needs admin on both ends).
    flags["can-update"] ? listProjectsFor(caller, organization, { tagged: [], sort: "name" }, page100) : null,
  ]);
  // Download links exactly as the API serialises them (signed URLs), for state readers only.
  const stateRows: StateRow[] | null = states
    ? await Promise.all(
        states.items.map(async (sv) => {
          const doc = await serializeStateVersion(c.env, origin, record.id, sv, { canUpload: false });
          const a = doc.attributes as Record<string, unknown>;
          return {
            id: sv.id,
            serial: sv.serial,
            status: sv.status,
            createdAt: sv.created_at,
            resourceCount: sv.parsed?.resourceCount ?? 0,
            download: (a["hosted-state-download-url"] as string | null) ?? null,
          };
        }),
      )
    : null;
  const outputs = current
    ? serializeOutputs(current.sv, "state-version-outputs", false).map((o) => {
        const a = o.attributes as { name: string; sensitive: boolean; value: unknown; "output-type": string };
        return { name: a.name, sensitive: a.sensitive, type: a["output-type"], value: a.sensitive ? null : JSON.stringify(a.value) };
      })
    : null;
  // The workspace's own read loaded its project's row; inherited bindings all come from that project.
  const project = scope.projects.get(record.projectId)?.name ?? record.projectId;
  const direct = new Set(effective.record.tagBindings.map((b) => b.key));
  const inherited = effective.inherited.filter((b) => !direct.has(b.key)).map((b) => ({ key: b.key, value: b.value, project }));
  const teamNames = new Map(teams.teams.map((t) => [t.team.id, t.team.name] as const));
  const granted = new Set(accesses.map((a) => a.teamId));
  const me = caller.principal;
  const holder = record.lock.holder;
  const myId = me.kind === "user" ? me.userId : me.kind === "team" ? me.teamId : me.kind === "run" ? me.runId : me.serviceUserId;
  const poolId = ((resource.relationships?.["agent-pool"] as { data: { id: string } | null } | undefined)?.data?.id ?? null) as string | null;
  const agentPools = pools?.pools.map((p) => ({ id: p.pool.id, name: p.pool.name })) ?? [];
  // The current pool stays selectable even when no longer offered (it was excluded later).
  if (poolId && !agentPools.some((p) => p.id === poolId)) agentPools.unshift({ id: poolId, name: poolId });
  return c.html(
    <WorkspacePage
      principal={me}
      ws={{
        id: record.id,
        name: record.name,
        organization: scope.access.organization.name,
        project,
        attributes,
        lock: record.lock,
        holderName,
        lockedByYou: !!holder && holder.id === myId,
        tags: attributes["tag-names"] as string[],
        bindings: record.tagBindings,
        inherited,
        flags,
        variables,
        stateVersions: stateRows,
        outputs,
        consumers: consumers.records.map((w) => ({ id: w.id, name: w.name })),
        teamAccess: accesses.map((a) => ({ id: a.id, team: teamNames.get(a.teamId) ?? a.teamId, access: a.access })),
        teamsWithout: teams.teams.filter((t) => !granted.has(t.team.id)).map((t) => ({ id: t.team.id, name: t.team.name })),
        agentPoolId: poolId,
        agentPools,
        projectId: record.projectId,
        projectOptions: projects?.projects.map((p) => ({ id: p.id, name: p.name })) ?? [],
        currentRun: record.currentRun,
        refusal,
      }}
    />,
    refusal ? 422 : 200,
  );
}

definePage(workspaceUi, "get", "/:organization/workspaces/:name", "workspace.read", (c) => workspacePage(c));

const backTo = (c: Ctx) => {
  const { organization, name } = refOf(c);
  return wsPath(organization, name);
};

/** Runs a form's service call: back to the page when done; the page with the reasons when its input is refused. */
async function submit(c: Ctx, form: FormName, values: Record<string, string>, run: () => Promise<unknown>): Promise<Response> {
  try {
    await run();
  } catch (e) {
    if (refusesInput(e)) return workspacePage(c, { form, values, errors: reasonsOf(e) });
    throw e;
  }
  return c.redirect(backTo(c), 303);
}

/**
 * Input refused before any service ran (the API's schema, as its router would): only a caller who may
 * administer the workspace learns why; others get the API's 404, never a form.
 */
async function refuse(c: Ctx, caller: Caller, form: FormName, values: Record<string, string>, error: ApiError): Promise<Response> {
  const { organization, name } = refOf(c);
  await readByName(caller, organization, name, "workspace.update");
  return workspacePage(c, { form, values, errors: error.errors.map((x) => x.detail ?? x.title) });
}

definePage(workspaceUi, "post", "/:organization/workspaces/:name/lock", "workspace.lock", async (c) => {
  const form = await c.req.parseBody();
  await lockWorkspace(callerOf(c), refOf(c), text(form, "reason").slice(0, 200));
  return c.redirect(backTo(c), 303);
});

definePage(workspaceUi, "post", "/:organization/workspaces/:name/unlock", "workspace.lock", async (c) => {
  await unlockWorkspace(callerOf(c), refOf(c));
  return c.redirect(backTo(c), 303);
});

definePage(workspaceUi, "post", "/:organization/workspaces/:name/force-unlock", "workspace.force-unlock", async (c) => {
  await forceUnlockWorkspace(callerOf(c), refOf(c));
  return c.redirect(backTo(c), 303);
});

definePage(workspaceUi, "post", "/:organization/workspaces/:name/safe-delete", "workspace.delete", async (c) => {
  const form = await c.req.parseBody();
  const ref = refOf(c);
  if (form.confirm !== ref.name) throw ApiError.of("bad_request", { detail: "Type the workspace's name to confirm its deletion." });
  await safeDeleteWorkspace(callerOf(c), ref);
  return c.redirect(orgPath(ref.organization, "workspaces"), 303);
});

/**
 * The settings form's fields as the API's attributes (the API's own schema and rules validate them). The pool
 * is sent only in agent mode: leaving agent mode drops it (workspace.rules.ts), as a PATCH of the mode alone does.
 */
function settingsAttributes(form: Form): Record<string, unknown> {
  const mode = text(form, "execution-mode");
  const attributes: Record<string, unknown> = {
    description: text(form, "description"),
    "auto-apply": text(form, "auto-apply") === "on",
    "execution-mode": mode,
    "working-directory": text(form, "working-directory"),
  };
  if (mode === "agent") attributes["agent-pool-id"] = text(form, "agent-pool-id") || null;
  const version = text(form, "terraform-version").trim();
  if (version) attributes["terraform-version"] = version;
  const name = text(form, "name").trim();
  if (name) attributes.name = name;
  // An unticked box is sent as nothing: the form says it showed these (`options`), so absence means off.
  if (text(form, "options") === "1") for (const k of SETTINGS_OPTIONS) attributes[k] = text(form, k) === "on";
  return attributes;
}

/**
 * The settings form's checkboxes beside auto-apply (the settings of runs from a repository are on the workspace's
 * "Version control" page).
 */
export const SETTINGS_OPTIONS = ["allow-destroy-plan", "structured-run-output-enabled"] as const;

definePage(workspaceUi, "post", "/:organization/workspaces/:name/settings", "workspace.update", async (c) => {
  const form = await c.req.parseBody();
  const caller = callerOf(c);
  const fields = ["name", "project", "description", "execution-mode", "agent-pool-id", "terraform-version", "working-directory"];
  const values: Record<string, string> = {
    ...Object.fromEntries(fields.map((k) => [k, text(form, k)])),
    "auto-apply": String(text(form, "auto-apply") === "on"),
    ...(text(form, "options") === "1" ? Object.fromEntries(SETTINGS_OPTIONS.map((k) => [k, String(text(form, k) === "on")])) : {}),
  };
  const parsed = workspaceAttributesInput.safeParse(settingsAttributes(form));
  if (!parsed.success) return refuse(c, caller, "settings", values, validationError(parsed.error, "json"));
  // A project chosen in the form moves the workspace (PATCH's project relationship: admin on both projects).
  const project = text(form, "project");
  const relationships = project ? { project: { data: { type: "projects" as const, id: project } } } : undefined;
  let saved: Awaited<ReturnType<typeof updateWorkspace>>;
  try {
    saved = await updateWorkspace(caller, refOf(c), { type: "workspaces", attributes: parsed.data, relationships });
  } catch (e) {
    if (refusesInput(e)) return workspacePage(c, { form: "settings", values, errors: reasonsOf(e) });
    throw e;
  }
  // A rename moves the page.
  return c.redirect(wsPath(refOf(c).organization, saved.workspace.name), 303);
});

// As POST and DELETE /workspaces/:id/relationships/remote-state-consumers.
definePage(workspaceUi, "post", "/:organization/workspaces/:name/consumers", "workspace.update", async (c) => {
  const form = await c.req.parseBody();
  const name = text(form, "name").trim();
  return submit(c, "consumers", { name }, () => changeConsumers(callerOf(c), refOf(c), "add", { names: [name] }));
});

definePage(workspaceUi, "post", "/:organization/workspaces/:name/consumers/delete", "workspace.update", async (c) => {
  const form = await c.req.parseBody();
  return submit(c, "consumers", {}, () => changeConsumers(callerOf(c), refOf(c), "remove", { ids: [text(form, "id")] }));
});

const accessLevel = z.object({ access: z.enum(WS_LEVELS) });

// As POST, PATCH and DELETE /team-workspaces.
definePage(workspaceUi, "post", "/:organization/workspaces/:name/team-access", "workspace.update", async (c) => {
  const form = await c.req.parseBody();
  const caller = callerOf(c);
  const values = { team: text(form, "team"), access: text(form, "access") };
  const parsed = accessLevel.safeParse(values);
  if (!parsed.success) return refuse(c, caller, "team-access", values, validationError(parsed.error, "json"));
  const ref: WorkspaceRef = refOf(c);
  return submit(c, "team-access", values, () => createTeamWorkspace(caller, { teamId: values.team, workspace: ref, access: parsed.data.access, given: {} }));
});

definePage(workspaceUi, "post", "/:organization/workspaces/:name/team-access/:id", "workspace.update", async (c) => {
  const form = await c.req.parseBody();
  const caller = callerOf(c);
  const values = { access: text(form, "access") };
  const parsed = accessLevel.safeParse(values);
  if (!parsed.success) return refuse(c, caller, "team-access", values, validationError(parsed.error, "json"));
  return submit(c, "team-access", values, () => changeTeamWorkspace(caller, c.req.param("id"), { access: parsed.data.access, given: {} }));
});

definePage(workspaceUi, "post", "/:organization/workspaces/:name/team-access/:id/delete", "workspace.update", async (c) => {
  await removeTeamWorkspace(callerOf(c), c.req.param("id"));
  return c.redirect(backTo(c), 303);
});
