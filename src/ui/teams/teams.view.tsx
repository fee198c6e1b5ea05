/** @jsxImportSource hono/jsx */
/** The teams pages: plain data in, HTML out (src/ui/teams/teams.routes.tsx calls the services). */
import type { OrgAccess } from "../../auth/access";
import { ORG_ACCESS_KEYS } from "../../teams/teams.rules";
import { ButtonForm, Check, Input, type Refusal, Refused, sentOr } from "../forms";
import { OrgFrame, orgPage } from "../organizations/organizations.parts";
import { Submit, Table } from "../parts";

/** A team as its API resource shows it: attributes (organisation access, permissions) and its members. */
export interface TeamRow {
  id: string;
  name: string;
  visibility: string;
  /** The group of the identity provider that maps to it besides its name (src/sso/sso.rules.ts). */
  ssoTeamId: string | null;
  usersCount: number;
  isOwners: boolean;
  organizationAccess: Record<string, boolean>;
  /** The team's `permissions`, as GET /teams/:id shows them to the caller. */
  permissions: Record<string, boolean>;
}

const VISIBILITIES: Array<[string, string]> = [
  ["secret", "Secret (its members and team managers)"],
  ["organization", "Visible to the organisation"],
];

function Visibility(props: { id: string; value: string }) {
  return (
    <div>
      <label for={props.id}>Visibility</label>
      <select id={props.id} name="visibility">
        {VISIBILITIES.map(([v, label]) => (
          <option value={v} selected={props.value === v}>
            {label}
          </option>
        ))}
      </select>
    </div>
  );
}

export function TeamListPage(props: { access: OrgAccess; teams: TeamRow[]; mayCreate: boolean; refusal?: Refusal }) {
  const org = props.access.organization.name;
  const r = props.refusal;
  return (
    <OrgFrame access={props.access} current="teams" title="Teams">
      <Table id="teams" columns={["Name", "Members"]} optional={["Visibility"]}>
        {props.teams.map((t) => (
          <tr data-team={t.name}>
            <td>
              <a href={orgPage(org, "teams", t.id)}>{t.name}</a> {t.isOwners ? <span class="badge">owners</span> : null}
            </td>
            <td>{t.usersCount}</td>
            <td class="opt">{t.visibility}</td>
          </tr>
        ))}
      </Table>
      {props.mayCreate ? (
        <section aria-labelledby="create-h">
          <h2 id="create-h">New team</h2>
          <Refused refusal={r} form="create" what="The team was not created:" />
          <form class="settings" method="post" action={orgPage(org, "teams")}>
            <Input id="c-name" name="name" label="Name" value={sentOr(r, "create", "name", "")} />
            <Visibility id="c-visibility" value={sentOr(r, "create", "visibility", "secret")} />
            <Submit text="Create team" />
          </form>
        </section>
      ) : null}
    </OrgFrame>
  );
}

export interface TeamPageView {
  team: TeamRow;
  members: Array<{ id: string; username: string }>;
  refusal?: Refusal;
}

function AccessSection(props: { view: TeamPageView; base: string }) {
  const { team, refusal } = props.view;
  const editable = team.permissions["can-update-organization-access"] === true;
  const sent = refusal?.form === "access";
  const boxes = (
    <fieldset class="checks" id="organization-access" disabled={!editable}>
      <legend>Organisation permissions</legend>
      {ORG_ACCESS_KEYS.map((k) => (
        <Check id={`oa-${k}`} name={k} label={k} checked={sent ? refusal?.values[k] === "true" : team.organizationAccess[k] === true} />
      ))}
    </fieldset>
  );
  return (
    <section aria-labelledby="access-h">
      <h2 id="access-h">Organisation access</h2>
      {team.isOwners ? <p class="muted">The owners team holds every organisation permission.</p> : null}
      <Refused refusal={refusal} form="access" what="The permissions were not saved:" />
      {editable ? (
        <form method="post" action={`${props.base}/access`}>
          {boxes}
          <Submit text="Save permissions" row="actions" />
        </form>
      ) : (
        boxes
      )}
    </section>
  );
}

function MembersSection(props: { view: TeamPageView; base: string }) {
  const { team, members, refusal } = props.view;
  const change = team.permissions["can-update-membership"] === true;
  return (
    <section aria-labelledby="members-h">
      <h2 id="members-h">Members</h2>
      {members.length === 0 ? (
        <p class="muted">No members.</p>
      ) : (
        <ul class="consumers" id="team-members">
          {members.map((m) => (
            <li data-member={m.username}>
              <span>{m.username}</span>
              {change ? <ButtonForm action={`${props.base}/members/delete`} hidden={{ id: m.id }} text="Remove" label={m.username} /> : null}
            </li>
          ))}
        </ul>
      )}
      {change ? (
        <>
          <Refused refusal={refusal} form="members" what="The member was not added:" />
          <form class="actions" method="post" action={`${props.base}/members`}>
            <div>
              <label for="m-username">Add a member (username)</label>
              <input id="m-username" name="username" value={sentOr(refusal, "members", "username", "")} autocomplete="off" />
            </div>
            <button type="submit">Add member</button>
          </form>
        </>
      ) : null}
    </section>
  );
}

export function TeamPage(props: { access: OrgAccess; view: TeamPageView }) {
  const { team, refusal } = props.view;
  const org = props.access.organization.name;
  const base = orgPage(org, "teams", team.id);
  const p = team.permissions;
  return (
    <OrgFrame access={props.access} current="teams" title={team.name} crumbs={<a href={orgPage(org, "teams")}>Teams</a>}>
      <dl class="attrs">
        <dt>Visibility</dt>
        <dd id="visibility">{team.visibility}</dd>
        <dt>Members</dt>
        <dd>{team.usersCount}</dd>
        <dt>SSO team ID</dt>
        <dd id="sso-team-id">{team.ssoTeamId ?? "none"}</dd>
        <dt>ID</dt>
        <dd>
          <code>{team.id}</code>
        </dd>
      </dl>
      <AccessSection view={props.view} base={base} />
      <MembersSection view={props.view} base={base} />
      {p["can-update-visibility"] ? (
        <section aria-labelledby="team-settings-h">
          <h2 id="team-settings-h">Settings</h2>
          <Refused refusal={refusal} form="settings" what="The team was not saved:" />
          <form class="settings" method="post" action={base}>
            {p["can-update-name"] ? <Input id="s-name" name="name" label="Name" value={sentOr(refusal, "settings", "name", team.name)} /> : null}
            <Visibility id="s-visibility" value={sentOr(refusal, "settings", "visibility", team.visibility)} />
            <Input
              id="s-sso-team-id"
              name="sso-team-id"
              label="SSO team ID (the identity provider's group that makes people members, besides the team's name; empty: none)"
              value={sentOr(refusal, "settings", "sso-team-id", team.ssoTeamId ?? "")}
            />
            <Submit text="Save team" />
          </form>
        </section>
      ) : null}
      {p["can-destroy"] ? (
        <details class="danger">
          <summary>Delete this team</summary>
          <p>Its members lose what the team gave them.</p>
          <ButtonForm action={`${base}/delete`} text="Delete team" label={team.name} danger />
        </details>
      ) : null}
    </OrgFrame>
  );
}
