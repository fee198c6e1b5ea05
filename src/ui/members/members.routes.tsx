/** @jsxImportSource hono/jsx */
/**
 * The organisation's members and invitations in the UI: the memberships as GET .../organization-memberships lists
 * them (with their teams), an invitation by e-mail with teams (`inviteMember`), removing a member or cancelling an
 * invitation (`removeMembership`); each service authorises again.
 */
import { Hono } from "hono";
import { allows } from "../../auth/requirements";
import type { AppEnv } from "../../env";
import { pageOf } from "../../jsonapi/schemas";
import { listTeams } from "../../teams/teams.service";
import { inviteMember, listMemberships, removeMembership } from "../../users/memberships.service";
import { callerOf, type Ctx, orgOf } from "../context";
import { attempt, formOf, type Refusal, text, values } from "../forms";
import { orgPage, standingIn } from "../organizations/organizations.parts";
import { definePage } from "../define-page";
import { MembersPage } from "./members.view";

export const membersUi = new Hono<AppEnv>();

async function membersPage(c: Ctx, refusal?: Refusal): Promise<Response> {
  const caller = callerOf(c);
  const organization = orgOf(c);
  const page = pageOf(c.req.query());
  const [{ view, total }, { teams }] = await Promise.all([
    listMemberships(caller, organization, { include: "teams" }, page),
    listTeams(caller, organization, {}, { number: 1, size: 100 }),
  ]);
  const access = await standingIn(c, organization);
  const names = new Map([...(view.includedTeams ?? []), ...teams.map((t) => ({ id: t.team.id, name: t.team.name }))].map((t) => [t.id, t.name] as const));
  const owners = teams.find((t) => t.team.isOwners)?.team;
  const manage = allows(access.principal, "membership.manage", { access });
  const rows = view.memberships.map((m, i) => {
    const ids = view.teams[i] ?? [];
    const owner = !!owners && ids.includes(owners.id);
    return {
      membership: m,
      teams: ids.map((id) => ({ id, name: names.get(id) ?? id })),
      removable: manage && (!owner || (!!owners && allows(access.principal, "teams.change-members", { access, team: owners }))),
    };
  });
  // An invitation may name the teams whose members the caller may change (the owners team: owners only).
  const inviteTeams = manage
    ? teams.filter((t) => allows(access.principal, "teams.change-members", { access, team: t.team })).map((t) => ({ id: t.team.id, name: t.team.name }))
    : null;
  return c.html(
    <MembersPage access={access} rows={rows} total={total} page={page} query={new URL(c.req.url).searchParams} inviteTeams={inviteTeams} refusal={refusal} />,
    refusal ? 422 : 200,
  );
}

definePage(membersUi, "get", "/:organization/members", "organization.read", (c) => membersPage(c));

definePage(membersUi, "post", "/:organization/members", "membership.manage", async (c) => {
  const form = await formOf(c);
  const email = text(form, "email").trim();
  const teamIds = values(form, "teams");
  return attempt(
    c,
    () => inviteMember(callerOf(c), orgOf(c), { email, teamIds }),
    orgPage(orgOf(c), "members"),
    (errors) => membersPage(c, { form: "invite", values: { email, teams: teamIds.join(",") }, errors }),
  );
});

// As DELETE /organization-memberships/:id: removes a member, or cancels an invitation.
definePage(membersUi, "post", "/:organization/members/:id/delete", "membership.manage", async (c) => {
  return attempt(
    c,
    () => removeMembership(callerOf(c), c.req.param("id")),
    orgPage(orgOf(c), "members"),
    (errors) => membersPage(c, { form: "remove", values: {}, errors }),
  );
});
