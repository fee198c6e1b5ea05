/** @jsxImportSource hono/jsx */
/** The organisation's members and invitations: plain data in, HTML out (src/ui/members/members.routes.tsx calls the services). */
import type { OrgAccess } from "../../auth/access";
import type { Membership } from "../../users/memberships.d1";
import { ButtonForm, Check, Input, type Refusal, Refused, sentOr } from "../forms";
import { OrgFrame, orgPage } from "../organizations/organizations.parts";
import { Pager, Submit, Table } from "../parts";

export interface MemberRow {
  membership: Membership;
  teams: Array<{ id: string; name: string }>;
  /** Whether the caller may remove it (an owner only by owners, as the service decides). */
  removable: boolean;
}

export function MembersPage(props: {
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
            <Submit text="Invite" row="actions" />
          </form>
        </section>
      ) : null}
    </OrgFrame>
  );
}
