/** State versions (tfe-api-notes §2.9): created under the lock, bodies inline or through signed upload URLs. */
import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { lockHolderOf } from "../auth/principal";
import { primary } from "../db";
import type { AppEnv } from "../env";
import { ApiError, unwrap } from "../errors";
import { newId, nowIso } from "../ids";
import { jsonapi, paginated, readPage } from "../jsonapi/document";
import { errorResponses, jsonBody, ok, router } from "../jsonapi/validation";
import { workspaceIdParam } from "../workspaces/workspaces.schemas";
import { idByName, readById, requireCap, faultsOf } from "../workspaces/workspaces.service";
import { stateStub } from "./state-versions.stub";
import { canUpload, serializeOutputs, serializeStateVersion } from "./state-versions.serialize";

const tags = ["State versions"];
export const stateVersions = router();

const b64 = z.string().max(1_400_000);
const createBody = z
  .object({
    data: z.object({
      type: z.literal("state-versions"),
      attributes: z.object({
        serial: z.number().int().min(0),
        md5: z.string().regex(/^[0-9a-fA-F]{32}$/),
        lineage: z.string().max(255).optional(),
        state: b64.optional(),
        "json-state": b64.optional(),
        "json-state-outputs": b64.optional(),
        intermediate: z.boolean().optional(),
        force: z.boolean().optional(),
      }),
      relationships: z.object({ run: z.object({ data: z.object({ type: z.literal("runs"), id: z.string().max(64) }).nullable() }).optional() }).optional(),
    }),
  })
  .openapi("StateVersionCreate");

function decodeBase64(value: string | undefined, pointer: string): Uint8Array | null {
  if (value === undefined) return null;
  try {
    const bin = atob(value);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  } catch {
    throw ApiError.of("invalid_attribute", { detail: "must be base64", pointer });
  }
}

const origin = (c: Context<AppEnv>) => new URL(c.req.url).origin;

stateVersions.openapi(
  createRoute({ method: "post", path: "/workspaces/{workspace_id}/state-versions", tags, summary: "Create a state version (the caller must hold the lock)", request: { params: workspaceIdParam, body: jsonBody(createBody) }, responses: { ...ok("The state version", 201), 409: { description: "Not locked by the caller" }, ...errorResponses } }),
  async (c) => {
    const wsId = c.req.valid("param").workspace_id;
    const { scope, caps } = await readById(c, wsId);
    // Organisation tokens cannot upload state (real service rule).
    requireCap(canUpload(scope, caps));
    const a = c.req.valid("json").data.attributes;
    const state = decodeBase64(a.state, "/data/attributes/state");
    const jsonState = decodeBase64(a["json-state"], "/data/attributes/json-state");
    const id = newId("sv");
    const now = nowIso();
    const p = c.get("principal");
    await primary(c).prepare("INSERT INTO state_version_index (id, workspace_id, created_at) VALUES (?, ?, ?)").bind(id, wsId, now).run();
    const result = await stateStub(c.env, wsId).createStateVersion({
      id, holder: lockHolderOf(p), serial: a.serial, md5: a.md5, lineage: a.lineage ?? null, intermediate: a.intermediate === true,
      state, jsonState, now, createdBy: p.kind === "user" ? p.userId : p.serviceUserId, faults: faultsOf(c),
    });
    if (!result.ok) {
      await primary(c).prepare("DELETE FROM state_version_index WHERE id = ?").bind(id).run();
      unwrap(result);
    }
    const sv = unwrap(result).stateVersion;
    return jsonapi(c, { data: await serializeStateVersion(c.env, origin(c), wsId, sv, { canUpload: true }) }, 201);
  },
);

/**
 * Finds the workspace of a state version and checks the caller may read it: the state version itself
 * (with its download URLs) needs state `read` (can-read-state-versions); its outputs need only
 * `read-outputs` (can-read-state-outputs), sensitive values then being hidden.
 */
async function stateVersionOf(c: Context<AppEnv>, id: string, need: 1 | 2 = 2) {
  const row = await primary(c).prepare("SELECT workspace_id FROM state_version_index WHERE id = ?").bind(id).first<{ workspace_id: string }>();
  if (!row) throw ApiError.of("not_found");
  const { caps, scope } = await readById(c, row.workspace_id);
  requireCap(caps.stateVersions >= need);
  const res = unwrap(await stateStub(c.env, row.workspace_id).getStateVersion(id));
  return { workspaceId: row.workspace_id, sv: res.stateVersion, canReadState: caps.stateVersions >= 2, uploads: canUpload(scope, caps) };
}

const svParam = z.object({ state_version_id: z.string().regex(/^sv-[A-Za-z0-9]{1,64}$/) });
const includeQuery = z.object({ include: z.string().max(200).optional() }).passthrough();

/** `include=outputs` on state-version reads (go-tfe's ReadCurrentWithOptions). */
function withOutputs(c: Context<AppEnv>, sv: Parameters<typeof serializeOutputs>[0], canReadState: boolean) {
  const values = (c.req.query("include") ?? "").split(",").map((v) => v.trim()).filter(Boolean);
  for (const v of values) if (v !== "outputs" && v !== "run" && v !== "created_by") throw ApiError.of("invalid_include", { detail: `Invalid include parameter: ${v}`, parameter: "include" });
  return values.includes("outputs") ? { included: serializeOutputs(sv, "state-version-outputs", canReadState) } : {};
}

stateVersions.openapi(
  createRoute({ method: "get", path: "/state-versions/{state_version_id}", tags, summary: "Show a state version", request: { params: svParam, query: includeQuery }, responses: { ...ok("The state version"), ...errorResponses } }),
  async (c) => {
    const { workspaceId, sv, canReadState, uploads } = await stateVersionOf(c, c.req.valid("param").state_version_id);
    return jsonapi(c, { data: await serializeStateVersion(c.env, origin(c), workspaceId, sv, { canUpload: uploads }), ...withOutputs(c, sv, canReadState) });
  },
);

stateVersions.openapi(
  createRoute({ method: "get", path: "/state-versions/{state_version_id}/outputs", tags, summary: "A state version's outputs", request: { params: svParam }, responses: { ...ok("The outputs"), ...errorResponses } }),
  async (c) => {
    const { sv, canReadState } = await stateVersionOf(c, c.req.valid("param").state_version_id, 1);
    const page = readPage(c);
    const all = serializeOutputs(sv, "state-version-outputs", canReadState);
    return jsonapi(c, paginated(c, all.slice((page.number - 1) * page.size, page.number * page.size), page, all.length));
  },
);

async function current(c: Context<AppEnv>, wsId: string, need: 1 | 2 = 2) {
  const { record, caps, scope } = await readById(c, wsId);
  requireCap(caps.stateVersions >= need);
  if (!record.currentStateVersionId) throw ApiError.of("not_found");
  const res = unwrap(await stateStub(c.env, wsId).getStateVersion(record.currentStateVersionId));
  return { sv: res.stateVersion, canReadState: caps.stateVersions >= 2, uploads: canUpload(scope, caps) };
}

stateVersions.openapi(
  createRoute({ method: "get", path: "/workspaces/{workspace_id}/current-state-version", tags, summary: "The workspace's current state version (404 when none)", request: { params: workspaceIdParam, query: includeQuery }, responses: { ...ok("The state version"), ...errorResponses } }),
  async (c) => {
    const wsId = c.req.valid("param").workspace_id;
    const { sv, canReadState, uploads } = await current(c, wsId);
    return jsonapi(c, { data: await serializeStateVersion(c.env, origin(c), wsId, sv, { canUpload: uploads }), ...withOutputs(c, sv, canReadState) });
  },
);

stateVersions.openapi(
  createRoute({ method: "get", path: "/workspaces/{workspace_id}/current-state-version-outputs", tags, summary: "Outputs of the current state version", request: { params: workspaceIdParam }, responses: { ...ok("The outputs"), ...errorResponses } }),
  async (c) => {
    const { sv } = await current(c, c.req.valid("param").workspace_id, 1);
    const page = readPage(c);
    // As the real service does, this endpoint never shows sensitive values (go-tfe's tests rely on it).
    const all = serializeOutputs(sv, "state-version-outputs", false);
    return jsonapi(c, paginated(c, all.slice((page.number - 1) * page.size, page.number * page.size), page, all.length));
  },
);

stateVersions.openapi(
  createRoute({
    method: "get",
    path: "/state-versions",
    tags,
    summary: "List a workspace's state versions, newest first",
    request: {
      query: z
        .object({
          "filter[workspace][name]": z.string().min(1).max(255),
          "filter[organization][name]": z.string().min(1).max(255),
          "filter[status]": z.enum(["pending", "finalized", "discarded"]).optional(),
          "page[number]": z.string().max(20).optional(),
          "page[size]": z.string().max(20).optional(),
        })
        .passthrough(),
    },
    responses: { ...ok("A page of state versions"), ...errorResponses },
  }),
  async (c) => {
    const q = c.req.valid("query");
    const wsId = await idByName(c, q["filter[organization][name]"], q["filter[workspace][name]"]);
    const { caps, scope } = await readById(c, wsId);
    requireCap(caps.stateVersions >= 2);
    const page = readPage(c);
    const res = unwrap(await stateStub(c.env, wsId).listStateVersions({ offset: (page.number - 1) * page.size, limit: page.size, status: q["filter[status]"] }));
    const data = await Promise.all(res.items.map((sv) => serializeStateVersion(c.env, origin(c), wsId, sv, { canUpload: canUpload(scope, caps) })));
    return jsonapi(c, paginated(c, data, page, res.total));
  },
);

const outputParam = z.object({ output_id: z.string().regex(/^wsout-[A-Za-z0-9]{3,80}$/) });

stateVersions.openapi(
  createRoute({ method: "get", path: "/state-version-outputs/{output_id}", tags, summary: "Show one output", request: { params: outputParam }, responses: { ...ok("The output"), ...errorResponses } }),
  async (c) => {
    // Output ids are the state version's id followed by the output's index (see outputId).
    const raw = c.req.valid("param").output_id.slice("wsout-".length);
    const { sv, canReadState } = await stateVersionOf(c, `sv-${raw.slice(0, -2)}`, 1);
    const out = serializeOutputs(sv, "state-version-outputs", canReadState).find((o) => o.id === c.req.valid("param").output_id);
    if (!out) throw ApiError.of("not_found");
    return jsonapi(c, { data: out });
  },
);
