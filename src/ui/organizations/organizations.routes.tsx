/** @jsxImportSource hono/jsx */
/**
 * The caller's organisations, and an organisation's settings, for owners (and its token): the attributes PATCH
 * /organizations/:name changes, checked against the API's own schema and saved through `changeOrganization`, which
 * authorises again.
 */
import { Hono } from "hono";
import { listOrgPools } from "../../agent-pools/agent-pools.service";
import type { AppEnv } from "../../env";
import { validationError } from "../../jsonapi/validation";
import { organizationAttributesInput, organizationCreateAttributes } from "../../organizations/organizations.schemas";
import { serializeOrganization } from "../../organizations/organizations.serialize";
import { changeOrganization, createOrganization, listCallerOrganizations, showOrganizationSettings } from "../../organizations/organizations.service";
import { callerOf, type Ctx, orgOf, orgPath } from "../context";
import { attempt, type Form, formOf, reasonsOf, type Refusal, refusesInput, text, ticked } from "../forms";
import { orgPage } from "./organizations.parts";
import { definePage } from "../define-page";
import { OrganizationsPage, REQUIRE_TWO_FACTOR, SettingsPage, SWITCHES } from "./organizations.view";

export const organizationsUi = new Hono<AppEnv>();

async function organizationsPage(c: Ctx, refusal?: Refusal): Promise<Response> {
  const caller = callerOf(c);
  const { items } = await listCallerOrganizations(caller, { q: "" }, { number: 1, size: 100 });
  const organizations = items.map((o) => ({ name: o.organization.name, email: o.organization.email, owner: o.owner }));
  return c.html(<OrganizationsPage principal={caller.principal} organizations={organizations} refusal={refusal} />, refusal ? 422 : 200);
}

definePage(organizationsUi, "get", "/", "authenticated", (c) => organizationsPage(c));

/** A new organisation, as `POST /organizations` makes it: the API's schema, then the service's rules (it authorises). */
definePage(organizationsUi, "post", "/organizations", "user", async (c) => {
  const form = await formOf(c);
  const values = { name: text(form, "name").trim(), email: text(form, "email").trim() };
  const parsed = organizationCreateAttributes.safeParse(values);
  if (!parsed.success) {
    // Who may create organisations is the service's to say (a team token's session may not): it authorises first.
    await createOrganization(callerOf(c), { name: "", email: "" }).catch((e) => {
      if (!refusesInput(e)) throw e;
    });
    return organizationsPage(c, { form: "new-organization", values, errors: reasonsOf(validationError(parsed.error, "json")) });
  }
  return attempt(
    c,
    () => createOrganization(callerOf(c), parsed.data),
    (view) => orgPath(view.organization.name, "workspaces"),
    (errors) => organizationsPage(c, { form: "new-organization", values, errors }),
  );
});

const NUMBERS = ["session-timeout", "session-remember"] as const;
const TEXTS = ["name", "email", "default-execution-mode", "default-agent-pool-id", ...NUMBERS] as const;

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
  for (const k of ["name", "email", "default-execution-mode"]) attributes[k] = text(form, k).trim();
  for (const k of NUMBERS) {
    const raw = text(form, k).trim();
    attributes[k] = raw === "" ? null : /^-?\d+$/.test(raw) ? Number(raw) : raw;
  }
  for (const [k] of SWITCHES) attributes[k] = ticked(form, k);
  attributes["collaborator-auth-policy"] = ticked(form, REQUIRE_TWO_FACTOR) ? "two_factor_mandatory" : "password";
  const poolId = attributes["default-execution-mode"] === "agent" ? text(form, "default-agent-pool-id") || null : undefined;
  return { attributes, poolId };
}

definePage(organizationsUi, "post", "/:organization/settings", "organization.manage", async (c) => {
  const form = await formOf(c);
  const caller = callerOf(c);
  const values: Record<string, string> = Object.fromEntries(TEXTS.map((k) => [k, text(form, k)]));
  for (const [k] of [...SWITCHES, [REQUIRE_TWO_FACTOR]]) values[k!] = String(ticked(form, k!));
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
