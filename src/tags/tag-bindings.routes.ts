/**
 * Key-value tag bindings: workspace and project bindings, and effective bindings
 * (a workspace's direct ones plus its project's, merged at read time so a project change shows
 * at once).
 */
import { z } from "@hono/zod-openapi";
import { callerOf } from "../auth/caller.http";
import { jsonapi } from "../jsonapi/document";
import { jsonBody, ok, router } from "../jsonapi/validation";
import { LIMITS } from "../limits";
import { tagBindingInput, workspaceIdParam } from "../workspaces/workspaces.schemas";
import { acknowledge } from "../workspaces/workspaces.http";
import { projectParam } from "../projects/projects.schemas";
import { effectiveBindings, projectEffectiveBindings, serializeBinding, serializeProjectBinding } from "./tags.serialize";
import { projectTagBindings, upsertProjectTagBindings, upsertWorkspaceTagBindings, workspaceEffectiveTagBindings, workspaceTagBindings } from "./tags.service";
import { defineRoutes } from "../jsonapi/define-route";
import { effectiveTagBindingResource, tagBindingResource } from "./tags.schemas";
import { listDocument } from "../jsonapi/schemas";

const defineRoute = defineRoutes({ tags: ["Tag bindings"] });
export const tagBindings = router();

export const tagBindingsBody = z.object({ data: z.array(tagBindingInput).max(LIMITS.tagRefsPerRequest) }).openapi("TagBindings");
const API = "/api/v2";

// ---- workspaces ----

tagBindings.openapi(
  defineRoute({
    method: "get",
    path: "/workspaces/{workspace_id}/tag-bindings",
    action: "workspace.read",
    summary: "List a workspace's direct tag bindings (never its flat tags; not paginated)",
    request: { params: workspaceIdParam },
    responses: ok("The direct tag bindings", listDocument(tagBindingResource)),
  }),
  async (c) => {
    const record = await workspaceTagBindings(callerOf(c), c.req.valid("param").workspace_id);
    return jsonapi(c, { data: record.tagBindings.map(serializeBinding), links: { target: `${API}/workspaces/${record.id}` } });
  },
);

tagBindings.openapi(
  defineRoute({
    method: "patch",
    path: "/workspaces/{workspace_id}/tag-bindings",
    action: "workspace.manage-tags",
    summary: "Add or update tag bindings by key (never removes); answers the bindings sent, in order",
    request: { params: workspaceIdParam, body: jsonBody(tagBindingsBody) },
    responses: ok("The bindings sent", listDocument(tagBindingResource)),
  }),
  async (c) => {
    const sent = c.req.valid("json").data.map((d) => d.attributes);
    const result = await upsertWorkspaceTagBindings(callerOf(c), c.req.valid("param").workspace_id, sent);
    acknowledge(c, result);
    return jsonapi(c, { data: result.bindings.map(serializeBinding) });
  },
);

tagBindings.openapi(
  defineRoute({
    method: "get",
    path: "/workspaces/{workspace_id}/effective-tag-bindings",
    action: "workspace.read",
    summary: "List a workspace's effective tag bindings: direct plus inherited from its project (direct wins)",
    request: { params: workspaceIdParam },
    responses: ok("The effective tag bindings", listDocument(effectiveTagBindingResource)),
  }),
  async (c) => {
    const { record, inherited } = await workspaceEffectiveTagBindings(callerOf(c), c.req.valid("param").workspace_id);
    return jsonapi(c, { data: effectiveBindings(record.tagBindings, record.projectId, inherited) });
  },
);

// ---- projects ----

tagBindings.openapi(
  defineRoute({
    method: "get",
    path: "/projects/{project_id}/tag-bindings",
    action: "project.read",
    summary: "List a project's tag bindings",
    request: { params: projectParam },
    responses: ok("The project's tag bindings", listDocument(tagBindingResource)),
  }),
  async (c) => {
    const projectId = c.req.valid("param").project_id;
    const rows = await projectTagBindings(callerOf(c), projectId);
    return jsonapi(c, { data: rows.map(serializeProjectBinding), links: { target: `${API}/projects/${projectId}` } });
  },
);

tagBindings.openapi(
  defineRoute({
    method: "patch",
    path: "/projects/{project_id}/tag-bindings",
    action: "project.admin",
    summary: "Add or update a project's tag bindings by key (never removes); at most 10 per project",
    request: { params: projectParam, body: jsonBody(tagBindingsBody) },
    responses: ok("The bindings sent", listDocument(tagBindingResource)),
  }),
  async (c) => {
    const rows = await upsertProjectTagBindings(
      callerOf(c),
      c.req.valid("param").project_id,
      c.req.valid("json").data.map((d) => d.attributes),
    );
    return jsonapi(c, { data: rows.map(serializeProjectBinding) });
  },
);

tagBindings.openapi(
  defineRoute({
    method: "get",
    path: "/projects/{project_id}/effective-tag-bindings",
    action: "project.read",
    summary: "List a project's effective tag bindings (its own; projects inherit nothing)",
    request: { params: projectParam },
    responses: ok("The project's effective tag bindings", listDocument(effectiveTagBindingResource)),
  }),
  async (c) => {
    return jsonapi(c, { data: projectEffectiveBindings(await projectTagBindings(callerOf(c), c.req.valid("param").project_id)) });
  },
);
