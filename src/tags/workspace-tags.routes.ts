/** Flat tags of a workspace: GET / POST / DELETE /workspaces/:id/relationships/tags (spec §4.12). */
import { createRoute, z } from "@hono/zod-openapi";
import { primary } from "../db";
import { nowIso } from "../ids";
import { jsonapi, noContent, paginated, readPage } from "../jsonapi/document";
import { errorResponses, jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import { LIMITS } from "../limits";
import { workspaceIdParam } from "../workspaces/workspaces.schemas";
import { readById, requireCap } from "../workspaces/workspaces.service";
import { tagRowsById } from "./tags.index";
import { serializeTag } from "./tags.serialize";
import { keyOnlyTagIds } from "./workspace-tags.logic";
import { changeTags, resolveFlatAdds, resolveFlatRemovals } from "./workspace-tags.service";

const tags = ["Tags"];
export const workspaceTags = router();

const flatTagRef = z
  .object({
    type: z.literal("tags"),
    id: z.string().max(64).optional(),
    attributes: z.object({ name: z.string().max(1000).optional() }).passthrough().optional(),
  })
  .passthrough();

export const flatTagsBody = z.object({ data: z.array(flatTagRef).max(LIMITS.tagRefsPerRequest) }).openapi("TagReferences");

const listQuery = z
  .object({
    "page[number]": z.string().max(20).optional(),
    "page[size]": z.string().max(20).optional(),
    name: z.string().max(255).optional(),
  })
  .passthrough();

const path = "/workspaces/{workspace_id}/relationships/tags";

workspaceTags.openapi(
  createRoute({
    method: "get",
    path,
    tags,
    summary: "List a workspace's flat tags (insertion order; `name` filters by substring)",
    request: { params: workspaceIdParam, query: listQuery },
    responses: { ...ok("A page of tags"), ...errorResponses },
  }),
  async (c) => {
    const { record } = await readById(c, c.req.valid("param").workspace_id);
    const q = c.req.valid("query").name?.toLowerCase();
    // The workspace's flat tags (never its bindings), in the order they were added; a tag whose
    // organisation tag was deleted is not listed (dead).
    const candidates = record.tags.filter((t) => !q || t.key.toLowerCase().includes(q));
    const rows = await tagRowsById(primary(c), keyOnlyTagIds(candidates));
    const flat = candidates.flatMap((t) => {
      const row = t.tagId ? rows.get(t.tagId) : undefined;
      return row ? [row] : [];
    });
    const page = readPage(c);
    const slice = flat.slice((page.number - 1) * page.size, page.number * page.size);
    return jsonapi(c, paginated(c, slice.map((r) => serializeTag(r, record.organization)), page, flat.length));
  },
);

workspaceTags.openapi(
  createRoute({
    method: "post",
    path,
    tags,
    summary: "Add flat tags (by name, creating missing organisation tags, or by id)",
    request: { params: workspaceIdParam, body: jsonBody(flatTagsBody) },
    responses: { ...noContentResponse, ...errorResponses },
  }),
  async (c) => {
    const { record, caps } = await readById(c, c.req.valid("param").workspace_id);
    requireCap(caps.admin); // can-manage-tags
    const now = nowIso();
    const inputs = await resolveFlatAdds(c, record.organization, c.req.valid("json").data, "/data", now);
    if (inputs.length > 0) await changeTags(c, record, { op: "add-flat", tags: inputs }, now);
    return noContent(c);
  },
);

workspaceTags.openapi(
  createRoute({
    method: "delete",
    path,
    tags,
    summary: "Remove flat tags (an unknown name has no effect; an unknown id is 404)",
    request: { params: workspaceIdParam, body: jsonBody(flatTagsBody) },
    responses: { ...noContentResponse, ...errorResponses },
  }),
  async (c) => {
    const { record, caps } = await readById(c, c.req.valid("param").workspace_id);
    requireCap(caps.admin);
    const keys = await resolveFlatRemovals(c, record.organization, c.req.valid("json").data, "/data");
    if (keys.length > 0) await changeTags(c, record, { op: "remove-flat", keys }, nowIso());
    return noContent(c);
  },
);
