/** Flat tags of a workspace: GET / POST / DELETE /workspaces/:id/relationships/tags. */
import { z } from "@hono/zod-openapi";
import { callerOf } from "../auth/caller.http";
import { jsonapi, noContent, paginated, pageSlice } from "../jsonapi/document";
import { listDocument, pageOf, pageQuery } from "../jsonapi/schemas";
import { jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import { LIMITS } from "../limits";
import { workspaceIdParam } from "../workspaces/workspaces.schemas";
import { acknowledge } from "../workspaces/workspaces.http";
import { serializeTag } from "./tags.serialize";
import { addWorkspaceFlatTags, removeWorkspaceFlatTags, workspaceFlatTags } from "./tags.service";
import { defineRoutes } from "../jsonapi/define-route";
import { tagResource } from "./tags.schemas";

const defineRoute = defineRoutes({ tags: ["Tags"] });
export const workspaceTags = router();

const flatTagRef = z
  .object({
    type: z.literal("tags"),
    id: z.string().max(64).optional(),
    attributes: z
      .object({ name: z.string().max(1000).optional() })
      .passthrough()
      .optional(),
  })
  .passthrough();

export const flatTagsBody = z.object({ data: z.array(flatTagRef).max(LIMITS.tagRefsPerRequest) }).openapi("TagReferences");

const listQuery = pageQuery.extend({ name: z.string().max(255).optional() }).passthrough();

const path = "/workspaces/{workspace_id}/relationships/tags";

workspaceTags.openapi(
  defineRoute({
    method: "get",
    path,
    action: "workspace.read",
    summary: "List a workspace's flat tags (insertion order; `name` filters by substring)",
    request: { params: workspaceIdParam, query: listQuery },
    responses: ok("A page of tags", listDocument(tagResource)),
  }),
  async (c) => {
    const query = c.req.valid("query");
    const { tags, organization } = await workspaceFlatTags(callerOf(c), c.req.valid("param").workspace_id, query.name);
    const page = pageOf(query);
    const slice = pageSlice(tags, page);
    return jsonapi(
      c,
      paginated(
        c,
        slice.map((t) => serializeTag(t, organization)),
        page,
        tags.length,
      ),
    );
  },
);

workspaceTags.openapi(
  defineRoute({
    method: "post",
    path,
    action: "workspace.manage-tags",
    summary: "Add flat tags (by name, creating missing organisation tags, or by id)",
    request: { params: workspaceIdParam, body: jsonBody(flatTagsBody) },
    responses: noContentResponse,
  }),
  async (c) => {
    acknowledge(c, await addWorkspaceFlatTags(callerOf(c), c.req.valid("param").workspace_id, c.req.valid("json").data));
    return noContent(c);
  },
);

workspaceTags.openapi(
  defineRoute({
    method: "delete",
    path,
    action: "workspace.manage-tags",
    summary: "Remove flat tags (an unknown name has no effect; an unknown id is 404)",
    request: { params: workspaceIdParam, body: jsonBody(flatTagsBody) },
    responses: noContentResponse,
  }),
  async (c) => {
    acknowledge(c, await removeWorkspaceFlatTags(callerOf(c), c.req.valid("param").workspace_id, c.req.valid("json").data));
    return noContent(c);
  },
);
