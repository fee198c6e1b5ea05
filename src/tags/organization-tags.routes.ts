/**
 * Organisation tags as go-tfe's OrganizationTags uses them: list (`q`, `filter[exclude][taggable][id]`,
 * instance-count), delete by ids (detaches the tag from every workspace), and attach one tag to
 * many workspaces.
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { requireOrgAccess, type OrgAccess } from "../auth/access";
import { canRead } from "../auth/permissions";
import { primary } from "../db";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";
import { nowIso } from "../ids";
import { noContent, paginated, jsonapi, readPage } from "../jsonapi/document";
import { errorResponses, jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import { LIMITS } from "../limits";
import type { WorkspaceRecord } from "../workspaces/workspace.types";
import { orgParam } from "../workspaces/workspaces.schemas";
import { loadScope, workspaceStub } from "../workspaces/workspaces.service";
import { deleteTags, listOrganizationTags, tagById, tagNotFound, tagsById } from "./tags.index";
import { serializeTag } from "./tags.serialize";
import { changeTags } from "./workspace-tags.service";

const tags = ["Tags"];
export const organizationTags = router();

const listQuery = z
  .object({
    "page[number]": z.string().max(20).optional(),
    "page[size]": z.string().max(20).optional(),
    q: z.string().max(255).optional(),
    "filter[exclude][taggable][id]": z.string().max(64).optional(),
  })
  .passthrough();

const tagIdsBody = z
  .object({ data: z.array(z.object({ type: z.literal("tags"), id: z.string().min(1).max(64) }).passthrough()).min(1).max(LIMITS.tagRefsPerRequest) })
  .openapi("TagIds");
const workspaceIdsBody = z
  .object({
    data: z.array(z.object({ type: z.literal("workspaces"), id: z.string().min(1).max(64) }).passthrough()).min(1).max(LIMITS.tagWorkspacesPerRequest),
  })
  .openapi("WorkspaceIds");

organizationTags.openapi(
  createRoute({
    method: "get",
    path: "/organizations/{organization_name}/tags",
    tags,
    summary: "List the organisation's tags (those on at least one workspace), by name",
    request: { params: orgParam, query: listQuery },
    responses: { ...ok("A page of tags"), ...errorResponses },
  }),
  async (c) => {
    const access = await requireOrgAccess(primary(c), c.get("principal"), c.req.valid("param").organization_name);
    const query = c.req.valid("query");
    const page = readPage(c);
    const org = access.organization.name;
    const { rows, total } = await listOrganizationTags(primary(c), org, {
      q: query.q || undefined,
      excludeWorkspaceId: query["filter[exclude][taggable][id]"] || undefined,
      limit: page.size,
      offset: (page.number - 1) * page.size,
    });
    return jsonapi(c, paginated(c, rows.map((r) => serializeTag(r, org)), page, total));
  },
);

/** Changing tags organisation-wide (on workspaces the caller did not name) needs admin on all of them. */
function canManageOrgTags(access: OrgAccess): boolean {
  return access.isOwner || access.isOrgToken || access.orgPermissions["manage-workspaces"] === true;
}

/** Runs one DO call per workspace (at most LIMITS.tagWorkspacesPerRequest), a bounded number at a time. */
async function forEachLimited<T>(items: T[], fn: (item: T) => Promise<void>, width = 20): Promise<void> {
  for (let i = 0; i < items.length; i += width) await Promise.all(items.slice(i, i + width).map(fn));
}

organizationTags.openapi(
  createRoute({
    method: "delete",
    path: "/organizations/{organization_name}/tags",
    tags,
    summary: "Delete organisation tags: each is detached from every workspace that carries it",
    request: { params: orgParam, body: jsonBody(tagIdsBody) },
    responses: { ...noContentResponse, ...errorResponses },
  }),
  async (c) => {
    const access = await requireOrgAccess(primary(c), c.get("principal"), c.req.valid("param").organization_name);
    if (!canManageOrgTags(access)) throw ApiError.of("not_found");
    const org = access.organization.name;
    const data = c.req.valid("json").data;
    const known = await tagsById(primary(c), org, data.map((d) => d.id), false);
    data.forEach((d, i) => {
      if (!known.has(d.id)) throw tagNotFound(`/data/${i}/id`, d.id);
    });
    // One batch, no fan-out: entries carrying these ids are dead from now on (src/tags/tags.index.ts).
    await deleteTags(primary(c), org, [...known.keys()], nowIso());
    return noContent(c);
  },
);

organizationTags.openapi(
  createRoute({
    method: "post",
    path: "/tags/{tag_id}/relationships/workspaces",
    tags,
    summary: "Attach an existing organisation tag to workspaces",
    request: { params: z.object({ tag_id: z.string().min(1).max(64) }), body: jsonBody(workspaceIdsBody) },
    responses: { ...noContentResponse, ...errorResponses },
  }),
  async (c) => {
    const tagId = c.req.valid("param").tag_id;
    const tag = await tagById(primary(c), tagId);
    // A tag no workspace carries no longer exists (it left the organisation's list).
    if (!tag || tag.instance_count === 0) throw ApiError.of("not_found");
    await requireOrgAccess(primary(c), c.get("principal"), tag.organization_name);
    const records = await resolveWorkspaces(c, tag.organization_name, c.req.valid("json").data.map((d) => d.id));
    const now = nowIso();
    await forEachLimited(records, async (r) => {
      await changeTags(c, r, { op: "add-flat", tags: [{ key: tag.name, tagId: tag.id, index: 0 }] }, now);
    });
    return noContent(c);
  },
);

/** Every workspace must exist in the tag's organisation and be one whose tags the caller manages. */
async function resolveWorkspaces(c: Context<AppEnv>, organization: string, ids: string[]): Promise<WorkspaceRecord[]> {
  const unique = [...new Set(ids)];
  const results = await Promise.all(unique.map((id) => workspaceStub(c.env, id).get()));
  const records: WorkspaceRecord[] = [];
  results.forEach((r, i) => {
    if (!r.ok || r.workspace.organization.toLowerCase() !== organization.toLowerCase()) {
      throw ApiError.of("not_found", { detail: `Workspace not found: ${unique[i]}`, pointer: `/data/${ids.indexOf(unique[i]!)}/id` });
    }
    records.push(r.workspace as WorkspaceRecord);
  });
  const scope = await loadScope(c, organization, records);
  if (!scope) throw ApiError.of("not_found");
  records.forEach((r) => {
    const caps = scope.capsOf(r);
    const live = scope.access.organization.externalId === r.organizationId;
    if (!live || !canRead(caps) || !caps.admin) {
      throw ApiError.of("not_found", { detail: `Workspace not found: ${r.id}`, pointer: `/data/${ids.indexOf(r.id)}/id` });
    }
  });
  return records;
}
