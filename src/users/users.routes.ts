/**
 * Users. The real service has no public user-creation API; site admins create users here, under
 * /admin/users, and users then manage their own tokens.
 */
import { z } from "@hono/zod-openapi";
import { callerOf } from "../auth/caller.http";
import { jsonapi, noContent, paginated } from "../jsonapi/document";
import { includeQuery, listDocument, orgParam, pageOf, pageQuery, resourceDocument } from "../jsonapi/schemas";
import { jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import { serializeMemberships } from "./memberships.serialize";
import { acceptInvitation, inviteMember, listMemberships, removeMembership, showMembership } from "./memberships.service";
import { serializeStoredUser } from "./users.serialize";
import { changeSiteAdmin, confirmEmailChange, createUser, showUser, updateAccount } from "./users.service";
import { defineRoutes } from "../jsonapi/define-route";
import { membershipResource, userParam, userResource as userSchema } from "./users.schemas";
import { adminDisableTwoFactor } from "../two-factor/two-factor.service";

const defineRoute = defineRoutes({ tags: ["Users"] });
export const users = router();
const userResponse = ok("The user", resourceDocument(userSchema));

const userBody = z
  .object({
    data: z.object({
      type: z.literal("users"),
      attributes: z.object({ username: z.string().max(64), email: z.string().max(255), "is-site-admin": z.boolean().optional() }),
    }),
  })
  .openapi("UserCreate");

users.openapi(
  defineRoute({
    method: "post",
    path: "/admin/users",
    action: "site-admin",
    summary: "Create a user (site admins)",
    request: { body: jsonBody(userBody) },
    responses: ok("The user", resourceDocument(userSchema), 201),
  }),
  async (c) => jsonapi(c, { data: serializeStoredUser(await createUser(callerOf(c), c.req.valid("json").data.attributes)) }, 201),
);

users.openapi(
  defineRoute({
    method: "get",
    path: "/users/{user_id}",
    action: "authenticated",
    summary: "Show a user",
    request: { params: userParam },
    responses: userResponse,
  }),
  async (c) => jsonapi(c, { data: serializeStoredUser(await showUser(callerOf(c), c.req.valid("param").user_id)) }),
);

// ---- the caller's own account ----

const accountBody = z
  .object({
    data: z.object({
      type: z.literal("users"),
      attributes: z.object({ username: z.string().max(64).optional(), email: z.string().max(255).optional() }).optional(),
    }),
  })
  .openapi("AccountUpdate");

users.openapi(
  defineRoute({
    method: "patch",
    path: "/account/update",
    action: "user",
    summary: "Change your username or email (user tokens only); a new email waits as unconfirmed-email until confirmed",
    request: { body: jsonBody(accountBody) },
    responses: ok("Your user", resourceDocument(userSchema)),
  }),
  async (c) => jsonapi(c, { data: serializeStoredUser(await updateAccount(callerOf(c), c.req.valid("json").data.attributes ?? {})) }),
);

users.openapi(
  defineRoute({
    method: "post",
    path: "/admin/users/{user_id}/actions/confirm-email",
    action: "site-admin",
    summary: "Confirm a user's email change (site admins; the local stand-in for the confirmation email)",
    request: { params: userParam },
    responses: userResponse,
  }),
  async (c) => jsonapi(c, { data: serializeStoredUser(await confirmEmailChange(callerOf(c), c.req.valid("param").user_id)) }),
);

for (const [action, admin] of [
  ["grant_admin", true],
  ["revoke_admin", false],
] as const) {
  users.openapi(
    defineRoute({
      method: "post",
      path: `/admin/users/{user_id}/actions/${action}`,
      action: "site-admin",
      summary: admin ? "Make a user a site admin (site admins)" : "Revoke a user's site admin rights (site admins; not their own, not the bootstrap admin)",
      request: { params: userParam },
      responses: userResponse,
    }),
    async (c) => jsonapi(c, { data: serializeStoredUser(await changeSiteAdmin(callerOf(c), c.req.valid("param").user_id, admin)) }),
  );
}

users.openapi(
  defineRoute({
    method: "post",
    path: "/admin/users/{user_id}/actions/disable_two_factor",
    action: "site-admin",
    summary: "Turn off a user's two-factor authentication (site admins: the user lost its authenticator and recovery codes)",
    request: { params: userParam },
    responses: userResponse,
  }),
  async (c) => {
    const caller = callerOf(c);
    const id = c.req.valid("param").user_id;
    await adminDisableTwoFactor(caller, id);
    return jsonapi(c, { data: serializeStoredUser(await showUser(caller, id)) });
  },
);

// ---- organisation memberships ----

const membershipBody = z
  .object({
    data: z.object({
      type: z.literal("organization-memberships"),
      attributes: z.object({ email: z.string().max(255) }),
      relationships: z
        .object({ teams: z.object({ data: z.array(z.object({ type: z.literal("teams"), id: z.string().max(64) })).max(50) }).optional() })
        .optional(),
    }),
  })
  .openapi("OrganizationMembershipCreate");

users.openapi(
  defineRoute({
    method: "post",
    path: "/organizations/{organization_name}/organization-memberships",
    action: "membership.manage",
    summary: "Invite a user (by email) to the organisation",
    request: { params: orgParam, body: jsonBody(membershipBody) },
    responses: ok("The membership (its user included)", resourceDocument(membershipResource), 201),
  }),
  async (c) => {
    const d = c.req.valid("json").data;
    const teamIds = d.relationships?.teams?.data.map((t) => t.id) ?? [];
    const { data, included } = serializeMemberships(
      await inviteMember(callerOf(c), c.req.valid("param").organization_name, { email: d.attributes.email, teamIds }),
    );
    return jsonapi(c, { data: data[0], included }, 201);
  },
);

users.openapi(
  defineRoute({
    method: "get",
    path: "/organizations/{organization_name}/organization-memberships",
    action: "organization.read",
    summary: "List the organisation's memberships (q: email or username; filter[email]: comma-separated; filter[status]: active|invited; include: user,teams)",
    request: {
      params: orgParam,
      query: z
        .object({
          ...pageQuery.shape,
          ...includeQuery.shape,
          q: z.string().max(255).optional(),
          "filter[email]": z.string().max(5000).optional(),
          "filter[status]": z.enum(["active", "invited"]).optional(),
        })
        .passthrough(),
    },
    responses: ok("A page of memberships", listDocument(membershipResource)),
  }),
  async (c) => {
    const query = c.req.valid("query");
    const page = pageOf(query);
    const { view, total } = await listMemberships(callerOf(c), c.req.valid("param").organization_name, query, page);
    const { data, included } = serializeMemberships(view);
    return jsonapi(c, paginated(c, data, page, total, included.length ? { included } : undefined));
  },
);

const membershipParam = z.object({ id: z.string().regex(/^ou-[A-Za-z0-9]{1,64}$/) });

users.openapi(
  defineRoute({
    method: "get",
    path: "/organization-memberships/{id}",
    action: "membership.read",
    summary: "Show a membership (include: user,teams)",
    request: { params: membershipParam, query: includeQuery },
    responses: ok("The membership", resourceDocument(membershipResource)),
  }),
  async (c) => {
    const { data, included } = serializeMemberships(await showMembership(callerOf(c), c.req.valid("param").id, c.req.valid("query").include));
    return jsonapi(c, included.length ? { data: data[0], included } : { data: data[0] });
  },
);

users.openapi(
  defineRoute({
    method: "post",
    path: "/organization-memberships/{id}/actions/accept",
    action: "user.self",
    summary:
      "Accept an invitation (its invited user: the one who proved the invited address, or the account made for this invitation); its teams apply from then on",
    request: { params: membershipParam },
    responses: ok("The membership, now active", resourceDocument(membershipResource)),
  }),
  async (c) => {
    const { data } = serializeMemberships(await acceptInvitation(callerOf(c), c.req.valid("param").id));
    return jsonapi(c, { data: data[0] });
  },
);

users.openapi(
  defineRoute({
    method: "delete",
    path: "/organization-memberships/{id}",
    action: "membership.manage",
    summary: "Remove a user from the organisation and its teams",
    request: { params: membershipParam },
    responses: noContentResponse,
  }),
  async (c) => {
    await removeMembership(callerOf(c), c.req.valid("param").id);
    return noContent(c);
  },
);
