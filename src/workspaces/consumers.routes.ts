/** Remote-state consumers (spec §4.11) and SSH key assignment (spec §4.10). */
import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { canRead } from "../auth/permissions";
import { listSession, primary } from "../db";
import type { AppEnv } from "../env";
import { ApiError, unwrap } from "../errors";
import { nowIso } from "../ids";
import { LIMITS } from "../limits";
import { jsonapi, noContent, paginated, readPage } from "../jsonapi/document";
import { errorResponses, jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import type { ConsumerChange } from "./consumers.logic";
import { parseDoc } from "./workspaces.index";
import { workspaceIdParam } from "./workspaces.schemas";
import { acknowledge, faultsOf, loadScope, readById, requireCap, workspaceStub } from "./workspaces.service";

const tags = ["Remote state consumers"];
export const consumers = router();

/** go-tfe sends each entry as a whole workspace object: only `type` and `id` are used. */
const consumerEntries = z.array(z.object({ type: z.literal("workspaces"), id: z.string().max(64) }).passthrough()).max(LIMITS.consumersPerRequest);
const consumersBody = z.object({ data: consumerEntries.min(1) }).openapi("RemoteStateConsumers");
/** JSON:API: PATCH of a to-many relationship with `data: []` clears it. */
const consumersReplaceBody = z.object({ data: consumerEntries }).openapi("RemoteStateConsumersReplace");
const path = "/workspaces/{workspace_id}/relationships/remote-state-consumers";

consumers.openapi(
  createRoute({
    method: "get",
    path,
    tags,
    summary: "List the workspaces that may read this workspace's state",
    request: { params: workspaceIdParam, query: z.object({ "page[number]": z.string().max(20).optional(), "page[size]": z.string().max(20).optional() }).passthrough() },
    responses: { ...ok("A page of workspaces"), ...errorResponses },
  }),
  async (c) => {
    const { record, scope } = await readById(c, c.req.valid("param").workspace_id);
    const page = readPage(c);
    const s = record.settings;
    // Global sharing: every other workspace of the organisation; project sharing: of the same project;
    // otherwise the explicit list (deleted workspaces drop out here, at read time).
    const where = s["global-remote-state"]
      ? { sql: "w.organization_name = ? AND w.id <> ?", binds: [record.organization, record.id] }
      : s["project-remote-state"]
        ? { sql: "w.organization_name = ? AND w.project_id = ? AND w.id <> ?", binds: [record.organization, record.projectId, record.id] }
        : { sql: "w.organization_name = ? AND w.id IN (SELECT value FROM json_each(?))", binds: [record.organization, JSON.stringify(record.remoteStateConsumers)] };
    const db = listSession(c);
    if (canRead(scope.access.base)) {
      // Callers who read every workspace of the organisation: page and count in SQL.
      const [count, pageRows] = await db.batch([
        db.prepare(`SELECT count(*) AS n FROM workspaces w WHERE ${where.sql}`).bind(...where.binds),
        db.prepare(`SELECT w.doc FROM workspaces w WHERE ${where.sql} ORDER BY w.created_at, w.id LIMIT ? OFFSET ?`).bind(...where.binds, page.size, (page.number - 1) * page.size),
      ]);
      const records = ((pageRows?.results ?? []) as Array<{ doc: string }>).map(parseDoc);
      const pageScope = await loadScope(c, record.organization, records);
      if (!pageScope) throw ApiError.of("not_found");
      return jsonapi(c, paginated(c, records.map(pageScope.serialize), page, (count?.results?.[0] as { n: number } | undefined)?.n ?? 0));
    }
    const rows = await db.prepare(`SELECT w.doc FROM workspaces w WHERE ${where.sql} ORDER BY w.created_at, w.id`).bind(...where.binds).all<{ doc: string }>();
    const candidates = rows.results.map(parseDoc);
    const seen = await loadScope(c, record.organization, candidates);
    if (!seen) throw ApiError.of("not_found");
    const readable = candidates.filter((w) => canRead(seen.capsOf(w)));
    const slice = readable.slice((page.number - 1) * page.size, page.number * page.size);
    return jsonapi(c, paginated(c, slice.map(seen.serialize), page, readable.length));
  },
);

async function change(c: Context<AppEnv>, op: ConsumerChange["op"]): Promise<Response> {
  const id = c.req.param("workspace_id")!;
  const { record, scope, caps } = await readById(c, id);
  requireCap(caps.admin);
  // Replacing the whole list is for organisation-wide workspace managers only (spec §5.7).
  if (op === "replace" && !(scope.access.isOwner || scope.access.isOrgToken || scope.access.orgPermissions["manage-workspaces"])) throw ApiError.of("not_found");
  const ids = (c.req.valid as (t: "json") => z.infer<typeof consumersBody>)("json").data.map((d) => d.id);
  // Every listed workspace must exist in this organisation and be readable by the caller.
  const rows = await primary(c).prepare("SELECT doc FROM workspaces WHERE organization_name = ? AND id IN (SELECT value FROM json_each(?))").bind(record.organization, JSON.stringify(ids)).all<{ doc: string }>();
  const found = new Map(rows.results.map(parseDoc).map((w) => [w.id, w]));
  const listed = await loadScope(c, record.organization, [...found.values()]);
  for (const [i, wid] of ids.entries()) {
    const w = found.get(wid);
    if (!w || !listed || !canRead(listed.capsOf(w))) throw ApiError.of("not_found", { detail: `Workspace not found: ${wid}`, pointer: `/data/${i}/id` });
  }
  const result = unwrap(await workspaceStub(c.env, id).changeConsumers({ change: { op, ids }, now: nowIso(), faults: faultsOf(c) }));
  acknowledge(c, result);
  return noContent(c);
}

for (const [method, op, summary] of [
  ["post", "add", "Add remote state consumers"],
  ["patch", "replace", "Replace the remote state consumers (organisation-wide workspace managers)"],
  ["delete", "remove", "Remove remote state consumers"],
] as const) {
  consumers.openapi(
    createRoute({ method, path, tags, summary, request: { params: workspaceIdParam, body: jsonBody(op === "replace" ? consumersReplaceBody : consumersBody) }, responses: { ...noContentResponse, ...errorResponses } }),
    async (c) => change(c, op),
  );
}

// ---- SSH key ----

const sshKeyBody = z
  .object({ data: z.object({ type: z.literal("workspaces"), attributes: z.object({ id: z.string().max(64).nullable() }) }) })
  .openapi("WorkspaceSshKey");

consumers.openapi(
  createRoute({
    method: "patch",
    path: "/workspaces/{workspace_id}/relationships/ssh-key",
    tags: ["Workspaces"],
    summary: "Assign (id) or unassign (null) the workspace's SSH key",
    request: { params: workspaceIdParam, body: jsonBody(sshKeyBody) },
    responses: { ...ok("The workspace"), ...errorResponses },
  }),
  async (c) => {
    const id = c.req.valid("param").workspace_id;
    const { record, scope, caps } = await readById(c, id);
    requireCap(caps.admin);
    const keyId = c.req.valid("json").data.attributes.id;
    if (keyId !== null) {
      const key = await primary(c).prepare("SELECT id FROM ssh_keys WHERE id = ? AND organization_name = ?").bind(keyId, record.organization).first();
      if (!key) throw ApiError.of("not_found", { detail: "SSH key not found", pointer: "/data/attributes/id" });
    }
    const result = unwrap(await workspaceStub(c.env, id).setSshKey({ keyId, now: nowIso(), faults: faultsOf(c) }));
    acknowledge(c, result);
    const fresh = await loadScope(c, record.organization, [result.workspace]);
    return jsonapi(c, { data: (fresh ?? scope).serialize(result.workspace) });
  },
);
