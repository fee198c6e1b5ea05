/** Create, update and force delete of workspaces: authorise, claim names and projects, then one DO call. */
import { audited, auditOf } from "../audit/audit.service";
import { buildOrgAccess, loadGrants, projectRights } from "../auth/access";
import { createAccessRows } from "../auth/access.d1";
import { allows, authorize } from "../auth/requirements";
import type { Caller } from "../caller";
import { edition } from "../env";
import { ApiError, unwrap } from "../errors";
import { newId, nowIso } from "../ids";
import { holdProject, releaseProject } from "../projects/projects.d1";
import { listProjectsFor } from "../projects/projects.service";
import { refuseOverrides } from "../tags/reserved-tag-keys.service";
import { defaultEngineVersion, requireUsableVersion } from "../terraform-versions/terraform-versions.service";
import { createTagEntries, resolveBindings, resolveFlatAdds } from "../tags/workspace-tags.service";
import { applySettings, defaultSettings, isFailure, normaliseAttributes, type NormalisedAttributes } from "./workspace.rules";
import type { BindingInput, FlatInput, WorkspaceRecord } from "./workspace.types";
import { agentPoolExists, claimName, NAME_LEASE_MS, projectExists, releaseClaim } from "./workspaces.d1";
import { tokenConnection } from "../oauth/oauth.d1";
import { connectRefusal } from "../vcs/vcs.connection";
import type { workspaceCreateBody, workspaceUpdateBody } from "./workspaces.schemas";
import { guardOf, loadScope, mutateAs, readRef, scopeFrom, type WorkspaceRef, type WorkspaceScope } from "./workspaces.service";
import { workspaceObject } from "./workspace.stub";

/** A written workspace, the scope to serialise it with and the index write's bookmark. */
export interface Written {
  workspace: WorkspaceRecord;
  scope: WorkspaceScope;
  bookmark?: string | null;
}

/**
 * Claims a workspace name in the organisation (by its id, so a concurrent organisation rename changes nothing here),
 * taking over a claim whose holder never committed (lease expired).
 */
async function claim(caller: Caller, organizationId: string, name: string, workspaceId: string): Promise<number> {
  const db = caller.env.DB;
  for (let attempt = 0; attempt < 3; attempt++) {
    const now = Date.now();
    const outcome = await claimName(db, organizationId, name, workspaceId, now);
    if (outcome.claimed) return now;
    const stale = !outcome.committed && now - outcome.claimedAt > NAME_LEASE_MS;
    if (!stale) break;
    const { released } = unwrap(await workspaceObject(caller.env, outcome.holder).releaseName(name, now)).value;
    if (!released) break;
    await releaseClaim(db, organizationId, name, outcome.holder);
  }
  throw ApiError.of("invalid_attribute", { detail: "Name has already been taken", pointer: "/data/attributes/name" });
}

/**
 * After a create call that threw (no answer: it may have failed before or after the commit), asks the workspace's
 * DO, serialised with that create, to give the name up: true when the workspace was not created and now never will
 * be, so the claim can go at once (the client's retry must not find its name taken). False when it was created, or
 * when the DO cannot be asked either: the claim then stays until its lease runs out (NAME_LEASE_MS).
 */
async function neverCreated(caller: Caller, workspaceId: string, name: string): Promise<boolean> {
  try {
    const outcome = await workspaceObject(caller.env, workspaceId).releaseName(name, Date.now());
    return outcome.ok && outcome.value.released;
  } catch {
    return false;
  }
}

/** Checks references the attributes make to organisation registries (agent pools, OAuth tokens), by organisation id. */
async function checkReferences(caller: Caller, organizationId: string, n: NormalisedAttributes): Promise<void> {
  const poolId = n.settings["agent-pool-id"];
  if (poolId && !(await agentPoolExists(caller.db, poolId, organizationId))) {
    throw ApiError.of("invalid_attribute", { detail: "Agent pool not found", pointer: "/data/attributes/agent-pool-id" });
  }
  const tokenId = n.vcsRepo?.["oauth-token-id"];
  if (tokenId) {
    const token = await tokenConnection(caller.db, tokenId);
    if (!token || token.organizationId !== organizationId) {
      throw ApiError.of("invalid_attribute", { detail: "OAuth token not found", pointer: "/data/attributes/vcs-repo/oauth-token-id" });
    }
    const refused = connectRefusal(token.serviceProvider, token.tokenSealed !== null);
    if (refused) throw ApiError.of("invalid_attribute", { detail: refused, pointer: "/data/attributes/vcs-repo/oauth-token-id" });
    n.vcsRepo!["service-provider"] = token.serviceProvider;
    if (token.httpUrl && n.vcsRepo!.identifier) n.vcsRepo!["repository-http-url"] = `${token.httpUrl.replace(/\/+$/, "")}/${n.vcsRepo!.identifier}`;
  }
}

/**
 * A sent `terraform-version` must be one the list of Terraform versions offers (422 at the attribute sent); the
 * workspace's own current value passes (an update that re-sends it is not refused for a version disabled since).
 */
async function checkEngineVersion(caller: Caller, n: NormalisedAttributes, sent: object, current?: string): Promise<void> {
  const setting = n.settings["engine-version"];
  if (setting === undefined || setting === current) return;
  const name = ["engine-version", "engine_version", "terraform-version", "terraform_version"].find((k) => k in sent) ?? "engine-version";
  await requireUsableVersion(caller, setting, `/data/attributes/${name}`);
}

const projectNotFound = () => ApiError.of("invalid_attribute", { detail: "Project not found", pointer: "/data/relationships/project/data/id" });

async function requireProject(caller: Caller, organizationId: string, projectId: string): Promise<void> {
  if (!(await projectExists(caller.db, projectId, organizationId))) throw projectNotFound();
}

/**
 * Holds the project in D1 before the DO commits the workspace into it: a project
 * delete either sees the hold and refuses, or came first and the hold fails. `onRefused` undoes
 * what the request took before (its name claim).
 */
async function holdProjectFor(caller: Caller, organizationId: string, projectId: string, workspaceId: string, onRefused: () => Promise<void>): Promise<void> {
  if (await holdProject(caller.db, projectId, organizationId, workspaceId, Date.now())) return;
  await onRefused();
  throw projectNotFound();
}

function normalise(caller: Caller, attrs: Parameters<typeof normaliseAttributes>[0]): NormalisedAttributes {
  const n = normaliseAttributes(attrs, edition(caller.env));
  if (isFailure(n)) throw ApiError.of(n.code, { detail: n.detail, pointer: n.pointer });
  return n;
}

export async function createWorkspace(caller: Caller, organizationName: string, body: (typeof workspaceCreateBody)["_output"]["data"]): Promise<Written> {
  const n = normalise(caller, body.attributes);
  const requestedProject = body.relationships?.project?.data?.id || undefined;
  // One batch: the organisation, the caller's teams and their grants on the target project (the
  // default one resolved in SQL), and that project, which also proves it belongs to the organisation.
  // From here on the organisation is its id: a rename racing this create leaves it unaffected (the workspace is
  // created in the organisation the name denoted when this batch ran, as if the create came first).
  const rows = await createAccessRows(caller.db, caller.principal, { name: organizationName }, requestedProject ?? null);
  const access = rows.org ? buildOrgAccess(caller.principal, rows.org, rows.teams) : null;
  if (!access) throw ApiError.of("not_found");
  const organization = access.organization;
  const projectId = requestedProject ?? organization.defaultProjectId;
  if (requestedProject && !rows.projects.some((p) => p.id === requestedProject)) throw projectNotFound();
  authorize(caller, "workspace.create", { access, project: projectRights(access, projectId, rows.grants.projects) });
  await checkReferences(caller, organization.externalId, n);
  await checkEngineVersion(caller, n, body.attributes);
  const settings = applySettings(defaultSettings(n.settings["engine-version"] ?? (await defaultEngineVersion(caller))), n);
  if (isFailure(settings)) throw ApiError.of(settings.code, { detail: settings.detail, pointer: settings.pointer });
  // A new workspace that inherits its project's auto-destroy settings and sets no duration of its
  // own takes the project's auto-destroy-activity-duration (projects API: "all future workspaces in
  // this project inherit this default value").
  const inherited = rows.projects.find((p) => p.id === projectId)?.autoDestroyActivityDuration;
  if (body.attributes["auto-destroy-activity-duration"] === undefined && settings["inherits-project-auto-destroy"] && inherited) {
    settings["auto-destroy-activity-duration"] = inherited;
  }

  const now = nowIso();
  // Tags given on create: flat tags (`relationships.tags`, as go-tfe sends them) and key-value bindings.
  const tagSets = await createTagEntries(caller, organization.externalId, body.relationships, now);
  const sentBindings = body.relationships?.["tag-bindings"]?.data ?? [];
  await refuseOverrides(
    caller,
    { organizationId: organization.externalId, projectId },
    sentBindings.map((d, index) => ({ key: d.attributes.key, index })),
    "/data/relationships/tag-bindings/data",
  );
  const id = newId("ws");
  const name = n.name ?? body.attributes.name;
  const orgId = organization.externalId;
  await claim(caller, orgId, name, id);
  if (requestedProject) await holdProjectFor(caller, orgId, projectId, id, () => releaseClaim(caller.env.DB, orgId, name, id));
  const release = async () => {
    await releaseClaim(caller.env.DB, orgId, name, id);
    if (requestedProject) await releaseProject(caller.db, projectId, id);
  };
  const input = {
    id,
    organizationId: orgId,
    projectId,
    name,
    settings,
    tags: tagSets.tags,
    tagBindings: tagSets.tagBindings,
    now,
    origin: caller.origin,
    audit: auditOf(caller, orgId, { id, type: "workspace", action: "create", meta: { name, project_id: projectId } }),
  };
  const result = await workspaceObject(caller.env, id)
    .create(input)
    .catch(async (err: unknown) => {
      if (await neverCreated(caller, id, name)) await release();
      throw err;
    });
  if (!result.ok) {
    await release();
    unwrap(result);
    throw ApiError.of("internal");
  }
  // Serialised from the batch above: a new workspace has no SSH key and only live tags.
  const scope = scopeFrom(caller.env, { access, grants: rows.grants, projects: new Map(rows.projects.map((p) => [p.id, p])) }, null, null);
  return { workspace: result.value, scope, bookmark: result.bookmark };
}

/** A project a new workspace may go in (the web UI's create form offers these). */
export interface CreatableProject {
  id: string;
  name: string;
  isDefault: boolean;
}

/**
 * The projects of the organisation (the first 100, by name) in which the caller may create
 * workspaces, by the same rule `createWorkspace` authorises with. A caller who may create in none is refused as
 * a create would refuse it.
 */
export async function projectsForNewWorkspace(caller: Caller, organization: string): Promise<CreatableProject[]> {
  const { projects, access } = await listProjectsFor(caller, organization, { tagged: [], sort: "name" }, { number: 1, size: 100 });
  const grants = await loadGrants(
    caller.db,
    access,
    [],
    projects.map((p) => p.id),
  );
  const allowed = projects.filter((p) => projectRights(access, p.id, grants.projects).createWorkspaces);
  const target = allowed[0]?.id ?? access.organization.defaultProjectId;
  authorize(caller, "workspace.create", { access, project: projectRights(access, target, grants.projects) });
  return allowed.map((p) => ({ id: p.id, name: p.name, isDefault: p.isDefault }));
}

export async function updateWorkspace(caller: Caller, ref: WorkspaceRef, body: (typeof workspaceUpdateBody)["_output"]["data"]): Promise<Written> {
  const { record, scope, caps } = await readRef(caller, ref, "workspace.update");
  const n = normalise(caller, body.attributes ?? {});
  // The organisation by id: the record's own reference, unchanged by a concurrent organisation rename.
  const organizationId = record.organizationId;
  await checkReferences(caller, organizationId, n);
  await checkEngineVersion(caller, n, body.attributes ?? {}, record.settings["engine-version"]);
  const now = nowIso();

  let projectId: string | undefined;
  const requestedProject = body.relationships?.project?.data?.id;
  if (requestedProject && requestedProject !== record.projectId) {
    await requireProject(caller, organizationId, requestedProject);
    // Moving needs admin (move) on both the source and the destination project.
    const dest = await loadScope(caller, organizationId, [{ ...record, projectId: requestedProject }]);
    if (!dest) throw ApiError.of("not_found");
    const destCaps = dest.capsOf({ ...record, projectId: requestedProject });
    if (
      !allows(caller.principal, "workspace.move", { access: scope.access, caps }) ||
      !allows(caller.principal, "workspace.move", { access: dest.access, caps: destCaps })
    ) {
      throw ApiError.of("forbidden", { detail: `Workspace(s) not found, or you are not authorized to move them: ${record.id}` });
    }
    projectId = requestedProject;
  }

  // Each relationship replaces its own set only (the binding limit is checked in the DO).
  let tagBindings: BindingInput[] | undefined;
  if (body.relationships?.["tag-bindings"]) {
    const inputs = body.relationships["tag-bindings"].data.map((d) => d.attributes);
    tagBindings = resolveBindings(inputs, "/data/relationships/tag-bindings/data");
    // Against the project the workspace ends up in (a move in the same request included).
    await refuseOverrides(caller, { organizationId, projectId: projectId ?? record.projectId }, tagBindings, "/data/relationships/tag-bindings/data");
  } else if (projectId) {
    // A move brings the workspace's own bindings under the destination's bindings: the same refusal as binding the
    // key there directly, blamed on the project relationship (the bindings are not in the request).
    await refuseOverrides(
      caller,
      { organizationId, projectId },
      record.tagBindings.map((b, index) => ({ key: b.key, index })),
      () => "/data/relationships/project/data/id",
    );
  }
  let flatTags: FlatInput[] | undefined;
  if (body.relationships?.tags) {
    flatTags = await resolveFlatAdds(caller, organizationId, body.relationships.tags.data, "/data/relationships/tags/data", now);
  }

  let nameClaimedAt: number | undefined;
  const renaming = n.name !== undefined && n.name !== record.name;
  if (renaming) nameClaimedAt = await claim(caller, organizationId, n.name!, record.id);
  const releaseName = async () => {
    if (renaming && n.name!.toLowerCase() !== record.name.toLowerCase()) await releaseClaim(caller.env.DB, organizationId, n.name!, record.id);
  };
  if (projectId) await holdProjectFor(caller, organizationId, projectId, record.id, releaseName);
  const result = await workspaceObject(caller.env, record.id).update({
    name: n.name,
    nameClaimedAt,
    projectId,
    attributes: n,
    tagBindings,
    tags: flatTags,
    now,
    origin: caller.origin,
    // Should the workspace have moved since the index said where it is, the DO refuses (409, retry).
    guard: audited(caller, guardOf(record), {
      id: record.id,
      type: "workspace",
      action: "update",
      meta: { name: n.name ?? record.name, ...(renaming ? { previous_name: record.name } : {}), ...(projectId ? { project_id: projectId } : {}) },
    }),
  });
  if (!result.ok) {
    await releaseName();
    if (projectId) await releaseProject(caller.db, projectId, record.id);
    unwrap(result);
  }
  const done = unwrap(result);
  const fresh = projectId ? await loadScope(caller, organizationId, [done.value]) : scope;
  if (!fresh) throw ApiError.of("not_found");
  return { workspace: done.value, scope: fresh, bookmark: done.bookmark };
}

/** Force delete: whatever the workspace holds; 403 for readers who may not. */
export async function forceDeleteWorkspace(caller: Caller, ref: WorkspaceRef): Promise<void> {
  await mutateAs(caller, ref, "workspace.force-delete", (r, guard) =>
    workspaceObject(caller.env, r.record.id).remove({
      guard: audited(caller, guard, { id: r.record.id, type: "workspace", action: "destroy", meta: { name: r.record.name, force: true } }),
    }),
  );
}
