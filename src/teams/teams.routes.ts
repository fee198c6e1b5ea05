/** Teams, team membership and organisation memberships (issue 3; real shapes in tfe-api-notes §2.3). */
import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { requireOrgAccess, type OrgAccess } from "../auth/access";
import { primary } from "../db";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";
import { newId, nowIso } from "../ids";
import { LIMITS } from "../limits";
import { jsonapi, noContent, paginated, readPage, type Resource } from "../jsonapi/document";
import { errorResponses, jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import { findTeam, teamMembers, type TeamRow } from "./teams.index";
import { ORG_ACCESS_KEYS, serializeTeam } from "./teams.serialize";
import { mayChangeMembers, mayManageTeamTokens, resolveOrgAccess, teamRights, type OrgAccessInput } from "./teams.rules";
import { membershipsById, redactEmail, serializeMembership, teamMemberships } from "../users/memberships";

const tags = ["Teams"];
export const teams = router();

/** Letters, numbers, -, _ and (as the real service accepts, e.g. go-tfe's "foo bar") inner spaces. */
const TEAM_NAME = /^[A-Za-z0-9_-]+( [A-Za-z0-9_-]+)*$/;
const orgParam = z.object({ organization_name: z.string().min(1).max(255) });
const teamParam = z.object({ team_id: z.string().regex(/^team-[A-Za-z0-9]{1,64}$/) });

const orgAccessInput = z.object(Object.fromEntries(ORG_ACCESS_KEYS.map((k) => [k, z.boolean().optional()])) as Record<(typeof ORG_ACCESS_KEYS)[number], z.ZodOptional<z.ZodBoolean>>);
const teamAttributes = z.object({
  name: z.string().max(LIMITS.teamNameMax).optional(),
  "organization-access": orgAccessInput.optional(),
  visibility: z.enum(["secret", "organization"]).optional(),
  "sso-team-id": z.string().max(255).nullable().optional(),
  "allow-member-token-management": z.boolean().optional(),
});
const teamCreateBody = z.object({ data: z.object({ type: z.literal("teams"), attributes: teamAttributes.extend({ name: z.string().max(LIMITS.teamNameMax) }) }) }).openapi("TeamCreate");
const teamUpdateBody = z.object({ data: z.object({ type: z.literal("teams"), attributes: teamAttributes.optional() }) }).openapi("TeamUpdate");
const usersBody = z.object({ data: z.array(z.object({ type: z.literal("users"), id: z.string().max(64) })).max(100) }).openapi("TeamUsers");
const membershipsBody = z.object({ data: z.array(z.object({ type: z.literal("organization-memberships"), id: z.string().max(64) })).max(100) }).openapi("TeamOrganizationMemberships");

/** Who may create, rename and delete teams and manage their tokens (owners, organisation token, manage-teams). */
export function canManageTeams(access: OrgAccess): boolean {
  return teamRights(access).manageTeams;
}

/** Secret teams are visible to their members and to those who may see secret teams; organisation-visible ones to every member. */
function canSee(access: OrgAccess, team: TeamRow): boolean {
  return teamRights(access).seeSecretTeams || team.visibility === "organization" || access.teamIds.includes(team.id);
}

export async function loadTeam(c: Context<AppEnv>, teamId: string): Promise<{ team: TeamRow; access: OrgAccess }> {
  const db = primary(c);
  const team = await findTeam(db, teamId);
  if (!team) throw ApiError.of("not_found");
  const access = await requireOrgAccess(db, c.get("principal"), team.organization_name);
  if (!canSee(access, team)) throw ApiError.of("not_found");
  return { team, access };
}

async function renderAll(c: Context<AppEnv>, rows: TeamRow[], access: OrgAccess) {
  const db = primary(c);
  const ids = rows.map((t) => t.id);
  const [members, memberships] = await Promise.all([teamMembers(db, ids), teamMemberships(db, ids)]);
  const rights = teamRights(access);
  return rows.map((t) =>
    serializeTeam(t, members.get(t.id) ?? [], { ...rights, changeMembers: mayChangeMembers(access, t), manageTokens: mayManageTeamTokens(access, t) }, memberships.get(t.id) ?? []),
  );
}

const render = async (c: Context<AppEnv>, team: TeamRow, access: OrgAccess) => (await renderAll(c, [team], access))[0];

function orgAccessOrFail(stored: Record<string, boolean>, given: OrgAccessInput): Record<string, boolean> {
  const r = resolveOrgAccess(stored, given);
  if (!r.ok) throw ApiError.of(r.code, { detail: r.detail, pointer: r.pointer });
  return r.value;
}

teams.openapi(
  createRoute({ method: "post", path: "/organizations/{organization_name}/teams", tags, summary: "Create a team (200, as the real service documents)", request: { params: orgParam, body: jsonBody(teamCreateBody) }, responses: { ...ok("The team"), ...errorResponses } }),
  async (c) => {
    const db = primary(c);
    const access = await requireOrgAccess(db, c.get("principal"), c.req.valid("param").organization_name);
    const rights = teamRights(access);
    if (!rights.manageTeams) throw ApiError.of("not_found");
    const a = c.req.valid("json").data.attributes;
    if (!TEAM_NAME.test(a.name)) throw ApiError.of("invalid_attribute", { detail: "Name may only contain letters, numbers, spaces, - and _", pointer: "/data/attributes/name" });
    if (a.name.toLowerCase() === "owners") throw ApiError.of("invalid_attribute", { detail: "Name has already been taken", pointer: "/data/attributes/name" });
    const given = a["organization-access"] ?? {};
    // Granting organisation permissions is itself a permission.
    if (Object.values(given).some((v) => v === true) && !rights.manageOrganizationAccess) throw ApiError.of("not_found");
    const orgAccess = orgAccessOrFail({}, given);
    const id = newId("team");
    const res = await db
      .prepare(
        `INSERT INTO teams (id, organization_name, name, visibility, sso_team_id, organization_access, allow_member_token_management, service_user_id, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      )
      .bind(id, access.organization.name, a.name, a.visibility ?? "secret", a["sso-team-id"] ?? null, JSON.stringify(orgAccess), a["allow-member-token-management"] === false ? 0 : 1, newId("user"), nowIso())
      .run();
    if (res.meta.changes !== 1) throw ApiError.of("invalid_attribute", { detail: "Name has already been taken", pointer: "/data/attributes/name" });
    const team = (await findTeam(db, id))!;
    return jsonapi(c, { data: await render(c, team, access) });
  },
);

teams.openapi(
  createRoute({
    method: "get",
    path: "/organizations/{organization_name}/teams",
    tags,
    summary: "List teams",
    request: { params: orgParam, query: z.object({ q: z.string().max(255).optional(), "filter[names]": z.string().max(2000).optional(), "page[number]": z.string().max(20).optional(), "page[size]": z.string().max(20).optional() }).passthrough() },
    responses: { ...ok("A page of teams"), ...errorResponses },
  }),
  async (c) => {
    const db = primary(c);
    const access = await requireOrgAccess(db, c.get("principal"), c.req.valid("param").organization_name);
    const page = readPage(c);
    const { q, "filter[names]": namesRaw } = c.req.valid("query");
    const all = await db.prepare("SELECT * FROM teams WHERE organization_name = ? ORDER BY name COLLATE NOCASE, id").bind(access.organization.name).all<TeamRow>();
    const names = namesRaw ? new Set(namesRaw.split(",").map((s) => s.trim().toLowerCase())) : null;
    const visible = all.results.filter(
      (t) => canSee(access, t) && (!q || t.name.toLowerCase().includes(q.toLowerCase())) && (!names || names.has(t.name.toLowerCase())),
    );
    const slice = visible.slice((page.number - 1) * page.size, page.number * page.size);
    return jsonapi(c, paginated(c, await renderAll(c, slice, access), page, visible.length));
  },
);

const TEAM_INCLUDES = ["users", "organization-memberships"] as const;

teams.openapi(
  createRoute({
    method: "get",
    path: "/teams/{team_id}",
    tags,
    summary: "Show a team (include: users, organization-memberships)",
    request: { params: teamParam, query: z.object({ include: z.string().max(200).optional() }).passthrough() },
    responses: { ...ok("The team"), ...errorResponses },
  }),
  async (c) => {
    const { team, access } = await loadTeam(c, c.req.valid("param").team_id);
    const include = (c.req.valid("query").include ?? "").split(",").map((s) => s.trim()).filter(Boolean);
    for (const v of include) {
      if (!(TEAM_INCLUDES as readonly string[]).includes(v)) throw ApiError.of("invalid_include", { detail: `Invalid include parameter: ${v}`, parameter: "include" });
    }
    const data = await render(c, team, access);
    const ids = (rel: string) => ((data.relationships?.[rel] as { data: Array<{ id: string }> }).data ?? []).map((r) => r.id);
    const included: Resource[] = [];
    const db = primary(c);
    if (include.includes("users")) {
      const rows = await db.prepare("SELECT id, username FROM users WHERE id IN (SELECT value FROM json_each(?))").bind(JSON.stringify(ids("users"))).all<{ id: string; username: string }>();
      for (const u of rows.results) included.push({ id: u.id, type: "users", attributes: { username: u.username }, links: { self: `/api/v2/users/${u.id}` } });
    }
    if (include.includes("organization-memberships")) {
      for (const m of await membershipsById(db, ids("organization-memberships"))) included.push(serializeMembership(redactEmail(access, m), []));
    }
    return jsonapi(c, included.length ? { data, included } : { data });
  },
);

teams.openapi(
  createRoute({ method: "patch", path: "/teams/{team_id}", tags, summary: "Update a team", request: { params: teamParam, body: jsonBody(teamUpdateBody) }, responses: { ...ok("The team"), ...errorResponses } }),
  async (c) => {
    const { team, access } = await loadTeam(c, c.req.valid("param").team_id);
    const rights = teamRights(access);
    const a = c.req.valid("json").data.attributes ?? {};
    const { "organization-access": givenAccess, ...rest } = a;
    const changesTeam = Object.values(rest).some((v) => v !== undefined);
    // Team managers change names and settings; organisation-access managers change permissions.
    if ((changesTeam && !rights.manageTeams) || (givenAccess !== undefined && !rights.manageOrganizationAccess) || (!changesTeam && givenAccess === undefined && !rights.manageTeams)) {
      throw ApiError.of("not_found");
    }
    if (team.is_owners === 1) {
      if (a.name !== undefined && a.name !== team.name) throw ApiError.of("invalid_attribute", { detail: "The owners team cannot be renamed", pointer: "/data/attributes/name" });
      const off = Object.entries(givenAccess ?? {}).find(([, v]) => v === false);
      if (off) throw ApiError.of("invalid_attribute", { detail: "The owners team always has every organization permission", pointer: `/data/attributes/organization-access/${off[0]}` });
    }
    if (a.name !== undefined && !TEAM_NAME.test(a.name)) throw ApiError.of("invalid_attribute", { detail: "Name may only contain letters, numbers, spaces, - and _", pointer: "/data/attributes/name" });
    if (a.name !== undefined && a.name.toLowerCase() === "owners" && team.is_owners !== 1) throw ApiError.of("invalid_attribute", { detail: "Name has already been taken", pointer: "/data/attributes/name" });
    const orgAccess = team.is_owners === 1 ? JSON.parse(team.organization_access) : orgAccessOrFail(JSON.parse(team.organization_access) as Record<string, boolean>, givenAccess ?? {});
    const db = primary(c);
    try {
      await db
        .prepare("UPDATE teams SET name = ?, visibility = ?, sso_team_id = ?, organization_access = ?, allow_member_token_management = ? WHERE id = ?")
        .bind(
          a.name ?? team.name,
          a.visibility ?? team.visibility,
          a["sso-team-id"] !== undefined ? a["sso-team-id"] : team.sso_team_id,
          JSON.stringify(orgAccess),
          a["allow-member-token-management"] !== undefined ? (a["allow-member-token-management"] ? 1 : 0) : team.allow_member_token_management,
          team.id,
        )
        .run();
    } catch (err) {
      if (String(err).includes("UNIQUE")) throw ApiError.of("invalid_attribute", { detail: "Name has already been taken", pointer: "/data/attributes/name" });
      throw err;
    }
    return jsonapi(c, { data: await render(c, (await findTeam(db, team.id))!, access) });
  },
);

teams.openapi(
  createRoute({ method: "delete", path: "/teams/{team_id}", tags, summary: "Delete a team (never the owners team)", request: { params: teamParam }, responses: { ...noContentResponse, ...errorResponses } }),
  async (c) => {
    const { team, access } = await loadTeam(c, c.req.valid("param").team_id);
    if (!canManageTeams(access)) throw ApiError.of("not_found");
    if (team.is_owners === 1) throw ApiError.of("invalid_attribute", { detail: "The owners team cannot be deleted", pointer: "/data" });
    const db = primary(c);
    // Its tokens go with it: they fail with 401 from the next request on.
    await db.batch([
      db.prepare("DELETE FROM team_members WHERE team_id = ?").bind(team.id),
      db.prepare("DELETE FROM invitation_teams WHERE team_id = ?").bind(team.id),
      db.prepare("DELETE FROM team_workspaces WHERE team_id = ?").bind(team.id),
      db.prepare("DELETE FROM team_projects WHERE team_id = ?").bind(team.id),
      db.prepare("DELETE FROM tokens WHERE team_id = ?").bind(team.id),
      db.prepare("DELETE FROM teams WHERE id = ?").bind(team.id),
    ]);
    return noContent(c);
  },
);

/**
 * Adds or removes members (by user id); the owners team keeps at least one member. A user whose
 * organisation membership is still an invitation joins the team when it accepts, not before.
 */
async function changeMembers(c: Context<AppEnv>, team: TeamRow, userIds: string[], add: boolean): Promise<Response> {
  const db = primary(c);
  if (userIds.length === 0) return noContent(c);
  const ids = JSON.stringify(userIds);
  if (!add) {
    if (team.is_owners === 1) {
      const left = await db.prepare("SELECT count(*) AS n FROM team_members WHERE team_id = ? AND user_id NOT IN (SELECT value FROM json_each(?))").bind(team.id, ids).first<{ n: number }>();
      if ((left?.n ?? 0) === 0) throw ApiError.of("invalid_attribute", { detail: "The owners team must keep at least one member", pointer: "/data" });
    }
    // The guard is repeated inside the delete so that concurrent removals cannot empty the owners team.
    await db.batch([
      db
        .prepare(
          `DELETE FROM team_members WHERE team_id = ?1 AND user_id IN (SELECT value FROM json_each(?2))
           AND (?3 = 0 OR EXISTS (SELECT 1 FROM team_members o WHERE o.team_id = ?1 AND o.user_id NOT IN (SELECT value FROM json_each(?2))))`,
        )
        .bind(team.id, ids, team.is_owners),
      db
        .prepare(
          `DELETE FROM invitation_teams WHERE team_id = ? AND membership_id IN
           (SELECT id FROM organization_memberships WHERE organization_name = ? AND user_id IN (SELECT value FROM json_each(?)))`,
        )
        .bind(team.id, team.organization_name, ids),
    ]);
    return noContent(c);
  }
  const now = nowIso();
  await db.batch(
    userIds.flatMap((id) => [
      db.prepare("INSERT INTO organization_memberships (id, organization_name, user_id, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING").bind(newId("ou"), team.organization_name, id, now),
      db
        .prepare(
          `INSERT OR IGNORE INTO team_members (team_id, user_id) SELECT ?1, ?2 WHERE NOT EXISTS
           (SELECT 1 FROM organization_memberships WHERE organization_name = ?3 AND user_id = ?2 AND status = 'invited')`,
        )
        .bind(team.id, id, team.organization_name),
      db
        .prepare("INSERT OR IGNORE INTO invitation_teams (membership_id, team_id) SELECT id, ? FROM organization_memberships WHERE organization_name = ? AND user_id = ? AND status = 'invited'")
        .bind(team.id, team.organization_name, id),
    ]),
  );
  return noContent(c);
}

async function teamForMembership(c: Context<AppEnv>): Promise<TeamRow> {
  const { team, access } = await loadTeam(c, c.req.param("team_id")!);
  if (!mayChangeMembers(access, team)) throw ApiError.of("not_found");
  return team;
}

for (const [method, add] of [["post", true], ["delete", false]] as const) {
  teams.openapi(
    createRoute({
      method,
      path: "/teams/{team_id}/relationships/users",
      tags,
      summary: add ? "Add users to a team (by id or username)" : "Remove users from a team (by id or username)",
      request: { params: teamParam, body: jsonBody(usersBody) },
      responses: { ...noContentResponse, ...errorResponses },
    }),
    async (c) => {
      const team = await teamForMembership(c);
      const refs = c.req.valid("json").data.map((d) => d.id);
      // go-tfe names users by id or, with `Usernames`, by username in the same member.
      const found = await primary(c)
        .prepare("SELECT id, username FROM users WHERE id IN (SELECT value FROM json_each(?)) OR username IN (SELECT value FROM json_each(?))")
        .bind(JSON.stringify(refs), JSON.stringify(refs))
        .all<{ id: string; username: string }>();
      const byRef = new Map<string, string>();
      for (const r of found.results) {
        byRef.set(r.id, r.id);
        byRef.set(r.username.toLowerCase(), r.id);
      }
      const missing = refs.findIndex((ref) => !byRef.has(ref) && !byRef.has(ref.toLowerCase()));
      if (missing >= 0) throw ApiError.of("not_found", { detail: `User not found: ${refs[missing]}`, pointer: `/data/${missing}/id` });
      return changeMembers(c, team, [...new Set(refs.map((ref) => byRef.get(ref) ?? byRef.get(ref.toLowerCase())!))], add);
    },
  );
  teams.openapi(
    createRoute({
      method,
      path: "/teams/{team_id}/relationships/organization-memberships",
      tags,
      summary: add ? "Add organisation members to a team (by membership id)" : "Remove organisation members from a team (by membership id)",
      request: { params: teamParam, body: jsonBody(membershipsBody) },
      responses: { ...noContentResponse, ...errorResponses },
    }),
    async (c) => {
      const team = await teamForMembership(c);
      const ids = c.req.valid("json").data.map((d) => d.id);
      const rows = await membershipsById(primary(c), ids);
      const byId = new Map(rows.filter((m) => m.organization_name.toLowerCase() === team.organization_name.toLowerCase()).map((m) => [m.id, m.user_id]));
      const missing = ids.findIndex((id) => !byId.has(id));
      if (missing >= 0) throw ApiError.of("not_found", { detail: `Organization membership not found: ${ids[missing]}`, pointer: `/data/${missing}/id` });
      return changeMembers(c, team, [...new Set(ids.map((id) => byId.get(id)!))], add);
    },
  );
}
