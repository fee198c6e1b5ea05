/** @jsxImportSource hono/jsx */
/**
 * Teams in the UI: the organisation's teams and a team's page (its organisation permissions, members, settings),
 * each form calling the service its API endpoint calls (src/teams/teams.service.ts), which authorises it again.
 */
import { Hono } from "hono";
import { allows, authorize } from "../../auth/requirements";
import type { AppEnv } from "../../env";
import { ApiError } from "../../errors";
import { validationError } from "../../jsonapi/validation";
import { ORG_ACCESS_KEYS } from "../../teams/teams.rules";
import { teamAttributesInput } from "../../teams/teams.schemas";
import { serializeTeamView } from "../../teams/teams.serialize";
import { changeUsers, createTeam, deleteTeam, listTeams, loadTeam, showTeam, type TeamView, updateTeam } from "../../teams/teams.service";
import { callerOf, type Ctx, orgOf } from "../context";
import { attempt, formOf, reasonsOf, type Refusal, text, ticked } from "../forms";
import { orgPage, standingIn } from "../organizations/organizations.parts";
import { definePage } from "../define-page";
import { TeamListPage, TeamPage, type TeamRow } from "./teams.view";

export const teamsUi = new Hono<AppEnv>();

const idOf = (c: Ctx) => c.req.param("id") ?? "";
const teamPath = (c: Ctx) => orgPage(orgOf(c), "teams", idOf(c));

/** A team as its API resource shows it to the caller. */
function rowOf(v: TeamView): TeamRow {
  const a = serializeTeamView(v).attributes as Record<string, unknown>;
  return {
    id: v.team.id,
    name: v.team.name,
    visibility: v.team.visibility,
    ssoTeamId: (a["sso-team-id"] as string | null) ?? null,
    usersCount: Number(a["users-count"]),
    isOwners: v.team.isOwners,
    organizationAccess: a["organization-access"] as Record<string, boolean>,
    permissions: a.permissions as Record<string, boolean>,
  };
}

async function listPage(c: Ctx, refusal?: Refusal): Promise<Response> {
  const caller = callerOf(c);
  const [{ teams }, access] = await Promise.all([listTeams(caller, orgOf(c), {}, { number: 1, size: 100 }), standingIn(c, orgOf(c))]);
  const mayCreate = allows(access.principal, "teams.manage", { access });
  return c.html(<TeamListPage access={access} teams={teams.map(rowOf)} mayCreate={mayCreate} refusal={refusal} />, refusal ? 422 : 200);
}

definePage(teamsUi, "get", "/:organization/teams", "organization.read", (c) => listPage(c));

const createAttributes = teamAttributesInput.required({ name: true });

definePage(teamsUi, "post", "/:organization/teams", "teams.manage", async (c) => {
  const form = await formOf(c);
  const caller = callerOf(c);
  const values = { name: text(form, "name"), visibility: text(form, "visibility") };
  const parsed = createAttributes.safeParse(values);
  if (!parsed.success) {
    // Only a caller who may create teams learns why its input was refused.
    authorize(caller, "teams.manage", { access: await standingIn(c, orgOf(c)) });
    return listPage(c, { form: "create", values, errors: reasonsOf(validationError(parsed.error, "json")) });
  }
  return attempt(
    c,
    () => createTeam(caller, orgOf(c), parsed.data),
    (v) => orgPage(orgOf(c), "teams", v.team.id),
    (errors) => listPage(c, { form: "create", values, errors }),
  );
});

/** A team's page: the team as GET /teams/:id?include=users shows it. */
async function teamPage(c: Ctx, refusal?: Refusal): Promise<Response> {
  const caller = callerOf(c);
  const { team, users } = await showTeam(caller, idOf(c), "users");
  if (team.organization.toLowerCase() !== orgOf(c).toLowerCase()) throw ApiError.of("not_found");
  const access = await standingIn(c, team.organization);
  const members = [...(users ?? [])].sort((a, b) => a.username.localeCompare(b.username));
  return c.html(<TeamPage access={access} view={{ team: rowOf(team), members, refusal }} />, refusal ? 422 : 200);
}

definePage(teamsUi, "get", "/:organization/teams/:id", "organization.read", (c) => teamPage(c));

const back = (c: Ctx, form: string, values: Record<string, string>, run: () => Promise<unknown>) =>
  attempt(c, run, teamPath(c), (errors) => teamPage(c, { form, values, errors }));

const settingsAttributes = teamAttributesInput.pick({ name: true, visibility: true, "sso-team-id": true });

// As PATCH /teams/:id (name, visibility and SSO team id; an empty one is none).
definePage(teamsUi, "post", "/:organization/teams/:id", "teams.manage", async (c) => {
  const form = await formOf(c);
  const caller = callerOf(c);
  const values = { name: text(form, "name"), visibility: text(form, "visibility"), "sso-team-id": text(form, "sso-team-id") };
  const sso = "sso-team-id" in form ? { "sso-team-id": values["sso-team-id"].trim() || null } : {};
  // The owners team's form has no name field: its name is not sent.
  const parsed = settingsAttributes.safeParse(
    "name" in form ? { name: values.name, visibility: values.visibility, ...sso } : { visibility: values.visibility, ...sso },
  );
  if (!parsed.success) {
    const { access } = await loadTeam(caller, idOf(c));
    authorize(caller, "teams.manage", { access });
    return teamPage(c, { form: "settings", values, errors: reasonsOf(validationError(parsed.error, "json")) });
  }
  return back(c, "settings", values, () => updateTeam(caller, idOf(c), parsed.data));
});

// As PATCH /teams/:id with `organization-access`: every box is sent, ticked or not.
definePage(teamsUi, "post", "/:organization/teams/:id/access", "teams.manage-organization-access", async (c) => {
  const form = await formOf(c);
  const given = Object.fromEntries(ORG_ACCESS_KEYS.map((k) => [k, ticked(form, k)]));
  const values = Object.fromEntries(ORG_ACCESS_KEYS.map((k) => [k, String(given[k])]));
  return back(c, "access", values, () => updateTeam(callerOf(c), idOf(c), { "organization-access": given }));
});

// As POST and DELETE /teams/:id/relationships/users (by username, as go-tfe's Usernames; by id to remove).
definePage(teamsUi, "post", "/:organization/teams/:id/members", "teams.change-members", async (c) => {
  const username = text(await formOf(c), "username").trim();
  return back(c, "members", { username }, () => changeUsers(callerOf(c), idOf(c), [username], true));
});

definePage(teamsUi, "post", "/:organization/teams/:id/members/delete", "teams.change-members", async (c) => {
  const id = text(await formOf(c), "id");
  return back(c, "members", {}, () => changeUsers(callerOf(c), idOf(c), [id], false));
});

definePage(teamsUi, "post", "/:organization/teams/:id/delete", "teams.manage", async (c) => {
  await deleteTeam(callerOf(c), idOf(c));
  return c.redirect(orgPage(orgOf(c), "teams"), 303);
});
