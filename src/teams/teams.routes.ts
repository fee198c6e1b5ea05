/** Teams, team membership and organisation memberships (HCP Terraform API docs: Teams, Team Membership, Organization Memberships). */
import { z } from "@hono/zod-openapi";
import { callerOf } from "../auth/caller.http";
import { LIMITS } from "../limits";
import { jsonapi, noContent, paginated } from "../jsonapi/document";
import { includeQuery, listDocument, orgParam, pageOf, pageQuery, resourceDocument } from "../jsonapi/schemas";
import { jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import { serializeTeamView, serializeTeamWithIncludes } from "./teams.serialize";
import { changeMemberships, changeUsers, createTeam, deleteTeam, listTeams, showTeam, updateTeam } from "./teams.service";
import { defineRoutes } from "../jsonapi/define-route";
import { teamAttributesInput, teamParam, teamResource } from "./teams.schemas";

const defineRoute = defineRoutes({ tags: ["Teams"] });
export const teams = router();
const teamResponse = ok("The team", resourceDocument(teamResource));

const teamCreateBody = z
  .object({ data: z.object({ type: z.literal("teams"), attributes: teamAttributesInput.extend({ name: z.string().max(LIMITS.teamNameMax) }) }) })
  .openapi("TeamCreate");
const teamUpdateBody = z.object({ data: z.object({ type: z.literal("teams"), attributes: teamAttributesInput.optional() }) }).openapi("TeamUpdate");
const usersBody = z.object({ data: z.array(z.object({ type: z.literal("users"), id: z.string().max(64) })).max(100) }).openapi("TeamUsers");
const membershipsBody = z
  .object({ data: z.array(z.object({ type: z.literal("organization-memberships"), id: z.string().max(64) })).max(100) })
  .openapi("TeamOrganizationMemberships");

teams.openapi(
  defineRoute({
    method: "post",
    path: "/organizations/{organization_name}/teams",
    action: "teams.manage",
    summary: "Create a team (200, as the real service documents)",
    request: { params: orgParam, body: jsonBody(teamCreateBody) },
    responses: teamResponse,
  }),
  async (c) => {
    const team = await createTeam(callerOf(c), c.req.valid("param").organization_name, c.req.valid("json").data.attributes);
    return jsonapi(c, { data: serializeTeamView(team) });
  },
);

teams.openapi(
  defineRoute({
    method: "get",
    path: "/organizations/{organization_name}/teams",
    action: "organization.read",
    summary: "List teams",
    request: {
      params: orgParam,
      query: pageQuery.extend({ q: z.string().max(255).optional(), "filter[names]": z.string().max(2000).optional() }).passthrough(),
    },
    responses: ok("A page of teams", listDocument(teamResource)),
  }),
  async (c) => {
    const query = c.req.valid("query");
    const { q, "filter[names]": names } = query;
    const page = pageOf(query);
    const { teams: views, total } = await listTeams(callerOf(c), c.req.valid("param").organization_name, { q, names }, page);
    return jsonapi(c, paginated(c, views.map(serializeTeamView), page, total));
  },
);

teams.openapi(
  defineRoute({
    method: "get",
    path: "/teams/{team_id}",
    action: "organization.read",
    summary: "Show a team (include: users, organization-memberships)",
    request: { params: teamParam, query: includeQuery },
    responses: teamResponse,
  }),
  async (c) => {
    const { team, users, memberships } = await showTeam(callerOf(c), c.req.valid("param").team_id, c.req.valid("query").include);
    return jsonapi(c, serializeTeamWithIncludes(team, users, memberships));
  },
);

teams.openapi(
  defineRoute({
    method: "patch",
    path: "/teams/{team_id}",
    action: "teams.manage",
    summary: "Update a team",
    request: { params: teamParam, body: jsonBody(teamUpdateBody) },
    responses: teamResponse,
  }),
  async (c) => {
    const team = await updateTeam(callerOf(c), c.req.valid("param").team_id, c.req.valid("json").data.attributes ?? {});
    return jsonapi(c, { data: serializeTeamView(team) });
  },
);

teams.openapi(
  defineRoute({
    method: "delete",
    path: "/teams/{team_id}",
    action: "teams.manage",
    summary: "Delete a team (never the owners team)",
    request: { params: teamParam },
    responses: noContentResponse,
  }),
  async (c) => {
    await deleteTeam(callerOf(c), c.req.valid("param").team_id);
    return noContent(c);
  },
);

for (const [method, add] of [
  ["post", true],
  ["delete", false],
] as const) {
  teams.openapi(
    defineRoute({
      method,
      path: "/teams/{team_id}/relationships/users",
      action: "teams.change-members",
      summary: add ? "Add users to a team (by id or username)" : "Remove users from a team (by id or username)",
      request: { params: teamParam, body: jsonBody(usersBody) },
      responses: noContentResponse,
    }),
    async (c) => {
      await changeUsers(
        callerOf(c),
        c.req.valid("param").team_id,
        c.req.valid("json").data.map((d) => d.id),
        add,
      );
      return noContent(c);
    },
  );
  teams.openapi(
    defineRoute({
      method,
      path: "/teams/{team_id}/relationships/organization-memberships",
      action: "teams.change-members",
      summary: add ? "Add organisation members to a team (by membership id)" : "Remove organisation members from a team (by membership id)",
      request: { params: teamParam, body: jsonBody(membershipsBody) },
      responses: noContentResponse,
    }),
    async (c) => {
      await changeMemberships(
        callerOf(c),
        c.req.valid("param").team_id,
        c.req.valid("json").data.map((d) => d.id),
        add,
      );
      return noContent(c);
    },
  );
}
