/**
 * Data retention policies (Terraform Enterprise API docs: Data Retention Policies; self-hosted edition only — the hosted edition answers 404).
 * Workspace admins set a workspace's own policy (in its Durable Object); owners and the organisation
 * token set the organisation default (in D1), which members may read.
 */
import { requireOrgAccess } from "../auth/access";
import { authorize } from "../auth/requirements";
import type { Caller } from "../caller";
import { edition } from "../env";
import { ApiError } from "../errors";
import { newId, nowIso } from "../ids";
import type { DataRetentionPolicy } from "../workspaces/workspace.types";
import { mutateAs, readById } from "../workspaces/workspaces.service";
import { deleteOrgPolicy, findOrgPolicy, upsertOrgPolicy } from "./retention.d1";
import { workspaceObject } from "../workspaces/workspace.stub";

/** A policy as sent: go-tfe sends kebab-case, the docs' samples camelCase; both are accepted. */
export interface PolicyRequest {
  type: "data-retention-policy-delete-olders" | "data-retention-policy-dont-deletes" | "data-retention-policies";
  attributes?: { "delete-older-than-n-days"?: number; deleteOlderThanNDays?: number };
}

/** A policy and what it applies to (its `target` relationship). */
export interface TargetedPolicy {
  policy: DataRetentionPolicy;
  target: { id: string; type: "workspaces" | "organizations" };
}

function requireSelfHosted(caller: Caller): void {
  if (edition(caller.env) !== "self-hosted") throw ApiError.of("not_found");
}

/** The stored policy a request asks for; the deprecated type is a delete-older policy. */
function policyOf(d: PolicyRequest, current: DataRetentionPolicy | null): DataRetentionPolicy {
  const type = d.type === "data-retention-policy-dont-deletes" ? "data-retention-policy-dont-deletes" : "data-retention-policy-delete-olders";
  let n: number | null = null;
  if (type === "data-retention-policy-delete-olders") {
    const a = d.attributes ?? {};
    if (a["delete-older-than-n-days"] !== undefined && a.deleteOlderThanNDays !== undefined && a["delete-older-than-n-days"] !== a.deleteOlderThanNDays) {
      throw ApiError.of("invalid_attribute", {
        detail: "delete-older-than-n-days and deleteOlderThanNDays differ",
        pointer: "/data/attributes/deleteOlderThanNDays",
      });
    }
    n = a["delete-older-than-n-days"] ?? a.deleteOlderThanNDays ?? null;
    if (n === null)
      throw ApiError.of("invalid_attribute", { detail: "delete-older-than-n-days is required", pointer: "/data/attributes/delete-older-than-n-days" });
  }
  // Updating a policy of the same type keeps its id; a different type replaces it.
  const id = current && current.type === type ? current.id : newId("drp");
  return { id, type, deleteOlderThanNDays: n };
}

/** The workspace's own policy, else its organisation's default (404 when neither exists). */
export async function workspacePolicy(caller: Caller, workspaceId: string): Promise<TargetedPolicy> {
  requireSelfHosted(caller);
  const { record, scope } = await readById(caller, workspaceId);
  if (record.dataRetentionPolicy) return { policy: record.dataRetentionPolicy, target: { id: record.id, type: "workspaces" } };
  const org = await findOrgPolicy(caller.db, record.organizationId);
  if (!org) throw ApiError.of("not_found");
  return { policy: org, target: { id: scope.access.organization.name, type: "organizations" } };
}

/** Sets the workspace's own policy; `replaced` tells an update (200) from a creation (201). */
export async function setWorkspacePolicy(
  caller: Caller,
  workspaceId: string,
  request: PolicyRequest,
): Promise<{ policy: DataRetentionPolicy; replaced: boolean; bookmark?: string | null }> {
  requireSelfHosted(caller);
  let replaced = false;
  const done = await mutateAs(caller, workspaceId, "workspace.update", (r, guard) => {
    replaced = !!r.record.dataRetentionPolicy;
    return workspaceObject(caller.env, workspaceId).setRetention({ policy: policyOf(request, r.record.dataRetentionPolicy), guard });
  });
  return { policy: done.value.dataRetentionPolicy!, replaced, bookmark: done.bookmark };
}

/** Removes the workspace's own policy (it inherits again). */
export async function removeWorkspacePolicy(caller: Caller, workspaceId: string): Promise<{ bookmark?: string | null }> {
  requireSelfHosted(caller);
  const done = await mutateAs(caller, workspaceId, "workspace.update", (_r, guard) =>
    workspaceObject(caller.env, workspaceId).setRetention({ policy: null, guard }),
  );
  return { bookmark: done.bookmark };
}

/** The organisation (its id and its name as stored); managing its default is for owners and the organisation token. */
async function organizationFor(caller: Caller, organization: string, manage: boolean): Promise<{ id: string; name: string }> {
  requireSelfHosted(caller);
  const access = await requireOrgAccess(caller, { name: organization });
  authorize(caller, manage ? "organization.manage" : "organization.read", { access });
  return { id: access.organization.externalId, name: access.organization.name };
}

export async function organizationPolicy(caller: Caller, organization: string): Promise<TargetedPolicy> {
  const org = await organizationFor(caller, organization, false);
  const policy = await findOrgPolicy(caller.db, org.id);
  if (!policy) throw ApiError.of("not_found");
  return { policy, target: { id: org.name, type: "organizations" } };
}

/** Sets the organisation's default; `replaced` tells an update (200) from a creation (201). */
export async function setOrganizationPolicy(caller: Caller, organization: string, request: PolicyRequest): Promise<TargetedPolicy & { replaced: boolean }> {
  const org = await organizationFor(caller, organization, true);
  const current = await findOrgPolicy(caller.db, org.id);
  const policy = policyOf(request, current);
  await upsertOrgPolicy(caller.db, org.id, policy, nowIso());
  return { policy, target: { id: org.name, type: "organizations" }, replaced: current !== null };
}

export async function removeOrganizationPolicy(caller: Caller, organization: string): Promise<void> {
  const org = await organizationFor(caller, organization, true);
  if (!(await deleteOrgPolicy(caller.db, org.id))) throw ApiError.of("not_found");
}
