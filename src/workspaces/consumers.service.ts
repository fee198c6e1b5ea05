/** Remote-state consumers and SSH key assignment (HCP Terraform API docs, Workspaces). */
import { pageSlice } from "../jsonapi/document";
import { allows, authorize } from "../auth/requirements";
import type { Caller, Db } from "../caller";
import { ApiError, unwrap } from "../errors";
import { nowIso } from "../ids";
import type { Page } from "../jsonapi/document";
import type { ConsumerChange } from "./consumers.rules";
import type { WorkspaceRecord } from "./workspace.types";
import { allConsumers, consumerPage, consumerScope, parseDoc, sshKeyExists, workspaceDocsByIds, workspaceDocsByNames } from "./workspaces.d1";
import { guardOf, loadScope, readById, readRef, type WorkspaceRef, type WorkspaceScope } from "./workspaces.service";
import type { Written } from "./workspaces.write.service";
import { workspaceObject } from "./workspace.stub";

/**
 * One page of the workspaces that may read this workspace's state, as the caller may see them.
 * `listDb` is the list-read session (it may follow the client's bookmark).
 */
export async function listConsumers(
  caller: Caller,
  listDb: Db,
  id: string,
  page: Page,
): Promise<{ records: WorkspaceRecord[]; scope: WorkspaceScope; total: number }> {
  const { record, scope } = await readById(caller, id);
  const where = consumerScope(record);
  if (allows(caller.principal, "workspace.read", { access: scope.access, caps: scope.access.base })) {
    // Callers who read every workspace of the organisation: page and count in SQL.
    const { docs, total } = await consumerPage(listDb, where, page.size, (page.number - 1) * page.size);
    const records = docs.map(parseDoc);
    const pageScope = await loadScope(caller, record.organizationId, records);
    if (!pageScope) throw ApiError.of("not_found");
    return { records, scope: pageScope, total };
  }
  const candidates = (await allConsumers(listDb, where)).map(parseDoc);
  const seen = await loadScope(caller, record.organizationId, candidates);
  if (!seen) throw ApiError.of("not_found");
  const readable = candidates.filter((w) => allows(caller.principal, "workspace.read", { access: seen.access, caps: seen.capsOf(w) }));
  const records = pageSlice(readable, page);
  return { records, scope: seen, total: readable.length };
}

/**
 * Adds, replaces or removes consumers; answers the index write's bookmark. The workspace is named by id (the
 * API) or by organisation and name, and the consumers by id or by name (the web UI's form), so neither costs
 * a lookup before the read that authorises.
 */
export async function changeConsumers(
  caller: Caller,
  ref: WorkspaceRef,
  op: ConsumerChange["op"],
  targets: { ids: string[] } | { names: string[] },
): Promise<{ bookmark?: string | null }> {
  const { record, scope } = await readRef(caller, ref, "workspace.update");
  // Replacing the whole list is for organisation-wide workspace managers only; admins of single workspaces add and remove consumers instead.
  if (op === "replace") authorize(caller, "workspaces.manage", { access: scope.access });
  // Every listed workspace must exist in this organisation and be readable by the caller.
  const byName = "names" in targets;
  const keys = byName ? targets.names : targets.ids;
  const rows = byName ? await workspaceDocsByNames(caller.db, record.organizationId, keys) : await workspaceDocsByIds(caller.db, record.organizationId, keys);
  const docs = rows.map(parseDoc);
  // Names are unique case-insensitively (as the index compares them).
  const found = new Map(docs.map((w) => [byName ? w.name.toLowerCase() : w.id, w]));
  const listed = await loadScope(caller, record.organizationId, docs);
  const ids: string[] = [];
  for (const [i, key] of keys.entries()) {
    const w = found.get(byName ? key.toLowerCase() : key);
    if (!w || !listed || !allows(caller.principal, "workspace.read", { access: listed.access, caps: listed.capsOf(w) }))
      throw ApiError.of("not_found", { detail: `Workspace not found: ${key}`, pointer: `/data/${i}/id` });
    ids.push(w.id);
  }
  return unwrap(await workspaceObject(caller.env, record.id).changeConsumers({ change: { op, ids }, now: nowIso(), guard: guardOf(record) }));
}

/** Assigns (id) or unassigns (null) the workspace's SSH key. */
export async function setSshKey(caller: Caller, id: string, keyId: string | null): Promise<Written> {
  const { record, scope } = await readById(caller, id, "workspace.update");
  if (keyId !== null && !(await sshKeyExists(caller.db, keyId, record.organizationId))) {
    throw ApiError.of("not_found", { detail: "SSH key not found", pointer: "/data/attributes/id" });
  }
  const result = unwrap(await workspaceObject(caller.env, id).setSshKey({ keyId, now: nowIso(), guard: guardOf(record) }));
  const fresh = await loadScope(caller, record.organizationId, [result.value]);
  return { workspace: result.value, scope: fresh ?? scope, bookmark: result.bookmark };
}
