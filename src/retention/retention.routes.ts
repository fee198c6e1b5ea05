/**
 * Data retention policies (Terraform Enterprise API docs: Data Retention Policies; self-hosted edition only — the hosted edition answers 404).
 * A workspace's own policy lives in its Durable Object; the organisation default in D1.
 */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { callerOf } from "../auth/caller.http";
import type { AppEnv } from "../env";
import { jsonapi, noContent } from "../jsonapi/document";
import { orgParam, resourceDocument } from "../jsonapi/schemas";
import { jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import { acknowledge } from "../workspaces/workspaces.http";
import { workspaceIdParam } from "../workspaces/workspaces.schemas";
import {
  organizationPolicy,
  removeOrganizationPolicy,
  removeWorkspacePolicy,
  setOrganizationPolicy,
  setWorkspacePolicy,
  workspacePolicy,
  type PolicyRequest,
} from "./retention.service";
import { defineRoutes } from "../jsonapi/define-route";
import { retentionPolicyResource } from "./retention.schemas";
import { serializePolicy } from "./retention.serialize";

const defineRoute = defineRoutes({ tags: ["Data retention policies"] });
export const retention = router();

const days = z.number().int().min(1).max(36_500);
/** go-tfe sends kebab-case; the docs' samples use camelCase: both are accepted. */
const policyBody = z
  .object({
    data: z.object({
      type: z.enum(["data-retention-policy-delete-olders", "data-retention-policy-dont-deletes", "data-retention-policies"]),
      attributes: z.object({ "delete-older-than-n-days": days.optional(), deleteOlderThanNDays: days.optional() }).optional(),
    }),
  })
  .openapi("DataRetentionPolicy");

// ---- workspace ----

const wsPath = "/workspaces/{workspace_id}/relationships/data-retention-policy";

retention.openapi(
  defineRoute({
    method: "get",
    path: wsPath,
    action: "workspace.read",
    summary: "Show the workspace's policy, else the organisation default",
    request: { params: workspaceIdParam },
    responses: ok("The policy", resourceDocument(retentionPolicyResource)),
  }),
  async (c) => {
    const { policy, target } = await workspacePolicy(callerOf(c), c.req.valid("param").workspace_id);
    return jsonapi(c, { data: serializePolicy(policy, target) });
  },
);

const setPolicyRequest = { params: workspaceIdParam, body: jsonBody(policyBody) };
const setPolicyResponses = {
  ...ok("The replaced policy", resourceDocument(retentionPolicyResource)),
  ...ok("The created policy", resourceDocument(retentionPolicyResource), 201),
};

/** POST and the deprecated PATCH: the deprecated request type is answered in kind. */
async function setPolicy(c: Context<AppEnv>, workspaceId: string, request: PolicyRequest): Promise<Response> {
  const set = await setWorkspacePolicy(callerOf(c), workspaceId, request);
  acknowledge(c, set);
  const asType = request.type === "data-retention-policies" ? "data-retention-policies" : undefined;
  return jsonapi(c, { data: serializePolicy(set.policy, { id: workspaceId, type: "workspaces" }, asType) }, set.replaced ? 200 : 201);
}

retention.openapi(
  defineRoute({
    method: "post",
    path: wsPath,
    action: "workspace.update",
    summary: "Create (201) or replace (200) the workspace's policy",
    request: setPolicyRequest,
    responses: setPolicyResponses,
  }),
  async (c) => setPolicy(c, c.req.valid("param").workspace_id, c.req.valid("json").data),
);

retention.openapi(
  defineRoute({
    method: "patch",
    path: wsPath,
    action: "workspace.update",
    summary: "Set the workspace's policy (deprecated form)",
    request: setPolicyRequest,
    responses: setPolicyResponses,
  }),
  async (c) => setPolicy(c, c.req.valid("param").workspace_id, c.req.valid("json").data),
);

retention.openapi(
  defineRoute({
    method: "delete",
    path: wsPath,
    action: "workspace.update",
    summary: "Remove the workspace's own policy (it inherits again)",
    request: { params: workspaceIdParam },
    responses: noContentResponse,
  }),
  async (c) => {
    acknowledge(c, await removeWorkspacePolicy(callerOf(c), c.req.valid("param").workspace_id));
    return noContent(c);
  },
);

// ---- organisation default ----

const orgPath = "/organizations/{organization_name}/relationships/data-retention-policy";

retention.openapi(
  defineRoute({
    method: "get",
    path: orgPath,
    action: "organization.read",
    summary: "Show the organisation's default policy",
    request: { params: orgParam },
    responses: ok("The policy", resourceDocument(retentionPolicyResource)),
  }),
  async (c) => {
    const { policy, target } = await organizationPolicy(callerOf(c), c.req.valid("param").organization_name);
    return jsonapi(c, { data: serializePolicy(policy, target) });
  },
);

retention.openapi(
  defineRoute({
    method: "post",
    path: orgPath,
    action: "organization.manage",
    summary: "Create (201) or replace (200) the organisation's default policy",
    request: { params: orgParam, body: jsonBody(policyBody) },
    responses: {
      ...ok("The replaced policy", resourceDocument(retentionPolicyResource)),
      ...ok("The created policy", resourceDocument(retentionPolicyResource), 201),
    },
  }),
  async (c) => {
    const set = await setOrganizationPolicy(callerOf(c), c.req.valid("param").organization_name, c.req.valid("json").data);
    return jsonapi(c, { data: serializePolicy(set.policy, set.target) }, set.replaced ? 200 : 201);
  },
);

retention.openapi(
  defineRoute({
    method: "delete",
    path: orgPath,
    action: "organization.manage",
    summary: "Remove the organisation's default policy",
    request: { params: orgParam },
    responses: noContentResponse,
  }),
  async (c) => {
    await removeOrganizationPolicy(callerOf(c), c.req.valid("param").organization_name);
    return noContent(c);
  },
);
