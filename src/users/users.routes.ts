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
import { MEMBERSHIP_EMAIL, membershipById, membershipTeams, redactEmail, seesMemberEmails, serializeMembership, viewerUserId, type MembershipRow } from "./memberships";
import type { OrgAccess } from "../auth/access";

const tags = ["Users"];
export const users = router();

interface UserRow {
  id: string;
  username: string;
  email: string | null;
  is_site_admin: number;
  unconfirmed_email?: string | null;
}

const USERNAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,190}$/;
const userBody = z
  .object({ data: z.object({ type: z.literal("users"), attributes: z.object({ username: z.string().max(64), email: z.string().max(255), "is-site-admin": z.boolean().optional() }) }) })
  .openapi("UserCreate");

const render = (u: UserRow) => userResource(u.id, u.username, u.email, u.is_site_admin === 1, false, { id: u.id, type: "users" }, u.unconfirmed_email ?? null);
const USER_COLUMNS = "id, username, email, is_site_admin, unconfirmed_email";

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
    const row = await primary(c).prepare(`SELECT ${USER_COLUMNS} FROM users WHERE id = ?`).bind(c.req.valid("param").user_id).first<UserRow>();
    if (!row) throw ApiError.of("not_found");
    const p = c.get("principal");
    // Email is shown only to the user itself and site admins.
    const self = p.kind === "user" && (p.userId === row.id || p.isSiteAdmin);
    return jsonapi(c, { data: render(self ? row : { ...row, email: null, unconfirmed_email: null }) });
  },
);

// ---- the caller's own account ----

const accountBody = z
  .object({ data: z.object({ type: z.literal("users"), attributes: z.object({ username: z.string().max(64).optional(), email: z.string().max(255).optional() }).optional() }) })
  .openapi("AccountUpdate");

users.openapi(
  createRoute({
    method: "patch",
    path: "/account/update",
    tags,
    summary: "Change your username or email (user tokens only); a new email waits as unconfirmed-email until confirmed",
    request: { body: jsonBody(accountBody) },
    responses: { ...ok("Your user"), ...errorResponses },
  }),
  async (c) => {
    const p = c.get("principal");
    // Service users (team and organisation tokens) have no account to change.
    if (p.kind !== "user") throw ApiError.of("not_found");
    const a = c.req.valid("json").data.attributes ?? {};
    if (a.username !== undefined) checkUsername(a.username);
    if (a.email !== undefined) checkEmail(a.email);
    const db = primary(c);
    // An address is someone's only once confirmed (invitations resolve to confirmed addresses): a
    // change waits in unconfirmed_email until the site admin confirms it. The site admin's own
    // change has no one above it to confirm it and applies at once.
    const direct = p.isSiteAdmin;
    try {
      await db
        .prepare(
          `UPDATE users SET username = coalesce(?1, username),
             email = CASE WHEN ?3 = 1 THEN coalesce(?2, email) ELSE email END,
             unconfirmed_email = CASE WHEN ?2 IS NULL THEN unconfirmed_email WHEN ?3 = 1 OR lower(?2) = lower(coalesce(email, '')) THEN NULL ELSE ?2 END
           WHERE id = ?4`,
        )
        .bind(a.username ?? null, a.email ?? null, direct ? 1 : 0, p.userId)
        .run();
    } catch (err) {
      if (String(err).includes("UNIQUE")) throw ApiError.of("invalid_attribute", { detail: "Username has already been taken", pointer: "/data/attributes/username" });
      throw err;
    }
    const row = await db.prepare(`SELECT ${USER_COLUMNS} FROM users WHERE id = ?`).bind(p.userId).first<UserRow>();
    if (!row) throw ApiError.of("not_found");
    return jsonapi(c, { data: render(row) });
  },
);

users.openapi(
  createRoute({
    method: "post",
    path: "/admin/users/{user_id}/actions/confirm-email",
    tags,
    summary: "Confirm a user's email change (site admins; the local stand-in for the confirmation email)",
    request: { params: z.object({ user_id: z.string().regex(/^user-[A-Za-z0-9]{1,64}$/) }) },
    responses: { ...ok("The user"), ...errorResponses },
  }),
  async (c) => {
    const p = c.get("principal");
    if (p.kind !== "user" || !p.isSiteAdmin) throw ApiError.of("not_found");
    const id = c.req.valid("param").user_id;
    const db = primary(c);
    const row = await db.prepare(`SELECT ${USER_COLUMNS} FROM users WHERE id = ?`).bind(id).first<UserRow>();
    if (!row) throw ApiError.of("not_found");
    if (!row.unconfirmed_email) throw ApiError.of("invalid_attribute", { detail: "The user has no email change to confirm", pointer: "/data/attributes/email" });
    // One owner per address: one already confirmed by another user (an invited one included) stays theirs.
    const res = await db
      .prepare(
        `UPDATE users SET email = unconfirmed_email, unconfirmed_email = NULL
         WHERE id = ?1 AND unconfirmed_email IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM users o WHERE o.id != ?1 AND o.email = users.unconfirmed_email COLLATE NOCASE)`,
      )
      .bind(id)
      .run();
    if (res.meta.changes !== 1) throw ApiError.of("invalid_attribute", { detail: "Email has already been taken", pointer: "/data/attributes/email" });
    const updated = await db.prepare(`SELECT ${USER_COLUMNS} FROM users WHERE id = ?`).bind(id).first<UserRow>();
    return jsonapi(c, { data: render(updated!) });
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
async function renderMemberships(c: Context<AppEnv>, all: MembershipRow[], include: Set<string>, access: OrgAccess | null) {
  const db = primary(c);
  // Addresses only for those who may see them (item 14); `null` access: the membership's own user.
  const rows = access ? all.map((m) => redactEmail(access, m)) : all;
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
      const found = await db.prepare("SELECT id, is_owners FROM teams WHERE organization_name = ? AND id IN (SELECT value FROM json_each(?))").bind(org, JSON.stringify(teamIds)).all<{ id: string; is_owners: number }>();
      if (found.results.length !== teamIds.length) throw ApiError.of("not_found", { detail: "Team not found", pointer: "/data/relationships/teams/data" });
      // Inviting into the owners team makes an owner: owners only.
      if (found.results.some((t) => t.is_owners === 1) && !access.isOwner) throw ApiError.of("not_found", { detail: "Team not found", pointer: "/data/relationships/teams/data" });
    }
    // The invitation names the user whose confirmed address it is, or a new user created for the
    // address (the real service sends an email instead); unconfirmed changes never match.
    await db
      .prepare("INSERT INTO users (id, username, email, created_at) SELECT ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM users WHERE email = ? COLLATE NOCASE)")
      .bind(newId("user"), `${email.split("@")[0].replace(/[^A-Za-z0-9_.-]/g, "-").slice(0, 50)}-${newId("u").slice(2, 8)}`, email, nowIso(), email)
      .run();
    const user = await db.prepare("SELECT id FROM users WHERE email = ? COLLATE NOCASE ORDER BY created_at, id LIMIT 1").bind(email).first<{ id: string }>();
    if (!user) throw ApiError.of("internal");
    const id = newId("ou");
    const res = await db
      .prepare("INSERT INTO organization_memberships (id, organization_name, user_id, status, invited_email, created_at) VALUES (?, ?, ?, 'invited', ?, ?) ON CONFLICT DO NOTHING")
      .bind(id, org, user.id, email, nowIso())
      .run();
    if (res.meta.changes !== 1) throw ApiError.of("invalid_attribute", { detail: "User is already a member of this organization", pointer: "/data/attributes/email" });
    // The teams are granted when the invitation is accepted, not before.
    if (teamIds.length) await db.batch(teamIds.map((t) => db.prepare("INSERT OR IGNORE INTO invitation_teams (membership_id, team_id) VALUES (?, ?)").bind(id, t)));
    const row = await membershipById(db, id);
    if (!row) throw ApiError.of("internal");
    // The real service embeds the user in the create response (go-tfe compares it with later reads).
    const { data, included } = await renderMemberships(c, [row], new Set(["user"]), access);
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
    // Filters see only the addresses the caller may see, so that none can be probed (item 14).
    const visible = seesMemberEmails(access) ? MEMBERSHIP_EMAIL : `CASE WHEN m.user_id = ${sqlString(viewerUserId(access) ?? "")} THEN ${MEMBERSHIP_EMAIL} END`;
    const where = `FROM organization_memberships m JOIN users u ON u.id = m.user_id
      WHERE m.organization_name = ?
        AND (? IS NULL OR m.status = ?)
        AND (? IS NULL OR lower(${visible}) IN (SELECT value FROM json_each(?)))
        AND (? IS NULL OR instr(lower(coalesce(${visible}, '')), lower(?)) > 0 OR instr(lower(u.username), lower(?)) > 0)`;
    const status = query["filter[status]"] ?? null;
    const emailJson = emails ? JSON.stringify(emails) : null;
    const q = query.q?.trim() ? query.q.trim() : null;
    const binds = [access.organization.name, status, status, emailJson, emailJson, q, q, q];
    const [total, rows] = await db.batch([
      db.prepare(`SELECT count(*) AS n ${where}`).bind(...binds),
      db.prepare(`SELECT m.id, m.organization_name, m.user_id, m.status, ${MEMBERSHIP_EMAIL} AS email, u.username ${where} ORDER BY m.created_at, m.id LIMIT ? OFFSET ?`).bind(...binds, page.size, (page.number - 1) * page.size),
    ]);
    const { data, included } = await renderMemberships(c, (rows?.results ?? []) as MembershipRow[], include, access);
    return jsonapi(c, paginated(c, data, page, ((total?.results?.[0] ?? { n: 0 }) as { n: number }).n, included.length ? { included } : undefined));
  },
);

const membershipParam = z.object({ id: z.string().regex(/^ou-[A-Za-z0-9]{1,64}$/) });

/** A SQL string literal (ids are [A-Za-z0-9-] already; quotes doubled regardless). */
function sqlString(v: string): string {
  return `'${v.replace(/'/g, "''")}'`;
}

async function loadMembership(c: Context<AppEnv>, id: string, manage: boolean): Promise<{ m: MembershipRow; access: OrgAccess | null }> {
  const db = primary(c);
  const m = await membershipById(db, id);
  if (!m) throw ApiError.of("not_found");
  const p = c.get("principal");
  // The invited user reads its own invitation before it has any standing in the organisation.
  if (!manage && m.status === "invited" && p.kind === "user" && p.userId === m.user_id) return { m, access: null };
  const access = await requireOrgAccess(db, p, m.organization_name);
  if (manage && !teamRights(access).manageMembership) throw ApiError.of("not_found");
  return { m, access };
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
    const { m, access } = await loadMembership(c, c.req.valid("param").id, false);
    const { data, included } = await renderMemberships(c, [m], include, access);
    return jsonapi(c, included.length ? { data: data[0], included } : { data: data[0] });
  },
);

users.openapi(
  createRoute({
    method: "post",
    path: "/organization-memberships/{id}/actions/accept",
    tags,
    summary: "Accept an invitation (its invited user, whose confirmed email is the invited address); its teams apply from then on",
    request: { params: membershipParam },
    responses: { ...ok("The membership, now active"), ...errorResponses },
  }),
  async (c) => {
    const db = primary(c);
    const id = c.req.valid("param").id;
    const p = c.get("principal");
    const row = await db
      .prepare(
        `SELECT m.status, m.invited_email, u.email FROM organization_memberships m JOIN users u ON u.id = m.user_id WHERE m.id = ? AND m.user_id = ?`,
      )
      .bind(id, p.kind === "user" ? p.userId : "")
      .first<{ status: string; invited_email: string | null; email: string | null }>();
    // Only the user the invitation names, and only while that user owns the invited address.
    const owns = row && (row.invited_email === null || (row.email ?? "").toLowerCase() === row.invited_email.toLowerCase());
    if (!row || !owns) throw ApiError.of("not_found");
    if (row.status !== "invited") throw ApiError.of("invalid_attribute", { detail: "The invitation has already been accepted", pointer: "/data/attributes/status" });
    await db.batch([
      db
        .prepare(
          `INSERT OR IGNORE INTO team_members (team_id, user_id)
           SELECT it.team_id, m.user_id FROM invitation_teams it JOIN organization_memberships m ON m.id = it.membership_id
           WHERE it.membership_id = ? AND m.status = 'invited'`,
        )
        .bind(id),
      db.prepare("UPDATE organization_memberships SET status = 'active' WHERE id = ? AND status = 'invited'").bind(id),
      db.prepare("DELETE FROM invitation_teams WHERE membership_id = ?").bind(id),
    ]);
    const m = await membershipById(db, id);
    if (!m) throw ApiError.of("not_found");
    const { data } = await renderMemberships(c, [m], new Set(), null);
    return jsonapi(c, { data: data[0] });
  },
);

users.openapi(
  createRoute({ method: "delete", path: "/organization-memberships/{id}", tags, summary: "Remove a user from the organisation and its teams", request: { params: membershipParam }, responses: { ...noContentResponse, ...errorResponses } }),
  async (c) => {
    const { m, access } = await loadMembership(c, c.req.valid("param").id, true);
    const db = primary(c);
    const owners = await db.prepare("SELECT id FROM teams WHERE organization_name = ? AND is_owners = 1").bind(m.organization_name).first<{ id: string }>();
    if (owners) {
      const isOwner = await db.prepare("SELECT 1 FROM team_members WHERE team_id = ? AND user_id = ?").bind(owners.id, m.user_id).first();
      // Removing an owner changes the owners team: owners only.
      if (isOwner && !access?.isOwner) throw ApiError.of("not_found");
      const others = await db.prepare("SELECT count(*) AS n FROM team_members WHERE team_id = ? AND user_id != ?").bind(owners.id, m.user_id).first<{ n: number }>();
      if (isOwner && (others?.n ?? 0) === 0) throw ApiError.of("invalid_attribute", { detail: "The owners team must keep at least one member", pointer: "/data" });
    }
    // Guarded in SQL as well, so that concurrent removals cannot take out the last owner.
    const keepsAnOwner = `NOT EXISTS (SELECT 1 FROM teams t JOIN team_members tm ON tm.team_id = t.id WHERE t.organization_name = ?2 AND t.is_owners = 1 AND tm.user_id = ?1)
      OR EXISTS (SELECT 1 FROM teams t JOIN team_members tm ON tm.team_id = t.id WHERE t.organization_name = ?2 AND t.is_owners = 1 AND tm.user_id != ?1)`;
    await db.batch([
      db.prepare(`DELETE FROM invitation_teams WHERE membership_id = ?3 AND (${keepsAnOwner})`).bind(m.user_id, m.organization_name, m.id),
      db.prepare(`DELETE FROM organization_memberships WHERE id = ?3 AND (${keepsAnOwner})`).bind(m.user_id, m.organization_name, m.id),
      db.prepare(`DELETE FROM team_members WHERE user_id = ?1 AND team_id IN (SELECT id FROM teams WHERE organization_name = ?2) AND (${keepsAnOwner})`).bind(m.user_id, m.organization_name),
    ]);
    return noContent(c);
  },
);
