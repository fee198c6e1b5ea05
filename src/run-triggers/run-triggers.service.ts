/**
 * Run triggers (HCP Terraform API docs: Run Triggers): creating one needs admin access to the workspace and read
 * access to the source's runs; the source is a workspace of the same organisation, other than the workspace, and a
 * workspace has at most LIMITS.runTriggerSourcesMax of them. Reading needs read access to the workspace that gets
 * the runs. The runs themselves are the objects' (run-triggers.object.ts).
 */
import { includesOf } from "../jsonapi/validation";
import type { Caller } from "../caller";
import { ApiError } from "../errors";
import { newId, nowIso } from "../ids";
import type { Resource } from "../jsonapi/document";
import { LIMITS } from "../limits";
import { readById } from "../workspaces/workspaces.service";
import { deleteRunTrigger, findRunTrigger, insertRunTrigger, listRunTriggers, type RunTrigger } from "./run-triggers.d1";

const SOURCEABLE = "/data/relationships/sourceable/data/id";

export async function createRunTrigger(caller: Caller, workspaceId: string, sourceableId: string): Promise<RunTrigger> {
  const target = await readById(caller, workspaceId, "workspace.update");
  if (sourceableId === workspaceId) throw ApiError.of("invalid_attribute", { detail: "Sourceable cannot be the same as the workspace", pointer: SOURCEABLE });
  const source = await readById(caller, sourceableId, "runs.read");
  if (source.record.organizationId !== target.record.organizationId) {
    throw ApiError.of("invalid_attribute", { detail: "Sourceable must be a workspace of the same organization", pointer: SOURCEABLE });
  }
  const trigger = {
    id: newId("rt"),
    organizationId: target.record.organizationId,
    workspaceId,
    sourceableId,
    createdAt: nowIso(),
  };
  const refused = await insertRunTrigger(caller.db, trigger);
  if (refused === "duplicate") throw ApiError.of("invalid_attribute", { detail: "Sourceable has already been added to this workspace", pointer: SOURCEABLE });
  if (refused === "limit") {
    throw ApiError.of("invalid_attribute", {
      detail: `A workspace may have at most ${LIMITS.runTriggerSourcesMax} source workspaces`,
      pointer: SOURCEABLE,
    });
  }
  return { ...trigger, workspaceName: target.record.name, sourceableName: source.record.name };
}

/** What a list or read includes: `workspace` and `sourceable`, each only where the caller may read that workspace. */
async function included(caller: Caller, triggers: RunTrigger[], include: string | undefined): Promise<Resource[]> {
  const wanted = new Set(includesOf(include, ["workspace", "sourceable"]));
  const ids = new Set<string>();
  for (const t of triggers) {
    if (wanted.has("workspace")) ids.add(t.workspaceId);
    if (wanted.has("sourceable")) ids.add(t.sourceableId);
  }
  const out: Resource[] = [];
  for (const id of ids) {
    try {
      const r = await readById(caller, id);
      out.push(r.scope.serialize(r.record));
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 404) throw err;
    }
  }
  return out;
}

export async function listWorkspaceRunTriggers(
  caller: Caller,
  workspaceId: string,
  query: { type: string | undefined; include: string | undefined },
): Promise<{ triggers: RunTrigger[]; included: (page: RunTrigger[]) => Promise<Resource[]> }> {
  await readById(caller, workspaceId);
  if (query.type !== "inbound" && query.type !== "outbound") {
    throw ApiError.of("bad_request", {
      detail: 'filter[run-trigger][type] is required and must be "inbound" or "outbound"',
      parameter: "filter[run-trigger][type]",
    });
  }
  const triggers = await listRunTriggers(caller.db, workspaceId, query.type);
  return { triggers, included: (page) => included(caller, page, query.include) };
}

async function loadTrigger(caller: Caller, id: string, action: "workspace.read" | "workspace.update"): Promise<RunTrigger> {
  const trigger = await findRunTrigger(caller.db, id);
  if (!trigger) throw ApiError.of("not_found");
  await readById(caller, trigger.workspaceId, action);
  return trigger;
}

export async function showRunTrigger(caller: Caller, id: string, include: string | undefined): Promise<{ trigger: RunTrigger; included: Resource[] }> {
  const trigger = await loadTrigger(caller, id, "workspace.read");
  return { trigger, included: await included(caller, [trigger], include) };
}

export async function removeRunTrigger(caller: Caller, id: string): Promise<void> {
  const trigger = await loadTrigger(caller, id, "workspace.update");
  await deleteRunTrigger(caller.db, trigger.id);
}
