/**
 * Key-value tag bindings (spec §4.13): workspace and project bindings, and effective bindings
 * (a workspace's direct ones plus its project's, merged at read time so a project change shows
 * at once).
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { loadAccessBatch } from "../auth/access";
import { primary } from "../db";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";
import { nowIso } from "../ids";
import { jsonapi } from "../jsonapi/document";
import { errorResponses, jsonBody, ok, router } from "../jsonapi/validation";
import { LIMITS } from "../limits";
import { tagBindingInput, workspaceIdParam } from "../workspaces/workspaces.schemas";
import { readById, requireCap } from "../workspaces/workspaces.service";
import { canReadProject } from "../projects/projects.routes";
import {
  isProjectLimitError,
  projectBindings,
  upsertProjectBindingsStatements,
  type ProjectBindingRow,
} from "./project-tags.index";
import { bindingValue, checkBindings } from "./tags.rules";
import { effectiveBindings, projectEffectiveBindings, serializeBinding, serializeProjectBinding } from "./tags.serialize";
import { dedupe, echoed, LIMIT_DETAIL } from "./workspace-tags.logic";
import { changeTags, resolveBindings } from "./workspace-tags.service";

const tags = ["Tag bindings"];
export const tagBindings = router();

export const tagBindingsBody = z.object({ data: z.array(tagBindingInput).max(LIMITS.tagRefsPerRequest) }).openapi("TagBindings");
const projectIdParam = z.object({ project_id: z.string().regex(/^prj-[A-Za-z0-9]{1,64}$/) });
const API = "/api/v2";

// ---- workspaces ----

tagBindings.openapi(
  createRoute({
    method: "get",
    path: "/workspaces/{workspace_id}/tag-bindings",
    tags,
    summary: "List a workspace's direct tag bindings (never its flat tags; not paginated)",
    request: { params: workspaceIdParam },
    responses: { ...ok("The direct tag bindings"), ...errorResponses },
  }),
  async (c) => {
    const { record } = await readById(c, c.req.valid("param").workspace_id);
    return jsonapi(c, { data: record.tagBindings.map(serializeBinding), links: { target: `${API}/workspaces/${record.id}` } });
  },
);

tagBindings.openapi(
  createRoute({
    method: "patch",
    path: "/workspaces/{workspace_id}/tag-bindings",
    tags,
    summary: "Add or update tag bindings by key (never removes); answers the bindings sent, in order",
    request: { params: workspaceIdParam, body: jsonBody(tagBindingsBody) },
    responses: { ...ok("The bindings sent"), ...errorResponses },
  }),
  async (c) => {
    const { record, caps } = await readById(c, c.req.valid("param").workspace_id);
    requireCap(caps.admin); // can-manage-tags
    const now = nowIso();
    const inputs = resolveBindings(c.req.valid("json").data.map((d) => d.attributes), "/data");
    const updated = inputs.length > 0 ? await changeTags(c, record, { op: "upsert-bindings", bindings: inputs, pointerBase: "/data" }, now) : record;
    return jsonapi(c, { data: echoed(updated.tagBindings, inputs).map(serializeBinding) });
  },
);

tagBindings.openapi(
  createRoute({
    method: "get",
    path: "/workspaces/{workspace_id}/effective-tag-bindings",
    tags,
    summary: "List a workspace's effective tag bindings: direct plus inherited from its project (direct wins)",
    request: { params: workspaceIdParam },
    responses: { ...ok("The effective tag bindings"), ...errorResponses },
  }),
  async (c) => {
    const { record } = await readById(c, c.req.valid("param").workspace_id);
    const inherited = await projectBindings(primary(c), record.projectId);
    return jsonapi(c, { data: effectiveBindings(record.tagBindings, record.projectId, inherited) });
  },
);

// ---- projects ----

interface ProjectAccess {
  projectId: string;
  canRead: boolean;
  /** Owners, organisation token, manage-projects, or team project access admin (or custom settings update/delete). */
  canAdmin: boolean;
}

async function projectAccess(c: Context<AppEnv>, projectId: string): Promise<ProjectAccess> {
  const db = primary(c);
  const row = await db.prepare("SELECT id, organization_name FROM projects WHERE id = ?").bind(projectId).first<{ id: string; organization_name: string }>();
  if (!row) throw ApiError.of("not_found");
  const loaded = await loadAccessBatch(db, c.get("principal"), row.organization_name, [], [projectId]);
  if (!loaded) throw ApiError.of("not_found");
  const { access, grants } = loaded;
  const here = grants.projects.filter((g) => g.target_id === projectId);
  const settingsAccess = (perms: string): unknown => ((JSON.parse(perms) as Record<string, Record<string, unknown> | undefined>)["project-access"] ?? {})["settings"];
  const canAdmin =
    access.isOwner ||
    access.isOrgToken ||
    access.orgPermissions["manage-projects"] === true ||
    here.some((g) => g.access === "admin" || (g.access === "custom" && ["update", "delete"].includes(String(settingsAccess(g.perms)))));
  const p = access.orgPermissions;
  // Project readers are the same as for the project itself (incl. teams with access to its workspaces).
  const canRead = canAdmin || p["manage-workspaces"] === true || here.length > 0 || (await canReadProject(c, access, projectId));
  if (!canRead) throw ApiError.of("not_found");
  return { projectId, canRead, canAdmin };
}

tagBindings.openapi(
  createRoute({
    method: "get",
    path: "/projects/{project_id}/tag-bindings",
    tags,
    summary: "List a project's tag bindings",
    request: { params: projectIdParam },
    responses: { ...ok("The project's tag bindings"), ...errorResponses },
  }),
  async (c) => {
    const { projectId } = await projectAccess(c, c.req.valid("param").project_id);
    const rows = await projectBindings(primary(c), projectId);
    return jsonapi(c, { data: rows.map(serializeProjectBinding), links: { target: `${API}/projects/${projectId}` } });
  },
);

/** The first sent entry that takes the project over the limit (null when within it). */
function projectLimitOffender(existing: ProjectBindingRow[], sent: Array<{ key: string; index: number }>): number | null {
  const keys = new Set(existing.map((b) => b.key));
  for (const s of sent) {
    keys.add(s.key);
    if (keys.size > LIMITS.tagBindingsPerResource) return s.index;
  }
  return null;
}

tagBindings.openapi(
  createRoute({
    method: "patch",
    path: "/projects/{project_id}/tag-bindings",
    tags,
    summary: "Add or update a project's tag bindings by key (never removes); at most 10 per project",
    request: { params: projectIdParam, body: jsonBody(tagBindingsBody) },
    responses: { ...ok("The bindings sent"), ...errorResponses },
  }),
  async (c) => {
    const { projectId, canAdmin } = await projectAccess(c, c.req.valid("param").project_id);
    requireCap(canAdmin);
    const sent = c.req.valid("json").data.map((d) => d.attributes);
    const f = checkBindings(sent, "/data");
    if (f) throw ApiError.of(f.code, { detail: f.detail, pointer: f.pointer });
    const inputs = dedupe(sent.map((b, index) => ({ key: b.key, value: bindingValue(b.value), tagId: null, index })));
    const db = primary(c);
    const overLimit = async () => {
      const at = projectLimitOffender(await projectBindings(db, projectId), inputs) ?? inputs[0]?.index ?? 0;
      return ApiError.of("invalid_attribute", { detail: LIMIT_DETAIL, pointer: `/data/${at}` });
    };
    if (projectLimitOffender(await projectBindings(db, projectId), inputs) !== null) throw await overLimit();
    const now = nowIso();
    try {
      // One batch, one transaction; the trigger of migration 0005 makes the limit hold under races.
      const stmts = upsertProjectBindingsStatements(db, projectId, inputs.map((t) => ({ key: t.key, value: t.value ?? "" })), now);
      if (stmts.length) await db.batch(stmts); // an empty list changes nothing (D1 refuses an empty batch)
    } catch (err) {
      if (isProjectLimitError(err)) throw await overLimit();
      throw err;
    }
    const byKey = new Map((await projectBindings(db, projectId)).map((b) => [b.key, b]));
    return jsonapi(c, { data: inputs.flatMap((t) => (byKey.has(t.key) ? [serializeProjectBinding(byKey.get(t.key)!)] : [])) });
  },
);

tagBindings.openapi(
  createRoute({
    method: "get",
    path: "/projects/{project_id}/effective-tag-bindings",
    tags,
    summary: "List a project's effective tag bindings (its own; projects inherit nothing)",
    request: { params: projectIdParam },
    responses: { ...ok("The project's effective tag bindings"), ...errorResponses },
  }),
  async (c) => {
    const { projectId } = await projectAccess(c, c.req.valid("param").project_id);
    return jsonapi(c, { data: projectEffectiveBindings(await projectBindings(primary(c), projectId)) });
  },
);
