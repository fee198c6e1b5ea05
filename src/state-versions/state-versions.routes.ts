/** State versions (HCP Terraform API docs: State Versions): created under the lock, bodies inline or through signed upload URLs. */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { callerOf } from "../auth/caller.http";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";
import { jsonapi, noContent, paginated, pageSlice } from "../jsonapi/document";
import { includeQuery, listDocument, pageOf, pageQuery, resourceDocument } from "../jsonapi/schemas";
import { jsonBody, noContentResponse, ok, router, includesOf } from "../jsonapi/validation";
import { workspaceIdParam } from "../workspaces/workspaces.schemas";
import { serializeOutputs, serializeResources, serializeStateVersion } from "./state-versions.serialize";
import {
  createStateVersion,
  currentStateVersion,
  listStateVersions,
  manageStateVersionBackingData,
  readStateVersion,
  resourcesState,
  rollbackStateVersion,
} from "./state-versions.service";
import { defineRoutes } from "../jsonapi/define-route";
import { stateResource, stateVersionOutputResource, stateVersionResource } from "./state-versions.schemas";

const defineRoute = defineRoutes({ tags: ["State versions"] });
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

const origin = (c: Context<AppEnv>) => new URL(c.req.url).origin;

stateVersions.openapi(
  defineRoute({
    method: "post",
    path: "/workspaces/{workspace_id}/state-versions",
    action: "state.create",
    summary: "Create a state version (the caller must hold the lock)",
    request: { params: workspaceIdParam, body: jsonBody(createBody) },
    responses: { ...ok("The state version", resourceDocument(stateVersionResource), 201), 409: { description: "Not locked by the caller" } },
  }),
  async (c) => {
    const wsId = c.req.valid("param").workspace_id;
    const sv = await createStateVersion(callerOf(c), wsId, c.req.valid("json").data.attributes);
    return jsonapi(c, { data: await serializeStateVersion(c.env, origin(c), wsId, sv, { canUpload: true }) }, 201);
  },
);

const rollbackBody = z
  .object({
    data: z.object({
      type: z.literal("state-versions"),
      relationships: z.object({
        "rollback-state-version": z.object({ data: z.object({ type: z.literal("state-versions"), id: z.string().min(1).max(80) }) }),
      }),
    }),
  })
  .openapi("StateVersionRollback");

stateVersions.openapi(
  defineRoute({
    method: "patch",
    path: "/workspaces/{workspace_id}/state-versions",
    action: "state.create",
    summary: "Roll back to a previous state version: a new current version copying it (the caller must hold the lock)",
    request: { params: workspaceIdParam, body: jsonBody(rollbackBody) },
    responses: {
      ...ok("The new state version", resourceDocument(stateVersionResource), 201),
      409: { description: "Not locked by the caller" },
    },
  }),
  async (c) => {
    const wsId = c.req.valid("param").workspace_id;
    const sourceId = c.req.valid("json").data.relationships["rollback-state-version"].data.id;
    const sv = await rollbackStateVersion(callerOf(c), wsId, sourceId);
    return jsonapi(c, { data: await serializeStateVersion(c.env, origin(c), wsId, sv, { canUpload: true }) }, 201);
  },
);

const svParam = z.object({ state_version_id: z.string().regex(/^sv-[A-Za-z0-9]{1,64}$/) });

/** `include=outputs` on state-version reads (go-tfe's ReadCurrentWithOptions). */
function withOutputs(include: string | undefined, sv: Parameters<typeof serializeOutputs>[0], canReadState: boolean) {
  const values = includesOf(include, ["outputs", "run", "created_by"]);
  return values.includes("outputs") ? { included: serializeOutputs(sv, "state-version-outputs", canReadState) } : {};
}

stateVersions.openapi(
  defineRoute({
    method: "get",
    path: "/state-versions/{state_version_id}",
    action: "state.read",
    summary: "Show a state version",
    request: { params: svParam, query: includeQuery },
    responses: ok("The state version", resourceDocument(stateVersionResource)),
  }),
  async (c) => {
    const { workspaceId, sv, canReadState, uploads } = await readStateVersion(callerOf(c), c.req.valid("param").state_version_id);
    return jsonapi(c, {
      data: await serializeStateVersion(c.env, origin(c), workspaceId, sv, { canUpload: uploads }),
      ...withOutputs(c.req.valid("query").include, sv, canReadState),
    });
  },
);

stateVersions.openapi(
  defineRoute({
    method: "get",
    path: "/state-versions/{state_version_id}/outputs",
    action: "state.read-outputs",
    summary: "A state version's outputs",
    request: { params: svParam, query: pageQuery },
    responses: ok("The outputs", listDocument(stateVersionOutputResource)),
  }),
  async (c) => {
    const { sv, canReadState } = await readStateVersion(callerOf(c), c.req.valid("param").state_version_id, 1);
    const page = pageOf(c.req.valid("query"));
    const all = serializeOutputs(sv, "state-version-outputs", canReadState);
    return jsonapi(c, paginated(c, pageSlice(all, page), page, all.length));
  },
);

stateVersions.openapi(
  defineRoute({
    method: "get",
    path: "/workspaces/{workspace_id}/current-state-version",
    action: "state.read",
    summary: "The workspace's current state version (404 when none)",
    request: { params: workspaceIdParam, query: includeQuery },
    responses: ok("The state version", resourceDocument(stateVersionResource)),
  }),
  async (c) => {
    const wsId = c.req.valid("param").workspace_id;
    const { sv, canReadState, uploads } = await currentStateVersion(callerOf(c), wsId);
    return jsonapi(c, {
      data: await serializeStateVersion(c.env, origin(c), wsId, sv, { canUpload: uploads }),
      ...withOutputs(c.req.valid("query").include, sv, canReadState),
    });
  },
);

stateVersions.openapi(
  defineRoute({
    method: "get",
    path: "/workspaces/{workspace_id}/current-state-version-outputs",
    action: "state.read-outputs",
    summary: "Outputs of the current state version",
    request: { params: workspaceIdParam, query: pageQuery },
    responses: ok("The outputs", listDocument(stateVersionOutputResource)),
  }),
  async (c) => {
    const { sv } = await currentStateVersion(callerOf(c), c.req.valid("param").workspace_id, 1);
    const page = pageOf(c.req.valid("query"));
    // As the real service does, this endpoint never shows sensitive values (go-tfe's tests rely on it).
    const all = serializeOutputs(sv, "state-version-outputs", false);
    return jsonapi(c, paginated(c, pageSlice(all, page), page, all.length));
  },
);

stateVersions.openapi(
  defineRoute({
    method: "get",
    path: "/workspaces/{workspace_id}/resources",
    action: "workspace.read",
    summary: "The managed resources of the workspace's current state",
    request: { params: workspaceIdParam, query: pageQuery },
    responses: ok("The resources", listDocument(stateResource)),
  }),
  async (c) => {
    const { workspace_id } = c.req.valid("param");
    const all = serializeResources(workspace_id, await resourcesState(callerOf(c), workspace_id));
    const page = pageOf(c.req.valid("query"));
    return jsonapi(c, paginated(c, pageSlice(all, page), page, all.length));
  },
);

stateVersions.openapi(
  defineRoute({
    method: "get",
    path: "/state-versions",
    action: "state.read",
    summary: "List a workspace's state versions, newest first",
    request: {
      query: pageQuery
        .extend({
          "filter[workspace][name]": z.string().min(1).max(255),
          "filter[organization][name]": z.string().min(1).max(255),
          "filter[status]": z.enum(["pending", "finalized", "discarded"]).optional(),
        })
        .passthrough(),
    },
    responses: ok("A page of state versions", listDocument(stateVersionResource)),
  }),
  async (c) => {
    const q = c.req.valid("query");
    const page = pageOf(q);
    const workspace = { organization: q["filter[organization][name]"], name: q["filter[workspace][name]"] };
    const { workspaceId, items, total, uploads } = await listStateVersions(callerOf(c), workspace, q["filter[status]"], page);
    const data = await Promise.all(items.map((sv) => serializeStateVersion(c.env, origin(c), workspaceId, sv, { canUpload: uploads })));
    return jsonapi(c, paginated(c, data, page, total));
  },
);

const outputParam = z.object({ output_id: z.string().regex(/^wsout-[A-Za-z0-9]{3,80}$/) });

stateVersions.openapi(
  defineRoute({
    method: "get",
    path: "/state-version-outputs/{output_id}",
    action: "state.read-outputs",
    summary: "Show one output",
    request: { params: outputParam },
    responses: ok("The output", resourceDocument(stateVersionOutputResource)),
  }),
  async (c) => {
    // Output ids are the state version's id followed by the output's index (see outputId).
    const raw = c.req.valid("param").output_id.slice("wsout-".length);
    const { sv, canReadState } = await readStateVersion(callerOf(c), `sv-${raw.slice(0, -2)}`, 1);
    const out = serializeOutputs(sv, "state-version-outputs", canReadState).find((o) => o.id === c.req.valid("param").output_id);
    if (!out) throw ApiError.of("not_found");
    return jsonapi(c, { data: out });
  },
);

// Terraform Enterprise's backing-data actions (go-tfe StateVersions.SoftDeleteBackingData and friends).
for (const action of ["soft_delete_backing_data", "restore_backing_data", "permanently_delete_backing_data"] as const) {
  stateVersions.openapi(
    defineRoute({
      method: "post",
      path: `/state-versions/{state_version_id}/actions/${action}`,
      action: "workspace.update",
      summary: `${action.replace(/_/g, " ")} (self-hosted edition; not the current state version)`,
      request: { params: svParam },
      responses: noContentResponse,
    }),
    async (c) => {
      await manageStateVersionBackingData(callerOf(c), c.req.valid("param").state_version_id, action);
      return noContent(c);
    },
  );
}
