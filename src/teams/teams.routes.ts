/** Teams, team membership and organisation memberships (issue 3; real shapes in tfe-api-notes §2.3). */
import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { requireOrgAccess, type OrgAccess } from "../auth/access";
import { primary } from "../db";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";
import { newId, nowIso } from "../ids";
import { LIMITS } from "../limits";
import { jsonapi, noContent, paginated, readPage } from "../jsonapi/document";
import { errorResponses, jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import { findTeam, teamMembers, type TeamRow } from "./teams.index";
import { ORG_ACCESS_KEYS, serializeTeam } from "./teams.serialize";

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

/** Who may create, change and delete teams and their members. */
export function canManageTeams(access: OrgAccess): boolean {
  return access.isOwner || access.isOrgToken || access.orgPermissions["manage-teams"] === true || access.orgPermissions["manage-membership"] === true;
}

/** Secret teams are visible to their members and to team managers; organisation-visible ones to every member. */
function canSee(access: OrgAccess, team: TeamRow): boolean {
  return canManageTeams(access) || team.visibility === "organization" || access.teamIds.includes(team.id);
}

/** Dependency rules of organisation access: managing implies reading; projects imply workspaces. */
function checkOrgAccess(a: Record<string, boolean | undefined>): void {
  const rules: Array<[string, string]> = [
    ["manage-projects", "manage-workspaces"],
    ["read-projects", "read-workspaces"],
    ["manage-workspaces", "read-workspaces"],
    ["manage-projects", "read-projects"],
  ];
  for (const [k, needs] of rules) {
    if (a[k] === true && a[needs] === false) {
      throw ApiError.of("invalid_attribute", { detail: `${k} requires ${needs}`, pointer: `/data/attributes/organization-access/${needs}` });
    }
  }
}

function normaliseOrgAccess(a: Record<string, boolean | undefined>): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  for (const k of ORG_ACCESS_KEYS) if (a[k] !== undefined) out[k] = a[k]!;
  // Implied grants are stored explicitly so reads show what a team can do.
  if (out["manage-projects"]) out["manage-workspaces"] = true;
  if (out["manage-workspaces"]) out["read-workspaces"] = true;
  if (out["manage-projects"]) out["read-projects"] = true;
  if (out["read-projects"]) out["read-workspaces"] = true;
  return out;
}

export async function loadTeam(c: Context<AppEnv>, teamId: string): Promise<{ team: TeamRow; access: OrgAccess }> {
  const db = primary(c);
  const team = await findTeam(db, teamId);
  if (!team) throw ApiError.of("not_found");
  const access = await requireOrgAccess(db, c.get("principal"), team.organization_name);
  if (!canSee(access, team)) throw ApiError.of("not_found");
  return { team, access };
}

async function render(c: Context<AppEnv>, team: TeamRow, access: OrgAccess) {
  const members = await teamMembers(primary(c), [team.id]);
  return serializeTeam(team, members.get(team.id) ?? [], canManageTeams(access));
}

teams.openapi(
  createRoute({ method: "post", path: "/organizations/{organization_name}/teams", tags, summary: "Create a team", request: { params: orgParam, body: jsonBody(teamCreateBody) }, responses: { ...ok("The team", 201), ...errorResponses } }),
  async (c) => {
    const db = primary(c);
    const access = await requireOrgAccess(db, c.get("principal"), c.req.valid("param").organization_name);
    if (!canManageTeams(access)) throw ApiError.of("not_found");
    const a = c.req.valid("json").data.attributes;
    if (!TEAM_NAME.test(a.name)) throw ApiError.of("invalid_attribute", { detail: "Name may only contain letters, numbers, spaces, - and _", pointer: "/data/attributes/name" });
    if (a.name.toLowerCase() === "owners") throw ApiError.of("invalid_attribute", { detail: "Name has already been taken", pointer: "/data/attributes/name" });
    checkOrgAccess(a["organization-access"] ?? {});
    const id = newId("team");
    const res = await db
      .prepare(
        `INSERT INTO teams (id, organization_name, name, visibility, sso_team_id, organization_access, allow_member_token_management, service_user_id, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      )
      .bind(id, access.organization.name, a.name, a.visibility ?? "secret", a["sso-team-id"] ?? null, JSON.stringify(normaliseOrgAccess(a["organization-access"] ?? {})), a["allow-member-token-management"] === false ? 0 : 1, newId("user"), nowIso())
      .run();
    if (res.meta.changes !== 1) throw ApiError.of("invalid_attribute", { detail: "Name has already been taken", pointer: "/data/attributes/name" });
    const team = (await findTeam(db, id))!;
    return jsonapi(c, { data: await render(c, team, access) }, 201);
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
    const members = await teamMembers(db, slice.map((t) => t.id));
    return jsonapi(c, paginated(c, slice.map((t) => serializeTeam(t, members.get(t.id) ?? [], canManageTeams(access))), page, visible.length));
  },
);

teams.openapi(
  createRoute({
    method: "get",
    path: "/teams/{team_id}",
    tags,
    summary: "Show a team (include=users embeds its members)",
    request: { params: teamParam, query: z.object({ include: z.string().max(200).optional() }).passthrough() },
    responses: { ...ok("The team"), ...errorResponses },
  }),
  async (c) => {
    const { team, access } = await loadTeam(c, c.req.valid("param").team_id);
    const include = (c.req.valid("query").include ?? "").split(",").map((s) => s.trim()).filter(Boolean);
    for (const v of include) {
      if (v !== "users" && v !== "organization-memberships") throw ApiError.of("invalid_include", { detail: `Invalid include parameter: ${v}`, parameter: "include" });
    }
    const data = await render(c, team, access);
    if (!include.includes("users")) return jsonapi(c, { data });
    const ids = ((data.relationships?.users as { data: Array<{ id: string }> }).data ?? []).map((u) => u.id);
    const rows = await primary(c).prepare("SELECT id, username FROM users WHERE id IN (SELECT value FROM json_each(?))").bind(JSON.stringify(ids)).all<{ id: string; username: string }>();
    const included = rows.results.map((u) => ({ id: u.id, type: "users", attributes: { username: u.username }, links: { self: `/api/v2/users/${u.id}` } }));
    return jsonapi(c, included.length ? { data, included } : { data });
  },
);

teams.openapi(
  createRoute({ method: "patch", path: "/teams/{team_id}", tags, summary: "Update a team", request: { params: teamParam, body: jsonBody(teamUpdateBody) }, responses: { ...ok("The team"), ...errorResponses } }),
  async (c) => {
    const { team, access } = await loadTeam(c, c.req.valid("param").team_id);
    if (!canManageTeams(access)) throw ApiError.of("not_found");
    const a = c.req.valid("json").data.attributes ?? {};
    if (team.is_owners === 1 && ((a.name !== undefined && a.name !== team.name) || a["organization-access"] !== undefined)) {
      throw ApiError.of("invalid_attribute", { detail: "The owners team's name and organization access cannot be changed", pointer: "/data/attributes" });
    }
    if (a.name !== undefined && !TEAM_NAME.test(a.name)) throw ApiError.of("invalid_attribute", { detail: "Name may only contain letters, numbers, spaces, - and _", pointer: "/data/attributes/name" });
    const merged = { ...(JSON.parse(team.organization_access) as Record<string, boolean>), ...(a["organization-access"] ?? {}) };
    checkOrgAccess(merged);
    const db = primary(c);
    try {
      await db
        .prepare("UPDATE teams SET name = ?, visibility = ?, sso_team_id = ?, organization_access = ?, allow_member_token_management = ? WHERE id = ?")
        .bind(
          a.name ?? team.name,
          a.visibility ?? team.visibility,
          a["sso-team-id"] !== undefined ? a["sso-team-id"] : team.sso_team_id,
          JSON.stringify(normaliseOrgAccess(merged)),
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
    await db.batch([
      db.prepare("DELETE FROM team_members WHERE team_id = ?").bind(team.id),
      db.prepare("DELETE FROM team_workspaces WHERE team_id = ?").bind(team.id),
      db.prepare("DELETE FROM team_projects WHERE team_id = ?").bind(team.id),
      db.prepare("DELETE FROM tokens WHERE team_id = ?").bind(team.id),
      db.prepare("DELETE FROM teams WHERE id = ?").bind(team.id),
    ]);
    return noContent(c);
  },
);

async function changeMembers(c: Context<AppEnv>, add: boolean): Promise<Response> {
  const { team, access } = await loadTeam(c, c.req.param("team_id")!);
  if (!canManageTeams(access)) throw ApiError.of("not_found");
  const ids = (c.req.valid as (t: "json") => { data: Array<{ id: string }> })("json").data.map((d) => d.id);
  const db = primary(c);
  // go-tfe names users by id or, with `Usernames`, by username in the same member.
  const found = await db
    .prepare("SELECT id, username FROM users WHERE id IN (SELECT value FROM json_each(?)) OR username IN (SELECT value FROM json_each(?))")
    .bind(JSON.stringify(ids), JSON.stringify(ids))
    .all<{ id: string; username: string }>();
  const byRef = new Map<string, string>();
  for (const r of found.results) {
    byRef.set(r.id, r.id);
    byRef.set(r.username.toLowerCase(), r.id);
  }
  const missing = ids.findIndex((ref) => !byRef.has(ref) && !byRef.has(ref.toLowerCase()));
  if (missing >= 0) throw ApiError.of("not_found", { detail: `User not found: ${ids[missing]}`, pointer: `/data/${missing}/id` });
  ids.splice(0, ids.length, ...ids.map((ref) => byRef.get(ref) ?? byRef.get(ref.toLowerCase())!));
  if (!add && team.is_owners === 1) {
    const left = await db.prepare("SELECT count(*) AS n FROM team_members WHERE team_id = ? AND user_id NOT IN (SELECT value FROM json_each(?))").bind(team.id, JSON.stringify(ids)).first<{ n: number }>();
    if ((left?.n ?? 0) === 0) throw ApiError.of("invalid_attribute", { detail: "The owners team must keep at least one member", pointer: "/data" });
  }
  const now = nowIso();
  if (ids.length === 0) return noContent(c); // nothing to change (D1 refuses an empty batch)
  await db.batch(
    ids.flatMap((id) =>
      add
        ? [
            db.prepare("INSERT INTO team_members (team_id, user_id) VALUES (?, ?) ON CONFLICT DO NOTHING").bind(team.id, id),
            db.prepare("INSERT INTO organization_memberships (id, organization_name, user_id, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING").bind(newId("ou"), team.organization_name, id, now),
          ]
        : [db.prepare("DELETE FROM team_members WHERE team_id = ? AND user_id = ?").bind(team.id, id)],
    ),
  );
  void access;
  return noContent(c);
}

for (const [method, add] of [["post", true], ["delete", false]] as const) {
  teams.openapi(
    createRoute({
      method,
      path: "/teams/{team_id}/relationships/users",
      tags,
      summary: add ? "Add users to a team" : "Remove users from a team",
      request: { params: teamParam, body: jsonBody(usersBody) },
      responses: { ...noContentResponse, ...errorResponses },
    }),
    async (c) => changeMembers(c, add),
  );
}
