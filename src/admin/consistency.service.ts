/**
 * The consistency checker: compares each workspace's Durable Object with its D1 index row. Paged by
 * a cursor over workspace ids (the index and the name leases), since it asks every DO it visits.
 */
import { authorize } from "../auth/requirements";
import type { Caller } from "../caller";
import type { Bindings } from "../env";
import { unwrap } from "../errors";
import { NAME_LEASE_MS, releaseClaim, tagRowsDifference } from "../workspaces/workspaces.d1";
import { indexFacts, workspaceIdsAfter } from "./consistency.d1";
import { workspaceObject } from "../workspaces/workspace.stub";

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

export interface ConsistencyPage {
  differences: Difference[];
  checked: number;
  next: string | null;
}

/** Site admins only; anyone else sees no such endpoint. */
export async function consistencyReport(caller: Caller, cursor: string, limit: number): Promise<ConsistencyPage> {
  authorize(caller, "site-admin");
  return checkConsistency(caller.env, cursor, limit);
}

/** Checks up to `limit` workspace ids after `cursor`; returns the differences and the next cursor. */
async function checkConsistency(env: Bindings, cursor: string, limit: number): Promise<ConsistencyPage> {
  const db = env.DB.withSession("first-primary");
  const ids = await workspaceIdsAfter(db, cursor, limit);
  const differences: Difference[] = [];
  for (const id of ids) {
    const stub = workspaceObject(env, id);
    const state = unwrap(await stub.indexState()).value;
    const projectId = state.kind === "live" ? (state.record?.projectId ?? "") : "";
    const { indexed, leases, projectExists } = await indexFacts(db, id, projectId);
    if (state.pending > 0) {
      const detail = state.armed
        ? `${state.pending} index write(s) had no alarm to drain them; one was set now`
        : `${state.pending} index write(s) waiting for the alarm`;
      differences.push({ workspaceId: id, kind: "write-pending", detail });
    }
    // A live workspace must belong to a project that exists (creates and moves hold it until indexed).
    if (state.kind === "live" && !projectExists) {
      differences.push({ workspaceId: id, kind: "orphan-project-reference", detail: `project ${projectId} does not exist` });
    }
    if (state.kind === "live" && state.record) {
      if (!indexed) differences.push({ workspaceId: id, kind: "missing-index-row", detail: "the DO holds a workspace the index lacks" });
      else if (indexed.version !== state.record.version)
        differences.push({ workspaceId: id, kind: "stale-index-row", detail: `index version ${indexed.version}, DO version ${state.record.version}` });
      // Compared as the current shape: a document written before schema 6 may still name the organisation (parseDoc).
      else if (JSON.stringify(indexed.record) !== JSON.stringify(state.record))
        differences.push({ workspaceId: id, kind: "different-doc", detail: "same version, different document" });
      else {
        // The list filters read workspace_tags, not the doc: its rows must match both tag sets.
        const tags = await tagRowsDifference(db, state.record);
        if (tags) differences.push({ workspaceId: id, kind: "different-tags", detail: tags });
      }
    } else if (indexed) {
      differences.push({
        workspaceId: id,
        kind: state.kind === "deleted" ? "index-row-of-deleted-workspace" : "orphan-index-row",
        detail: `DO state: ${state.kind}`,
      });
    }
    for (const l of leases) {
      const owned = state.kind === "live" && state.record?.name.toLowerCase() === l.name.toLowerCase();
      if (owned || Date.now() - l.claimedAt <= NAME_LEASE_MS) continue;
      // An uncommitted claim left by a create or rename that died is released here,
      // as a create wanting the name would (the DO decides, serialised with its own writes), so the
      // checker converges instead of reporting it forever. It is reported once, on release.
      if (!l.committed) {
        const { released } = unwrap(await stub.releaseName(l.name, Date.now())).value;
        if (released) await releaseClaim(env.DB, l.organizationId, l.name, id);
        differences.push({
          workspaceId: id,
          kind: "stale-name-lease",
          detail: `name "${l.name}" was leased but never held; ${released ? "released" : "its index write was retried"}`,
        });
      } else {
        differences.push({ workspaceId: id, kind: "stale-name-lease", detail: `name "${l.name}" is leased but not held` });
      }
    }
  }
  const next = ids.length === limit ? ids[ids.length - 1] : null;
  return { differences, checked: ids.length, next };
}
