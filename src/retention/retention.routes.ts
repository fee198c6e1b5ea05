/**
 * Data retention policies (spec §4.14; self-hosted edition only — the hosted edition answers 404).
 * A workspace's own policy lives in its Durable Object; the organisation default in D1.
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { requireOrgAccess } from "../auth/access";
import { primary } from "../db";
import { edition, type AppEnv } from "../env";
import { ApiError, unwrap } from "../errors";
import { newId, nowIso } from "../ids";
import { jsonapi, noContent, type Resource } from "../jsonapi/document";
import { errorResponses, jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import type { DataRetentionPolicy } from "../workspaces/workspace.types";
import { workspaceIdParam } from "../workspaces/workspaces.schemas";
import { acknowledge, faultsOf, readById, requireCap, workspaceStub } from "../workspaces/workspaces.service";

const tags = ["Data retention policies"];
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
type PolicyBody = z.infer<typeof policyBody>;

function requireSelfHosted(c: Context<AppEnv>): void {
  if (edition(c.env) !== "self-hosted") throw ApiError.of("not_found");
}

/** The stored policy a request asks for; the deprecated type is a delete-older policy. */
function policyOf(body: PolicyBody, current: DataRetentionPolicy | null): DataRetentionPolicy {
  const d = body.data;
  const type = d.type === "data-retention-policy-dont-deletes" ? "data-retention-policy-dont-deletes" : "data-retention-policy-delete-olders";
  let n: number | null = null;
  if (type === "data-retention-policy-delete-olders") {
    const a = d.attributes ?? {};
    if (a["delete-older-than-n-days"] !== undefined && a.deleteOlderThanNDays !== undefined && a["delete-older-than-n-days"] !== a.deleteOlderThanNDays) {
      throw ApiError.of("invalid_attribute", { detail: "delete-older-than-n-days and deleteOlderThanNDays differ", pointer: "/data/attributes/deleteOlderThanNDays" });
    }
    n = a["delete-older-than-n-days"] ?? a.deleteOlderThanNDays ?? null;
    if (n === null) throw ApiError.of("invalid_attribute", { detail: "delete-older-than-n-days is required", pointer: "/data/attributes/delete-older-than-n-days" });
  }
  // Updating a policy of the same type keeps its id; a different type replaces it.
  const id = current && current.type === type ? current.id : newId("drp");
  return { id, type, deleteOlderThanNDays: n };
}

function serializePolicy(p: DataRetentionPolicy, target: { id: string; type: string }, asType?: string): Resource {
  return {
    id: p.id,
    type: asType ?? p.type,
    attributes: p.type === "data-retention-policy-delete-olders" ? { "delete-older-than-n-days": p.deleteOlderThanNDays } : {},
    relationships: { target: { data: target } },
  };
}

// ---- workspace ----

const wsPath = "/workspaces/{workspace_id}/relationships/data-retention-policy";

retention.openapi(
  createRoute({ method: "get", path: wsPath, tags, summary: "Show the workspace's policy, else the organisation default", request: { params: workspaceIdParam }, responses: { ...ok("The policy"), ...errorResponses } }),
  async (c) => {
    requireSelfHosted(c);
    const { record } = await readById(c, c.req.valid("param").workspace_id);
    if (record.dataRetentionPolicy) return jsonapi(c, { data: serializePolicy(record.dataRetentionPolicy, { id: record.id, type: "workspaces" }) });
    const org = await orgPolicy(c, record.organization);
    if (!org) throw ApiError.of("not_found");
    return jsonapi(c, { data: serializePolicy(org, { id: record.organization, type: "organizations" }) });
  },
);

async function setWorkspacePolicy(c: Context<AppEnv>, body: PolicyBody): Promise<Response> {
  requireSelfHosted(c);
  const id = c.req.param("workspace_id")!;
  const { record, caps } = await readById(c, id);
  requireCap(caps.admin);
  const policy = policyOf(body, record.dataRetentionPolicy);
  const result = unwrap(await workspaceStub(c.env, id).setRetention({ policy, faults: faultsOf(c) }));
  acknowledge(c, result);
  const asType = body.data.type === "data-retention-policies" ? "data-retention-policies" : undefined;
  return jsonapi(c, { data: serializePolicy(policy, { id, type: "workspaces" }, asType) }, record.dataRetentionPolicy ? 200 : 201);
}

retention.openapi(
  createRoute({ method: "post", path: wsPath, tags, summary: "Create (201) or replace (200) the workspace's policy", request: { params: workspaceIdParam, body: jsonBody(policyBody) }, responses: { ...ok("The policy", 201), ...errorResponses } }),
  async (c) => setWorkspacePolicy(c, c.req.valid("json")),
);

retention.openapi(
  createRoute({ method: "patch", path: wsPath, tags, summary: "Set the workspace's policy (deprecated form)", request: { params: workspaceIdParam, body: jsonBody(policyBody) }, responses: { ...ok("The policy"), ...errorResponses } }),
  async (c) => setWorkspacePolicy(c, c.req.valid("json")),
);

retention.openapi(
  createRoute({ method: "delete", path: wsPath, tags, summary: "Remove the workspace's own policy (it inherits again)", request: { params: workspaceIdParam }, responses: { ...noContentResponse, ...errorResponses } }),
  async (c) => {
    requireSelfHosted(c);
    const id = c.req.valid("param").workspace_id;
    const { caps } = await readById(c, id);
    requireCap(caps.admin);
    acknowledge(c, unwrap(await workspaceStub(c.env, id).setRetention({ policy: null, faults: faultsOf(c) })));
    return noContent(c);
  },
);

// ---- organisation default ----

interface OrgPolicyRow {
  id: string;
  type: DataRetentionPolicy["type"];
  delete_older_than_n_days: number | null;
}

async function orgPolicy(c: Context<AppEnv>, org: string): Promise<DataRetentionPolicy | null> {
  const row = await primary(c).prepare("SELECT id, type, delete_older_than_n_days FROM organization_retention_policies WHERE organization_name = ?").bind(org).first<OrgPolicyRow>();
  return row ? { id: row.id, type: row.type, deleteOlderThanNDays: row.delete_older_than_n_days } : null;
}

const orgParam = z.object({ organization_name: z.string().min(1).max(255) });
const orgPath = "/organizations/{organization_name}/relationships/data-retention-policy";

async function orgFor(c: Context<AppEnv>, manage: boolean) {
  requireSelfHosted(c);
  const access = await requireOrgAccess(primary(c), c.get("principal"), c.req.param("organization_name")!);
  if (manage && !access.isOwner && !access.isOrgToken) throw ApiError.of("not_found");
  return access.organization.name;
}

retention.openapi(
  createRoute({ method: "get", path: orgPath, tags, summary: "Show the organisation's default policy", request: { params: orgParam }, responses: { ...ok("The policy"), ...errorResponses } }),
  async (c) => {
    const org = await orgFor(c, false);
    const p = await orgPolicy(c, org);
    if (!p) throw ApiError.of("not_found");
    return jsonapi(c, { data: serializePolicy(p, { id: org, type: "organizations" }) });
  },
);

retention.openapi(
  createRoute({ method: "post", path: orgPath, tags, summary: "Create (201) or replace (200) the organisation's default policy", request: { params: orgParam, body: jsonBody(policyBody) }, responses: { ...ok("The policy", 201), ...errorResponses } }),
  async (c) => {
    const org = await orgFor(c, true);
    const current = await orgPolicy(c, org);
    const p = policyOf(c.req.valid("json"), current);
    await primary(c)
      .prepare(
        `INSERT INTO organization_retention_policies (organization_name, id, type, delete_older_than_n_days, created_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT(organization_name) DO UPDATE SET id = excluded.id, type = excluded.type, delete_older_than_n_days = excluded.delete_older_than_n_days`,
      )
      .bind(org, p.id, p.type, p.deleteOlderThanNDays, nowIso())
      .run();
    return jsonapi(c, { data: serializePolicy(p, { id: org, type: "organizations" }) }, current ? 200 : 201);
  },
);

retention.openapi(
  createRoute({ method: "delete", path: orgPath, tags, summary: "Remove the organisation's default policy", request: { params: orgParam }, responses: { ...noContentResponse, ...errorResponses } }),
  async (c) => {
    const org = await orgFor(c, true);
    const res = await primary(c).prepare("DELETE FROM organization_retention_policies WHERE organization_name = ?").bind(org).run();
    if (res.meta.changes === 0) throw ApiError.of("not_found");
    return noContent(c);
  },
);
