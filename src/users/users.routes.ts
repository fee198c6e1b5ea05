/**
 * Users. The real service has no public user-creation API; site admins create users here, under
 * /admin/users, and users then manage their own tokens.
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { requireOrgAccess } from "../auth/access";
import { primary } from "../db";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";
import { newId, nowIso } from "../ids";
import { jsonapi, noContent, paginated, readPage } from "../jsonapi/document";
import { errorResponses, jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import { userResource } from "../meta/meta.routes";
import { canManageTeams } from "../teams/teams.routes";

const tags = ["Users"];
export const users = router();

interface UserRow {
  id: string;
  username: string;
  email: string | null;
  is_site_admin: number;
}

const USERNAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,190}$/;
const userBody = z
  .object({ data: z.object({ type: z.literal("users"), attributes: z.object({ username: z.string().max(64), email: z.string().max(255), "is-site-admin": z.boolean().optional() }) }) })
  .openapi("UserCreate");

const render = (u: UserRow) => userResource(u.id, u.username, u.email, u.is_site_admin === 1, false, { id: u.id, type: "users" });

users.openapi(
  createRoute({ method: "post", path: "/admin/users", tags, summary: "Create a user (site admins)", request: { body: jsonBody(userBody) }, responses: { ...ok("The user", 201), ...errorResponses } }),
  async (c) => {
    const p = c.get("principal");
    if (p.kind !== "user" || !p.isSiteAdmin) throw ApiError.of("not_found");
    const a = c.req.valid("json").data.attributes;
    if (!USERNAME.test(a.username)) throw ApiError.of("invalid_attribute", { detail: "Username may only contain letters, numbers, -, _ and .", pointer: "/data/attributes/username" });
    if (!EMAIL.test(a.email)) throw ApiError.of("invalid_attribute", { detail: "Email is invalid", pointer: "/data/attributes/email" });
    const row: UserRow = { id: newId("user"), username: a.username, email: a.email, is_site_admin: a["is-site-admin"] ? 1 : 0 };
    const res = await primary(c)
      .prepare("INSERT INTO users (id, username, email, is_site_admin, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")
      .bind(row.id, row.username, row.email, row.is_site_admin, nowIso())
      .run();
    if (res.meta.changes !== 1) throw ApiError.of("invalid_attribute", { detail: "Username has already been taken", pointer: "/data/attributes/username" });
    return jsonapi(c, { data: render(row) }, 201);
  },
);

users.openapi(
  createRoute({ method: "get", path: "/users/{user_id}", tags, summary: "Show a user", request: { params: z.object({ user_id: z.string().regex(/^user-[A-Za-z0-9]{1,64}$/) }) }, responses: { ...ok("The user"), ...errorResponses } }),
  async (c) => {
    const row = await primary(c).prepare("SELECT id, username, email, is_site_admin FROM users WHERE id = ?").bind(c.req.valid("param").user_id).first<UserRow>();
    if (!row) throw ApiError.of("not_found");
    const p = c.get("principal");
    // Email is shown only to the user itself and site admins.
    const self = p.kind === "user" && (p.userId === row.id || p.isSiteAdmin);
    return jsonapi(c, { data: render(self ? row : { ...row, email: null }) });
  },
);

// ---- organisation memberships ----

const orgParam = z.object({ organization_name: z.string().min(1).max(255) });
const membershipBody = z
  .object({
    data: z.object({
      type: z.literal("organization-memberships"),
      attributes: z.object({ email: z.string().max(255) }),
      relationships: z.object({ teams: z.object({ data: z.array(z.object({ type: z.literal("teams"), id: z.string().max(64) })).max(50) }).optional() }).optional(),
    }),
  })
  .openapi("OrganizationMembershipCreate");

interface MembershipRow {
  id: string;
  organization_name: string;
  user_id: string;
  status: string;
  email: string | null;
}

function serializeMembership(m: MembershipRow, teamIds: string[]) {
  return {
    id: m.id,
    type: "organization-memberships",
    attributes: { status: m.status, email: m.email },
    relationships: {
      organization: { data: { id: m.organization_name, type: "organizations" } },
      user: { data: { id: m.user_id, type: "users" } },
      teams: { data: teamIds.map((id) => ({ id, type: "teams" })) },
    },
    links: { self: `/api/v2/organization-memberships/${m.id}` },
  };
}

async function membershipTeams(c: Context<AppEnv>, organization: string, userId: string): Promise<string[]> {
  const rows = await primary(c)
    .prepare("SELECT t.id FROM team_members m JOIN teams t ON t.id = m.team_id WHERE m.user_id = ? AND t.organization_name = ? ORDER BY t.name")
    .bind(userId, organization)
    .all<{ id: string }>();
  return rows.results.map((r) => r.id);
}

users.openapi(
  createRoute({ method: "post", path: "/organizations/{organization_name}/organization-memberships", tags, summary: "Invite a user (by email) to the organisation", request: { params: orgParam, body: jsonBody(membershipBody) }, responses: { ...ok("The membership", 201), ...errorResponses } }),
  async (c) => {
    const db = primary(c);
    const access = await requireOrgAccess(db, c.get("principal"), c.req.valid("param").organization_name);
    if (!canManageTeams(access)) throw ApiError.of("not_found");
    const d = c.req.valid("json").data;
    if (!EMAIL.test(d.attributes.email)) throw ApiError.of("invalid_attribute", { detail: "Email is invalid", pointer: "/data/attributes/email" });
    const org = access.organization.name;
    const teamIds = d.relationships?.teams?.data.map((t) => t.id) ?? [];
    if (teamIds.length) {
      const found = await db.prepare("SELECT id FROM teams WHERE organization_name = ? AND id IN (SELECT value FROM json_each(?))").bind(org, JSON.stringify(teamIds)).all<{ id: string }>();
      if (found.results.length !== new Set(teamIds).size) throw ApiError.of("not_found", { detail: "Team not found", pointer: "/data/relationships/teams/data" });
    }
    // An invitation for an unknown email creates the user it names.
    await db
      .prepare("INSERT INTO users (id, username, email, created_at) SELECT ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM users WHERE email = ?)")
      .bind(newId("user"), `${d.attributes.email.split("@")[0].replace(/[^A-Za-z0-9_.-]/g, "-")}-${newId("u").slice(2, 8)}`, d.attributes.email, nowIso(), d.attributes.email)
      .run();
    const user = await db.prepare("SELECT id FROM users WHERE email = ? ORDER BY created_at LIMIT 1").bind(d.attributes.email).first<{ id: string }>();
    if (!user) throw ApiError.of("internal");
    const id = newId("ou");
    const res = await db.prepare("INSERT INTO organization_memberships (id, organization_name, user_id, status, created_at) VALUES (?, ?, ?, 'invited', ?) ON CONFLICT DO NOTHING").bind(id, org, user.id, nowIso()).run();
    if (res.meta.changes !== 1) throw ApiError.of("invalid_attribute", { detail: "User is already a member of this organization", pointer: "/data/attributes/email" });
    if (teamIds.length) await db.batch(teamIds.map((t) => db.prepare("INSERT INTO team_members (team_id, user_id) VALUES (?, ?) ON CONFLICT DO NOTHING").bind(t, user.id)));
    const row: MembershipRow = { id, organization_name: org, user_id: user.id, status: "invited", email: d.attributes.email };
    return jsonapi(c, { data: serializeMembership(row, await membershipTeams(c, org, user.id)) }, 201);
  },
);

users.openapi(
  createRoute({
    method: "get",
    path: "/organizations/{organization_name}/organization-memberships",
    tags,
    summary: "List the organisation's memberships",
    request: { params: orgParam, query: z.object({ q: z.string().max(255).optional(), "page[number]": z.string().max(20).optional(), "page[size]": z.string().max(20).optional() }).passthrough() },
    responses: { ...ok("A page of memberships"), ...errorResponses },
  }),
  async (c) => {
    const db = primary(c);
    const access = await requireOrgAccess(db, c.get("principal"), c.req.valid("param").organization_name);
    const page = readPage(c);
    const rows = await db
      .prepare("SELECT m.id, m.organization_name, m.user_id, m.status, u.email FROM organization_memberships m JOIN users u ON u.id = m.user_id WHERE m.organization_name = ? ORDER BY m.created_at, m.id")
      .bind(access.organization.name)
      .all<MembershipRow>();
    const q = c.req.valid("query").q?.toLowerCase();
    const matching = rows.results.filter((m) => !q || (m.email ?? "").toLowerCase().includes(q));
    const slice = matching.slice((page.number - 1) * page.size, page.number * page.size);
    const data = await Promise.all(slice.map(async (m) => serializeMembership(m, await membershipTeams(c, m.organization_name, m.user_id))));
    return jsonapi(c, paginated(c, data, page, matching.length));
  },
);

const membershipParam = z.object({ id: z.string().regex(/^ou-[A-Za-z0-9]{1,64}$/) });

async function loadMembership(c: Context<AppEnv>, id: string, manage: boolean) {
  const db = primary(c);
  const m = await db
    .prepare("SELECT m.id, m.organization_name, m.user_id, m.status, u.email FROM organization_memberships m JOIN users u ON u.id = m.user_id WHERE m.id = ?")
    .bind(id)
    .first<MembershipRow>();
  if (!m) throw ApiError.of("not_found");
  const access = await requireOrgAccess(db, c.get("principal"), m.organization_name);
  if (manage && !canManageTeams(access)) throw ApiError.of("not_found");
  return m;
}

users.openapi(
  createRoute({ method: "get", path: "/organization-memberships/{id}", tags, summary: "Show a membership", request: { params: membershipParam }, responses: { ...ok("The membership"), ...errorResponses } }),
  async (c) => {
    const m = await loadMembership(c, c.req.valid("param").id, false);
    return jsonapi(c, { data: serializeMembership(m, await membershipTeams(c, m.organization_name, m.user_id)) });
  },
);

users.openapi(
  createRoute({ method: "delete", path: "/organization-memberships/{id}", tags, summary: "Remove a user from the organisation and its teams", request: { params: membershipParam }, responses: { ...noContentResponse, ...errorResponses } }),
  async (c) => {
    const m = await loadMembership(c, c.req.valid("param").id, true);
    const db = primary(c);
    await db.batch([
      db.prepare("DELETE FROM team_members WHERE user_id = ? AND team_id IN (SELECT id FROM teams WHERE organization_name = ?)").bind(m.user_id, m.organization_name),
      db.prepare("DELETE FROM organization_memberships WHERE id = ?").bind(m.id),
    ]);
    return noContent(c);
  },
);
