/**
 * Organisation tags as go-tfe's OrganizationTags uses them: list (`q`, `filter[exclude][taggable][id]`,
 * instance-count), delete by ids (detaches the tag from every workspace), and attach one tag to
 * many workspaces.
 */
import { z } from "@hono/zod-openapi";
import { callerOf } from "../auth/caller.http";
import { noContent, paginated, jsonapi } from "../jsonapi/document";
import { listDocument, orgParam, pageOf, pageQuery } from "../jsonapi/schemas";
import { jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import { LIMITS } from "../limits";
import { acknowledge } from "../workspaces/workspaces.http";
import { serializeTag } from "./tags.serialize";
import { attachTagToWorkspaces, deleteOrganizationTags, organizationTags as listTags } from "./tags.service";
import { defineRoutes } from "../jsonapi/define-route";
import { tagResource } from "./tags.schemas";

const defineRoute = defineRoutes({ tags: ["Tags"] });
export const organizationTags = router();

const listQuery = pageQuery.extend({ q: z.string().max(255).optional(), "filter[exclude][taggable][id]": z.string().max(64).optional() }).passthrough();

const tagIdsBody = z
  .object({
    data: z
      .array(z.object({ type: z.literal("tags"), id: z.string().min(1).max(64) }).passthrough())
      .min(1)
      .max(LIMITS.tagRefsPerRequest),
  })
  .openapi("TagIds");
const workspaceIdsBody = z
  .object({
    data: z
      .array(z.object({ type: z.literal("workspaces"), id: z.string().min(1).max(64) }).passthrough())
      .min(1)
      .max(LIMITS.tagWorkspacesPerRequest),
  })
  .openapi("WorkspaceIds");

organizationTags.openapi(
  defineRoute({
    method: "get",
    path: "/organizations/{organization_name}/tags",
    action: "organization.read",
    summary: "List the organisation's tags (those on at least one workspace), by name",
    request: { params: orgParam, query: listQuery },
    responses: ok("A page of tags", listDocument(tagResource)),
  }),
  async (c) => {
    const query = c.req.valid("query");
    const page = pageOf(query);
    const { tags, total, organization } = await listTags(
      callerOf(c),
      c.req.valid("param").organization_name,
      {
        q: query.q || undefined,
        excludeWorkspaceId: query["filter[exclude][taggable][id]"] || undefined,
      },
      page,
    );
    return jsonapi(
      c,
      paginated(
        c,
        tags.map((t) => serializeTag(t, organization)),
        page,
        total,
      ),
    );
  },
);

organizationTags.openapi(
  defineRoute({
    method: "delete",
    path: "/organizations/{organization_name}/tags",
    action: "workspaces.manage",
    summary: "Delete organisation tags: each is detached from every workspace that carries it",
    request: { params: orgParam, body: jsonBody(tagIdsBody) },
    responses: noContentResponse,
  }),
  async (c) => {
    await deleteOrganizationTags(
      callerOf(c),
      c.req.valid("param").organization_name,
      c.req.valid("json").data.map((d) => d.id),
    );
    return noContent(c);
  },
);

organizationTags.openapi(
  defineRoute({
    method: "post",
    path: "/tags/{tag_id}/relationships/workspaces",
    action: "workspace.manage-tags",
    summary: "Attach an existing organisation tag to workspaces",
    request: { params: z.object({ tag_id: z.string().min(1).max(64) }), body: jsonBody(workspaceIdsBody) },
    responses: noContentResponse,
  }),
  async (c) => {
    const ids = c.req.valid("json").data.map((d) => d.id);
    acknowledge(c, await attachTagToWorkspaces(callerOf(c), c.req.valid("param").tag_id, ids));
    return noContent(c);
  },
);
