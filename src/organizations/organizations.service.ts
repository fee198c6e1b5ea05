/**
 * Organisations: users create them (becoming owners); members read them; owners and the organisation
 * token change them; owners alone delete them. Each result says whether the caller holds the owners'
 * permissions, which the serialiser shows.
 */
import type { Organization } from "../auth/organization.d1";
import { authorize } from "../auth/requirements";
import { type OrgAccess, requireOrgAccess } from "../auth/access";
import type { Caller } from "../caller";
import { edition } from "../env";
import { ApiError } from "../errors";
import { ssoEnabled } from "../sso/sso.service";
import { newId, nowIso } from "../ids";
import type { Page } from "../jsonapi/document";
import {
  deleteOrganization,
  findOrganization,
  insertOrganization,
  listOrganizations,
  poolExists,
  seedOrganization,
  updateOrganization,
  type OrganizationScope,
} from "./organizations.d1";
import { findOrgPolicy } from "../retention/retention.d1";
import { planOf, type FeatureSet } from "../subscriptions/feature-sets.rules";
import type { DataRetentionPolicy } from "../workspaces/workspace.types";

const ORG_NAME = /^[A-Za-z0-9_-]+$/;

/** The name rule of create and rename alike (its length is the route schema's). */
function checkName(name: string): void {
  if (!ORG_NAME.test(name)) {
    throw ApiError.of("invalid_attribute", { detail: "Name is invalid: use letters, numbers, - and _", pointer: "/data/attributes/name" });
  }
}

/** Attributes kept as given in the organisation's `attrs`. */
const STORED_ATTRS = [
  "session-timeout",
  "session-remember",
  "collaborator-auth-policy",
  "cost-estimation-enabled",
  "send-passing-statuses-for-untriggered-speculative-plans",
  "aggregated-commit-status-enabled",
  "speculative-plan-management-enabled",
  "owners-team-saml-role-id",
  "assessments-enforced",
  "user-tokens-enabled",
  "stacks-enabled",
  // Whether the organisation's token TTL policies apply (src/tokens/token-ttl-policies.service.ts).
  "max-ttl-enabled",
  // Members' password sessions refused (src/auth/access.ts), once the operator configured single sign-on.
  "sso-required",
] as const;

/** The attributes a create or update may send (validated by the route's schema). */
export type OrganizationAttributes = Partial<Record<(typeof STORED_ATTRS)[number], unknown>> & {
  name?: string;
  email?: string;
  "allow-force-delete-workspaces"?: boolean;
  "default-execution-mode"?: "remote" | "local" | "agent";
  "default-agent-pool-id"?: string | null;
  "enforce-hyok"?: boolean;
};

/**
 * Settings this service cannot honour, refused when switched on (off is what they are here, and the tfe provider
 * sends false): health assessments need HCP's assessment runs, hold-your-own-key a key configuration neither of which
 * this service has.
 */
const UNAVAILABLE: ReadonlyArray<readonly ["assessments-enforced" | "enforce-hyok", string]> = [
  ["assessments-enforced", "Health assessments are not available, so assessments-enforced can only be false"],
  ["enforce-hyok", "Hold your own key is not available, so enforce-hyok can only be false"],
];

function refuseUnavailable(a: OrganizationAttributes): void {
  for (const [k, detail] of UNAVAILABLE) if (a[k] === true) throw ApiError.of("invalid_attribute", { detail, pointer: `/data/attributes/${k}` });
}

/**
 * A person who requires two-factor authentication of an organisation's members has it (Terraform Enterprise's
 * authentication policy: owners must have 2FA to require it), or the policy would shut them out of what they just
 * set up. Site admins and the organisation token stand outside the policy.
 */
function refuseUnprotectedPolicy(caller: Caller, a: OrganizationAttributes, current: unknown): void {
  const p = caller.principal;
  if (a["collaborator-auth-policy"] !== "two_factor_mandatory" || current === "two_factor_mandatory") return;
  if (p.kind === "user" && !p.isSiteAdmin && !p.twoFactor)
    throw ApiError.of("invalid_attribute", {
      detail: "Enable two-factor authentication for your own account (/app/settings/two-factor) before requiring it of the organization's members",
      pointer: "/data/attributes/collaborator-auth-policy",
    });
}

/** Requiring single sign-on where there is none would only shut members out: refused until the operator configures it. */
function refuseSsoRequiredWithoutSso(caller: Caller, a: OrganizationAttributes): void {
  if (a["sso-required"] === true && !ssoEnabled(caller.env))
    throw ApiError.of("invalid_attribute", {
      detail: "Single sign-on is not configured on this installation (OIDC_ISSUER), so sso-required can only be false",
      pointer: "/data/attributes/sso-required",
    });
}

/** An organisation as the caller sees it: `owner` when it holds the owners' permissions. */
export interface OrganizationView {
  organization: Organization;
  owner: boolean;
  /** The organisation's plan (hosted edition; null in the self-hosted one), which gates some permissions. */
  plan: FeatureSet | null;
  /**
   * The organisation's default data retention policy, for its `data-retention-policy` relationship:
   * loaded by show and update in the self-hosted edition (the feature's only home); undefined: not shown.
   */
  retention?: DataRetentionPolicy | null;
}

/** The retention policy a single-organisation response shows (one D1 read, self-hosted only). */
async function retentionOf(caller: Caller, organizationId: string): Promise<DataRetentionPolicy | null | undefined> {
  return edition(caller.env) === "self-hosted" ? findOrgPolicy(caller.db, organizationId) : undefined;
}

function checkEmail(email: string): void {
  if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw ApiError.of("invalid_attribute", { detail: "Email is invalid", pointer: "/data/attributes/email" });
}

function storedAttrs(a: OrganizationAttributes, base: Record<string, unknown>): Record<string, unknown> {
  const stored = { ...base };
  for (const k of STORED_ATTRS) if (a[k] !== undefined) stored[k] = a[k];
  return stored;
}

/** Creates an organisation with its owners team (the creator in it) and Default Project; users only. */
export async function createOrganization(caller: Caller, a: OrganizationAttributes & { name: string; email: string }): Promise<OrganizationView> {
  const principal = caller.principal;
  authorize(caller, "user");
  if (principal.kind !== "user") throw ApiError.of("not_found");
  checkName(a.name);
  checkEmail(a.email);
  refuseUnavailable(a);
  refuseUnprotectedPolicy(caller, a, undefined);
  refuseSsoRequiredWithoutSso(caller, a);
  if (a["default-execution-mode"] === "agent") {
    throw ApiError.of("invalid_attribute", {
      detail: "A new organisation has no agent pool to default to",
      pointer: "/data/attributes/default-execution-mode",
    });
  }
  const now = nowIso();
  const projectId = newId("prj");
  const externalId = newId("org");
  const inserted = await insertOrganization(caller.db, {
    name: a.name,
    externalId,
    email: a.email,
    createdAt: now,
    attrs: storedAttrs(a, {}),
    defaultExecutionMode: a["default-execution-mode"] ?? "remote",
    allowForceDeleteWorkspaces: a["allow-force-delete-workspaces"] === true,
    defaultProjectId: projectId,
  });
  if (!inserted) throw ApiError.of("name_taken", { pointer: "/data/attributes/name" });
  // By id: a rename right after the insert does not orphan what the organisation comes with.
  await seedOrganization(caller.db, {
    organizationId: externalId,
    projectId,
    ownersTeamId: newId("team"),
    serviceUserId: newId("user"),
    creatorId: principal.userId,
    membershipId: newId("ou"),
    createdAt: now,
  });
  const org = await findOrganization(caller.db, { id: externalId });
  if (!org) throw ApiError.of("not_found"); // deleted concurrently
  return { organization: org, owner: true, plan: planOf(edition(caller.env), org.subscription) };
}

/** The organisations the caller belongs to (all for the site admin; its own for a team or organisation token). */
export async function listCallerOrganizations(
  caller: Caller,
  filter: { q: string; email?: string },
  page: Page,
): Promise<{ items: OrganizationView[]; total: number }> {
  const p = caller.principal;
  const scope: OrganizationScope = p.kind === "user" ? (p.isSiteAdmin ? { all: true } : { memberId: p.userId }) : { organizationId: p.organizationId };
  const { total, organizations } = await listOrganizations(caller.db, scope, filter, p.kind === "user" ? p.userId : "", page);
  // Same permissions as show, so a listed organisation equals the one returned by create and read.
  const ownerOfAll = (p.kind === "user" && p.isSiteAdmin) || p.kind === "organization";
  const ed = edition(caller.env);
  const items = organizations.map(({ organization, isOwner }) => ({ organization, owner: isOwner || ownerOfAll, plan: planOf(ed, organization.subscription) }));
  return { items, total };
}

export async function showOrganization(caller: Caller, name: string): Promise<OrganizationView> {
  const access = await requireOrgAccess(caller, { name });
  const org = access.organization;
  return {
    organization: org,
    owner: access.isOwner || access.isOrgToken,
    plan: planOf(edition(caller.env), org.subscription),
    retention: await retentionOf(caller, org.externalId),
  };
}

/**
 * The organisation for its settings form: owners and its token. As for the update itself (`ownerSettings`), owners
 * reach it even when the organisation refuses user tokens, so that the setting can be switched back.
 */
export async function showOrganizationSettings(caller: Caller, name: string): Promise<OrganizationView & { access: OrgAccess }> {
  const access = await requireOrgAccess(caller, { name }, { ownerSettings: true });
  authorize(caller, "organization.manage", { access });
  const org = access.organization;
  return { organization: org, owner: true, plan: planOf(edition(caller.env), org.subscription), access };
}

/** The organisation whose entitlements members may read, and the plan they follow (none in the self-hosted edition). */
export async function entitlementsOf(caller: Caller, name: string): Promise<{ organization: Organization; plan: FeatureSet | null; remoteExecution: boolean }> {
  // Every Terraform run asks for these first: the nearest instance answers; what it cannot find or refuses may be newer
  // on the primary, which decides (docs/consistency.md).
  const org = (
    await requireOrgAccess({ ...caller, db: caller.near }, { name }).catch((err: unknown) => {
      if (!(err instanceof ApiError) || (err.status !== 404 && err.status !== 403)) throw err;
      return requireOrgAccess(caller, { name });
    })
  ).organization;
  // Remote runs execute once the operator's agent serves the default pool (AGENT_TOKEN, docs/runs.md).
  return { organization: org, plan: planOf(edition(caller.env), org.subscription), remoteExecution: !!caller.env.AGENT_TOKEN };
}

/**
 * Updates an organisation (owners and its token). `poolId`: the default agent pool as sent (null to
 * clear, undefined when not sent), from the relationship or the attribute.
 *
 * A new `name` renames it (owners only): one write of the organisations row. Everything else, the workspaces'
 * records and index rows included, names the organisation by its immutable id and shows the name it has when read,
 * so no workspace is visited; the old name answers 404 from then on and may be taken by another organisation.
 */
export async function changeOrganization(
  caller: Caller,
  name: string,
  a: OrganizationAttributes,
  poolId: string | null | undefined,
): Promise<OrganizationView> {
  const access = await requireOrgAccess(caller, { name }, { ownerSettings: true });
  authorize(caller, "organization.manage", { access });
  const org = access.organization;
  // Only a change of the stored name is a rename (a name equal to it, in any case, too: the name is shown as stored).
  const rename = a.name !== undefined && a.name !== org.name ? a.name : undefined;
  if (rename !== undefined) {
    authorize(caller, "organization.rename", { access });
    checkName(rename);
  }
  // Turning enforcement of the token TTL policies off (or on) is the policies' owners' call, as the policies are.
  if (a["max-ttl-enabled"] !== undefined && a["max-ttl-enabled"] !== (org.attrs["max-ttl-enabled"] ?? false)) {
    authorize(caller, "organization.token-policy", { access });
  }
  if (a.email !== undefined) checkEmail(a.email);
  refuseUnavailable(a);
  refuseUnprotectedPolicy(caller, a, org.attrs["collaborator-auth-policy"]);
  refuseSsoRequiredWithoutSso(caller, a);
  if (poolId && !(await poolExists(caller.db, org.externalId, poolId))) {
    throw ApiError.of("invalid_attribute", { detail: "Agent pool not found", pointer: "/data/relationships/default-agent-pool/data/id" });
  }
  const mode = a["default-execution-mode"] ?? org.defaultExecutionMode;
  const nextPool = poolId !== undefined ? poolId : org.defaultAgentPoolId;
  if (mode !== "agent" && poolId) {
    throw ApiError.of("invalid_attribute", {
      detail: "Default agent pool must not be specified unless using 'agent' execution mode",
      pointer: "/data/relationships/default-agent-pool",
    });
  }
  if (mode === "agent" && !nextPool) {
    throw ApiError.of("invalid_attribute", {
      detail: "Default agent pool must be specified when using 'agent' execution mode",
      pointer: "/data/relationships/default-agent-pool",
    });
  }
  const [result, retention] = await Promise.all([
    updateOrganization(
      caller.db,
      { id: org.externalId, name: org.name },
      {
        name: rename,
        email: a.email ?? org.email,
        attrs: storedAttrs(a, org.attrs),
        defaultExecutionMode: mode,
        defaultAgentPoolId: mode === "agent" ? nextPool : null,
        allowForceDeleteWorkspaces: a["allow-force-delete-workspaces"] ?? org.allowForceDeleteWorkspaces,
      },
    ),
    retentionOf(caller, org.externalId),
  ]);
  if (result.updated) {
    const updated = result.updated;
    return { organization: updated, owner: true, plan: planOf(edition(caller.env), updated.subscription), retention };
  }
  if (result.reason === "name_taken") throw ApiError.of("name_taken", { pointer: "/data/attributes/name" });
  throw ApiError.of("not_found"); // renamed or deleted since it was read under the name this request used
}

/** Deletes an organisation and everything in it (owners only, the site admin included). */
export async function removeOrganization(caller: Caller, name: string): Promise<void> {
  const access = await requireOrgAccess(caller, { name }, { ownerSettings: true });
  authorize(caller, "organization.owner", { access });
  // Renamed (or deleted) since it was read under this name: as if the delete came after that, 404.
  if (!(await deleteOrganization(caller.db, { id: access.organization.externalId, name: access.organization.name }))) throw ApiError.of("not_found");
}
