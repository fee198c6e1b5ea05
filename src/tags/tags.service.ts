/**
 * Tags and tag bindings of workspaces, projects and organisations: authorise,
 * resolve the request's entries, then one DO call per workspace or one D1 batch per project.
 */
import { loadAccessBatch, projectRights, requireOrgAccess } from "../auth/access";
import { allows, authorize } from "../auth/requirements";
import type { Caller } from "../caller";
import { ApiError } from "../errors";
import { nowIso } from "../ids";
import type { Page } from "../jsonapi/document";
import { LIMITS } from "../limits";
import { getProject } from "../projects/projects.d1";
import { canReadProject } from "../projects/projects.service";
import type { BindingEntry, WorkspaceRecord } from "../workspaces/workspace.types";
import { parseDoc, workspaceDocsByIds } from "../workspaces/workspaces.d1";
import { loadScope, readById } from "../workspaces/workspaces.service";
import { isProjectLimitError, projectBindings, upsertProjectBindings, type ProjectBinding } from "./project-tags.d1";
import { refuseOverrides } from "./reserved-tag-keys.service";
import { deleteTags, listOrganizationTags, tagById, tagNotFound, tagRowsById, tagsById, type Tag } from "./tags.d1";
import { bindingValue, checkBindings, type BindingInput as SentBinding } from "./tags.rules";
import { dedupe, echoed, keyOnlyTagIds, LIMIT_DETAIL } from "./workspace-tags.rules";
import { changeTags, resolveBindings, resolveFlatAdds, resolveFlatRemovals, type FlatTagRef } from "./workspace-tags.service";
import { containsText } from "../platform/text-match";

/** What a tag write hands back to the route: the index write's bookmark, if any. */
export interface Acknowledged {
  bookmark?: string | null;
}

// ---- workspace flat tags ----

/**
 * The workspace's flat tags (never its bindings), in the order they were added, filtered by a
 * lower-cased substring; a tag whose organisation tag was deleted is not listed (dead).
 */
export async function workspaceFlatTags(caller: Caller, workspaceId: string, nameContains: string | undefined): Promise<{ tags: Tag[]; organization: string }> {
  const { record, scope } = await readById(caller, workspaceId);
  const candidates = record.tags.filter((t) => !nameContains || containsText(t.key, nameContains));
  const byId = await tagRowsById(caller.db, keyOnlyTagIds(candidates));
  const tags = candidates.flatMap((t) => {
    const tag = t.tagId ? byId.get(t.tagId) : undefined;
    return tag ? [tag] : [];
  });
  return { tags, organization: scope.access.organization.name };
}

/** Adds flat tags (by name, creating missing organisation tags, or by id); needs can-manage-tags. */
export async function addWorkspaceFlatTags(caller: Caller, workspaceId: string, refs: FlatTagRef[]): Promise<Acknowledged> {
  const { record } = await readById(caller, workspaceId, "workspace.manage-tags");
  const now = nowIso();
  const inputs = await resolveFlatAdds(caller, record.organizationId, refs, "/data", now);
  return inputs.length > 0 ? changeTags(caller, record, { op: "add-flat", tags: inputs }, now) : {};
}

/** Removes flat tags (an unknown name has no effect; an unknown id is 404). */
export async function removeWorkspaceFlatTags(caller: Caller, workspaceId: string, refs: FlatTagRef[]): Promise<Acknowledged> {
  const { record } = await readById(caller, workspaceId, "workspace.manage-tags");
  const keys = await resolveFlatRemovals(caller, record.organizationId, refs, "/data");
  return keys.length > 0 ? changeTags(caller, record, { op: "remove-flat", keys }, nowIso()) : {};
}

// ---- workspace tag bindings ----

/** A workspace the caller can read, for its direct tag bindings. */
export async function workspaceTagBindings(caller: Caller, workspaceId: string): Promise<WorkspaceRecord> {
  return (await readById(caller, workspaceId)).record;
}

/** Adds or updates bindings by key (never removes); answers the bindings sent, in order. */
export async function upsertWorkspaceTagBindings(
  caller: Caller,
  workspaceId: string,
  sent: SentBinding[],
): Promise<{ bindings: BindingEntry[] } & Acknowledged> {
  const { record } = await readById(caller, workspaceId, "workspace.manage-tags");
  const now = nowIso();
  const inputs = resolveBindings(sent, "/data");
  if (inputs.length === 0) return { bindings: echoed(record.tagBindings, inputs) };
  await refuseOverrides(caller, record, inputs, "/data");
  const done = await changeTags(caller, record, { op: "upsert-bindings", bindings: inputs, pointerBase: "/data" }, now);
  return { bindings: echoed(done.workspace.tagBindings, inputs), bookmark: done.bookmark };
}

/** The workspace's direct bindings with its project's, to merge at read time (a project change shows at once). */
export async function workspaceEffectiveTagBindings(caller: Caller, workspaceId: string): Promise<{ record: WorkspaceRecord; inherited: ProjectBinding[] }> {
  const { record } = await readById(caller, workspaceId);
  return { record, inherited: await projectBindings(caller.db, record.projectId) };
}

// ---- project tag bindings ----

/** The project's organisation and the caller's rights on it, authorised for `action` (404 otherwise). */
async function projectAccess(caller: Caller, projectId: string, action: "project.read" | "project.admin"): Promise<void> {
  const found = await getProject(caller.db, projectId);
  if (!found) throw ApiError.of("not_found");
  const loaded = await loadAccessBatch(caller.db, caller.principal, { id: found.organizationId }, [], [projectId]);
  if (!loaded) throw ApiError.of("not_found");
  const { access, grants } = loaded;
  let project = projectRights(access, projectId, grants.projects);
  // Teams with access to one of its workspaces read the project too (looked up only when needed).
  if (!project.read) project = projectRights(access, projectId, grants.projects, await canReadProject(caller, access, projectId));
  authorize(caller, "project.read", { access, project });
  if (action !== "project.read") authorize(caller, action, { access, project });
}

/** A project's bindings (projects inherit nothing, so these are also its effective ones). */
export async function projectTagBindings(caller: Caller, projectId: string): Promise<ProjectBinding[]> {
  await projectAccess(caller, projectId, "project.read");
  return projectBindings(caller.db, projectId);
}

/** The first sent entry that takes the project over the limit (null when within it). */
function projectLimitOffender(existing: ProjectBinding[], sent: Array<{ key: string; index: number }>): number | null {
  const keys = new Set(existing.map((b) => b.key));
  for (const s of sent) {
    keys.add(s.key);
    if (keys.size > LIMITS.tagBindingsPerResource) return s.index;
  }
  return null;
}

/** Adds or updates a project's bindings by key (never removes), at most 10 per project; answers the bindings sent. */
export async function upsertProjectTagBindings(caller: Caller, projectId: string, sent: SentBinding[]): Promise<ProjectBinding[]> {
  await projectAccess(caller, projectId, "project.admin");
  const f = checkBindings(sent, "/data");
  if (f) throw ApiError.of(f.code, { detail: f.detail, pointer: f.pointer });
  const inputs = dedupe(sent.map((b, index) => ({ key: b.key, value: bindingValue(b.value), tagId: null, index })));
  const db = caller.db;
  const overLimit = async () => {
    const at = projectLimitOffender(await projectBindings(db, projectId), inputs) ?? inputs[0]?.index ?? 0;
    return ApiError.of("invalid_attribute", { detail: LIMIT_DETAIL, pointer: `/data/${at}` });
  };
  if (projectLimitOffender(await projectBindings(db, projectId), inputs) !== null) throw await overLimit();
  try {
    await upsertProjectBindings(
      db,
      projectId,
      inputs.map((t) => ({ key: t.key, value: t.value ?? "" })),
      nowIso(),
    );
  } catch (err) {
    if (isProjectLimitError(err)) throw await overLimit();
    throw err;
  }
  const byKey = new Map((await projectBindings(db, projectId)).map((b) => [b.key, b]));
  return inputs.flatMap((t) => (byKey.has(t.key) ? [byKey.get(t.key)!] : []));
}

// ---- organisation tags ----

/** One page of the organisation's tags (those on at least one workspace), by name. */
export async function organizationTags(
  caller: Caller,
  organization: string,
  query: { q?: string; excludeWorkspaceId?: string },
  page: Page,
): Promise<{ tags: Tag[]; total: number; organization: string }> {
  const access = await requireOrgAccess(caller, { name: organization });
  const org = access.organization;
  const { tags, total } = await listOrganizationTags(caller.db, org.externalId, { ...query, limit: page.size, offset: (page.number - 1) * page.size });
  return { tags, total, organization: org.name };
}

/** Deletes organisation tags: each is detached from every workspace that carries it. */
export async function deleteOrganizationTags(caller: Caller, organization: string, ids: string[]): Promise<void> {
  const access = await requireOrgAccess(caller, { name: organization });
  // Changing tags organisation-wide (on workspaces the caller did not name) needs admin on all of them.
  authorize(caller, "workspaces.manage", { access });
  const org = access.organization.externalId;
  const known = await tagsById(caller.db, org, ids, false);
  ids.forEach((id, i) => {
    if (!known.has(id)) throw tagNotFound(`/data/${i}/id`, id);
  });
  // One batch, no fan-out: entries carrying these ids are dead from now on (src/tags/tags.d1.ts).
  await deleteTags(caller.db, org, [...known.keys()], nowIso());
}

/** Runs one DO call per workspace (at most LIMITS.tagWorkspacesPerRequest), a bounded number at a time. */
async function forEachLimited<T>(items: T[], fn: (item: T) => Promise<void>, width = 20): Promise<void> {
  for (let i = 0; i < items.length; i += width) await Promise.all(items.slice(i, i + width).map(fn));
}

/** Attaches an existing organisation tag to workspaces; answers the last index write's bookmark. */
export async function attachTagToWorkspaces(caller: Caller, tagId: string, workspaceIds: string[]): Promise<Acknowledged> {
  const tag = await tagById(caller.db, tagId);
  // A tag no workspace carries no longer exists (it left the organisation's list).
  if (!tag || tag.instanceCount === 0) throw ApiError.of("not_found");
  authorize(caller, "organization.read", { access: await requireOrgAccess(caller, { id: tag.organizationId }) });
  const records = await resolveWorkspaces(caller, tag.organizationId, workspaceIds);
  const now = nowIso();
  const acknowledged: Acknowledged = {};
  await forEachLimited(records, async (r) => {
    const done = await changeTags(caller, r, { op: "add-flat", tags: [{ key: tag.name, tagId: tag.id, index: 0 }] }, now);
    if (done.bookmark) acknowledged.bookmark = done.bookmark;
  });
  return acknowledged;
}

/** Every workspace must exist in the tag's organisation and be one whose tags the caller manages. */
async function resolveWorkspaces(caller: Caller, organizationId: string, ids: string[]): Promise<WorkspaceRecord[]> {
  const unique = [...new Set(ids)];
  // One D1 read for all of them, from the index (no Durable Object woken before the caller is authorised).
  const found = new Map((await workspaceDocsByIds(caller.db, organizationId, unique)).map(parseDoc).map((w) => [w.id, w]));
  const records = unique.map((id) => {
    const r = found.get(id);
    if (!r) throw ApiError.of("not_found", { detail: `Workspace not found: ${id}`, pointer: `/data/${ids.indexOf(id)}/id` });
    return r;
  });
  const scope = await loadScope(caller, organizationId, records);
  if (!scope) throw ApiError.of("not_found");
  records.forEach((r) => {
    const target = { access: scope.access, caps: scope.capsOf(r) };
    const live = scope.access.organization.externalId === r.organizationId;
    if (!live || !allows(caller.principal, "workspace.manage-tags", target)) {
      throw ApiError.of("not_found", { detail: `Workspace not found: ${r.id}`, pointer: `/data/${ids.indexOf(r.id)}/id` });
    }
    authorize(caller, "workspace.manage-tags", target);
  });
  return records;
}
