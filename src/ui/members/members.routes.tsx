/** @jsxImportSource hono/jsx */
/**
 * The organisation's members and invitations in the UI: the memberships as GET .../organization-memberships lists
 * them (with their teams), an invitation by e-mail with teams (`inviteMember`), removing a member or cancelling an
 * invitation (`removeMembership`); each service authorises again.
 */
import { Hono } from "hono";
import type { OrgAccess } from "../../auth/access";
import { allows } from "../../auth/requirements";
import type { AppEnv } from "../../env";
import { pageOf } from "../../jsonapi/schemas";
import { listTeams } from "../../teams/teams.service";
import type { Membership } from "../../users/memberships.d1";
import { inviteMember, listMemberships, removeMembership } from "../../users/memberships.service";
import { callerOf, type Ctx, orgOf } from "../context";
import { attempt, ButtonForm, Check, formOf, Input, type Refusal, Refused, sentOr, text, values } from "../forms";
import { OrgFrame, orgPage, standingIn } from "../organizations/organizations.parts";
import { Pager, Table } from "../parts";
import { definePage } from "../define-page";

export const membersUi = new Hono<AppEnv>();

interface MemberRow {
  membership: Membership;
  teams: Array<{ id: string; name: string }>;
  /** Whether the caller may remove it (an owner only by owners, as the service decides). */
  removable: boolean;
}

function MembersPage(props: {
  access: OrgAccess;
  rows: MemberRow[];
  total: number;
  page: { number: number; size: number };
  query: URLSearchParams;
  /** The teams an invitation may name (null: the caller may not invite). */
  inviteTeams: Array<{ id: string; name: string }> | null;
  refusal?: Refusal;
}) {
  const org = props.access.organization.name;
  const r = props.refusal;
  const chosen = new Set(r?.form === "invite" ? (r.values.teams ?? "").split(",") : []);
  return (
    <OrgFrame access={props.access} current="members" title="Members">
      <p class="muted" id="total">
        {props.total} {props.total === 1 ? "membership" : "memberships"}
      </p>
      <Refused refusal={r} form="remove" what="The membership was not removed:" />
      <Table id="members" columns={["User", "Status", "Teams"]} optional={["E-mail"]}>
        {props.rows.map(({ membership: m, teams, removable }) => (
          <tr data-membership={m.id} data-user={m.username}>
            <td>
              {m.username}
              {removable ? (
                <div class="actions">
                  {m.status === "invited" ? <a href={`/app/${encodeURIComponent(org)}/invitations/${m.id}`}>Invitation link</a> : null}
                  <ButtonForm
                    action={orgPage(org, "members", m.id, "delete")}
                    text={m.status === "invited" ? "Cancel invitation" : "Remove"}
                    label={m.username}
                    danger
                  />
                </div>
              ) : null}
            </td>
            <td>
              <span class={m.status === "invited" ? "badge busy" : "badge"}>{m.status}</span>
            </td>
            <td>{teams.map((t) => t.name).join(", ") || "—"}</td>
            <td class="opt">{m.email ?? "—"}</td>
          </tr>
        ))}
      </Table>
      <Pager page={props.page} total={props.total} query={props.query} />
      {props.inviteTeams ? (
        <section aria-labelledby="invite-h">
          <h2 id="invite-h">Invite a member</h2>
          <Refused refusal={r} form="invite" what="The invitation was not sent:" />
          <form method="post" action={orgPage(org, "members")}>
            <Input id="i-email" name="email" label="E-mail" value={sentOr(r, "invite", "email", "")} autocomplete="off" />
            {props.inviteTeams.length ? (
              <fieldset class="checks">
                <legend>Teams it joins on accepting</legend>
                {props.inviteTeams.map((t) => (
                  <Check id={`i-team-${t.id}`} name="teams" label={t.name} checked={chosen.has(t.id)} value={t.id} />
                ))}
              </fieldset>
            ) : null}
            <div class="actions">
              <button class="primary" type="submit">
                Invite
              </button>
            </div>
          </form>
        </section>
      ) : null}
    </OrgFrame>
  );
}

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
