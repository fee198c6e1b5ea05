/** @jsxImportSource hono/jsx */
/**
 * The caller's organisations, and an organisation's settings, for owners (and its token): the attributes PATCH
 * /organizations/:name changes, checked against the API's own schema and saved through `changeOrganization`, which
 * authorises again.
 */
import { Hono } from "hono";
import { listOrgPools } from "../../agent-pools/agent-pools.service";
import type { OrgAccess } from "../../auth/access";
import type { AppEnv } from "../../env";
import { validationError } from "../../jsonapi/validation";
import { organizationAttributesInput } from "../../organizations/organizations.schemas";
import { serializeOrganization } from "../../organizations/organizations.serialize";
import { changeOrganization, listCallerOrganizations, showOrganizationSettings } from "../../organizations/organizations.service";
import { callerOf, type Ctx, orgOf } from "../context";
import { attempt, Check, type Form, formOf, Input, reasonsOf, type Refusal, Refused, sentOr, text, ticked } from "../forms";
import { OrgFrame, orgPage } from "./organizations.parts";
import { definePage } from "../define-page";
import { OrganizationsPage } from "./organizations.view";

export const organizationsUi = new Hono<AppEnv>();

definePage(organizationsUi, "get", "/", "authenticated", async (c) => {
  const caller = callerOf(c);
  const { items } = await listCallerOrganizations(caller, { q: "" }, { number: 1, size: 100 });
  const organizations = items.map((o) => ({ name: o.organization.name, email: o.organization.email, owner: o.owner }));
  return c.html(<OrganizationsPage principal={caller.principal} organizations={organizations} />);
});

/** The switches of the form, as the API names them. */
const SWITCHES: Array<[string, string]> = [
  ["cost-estimation-enabled", "Cost estimation"],
  ["assessments-enforced", "Health assessments on every workspace"],
  ["allow-force-delete-workspaces", "Workspace admins may force-delete workspaces"],
  ["speculative-plan-management-enabled", "Cancel outdated speculative plans"],
  ["aggregated-commit-status-enabled", "One aggregated VCS commit status"],
  ["send-passing-statuses-for-untriggered-speculative-plans", "Passing statuses for untriggered speculative plans"],
];
const NUMBERS = ["session-timeout", "session-remember"] as const;
const TEXTS = ["name", "email", "collaborator-auth-policy", "default-execution-mode", "default-agent-pool-id", ...NUMBERS] as const;

function SettingsPage(props: {
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
      <Refused refusal={r} form="settings" what="The settings were not saved:" />
      <form class="settings" method="post" action={orgPage(props.access.organization.name, "settings")}>
        <Input id="o-name" name="name" label="Name (renaming changes every address)" value={v("name")} />
        <Input id="o-email" name="email" label="Notification e-mail" value={v("email")} autocomplete="email" />
        <Input id="o-timeout" name="session-timeout" label="Idle session timeout (minutes; empty: default)" value={v("session-timeout")} />
        <Input id="o-remember" name="session-remember" label="Session lifetime (minutes; empty: default)" value={v("session-remember")} />
        {select(
          "o-auth",
          "collaborator-auth-policy",
          "Collaborator authentication",
          [
            ["password", "Password"],
            ["two_factor_mandatory", "Two-factor authentication required"],
          ],
          v("collaborator-auth-policy"),
        )}
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
        <div>
          <button class="primary" type="submit">
            Save settings
          </button>
        </div>
      </form>
    </OrgFrame>
  );
}

async function settingsPage(c: Ctx, refusal?: Refusal): Promise<Response> {
  const caller = callerOf(c);
  const { organization: org, access } = await showOrganizationSettings(caller, orgOf(c));
  // Owners of an organisation refusing user tokens still reach this page (to switch it back), not its pools.
  const pools = await listOrgPools(caller, org.name, {}, { number: 1, size: 100 }).catch(() => ({ pools: [] }));
  const attributes = serializeOrganization(org).attributes as Record<string, unknown>;
  return c.html(
    <SettingsPage
      access={access}
      attributes={attributes}
      poolId={org.defaultAgentPoolId}
      pools={pools.pools.map((p) => ({ id: p.pool.id, name: p.pool.name }))}
      refusal={refusal}
    />,
    refusal ? 422 : 200,
  );
}

definePage(organizationsUi, "get", "/:organization/settings", "organization.manage", (c) => settingsPage(c));

/**
 * The form as the API's attributes: empty minutes mean the default (null); anything else that is not a whole number
 * is passed on as text, for the API's schema to refuse as it would. The pool is sent only in agent mode.
 */
function attributesOf(form: Form): { attributes: Record<string, unknown>; poolId: string | null | undefined } {
  const attributes: Record<string, unknown> = {};
  for (const k of ["name", "email", "collaborator-auth-policy", "default-execution-mode"]) attributes[k] = text(form, k).trim();
  for (const k of NUMBERS) {
    const raw = text(form, k).trim();
    attributes[k] = raw === "" ? null : /^-?\d+$/.test(raw) ? Number(raw) : raw;
  }
  for (const [k] of SWITCHES) attributes[k] = ticked(form, k);
  const poolId = attributes["default-execution-mode"] === "agent" ? text(form, "default-agent-pool-id") || null : undefined;
  return { attributes, poolId };
}

definePage(organizationsUi, "post", "/:organization/settings", "organization.manage", async (c) => {
  const form = await formOf(c);
  const caller = callerOf(c);
  const values: Record<string, string> = Object.fromEntries(TEXTS.map((k) => [k, text(form, k)]));
  for (const [k] of SWITCHES) values[k] = String(ticked(form, k));
  const { attributes, poolId } = attributesOf(form);
  const parsed = organizationAttributesInput.safeParse(attributes);
  if (!parsed.success) {
    // Only those who may change the settings learn why (the read authorises it, as the update would).
    await showOrganizationSettings(caller, orgOf(c));
    return settingsPage(c, { form: "settings", values, errors: reasonsOf(validationError(parsed.error, "json")) });
  }
  return attempt(
    c,
    () => changeOrganization(caller, orgOf(c), parsed.data, poolId),
    (view) => orgPage(view.organization.name, "settings"),
    (errors) => settingsPage(c, { form: "settings", values, errors }),
  );
});
