import { createRoute } from "@hono/zod-openapi";
import type { Context } from "hono";
import { canCreateWorkspaceIn, loadAccessBatch, loadGrants, type OrgAccess } from "../auth/access";
import { primary } from "../db";
import { edition, type AppEnv } from "../env";
import { ApiError, unwrap } from "../errors";
import { newId, nowIso } from "../ids";
import { jsonapi, noContent } from "../jsonapi/document";
import { errorResponses, jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import type { BindingInput, FlatInput, TagSets } from "../tags/workspace-tags.logic";
import { createTagEntries, resolveBindings, resolveFlatAdds } from "../tags/workspace-tags.service";
import { applySettings, defaultSettings, isFailure, normaliseAttributes, type NormalisedAttributes } from "./workspace.rules";
import type { WorkspaceRecord } from "./workspace.types";
import { claimName, NAME_LEASE_MS, releaseClaim } from "./workspaces.index";
import { includeFor } from "./workspaces.include";
import {
  includeQuery,
  orgParam,
  orgWorkspaceParam,
  workspaceCreateBody,
  workspaceIdParam,
  workspaceUpdateBody,
} from "./workspaces.schemas";
import { acknowledge, authorise, defaultsFor, faultsOf, idByName, loadScope, readById, readByName, requireCap, workspaceStub } from "./workspaces.service";
import { canForceDelete } from "../auth/access";
import { canRead } from "../auth/permissions";
import { listWorkspaces, listQuery } from "./workspaces.list";
import { holdProject, releaseProject } from "../projects/projects.index";

const tags = ["Workspaces"];
export const workspaces = router();

/** Claims a workspace name, taking over a claim whose holder never committed (lease expired). */
async function claim(c: Context<AppEnv>, organization: string, name: string, workspaceId: string): Promise<number> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const now = Date.now();
    const outcome = await claimName(c.env.DB, organization, name, workspaceId, now);
    if (outcome.claimed) return now;
    const stale = !outcome.committed && now - outcome.claimedAt > NAME_LEASE_MS;
    if (!stale) break;
    const { released } = await workspaceStub(c.env, outcome.holder).releaseName(name, now);
    if (!released) break;
    await releaseClaim(c.env.DB, organization, name, outcome.holder);
  }
  throw ApiError.of("invalid_attribute", { detail: "Name has already been taken", pointer: "/data/attributes/name" });
}

/** Checks references the attributes make to organisation registries (agent pools, OAuth tokens). */
async function checkReferences(c: Context<AppEnv>, organization: string, n: NormalisedAttributes): Promise<void> {
  const db = primary(c);
  const poolId = n.settings["agent-pool-id"];
  if (poolId) {
    const pool = await db.prepare("SELECT id FROM agent_pools WHERE id = ? AND organization_name = ?").bind(poolId, organization).first();
    if (!pool) throw ApiError.of("invalid_attribute", { detail: "Agent pool not found", pointer: "/data/attributes/agent-pool-id" });
  }
  const tokenId = n.vcsRepo?.["oauth-token-id"];
  if (tokenId) {
    const token = await db.prepare("SELECT id FROM oauth_tokens WHERE id = ? AND organization_name = ?").bind(tokenId, organization).first();
    if (!token) throw ApiError.of("invalid_attribute", { detail: "OAuth token not found", pointer: "/data/attributes/vcs-repo/oauth-token-id" });
  }
}

const projectNotFound = () => ApiError.of("invalid_attribute", { detail: "Project not found", pointer: "/data/relationships/project/data/id" });

async function requireProject(c: Context<AppEnv>, organization: string, projectId: string): Promise<void> {
  const row = await primary(c).prepare("SELECT id FROM projects WHERE id = ? AND organization_name = ?").bind(projectId, organization).first();
  if (!row) throw projectNotFound();
}

/**
 * Holds the project in D1 before the DO commits the workspace into it (issue 13 item 7): a project
 * delete either sees the hold and refuses, or came first and the hold fails. `onRefused` undoes
 * what the request took before (its name claim).
 */
async function holdProjectFor(c: Context<AppEnv>, organization: string, projectId: string, workspaceId: string, onRefused: () => Promise<void>): Promise<void> {
  if (await holdProject(primary(c), projectId, organization, workspaceId, Date.now())) return;
  await onRefused();
  throw projectNotFound();
}

function normalise(c: Context<AppEnv>, attrs: Parameters<typeof normaliseAttributes>[0]): NormalisedAttributes {
  const n = normaliseAttributes(attrs, edition(c.env) === "hosted");
  if (isFailure(n)) throw ApiError.of(n.code, { detail: n.detail, pointer: n.pointer });
  return n;
}

// ---- create ----

workspaces.openapi(
  createRoute({
    method: "post",
    path: "/organizations/{organization_name}/workspaces",
    tags,
    summary: "Create a workspace",
    request: { params: orgParam, body: jsonBody(workspaceCreateBody) },
    responses: { ...ok("The created workspace", 201), ...errorResponses },
  }),
  async (c) => {
    const { organization_name } = c.req.valid("param");
    const body = c.req.valid("json").data;
    const n = normalise(c, body.attributes);
    const requestedProject = body.relationships?.project?.data?.id || undefined;
    const loaded = await loadAccessBatch(primary(c), c.get("principal"), organization_name, [], requestedProject ? [requestedProject] : []);
    if (!loaded) throw ApiError.of("not_found");
    const { access } = loaded;
    const organization = access.organization;
    const projectId = requestedProject ?? organization.defaultProjectId;
    // The default project is known only once the organisation is loaded: fetch its grants then.
    const grants = requestedProject ? loaded.grants : await loadGrants(primary(c), access, [], [projectId]);
    if (requestedProject) await requireProject(c, organization.name, requestedProject);
    if (!canCreateWorkspaceIn(access, projectId, grants.projects)) throw ApiError.of("not_found");
    await checkReferences(c, organization.name, n);
    const settings = applySettings(defaultSettings(c.env.LATEST_ENGINE_VERSION ?? "1.14.0"), n);
    if (isFailure(settings)) throw ApiError.of(settings.code, { detail: settings.detail, pointer: settings.pointer });

    const now = nowIso();
    const tagSets = await createTags(c, access, body.relationships, now);
    const id = newId("ws");
    const name = n.name ?? body.attributes.name;
    await claim(c, organization.name, name, id);
    if (requestedProject) await holdProjectFor(c, organization.name, projectId, id, () => releaseClaim(c.env.DB, organization.name, name, id));
    const result = await workspaceStub(c.env, id).create({
      id,
      organization: organization.name,
      organizationId: organization.externalId,
      projectId,
      name,
      settings,
      tags: tagSets.tags,
      tagBindings: tagSets.tagBindings,
      now,
      faults: faultsOf(c),
    });
    if (!result.ok) {
      await releaseClaim(c.env.DB, organization.name, name, id);
      if (requestedProject) await releaseProject(primary(c), projectId, id);
      unwrap(result);
      throw ApiError.of("internal");
    }
    acknowledge(c, result);
    // A creator through project access may lack read on other projects: serialise with its own scope.
    const scope = await loadScope(c, organization.name, [result.workspace]);
    if (!scope) throw ApiError.of("not_found");
    return jsonapi(c, { data: scope.serialize(result.workspace) }, 201);
  },
);

/** Tags given on create: flat tags (`relationships.tags`, as go-tfe sends them) and key-value bindings. */
async function createTags(
  c: Context<AppEnv>,
  access: OrgAccess,
  rel: Parameters<typeof createTagEntries>[2],
  now: string,
): Promise<TagSets> {
  return createTagEntries(c, access.organization.name, rel, now);
}

// ---- show ----

workspaces.openapi(
  createRoute({
    method: "get",
    path: "/workspaces/{workspace_id}",
    tags,
    summary: "Show a workspace by ID",
    request: { params: workspaceIdParam, query: includeQuery },
    responses: { ...ok("The workspace"), ...errorResponses },
  }),
  async (c) => {
    const { workspace_id } = c.req.valid("param");
    const include = c.req.valid("query").include;
    const { record, scope } = await readById(c, workspace_id);
    const data = scope.serialize(record);
    return jsonapi(c, { data, ...(await includeFor(c, [record], scope, include, [data])) });
  },
);

workspaces.openapi(
  createRoute({
    method: "get",
    path: "/organizations/{organization_name}/workspaces/{name}",
    tags,
    summary: "Show a workspace by organisation and name",
    request: { params: orgWorkspaceParam, query: includeQuery },
    responses: { ...ok("The workspace"), ...errorResponses },
  }),
  async (c) => {
    const { organization_name, name } = c.req.valid("param");
    const include = c.req.valid("query").include;
    const { record, scope } = await readByName(c, organization_name, name);
    const data = scope.serialize(record);
    return jsonapi(c, { data, ...(await includeFor(c, [record], scope, include, [data])) });
  },
);

// ---- list ----

workspaces.openapi(
  createRoute({
    method: "get",
    path: "/organizations/{organization_name}/workspaces",
    tags,
    summary: "List workspaces",
    request: { params: orgParam, query: listQuery },
    responses: { ...ok("A page of workspaces"), ...errorResponses },
  }),
  async (c) => listWorkspaces(c, c.req.valid("param").organization_name),
);

// ---- update ----

async function update(c: Context<AppEnv>, id: string, body: (typeof workspaceUpdateBody)["_output"]["data"]) {
  const { record, scope, caps } = await readById(c, id);
  requireCap(caps.admin);
  const n = normalise(c, body.attributes ?? {});
  const organization = scope.access.organization.name;
  await checkReferences(c, organization, n);
  const now = nowIso();

  let projectId: string | undefined;
  const requestedProject = body.relationships?.project?.data?.id;
  if (requestedProject && requestedProject !== record.projectId) {
    await requireProject(c, organization, requestedProject);
    // Moving needs admin (move) on both the source and the destination project (spec §5.8).
    const dest = await loadScope(c, organization, [{ ...record, projectId: requestedProject }]);
    if (!dest) throw ApiError.of("not_found");
    const destCaps = dest.capsOf({ ...record, projectId: requestedProject });
    if (!caps.move || !destCaps.move) {
      throw ApiError.of("forbidden", { detail: `Workspace(s) not found, or you are not authorized to move them: ${record.id}` });
    }
    projectId = requestedProject;
  }

  // Issue 14: each relationship replaces its own set only (the binding limit is checked in the DO).
  let tagBindings: BindingInput[] | undefined;
  if (body.relationships?.["tag-bindings"]) {
    const inputs = body.relationships["tag-bindings"].data.map((d) => d.attributes);
    tagBindings = resolveBindings(inputs, "/data/relationships/tag-bindings/data");
  }
  let flatTags: FlatInput[] | undefined;
  if (body.relationships?.tags) {
    flatTags = await resolveFlatAdds(c, organization, body.relationships.tags.data, "/data/relationships/tags/data", now);
  }

  let nameClaimedAt: number | undefined;
  const renaming = n.name !== undefined && n.name !== record.name;
  if (renaming) nameClaimedAt = await claim(c, organization, n.name!, record.id);
  const releaseName = async () => {
    if (renaming && n.name!.toLowerCase() !== record.name.toLowerCase()) await releaseClaim(c.env.DB, organization, n.name!, record.id);
  };
  if (projectId) await holdProjectFor(c, organization, projectId, record.id, releaseName);
  const result = await workspaceStub(c.env, record.id).update({
    name: n.name,
    nameClaimedAt,
    projectId,
    attributes: n,
    tagBindings,
    tags: flatTags,
    now,
    faults: faultsOf(c),
  });
  if (!result.ok) {
    await releaseName();
    if (projectId) await releaseProject(primary(c), projectId, record.id);
    unwrap(result);
  }
  const updated = (result as { workspace: WorkspaceRecord }).workspace;
  acknowledge(c, result as { bookmark?: string | null });
  const fresh = projectId ? await loadScope(c, organization, [updated]) : scope;
  if (!fresh) throw ApiError.of("not_found");
  return jsonapi(c, { data: fresh.serialize(updated) });
}

workspaces.openapi(
  createRoute({
    method: "patch",
    path: "/workspaces/{workspace_id}",
    tags,
    summary: "Update a workspace by ID",
    request: { params: workspaceIdParam, body: jsonBody(workspaceUpdateBody) },
    responses: { ...ok("The updated workspace"), ...errorResponses },
  }),
  async (c) => update(c, c.req.valid("param").workspace_id, c.req.valid("json").data),
);

workspaces.openapi(
  createRoute({
    method: "patch",
    path: "/organizations/{organization_name}/workspaces/{name}",
    tags,
    summary: "Update a workspace by organisation and name",
    request: { params: orgWorkspaceParam, body: jsonBody(workspaceUpdateBody) },
    responses: { ...ok("The updated workspace"), ...errorResponses },
  }),
  async (c) => {
    const { organization_name, name } = c.req.valid("param");
    return update(c, await idByName(c, organization_name, name), c.req.valid("json").data);
  },
);

// ---- force delete ----

async function forceDelete(c: Context<AppEnv>, id: string): Promise<Response> {
  const { scope, caps } = await readById(c, id);
  if (!canRead(caps)) throw ApiError.of("not_found");
  if (!canForceDelete(scope.access, caps)) throw ApiError.of("force_delete_forbidden");
  unwrap(await workspaceStub(c.env, id).remove({ faults: faultsOf(c) }));
  return noContent(c);
}

workspaces.openapi(
  createRoute({
    method: "delete",
    path: "/workspaces/{workspace_id}",
    tags,
    summary: "Force delete a workspace by ID",
    request: { params: workspaceIdParam },
    responses: { ...noContentResponse, 403: { description: "Not authorised to force delete" }, ...errorResponses },
  }),
  async (c) => forceDelete(c, c.req.valid("param").workspace_id),
);

workspaces.openapi(
  createRoute({
    method: "delete",
    path: "/organizations/{organization_name}/workspaces/{name}",
    tags,
    summary: "Force delete a workspace by organisation and name",
    request: { params: orgWorkspaceParam },
    responses: { ...noContentResponse, 403: { description: "Not authorised to force delete" }, ...errorResponses },
  }),
  async (c) => {
    const { organization_name, name } = c.req.valid("param");
    return forceDelete(c, await idByName(c, organization_name, name));
  },
);

export { defaultsFor };
