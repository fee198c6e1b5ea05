/**
 * The consistency checker: compares each workspace's Durable Object with its D1 index row. Paged by
 * a cursor over workspace ids (the index and the name leases), since it asks every DO it visits.
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { Bindings } from "../env";
import { ApiError } from "../errors";
import { jsonapi } from "../jsonapi/document";
import { errorResponses, ok, router } from "../jsonapi/validation";
import { NAME_LEASE_MS, releaseClaim, tagRowsDifference } from "../workspaces/workspaces.index";

export interface Difference {
  workspaceId: string;
  kind:
    | "missing-index-row"
    | "stale-index-row"
    | "index-row-of-deleted-workspace"
    | "orphan-index-row"
    | "different-doc"
    | "different-tags"
    | "stale-name-lease"
    | "write-pending"
    | "orphan-project-reference";
  detail: string;
}

/** Checks up to `limit` workspace ids after `cursor`; returns the differences and the next cursor. */
export async function checkConsistency(env: Bindings, cursor: string, limit: number): Promise<{ differences: Difference[]; checked: number; next: string | null }> {
  const db = env.DB.withSession("first-primary");
  const ids = await db
    .prepare(
      `SELECT id FROM (SELECT id FROM workspaces WHERE id > ? UNION SELECT workspace_id AS id FROM workspace_names WHERE workspace_id > ?)
       ORDER BY id LIMIT ?`,
    )
    .bind(cursor, cursor, limit)
    .all<{ id: string }>();
  const differences: Difference[] = [];
  for (const { id } of ids.results) {
    const stub = env.WORKSPACES.getByName(id);
    const state = await stub.indexState();
    const projectId = state.kind === "live" ? (state.record?.projectId ?? "") : "";
    const [row, leases, project] = await db.batch([
      db.prepare("SELECT version, doc FROM workspaces WHERE id = ?").bind(id),
      db.prepare("SELECT organization_name, name, committed, claimed_at FROM workspace_names WHERE workspace_id = ?").bind(id),
      db.prepare("SELECT 1 AS ok FROM projects WHERE id = ?").bind(projectId),
    ]);
    const indexRow = (row?.results?.[0] ?? null) as { version: number; doc: string } | null;
    if (state.pending > 0) {
      const detail = state.armed ? `${state.pending} index write(s) had no alarm to drain them; one was set now` : `${state.pending} index write(s) waiting for the alarm`;
      differences.push({ workspaceId: id, kind: "write-pending", detail });
    }
    // Issue 13 item 7: a live workspace must belong to a project that exists.
    if (state.kind === "live" && (project?.results?.length ?? 0) === 0) {
      differences.push({ workspaceId: id, kind: "orphan-project-reference", detail: `project ${projectId} does not exist` });
    }
    if (state.kind === "live" && state.record) {
      if (!indexRow) differences.push({ workspaceId: id, kind: "missing-index-row", detail: "the DO holds a workspace the index lacks" });
      else if (indexRow.version !== state.record.version) differences.push({ workspaceId: id, kind: "stale-index-row", detail: `index version ${indexRow.version}, DO version ${state.record.version}` });
      else if (indexRow.doc !== JSON.stringify(state.record)) differences.push({ workspaceId: id, kind: "different-doc", detail: "same version, different document" });
      else {
        // The list filters read workspace_tags, not the doc: its rows must match both tag sets (issue 14).
        const tags = await tagRowsDifference(db, state.record);
        if (tags) differences.push({ workspaceId: id, kind: "different-tags", detail: tags });
      }
    } else if (indexRow) {
      differences.push({ workspaceId: id, kind: state.kind === "deleted" ? "index-row-of-deleted-workspace" : "orphan-index-row", detail: `DO state: ${state.kind}` });
    }
    for (const l of (leases?.results ?? []) as Array<{ organization_name: string; name: string; committed: number; claimed_at: number }>) {
      const owned = state.kind === "live" && state.record?.name.toLowerCase() === l.name.toLowerCase();
      if (owned || Date.now() - l.claimed_at <= NAME_LEASE_MS) continue;
      // Issue 13 item 10: an uncommitted claim left by a create or rename that died is released here,
      // as a create wanting the name would (the DO decides, serialised with its own writes), so the
      // checker converges instead of reporting it forever. It is reported once, on release.
      if (l.committed === 0) {
        const { released } = await stub.releaseName(l.name, Date.now());
        if (released) await releaseClaim(env.DB, l.organization_name, l.name, id);
        differences.push({ workspaceId: id, kind: "stale-name-lease", detail: `name "${l.name}" was leased but never held; ${released ? "released" : "its index write was retried"}` });
      } else {
        differences.push({ workspaceId: id, kind: "stale-name-lease", detail: `name "${l.name}" is leased but not held` });
      }
    }
  }
  const next = ids.results.length === limit ? ids.results[ids.results.length - 1].id : null;
  return { differences, checked: ids.results.length, next };
}

export const admin = router();

admin.openapi(
  createRoute({
    method: "get",
    path: "/admin/consistency",
    tags: ["Admin"],
    summary: "Compare each workspace's Durable Object with its D1 index row (site admins; paged by cursor)",
    request: { query: z.object({ cursor: z.string().max(100).optional(), "page[size]": z.string().max(10).optional() }).passthrough() },
    responses: { ...ok("Differences found in this page"), ...errorResponses },
  }),
  async (c) => {
    const p = c.get("principal");
    if (p.kind !== "user" || !p.isSiteAdmin) throw ApiError.of("not_found");
    const q = c.req.valid("query");
    const size = Math.min(100, Math.max(1, Number(q["page[size]"] ?? "50") || 50));
    const result = await checkConsistency(c.env, q.cursor ?? "", size);
    return jsonapi(c, {
      data: result.differences.map((d, i) => ({ id: `${d.workspaceId}:${i}`, type: "consistency-differences", attributes: { "workspace-id": d.workspaceId, kind: d.kind, detail: d.detail } })),
      meta: { checked: result.checked, "next-cursor": result.next },
    });
  },
);
