/** @jsxImportSource hono/jsx */
/** The organisations page and an organisation's settings: plain data in, HTML out (src/ui/organizations/organizations.routes.tsx calls the services). */
import type { Principal } from "../../auth/principal";
import { orgPath } from "../context";
import { Layout } from "../layout";
import type { OrgAccess } from "../../auth/access";
import { Check, Input, type Refusal, Refused, sentOr } from "../forms";
import { OrgFrame, orgPage } from "./organizations.parts";
import { Submit } from "../parts";

export function OrganizationsPage(props: { principal: Principal; organizations: Array<{ name: string; email: string; owner: boolean }>; refusal?: Refusal }) {
  const r = props.refusal;
  return (
    <Layout title="Organisations" principal={props.principal}>
      <h1>Organisations</h1>
      {props.organizations.length === 0 ? (
        <p class="muted">You belong to no organisation{props.principal.kind === "user" ? ": create one below, or ask an owner to invite you." : "."}</p>
      ) : (
        <ul>
          {props.organizations.map((o) => (
            <li>
              <a href={orgPath(o.name, "workspaces")}>{o.name}</a> <span class="muted">(</span>
              <a href={orgPath(o.name, "projects")} aria-label={`Projects of ${o.name}`}>
                projects
              </a>
              <span class="muted">)</span> {o.owner ? <span class="badge">owner</span> : null}
            </li>
          ))}
        </ul>
      )}
      {props.principal.kind === "user" ? (
        <>
          <h2>New organisation</h2>
          <Refused refusal={r} form="new-organization" what="The organisation was not created:" />
          <form class="settings" method="post" action="/app/organizations">
            <Input id="new-org-name" name="name" label="Name (letters, numbers, - and _)" value={sentOr(r, "new-organization", "name", "")} />
            <Input id="new-org-email" name="email" label="Contact e-mail" value={sentOr(r, "new-organization", "email", "")} autocomplete="email" />
            <Submit text="Create organisation" id="create-organization" />
          </form>
        </>
      ) : null}
      {props.principal.kind === "user" && props.principal.isSiteAdmin ? (
        <p>
          <a href="/app/admin/users">Users</a> <span class="muted">(site admin)</span>
        </p>
      ) : null}
    </Layout>
  );
}

/**
 * The switches of the form, as the API names them: only settings that change what this service does. The API takes
 * more (docs/behaviour.md, "Settings"), which this page leaves as they are: cost estimation and health assessments
 * (none run here), the VCS commit-status and speculative-plan settings (not yet honoured: VCS makes them real).
 */
export const SWITCHES: Array<[string, string]> = [
  ["allow-force-delete-workspaces", "Workspace admins may force-delete workspaces"],
  ["sso-required", "Members must sign in with SSO (owners keep their password; tokens keep working)"],
];

/** The switch standing for `collaborator-auth-policy`: ticked, `two_factor_mandatory`; else `password`. */
export const REQUIRE_TWO_FACTOR = "require-two-factor";

export function SettingsPage(props: {
  access: OrgAccess;
  attributes: Record<string, unknown>;
  poolId: string | null;
  pools: Array<{ id: string; name: string }>;
  refusal?: Refusal;
}) {
  const r = props.refusal;
  const a = props.attributes;
  const v = (k: string, current: unknown = a[k]) => sentOr(r, "settings", k, current);
  const on = (k: string) => (r?.form === "settings" ? r.values[k] === "true" : a[k] === true);
  const select = (id: string, name: string, label: string, options: Array<[string, string]>, current: string) => (
    <div>
      <label for={id}>{label}</label>
      <select id={id} name={name}>
        {options.map(([value, text]) => (
          <option value={value} selected={current === value}>
            {text}
          </option>
        ))}
      </select>
    </div>
  );
  return (
    <OrgFrame access={props.access} current="settings" title="Settings">
      {props.access.isOwner ? (
        <p>
          <a href={orgPage(props.access.organization.name, "settings", "audit-trail")}>Audit trail</a>: who changed what, and every sign-in.
        </p>
      ) : null}
      <Refused refusal={r} form="settings" what="The settings were not saved:" />
      <form class="settings" method="post" action={orgPage(props.access.organization.name, "settings")}>
        <Input id="o-name" name="name" label="Name (renaming changes every address)" value={v("name")} />
        <Input id="o-email" name="email" label="Contact e-mail" value={v("email")} autocomplete="email" />
        <Input id="o-timeout" name="session-timeout" label="Idle web session timeout (minutes; empty: none)" value={v("session-timeout")} />
        <Input id="o-remember" name="session-remember" label="Web session lifetime (minutes; empty: the service's 12 hours)" value={v("session-remember")} />
        {select(
          "o-mode",
          "default-execution-mode",
          "Default execution mode",
          [
            ["remote", "remote"],
            ["local", "local"],
            ["agent", "agent"],
          ],
          v("default-execution-mode"),
        )}
        {select(
          "o-pool",
          "default-agent-pool-id",
          "Default agent pool (agent mode only)",
          [["", "None"], ...props.pools.map((p): [string, string] => [p.id, p.name])],
          v("default-agent-pool-id", props.poolId),
        )}
        {SWITCHES.map(([k, label]) => (
          <Check id={`o-${k}`} name={k} label={label} checked={on(k)} />
        ))}
        <Check
          id="o-require-two-factor"
          name={REQUIRE_TWO_FACTOR}
          label="Members must use two-factor authentication (those without it reach nothing here until they set it up)"
          checked={r?.form === "settings" ? r.values[REQUIRE_TWO_FACTOR] === "true" : a["collaborator-auth-policy"] === "two_factor_mandatory"}
        />
        <Submit text="Save settings" />
      </form>
    </OrgFrame>
  );
}
