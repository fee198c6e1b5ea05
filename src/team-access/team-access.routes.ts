/** Team access to workspaces (`team-workspaces`) and projects (`team-projects`), per the real role tables. */
import { z } from "@hono/zod-openapi";
import { callerOf } from "../auth/caller.http";
import { jsonapi, noContent, paginatedList } from "../jsonapi/document";
import { listDocument, pageOf, pageQuery, resourceDocument } from "../jsonapi/schemas";
import { jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import { PRJ_LEVELS, WS_LEVELS } from "./team-access.rules";
import { serializeTp, serializeTw } from "./team-access.serialize";
import { WS_CUSTOM } from "./team-access.schemas";
import {
  changeTeamProject,
  changeTeamWorkspace,
  createTeamProject,
  createTeamWorkspace,
  projectTeamAccesses,
  removeTeamProject,
  removeTeamWorkspace,
  showTeamProject,
  showTeamWorkspace,
  workspaceTeamAccesses,
} from "./team-access.service";
import { defineRoutes } from "../jsonapi/define-route";
import { teamProjectResource, teamWorkspaceResource } from "./team-access.schemas";

const defineRoute = defineRoutes({ tags: ["Team access"] });
export const teamAccess = router();

// ---- team-workspaces ----

const wsCustomInput = z.object(
  Object.fromEntries(Object.entries(WS_CUSTOM).map(([k, v]) => [k, v.optional()])) as { [K in keyof typeof WS_CUSTOM]: z.ZodOptional<(typeof WS_CUSTOM)[K]> },
);
const relationship = (type: string) => z.object({ data: z.object({ type: z.literal(type), id: z.string().max(64) }) });
const twCreateBody = z
  .object({
    data: z.object({
      type: z.literal("team-workspaces"),
      attributes: wsCustomInput.extend({ access: z.enum(WS_LEVELS) }),
      relationships: z.object({ team: relationship("teams"), workspace: relationship("workspaces") }),
    }),
  })
  .openapi("TeamWorkspaceCreate");
const twUpdateBody = z
  .object({ data: z.object({ type: z.literal("team-workspaces"), attributes: wsCustomInput.extend({ access: z.enum(WS_LEVELS).optional() }) }) })
  .openapi("TeamWorkspaceUpdate");

teamAccess.openapi(
  defineRoute({
    method: "post",
    path: "/team-workspaces",
    action: "workspace.update",
    summary: "Give a team access to a workspace",
    request: { body: jsonBody(twCreateBody) },
    responses: ok("The access", resourceDocument(teamWorkspaceResource), 201),
  }),
  async (c) => {
    const { attributes, relationships } = c.req.valid("json").data;
    const { access, ...given } = attributes;
    const tw = await createTeamWorkspace(callerOf(c), { teamId: relationships.team.data.id, workspace: relationships.workspace.data.id, access, given });
    return jsonapi(c, { data: serializeTw(tw) }, 201);
  },
);

teamAccess.openapi(
  defineRoute({
    method: "get",
    path: "/team-workspaces",
    action: "workspace.read",
    summary: "List the team access of a workspace",
    request: {
      query: pageQuery.extend({ "filter[workspace][id]": z.string().max(64) }).passthrough(),
    },
    responses: ok("Team accesses", listDocument(teamWorkspaceResource)),
  }),
  async (c) => {
    const query = c.req.valid("query");
    const accesses = await workspaceTeamAccesses(callerOf(c), query["filter[workspace][id]"]);
    const page = pageOf(query);
    return jsonapi(c, paginatedList(c, accesses, page, serializeTw));
  },
);

const twParam = z.object({ id: z.string().regex(/^tws-[A-Za-z0-9]{1,64}$/) });

teamAccess.openapi(
  defineRoute({
    method: "get",
    path: "/team-workspaces/{id}",
    action: "workspace.read",
    summary: "Show a team access",
    request: { params: twParam },
    responses: ok("The access", resourceDocument(teamWorkspaceResource)),
  }),
  async (c) => jsonapi(c, { data: serializeTw(await showTeamWorkspace(callerOf(c), c.req.valid("param").id)) }),
);

teamAccess.openapi(
  defineRoute({
    method: "patch",
    path: "/team-workspaces/{id}",
    action: "workspace.update",
    summary: "Change a team access",
    request: { params: twParam, body: jsonBody(twUpdateBody) },
    responses: ok("The access", resourceDocument(teamWorkspaceResource)),
  }),
  async (c) => {
    const { access, ...given } = c.req.valid("json").data.attributes;
    return jsonapi(c, { data: serializeTw(await changeTeamWorkspace(callerOf(c), c.req.valid("param").id, { access, given })) });
  },
);

teamAccess.openapi(
  defineRoute({
    method: "delete",
    path: "/team-workspaces/{id}",
    action: "workspace.update",
    summary: "Remove a team access",
    request: { params: twParam },
    responses: noContentResponse,
  }),
  async (c) => {
    await removeTeamWorkspace(callerOf(c), c.req.valid("param").id);
    return noContent(c);
  },
);

// ---- team-projects ----

const projectAccessInput = z.object({
  settings: z.enum(["read", "update", "delete"]).optional(),
  teams: z.enum(["none", "read", "manage"]).optional(),
  "variable-sets": z.enum(["none", "read", "write"]).optional(),
});
const workspaceAccessInput = z.object({
  runs: z.enum(["read", "plan", "apply"]).optional(),
  "sentinel-mocks": z.enum(["none", "read"]).optional(),
  "state-versions": z.enum(["none", "read-outputs", "read", "write"]).optional(),
  variables: z.enum(["none", "read", "write"]).optional(),
  create: z.boolean().optional(),
  locking: z.boolean().optional(),
  delete: z.boolean().optional(),
  move: z.boolean().optional(),
  "run-tasks": z.boolean().optional(),
  "policy-overrides": z.boolean().optional(),
});
const tpCreateBody = z
  .object({
    data: z.object({
      type: z.literal("team-projects"),
      attributes: z.object({
        access: z.enum(PRJ_LEVELS),
        "project-access": projectAccessInput.optional(),
        "workspace-access": workspaceAccessInput.optional(),
      }),
      relationships: z.object({ team: relationship("teams"), project: relationship("projects") }),
    }),
  })
  .openapi("TeamProjectCreate");
const tpUpdateBody = z
  .object({
    data: z.object({
      type: z.literal("team-projects"),
      attributes: z.object({
        access: z.enum(PRJ_LEVELS).optional(),
        "project-access": projectAccessInput.optional(),
        "workspace-access": workspaceAccessInput.optional(),
      }),
    }),
  })
  .openapi("TeamProjectUpdate");

teamAccess.openapi(
  defineRoute({
    method: "post",
    path: "/team-projects",
    action: "project.manage-teams",
    summary: "Give a team access to a project",
    request: { body: jsonBody(tpCreateBody) },
    responses: ok("The access", resourceDocument(teamProjectResource), 201),
  }),
  async (c) => {
    const { attributes: a, relationships } = c.req.valid("json").data;
    const tp = await createTeamProject(callerOf(c), {
      teamId: relationships.team.data.id,
      projectId: relationships.project.data.id,
      access: a.access,
      given: a,
    });
    return jsonapi(c, { data: serializeTp(tp) }, 201);
  },
);

teamAccess.openapi(
  defineRoute({
    method: "get",
    path: "/team-projects",
    action: "project.read-teams",
    summary: "List the team access of a project",
    request: {
      query: pageQuery.extend({ "filter[project][id]": z.string().max(64) }).passthrough(),
    },
    responses: ok("Team accesses", listDocument(teamProjectResource)),
  }),
  async (c) => {
    const query = c.req.valid("query");
    const accesses = await projectTeamAccesses(callerOf(c), query["filter[project][id]"]);
    const page = pageOf(query);
    return jsonapi(c, paginatedList(c, accesses, page, serializeTp));
  },
);

const tpParam = z.object({ id: z.string().regex(/^tprj-[A-Za-z0-9]{1,64}$/) });

teamAccess.openapi(
  defineRoute({
    method: "get",
    path: "/team-projects/{id}",
    action: "project.read-teams",
    summary: "Show a project team access",
    request: { params: tpParam },
    responses: ok("The access", resourceDocument(teamProjectResource)),
  }),
  async (c) => jsonapi(c, { data: serializeTp(await showTeamProject(callerOf(c), c.req.valid("param").id)) }),
);

teamAccess.openapi(
  defineRoute({
    method: "patch",
    path: "/team-projects/{id}",
    action: "project.manage-teams",
    summary: "Change a project team access",
    request: { params: tpParam, body: jsonBody(tpUpdateBody) },
    responses: ok("The access", resourceDocument(teamProjectResource)),
  }),
  async (c) => {
    const a = c.req.valid("json").data.attributes;
    return jsonapi(c, { data: serializeTp(await changeTeamProject(callerOf(c), c.req.valid("param").id, { access: a.access, given: a })) });
  },
);

teamAccess.openapi(
  defineRoute({
    method: "delete",
    path: "/team-projects/{id}",
    action: "project.manage-teams",
    summary: "Remove a project team access",
    request: { params: tpParam },
    responses: noContentResponse,
  }),
  async (c) => {
    await removeTeamProject(callerOf(c), c.req.valid("param").id);
    return noContent(c);
  },
);
