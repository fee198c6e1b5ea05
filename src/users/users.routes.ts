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
import { jsonapi, noContent, paginated, readPage, type Resource } from "../jsonapi/document";
import { errorResponses, jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import { userResource } from "../meta/meta.routes";
import { teamRights } from "../teams/teams.rules";
import { membershipById, membershipTeams, serializeMembership, type MembershipRow } from "./memberships";

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

function checkUsername(username: string): void {
  if (!USERNAME.test(username)) throw ApiError.of("invalid_attribute", { detail: "Username may only contain letters, numbers, -, _ and .", pointer: "/data/attributes/username" });
}
function checkEmail(email: string): void {
  if (!EMAIL.test(email)) throw ApiError.of("invalid_attribute", { detail: "Email is invalid", pointer: "/data/attributes/email" });
}

users.openapi(
  createRoute({ method: "post", path: "/admin/users", tags, summary: "Create a user (site admins)", request: { body: jsonBody(userBody) }, responses: { ...ok("The user", 201), ...errorResponses } }),
  async (c) => {
    const p = c.get("principal");
    if (p.kind !== "user" || !p.isSiteAdmin) throw ApiError.of("not_found");
    const a = c.req.valid("json").data.attributes;
    checkUsername(a.username);
    checkEmail(a.email);
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

// ---- the caller's own account ----

const accountBody = z
  .object({ data: z.object({ type: z.literal("users"), attributes: z.object({ username: z.string().max(64).optional(), email: z.string().max(255).optional() }).optional() }) })
  .openapi("AccountUpdate");

users.openapi(
  createRoute({ method: "patch", path: "/account/update", tags, summary: "Change your username or email (user tokens only)", request: { body: jsonBody(accountBody) }, responses: { ...ok("Your user"), ...errorResponses } }),
  async (c) => {
    const p = c.get("principal");
    // Service users (team and organisation tokens) have no account to change.
    if (p.kind !== "user") throw ApiError.of("not_found");
    const a = c.req.valid("json").data.attributes ?? {};
    if (a.username !== undefined) checkUsername(a.username);
    if (a.email !== undefined) checkEmail(a.email);
    const db = primary(c);
    try {
      await db
        .prepare("UPDATE users SET username = coalesce(?, username), email = coalesce(?, email) WHERE id = ?")
        .bind(a.username ?? null, a.email ?? null, p.userId)
        .run();
    } catch (err) {
      if (String(err).includes("UNIQUE")) throw ApiError.of("invalid_attribute", { detail: "Username has already been taken", pointer: "/data/attributes/username" });
      throw err;
    }
    const row = await db.prepare("SELECT id, username, email, is_site_admin FROM users WHERE id = ?").bind(p.userId).first<UserRow>();
    if (!row) throw ApiError.of("not_found");
    return jsonapi(c, { data: render(row) });
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

const MEMBERSHIP_INCLUDES = ["user", "teams"] as const;

/** `include` of membership reads: `user` and `teams` (anything else is the 400 go-tfe maps to ErrInvalidIncludeValue). */
function readIncludes(raw: string | undefined): Set<string> {
  const values = (raw ?? "").split(",").map((v) => v.trim()).filter(Boolean);
  for (const v of values) {
    if (!(MEMBERSHIP_INCLUDES as readonly string[]).includes(v)) throw ApiError.of("invalid_include", { detail: `Invalid include parameter: ${v}`, parameter: "include" });
  }
  return new Set(values);
}

/** Memberships with their teams, plus the included users and teams asked for. */
async function renderMemberships(c: Context<AppEnv>, rows: MembershipRow[], include: Set<string>) {
  const db = primary(c);
  const byOrg = new Map<string, MembershipRow[]>();
  for (const m of rows) byOrg.set(m.organization_name, [...(byOrg.get(m.organization_name) ?? []), m]);
  const teamsOf = new Map<string, string[]>();
  for (const [org, ms] of byOrg) {
    for (const [userId, ids] of await membershipTeams(db, org, ms.map((m) => m.user_id))) teamsOf.set(`${org}\u0000${userId}`, ids);
  }
  const data = rows.map((m) => serializeMembership(m, teamsOf.get(`${m.organization_name}\u0000${m.user_id}`) ?? []));
  const included: Resource[] = [];
  if (include.has("user")) {
    const seen = new Set<string>();
    for (const m of rows) {
      if (seen.has(m.user_id)) continue;
      seen.add(m.user_id);
      included.push(render({ id: m.user_id, username: m.username, email: m.email, is_site_admin: 0 }));
    }
  }
  if (include.has("teams")) {
    const ids = [...new Set([...teamsOf.values()].flat())];
    const teams = ids.length ? await db.prepare("SELECT id, name FROM teams WHERE id IN (SELECT value FROM json_each(?))").bind(JSON.stringify(ids)).all<{ id: string; name: string }>() : { results: [] };
    for (const t of teams.results) included.push({ id: t.id, type: "teams", attributes: { name: t.name }, links: { self: `/api/v2/teams/${t.id}` } });
  }
  return { data, included };
}

users.openapi(
  createRoute({ method: "post", path: "/organizations/{organization_name}/organization-memberships", tags, summary: "Invite a user (by email) to the organisation", request: { params: orgParam, body: jsonBody(membershipBody) }, responses: { ...ok("The membership (its user included)", 201), ...errorResponses } }),
  async (c) => {
    const db = primary(c);
    const access = await requireOrgAccess(db, c.get("principal"), c.req.valid("param").organization_name);
    if (!teamRights(access).manageMembership) throw ApiError.of("not_found");
    const d = c.req.valid("json").data;
    const email = d.attributes.email;
    checkEmail(email);
    const org = access.organization.name;
    const teamIds = [...new Set(d.relationships?.teams?.data.map((t) => t.id) ?? [])];
    if (teamIds.length) {
      const found = await db.prepare("SELECT id FROM teams WHERE organization_name = ? AND id IN (SELECT value FROM json_each(?))").bind(org, JSON.stringify(teamIds)).all<{ id: string }>();
      if (found.results.length !== teamIds.length) throw ApiError.of("not_found", { detail: "Team not found", pointer: "/data/relationships/teams/data" });
    }
    // An invitation for an unknown email creates the user it names (the real service sends an email instead).
    await db
      .prepare("INSERT INTO users (id, username, email, created_at) SELECT ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM users WHERE email = ? COLLATE NOCASE)")
      .bind(newId("user"), `${email.split("@")[0].replace(/[^A-Za-z0-9_.-]/g, "-").slice(0, 50)}-${newId("u").slice(2, 8)}`, email, nowIso(), email)
      .run();
    const user = await db.prepare("SELECT id FROM users WHERE email = ? COLLATE NOCASE ORDER BY created_at, id LIMIT 1").bind(email).first<{ id: string }>();
    if (!user) throw ApiError.of("internal");
    const id = newId("ou");
    const res = await db.prepare("INSERT INTO organization_memberships (id, organization_name, user_id, status, created_at) VALUES (?, ?, ?, 'invited', ?) ON CONFLICT DO NOTHING").bind(id, org, user.id, nowIso()).run();
    if (res.meta.changes !== 1) throw ApiError.of("invalid_attribute", { detail: "User is already a member of this organization", pointer: "/data/attributes/email" });
    if (teamIds.length) await db.batch(teamIds.map((t) => db.prepare("INSERT INTO team_members (team_id, user_id) VALUES (?, ?) ON CONFLICT DO NOTHING").bind(t, user.id)));
    const row = await membershipById(db, id);
    if (!row) throw ApiError.of("internal");
    // The real service embeds the user in the create response (go-tfe compares it with later reads).
    const { data, included } = await renderMemberships(c, [row], new Set(["user"]));
    return jsonapi(c, { data: data[0], included }, 201);
  },
);

users.openapi(
  createRoute({
    method: "get",
    path: "/organizations/{organization_name}/organization-memberships",
    tags,
    summary: "List the organisation's memberships (q: email or username; filter[email]: comma-separated; filter[status]: active|invited; include: user,teams)",
    request: {
      params: orgParam,
      query: z
        .object({
          q: z.string().max(255).optional(),
          "filter[email]": z.string().max(5000).optional(),
          "filter[status]": z.enum(["active", "invited"]).optional(),
          include: z.string().max(200).optional(),
          "page[number]": z.string().max(20).optional(),
          "page[size]": z.string().max(20).optional(),
        })
        .passthrough(),
    },
    responses: { ...ok("A page of memberships"), ...errorResponses },
  }),
  async (c) => {
    const db = primary(c);
    const access = await requireOrgAccess(db, c.get("principal"), c.req.valid("param").organization_name);
    const query = c.req.valid("query");
    const include = readIncludes(query.include);
    const page = readPage(c);
    const emails = query["filter[email]"] ? query["filter[email]"].split(",").map((e) => e.trim().toLowerCase()).filter(Boolean) : null;
    const where = `FROM organization_memberships m JOIN users u ON u.id = m.user_id
      WHERE m.organization_name = ?
        AND (? IS NULL OR m.status = ?)
        AND (? IS NULL OR lower(u.email) IN (SELECT value FROM json_each(?)))
        AND (? IS NULL OR instr(lower(coalesce(u.email, '')), lower(?)) > 0 OR instr(lower(u.username), lower(?)) > 0)`;
    const status = query["filter[status]"] ?? null;
    const emailJson = emails ? JSON.stringify(emails) : null;
    const q = query.q?.trim() ? query.q.trim() : null;
    const binds = [access.organization.name, status, status, emailJson, emailJson, q, q, q];
    const [total, rows] = await db.batch([
      db.prepare(`SELECT count(*) AS n ${where}`).bind(...binds),
      db.prepare(`SELECT m.id, m.organization_name, m.user_id, m.status, u.email, u.username ${where} ORDER BY m.created_at, m.id LIMIT ? OFFSET ?`).bind(...binds, page.size, (page.number - 1) * page.size),
    ]);
    const { data, included } = await renderMemberships(c, (rows?.results ?? []) as MembershipRow[], include);
    return jsonapi(c, paginated(c, data, page, ((total?.results?.[0] ?? { n: 0 }) as { n: number }).n, included.length ? { included } : undefined));
  },
);

const membershipParam = z.object({ id: z.string().regex(/^ou-[A-Za-z0-9]{1,64}$/) });

async function loadMembership(c: Context<AppEnv>, id: string, manage: boolean): Promise<MembershipRow> {
  const db = primary(c);
  const m = await membershipById(db, id);
  if (!m) throw ApiError.of("not_found");
  const access = await requireOrgAccess(db, c.get("principal"), m.organization_name);
  if (manage && !teamRights(access).manageMembership) throw ApiError.of("not_found");
  return m;
}

users.openapi(
  createRoute({
    method: "get",
    path: "/organization-memberships/{id}",
    tags,
    summary: "Show a membership (include: user,teams)",
    request: { params: membershipParam, query: z.object({ include: z.string().max(200).optional() }).passthrough() },
    responses: { ...ok("The membership"), ...errorResponses },
  }),
  async (c) => {
    const include = readIncludes(c.req.valid("query").include);
    const m = await loadMembership(c, c.req.valid("param").id, false);
    const { data, included } = await renderMemberships(c, [m], include);
    return jsonapi(c, included.length ? { data: data[0], included } : { data: data[0] });
  },
);

users.openapi(
  createRoute({ method: "delete", path: "/organization-memberships/{id}", tags, summary: "Remove a user from the organisation and its teams", request: { params: membershipParam }, responses: { ...noContentResponse, ...errorResponses } }),
  async (c) => {
    const m = await loadMembership(c, c.req.valid("param").id, true);
    const db = primary(c);
    const owners = await db.prepare("SELECT id FROM teams WHERE organization_name = ? AND is_owners = 1").bind(m.organization_name).first<{ id: string }>();
    if (owners) {
      const others = await db.prepare("SELECT count(*) AS n FROM team_members WHERE team_id = ? AND user_id != ?").bind(owners.id, m.user_id).first<{ n: number }>();
      const isOwner = await db.prepare("SELECT 1 FROM team_members WHERE team_id = ? AND user_id = ?").bind(owners.id, m.user_id).first();
      if (isOwner && (others?.n ?? 0) === 0) throw ApiError.of("invalid_attribute", { detail: "The owners team must keep at least one member", pointer: "/data" });
    }
    await db.batch([
      db.prepare("DELETE FROM team_members WHERE user_id = ? AND team_id IN (SELECT id FROM teams WHERE organization_name = ?)").bind(m.user_id, m.organization_name),
      db.prepare("DELETE FROM organization_memberships WHERE id = ?").bind(m.id),
    ]);
    return noContent(c);
  },
);
