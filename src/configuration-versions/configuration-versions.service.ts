/**
 * Configuration versions (HCP Terraform API docs: Configuration Versions): authorise on the workspace, then ask its
 * Durable Object. Reading needs runs `read`; creating, uploading and archiving need runs `plan` (queue plans), never
 * the organisation token.
 */
import type { Caller } from "../caller";
import { edition } from "../env";
import { ApiError, unwrap } from "../errors";
import { newId, nowIso } from "../ids";
import type { Page } from "../jsonapi/document";
import { runActor } from "../runs/run-actor.rules";
import { executionOf, mutateAs, readById } from "../workspaces/workspaces.service";
import { workspaceOfCv } from "./configuration-versions.d1";
import type { CvCreateAttributes } from "./configuration-versions.schemas";
import { type CvBackingAction, hasArchive } from "./configuration-versions.store";
import type { ConfigurationVersionRecord } from "./configuration-versions.types";
import { signedSlugUrl } from "./configuration-versions.urls";
import { workspaceObject } from "../workspaces/workspace.stub";

export interface CreatedCv {
  cv: ConfigurationVersionRecord;
  uploadUrl: string;
}

/**
 * Creates a pending configuration version and its signed upload URL. `source` is `terraform` for the CLI (which
 * says so with `X-Terraform-Integration: cloud`, as OTF reads it), `tfe-api` otherwise.
 */
export async function createConfigurationVersion(
  caller: Caller,
  workspaceId: string,
  attributes: CvCreateAttributes,
  opts: { fromCli: boolean; origin: string },
): Promise<CreatedCv> {
  const id = newId("cv");
  const now = nowIso();
  const { value } = await mutateAs(caller, workspaceId, "runs.queue", (r, guard) => {
    // The run its upload queues executes where the workspace's execution mode says (inherited included, resolved
    // now); in local execution there is none to queue.
    const exec = executionOf(r);
    return workspaceObject(caller.env, workspaceId).createConfigurationVersion({
      id,
      now,
      source: opts.fromCli ? "terraform" : "tfe-api",
      autoQueueRuns: exec.mode !== "local" && (attributes["auto-queue-runs"] ?? true),
      speculative: attributes.speculative ?? false,
      provisional: attributes.provisional ?? false,
      creator: runActor(caller, r),
      agentPoolId: exec.agentPoolId,
      guard,
    });
  });
  // The DO indexes the version (configuration_versions) in the same flush as the workspace's row.
  return { cv: value.cv, uploadUrl: await signedSlugUrl(caller.env, opts.origin, "PUT", workspaceId, id) };
}

/** The workspace of a configuration version the caller may act on with `action` (404 otherwise). */
async function workspaceFor(caller: Caller, id: string, action: "runs.read") {
  const workspaceId = await workspaceOfCv(caller.db, id);
  if (!workspaceId) throw ApiError.of("not_found");
  return { workspaceId, readable: await readById(caller, workspaceId, action) };
}

export async function readConfigurationVersion(caller: Caller, id: string): Promise<ConfigurationVersionRecord> {
  const { workspaceId } = await workspaceFor(caller, id, "runs.read");
  return unwrap(await workspaceObject(caller.env, workspaceId).getConfigurationVersion(id)).value.cv;
}

/** A page of a workspace's configuration versions, newest first. */
export async function listConfigurationVersions(
  caller: Caller,
  workspaceId: string,
  page: Page,
): Promise<{ items: ConfigurationVersionRecord[]; total: number }> {
  await readById(caller, workspaceId, "runs.read");
  return unwrap(await workspaceObject(caller.env, workspaceId).listConfigurationVersions({ offset: (page.number - 1) * page.size, limit: page.size })).value;
}

/** Archives an uploaded version that is not current and has no unfinished run (409 otherwise). */
export async function archiveConfigurationVersion(caller: Caller, id: string): Promise<void> {
  const workspaceId = await workspaceOfCv(caller.db, id);
  if (!workspaceId) throw ApiError.of("not_found");
  const now = nowIso();
  await mutateAs(caller, workspaceId, "runs.queue", (_r, guard) => workspaceObject(caller.env, workspaceId).archiveConfigurationVersion({ id, now, guard }));
}

/**
 * The signed URL of an uploaded version's archive, for the download endpoint's redirect (404 while the version is not
 * uploaded, as the docs say).
 */
export async function configurationDownloadUrl(caller: Caller, id: string, origin: string): Promise<string> {
  const { workspaceId } = await workspaceFor(caller, id, "runs.read");
  return archiveUrl(caller, workspaceId, id, origin);
}

/** The archive's signed URL, for a caller already authorised to read the workspace's runs (a run's own download). */
export async function archiveUrl(caller: Caller, workspaceId: string, id: string, origin: string): Promise<string> {
  const cv = unwrap(await workspaceObject(caller.env, workspaceId).getConfigurationVersion(id)).value.cv;
  if (!hasArchive(cv)) throw ApiError.of("not_found", { detail: "The configuration version has no uploaded configuration" });
  return signedSlugUrl(caller.env, origin, "GET", workspaceId, id);
}

/**
 * Terraform Enterprise's backing-data actions (data retention; the self-hosted edition only): soft delete an
 * uploaded version's archive, restore it, or delete it for good. Workspace admins, as for state versions.
 */
export async function manageConfigurationVersionBackingData(caller: Caller, id: string, action: CvBackingAction): Promise<void> {
  if (edition(caller.env) !== "self-hosted") throw ApiError.of("not_found");
  const workspaceId = await workspaceOfCv(caller.db, id);
  if (!workspaceId) throw ApiError.of("not_found");
  await mutateAs(caller, workspaceId, "workspace.update", (_r, guard) => workspaceObject(caller.env, workspaceId).manageCvBackingData({ id, action, guard }));
}
