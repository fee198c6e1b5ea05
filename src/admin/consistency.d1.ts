/** D1 reads of the consistency checker: the ids to visit and, per id, its index row, name leases and project. */
import type { Db } from "../caller";
import type { WorkspaceRecord } from "../workspaces/workspace.types";
import { parseDoc } from "../workspaces/workspaces.d1";

interface LeaseRow {
  organization_id: string;
  name: string;
  committed: number;
  claimed_at: number;
}

/** The index's view of a workspace: its row's version and document (a document written before schema 6 read as now, parseDoc). */
export interface IndexedWorkspace {
  version: number;
  record: WorkspaceRecord;
}

/** A claim on a name (workspace_names). */
export interface NameLease {
  organizationId: string;
  name: string;
  /** The workspace's index write made it permanent. */
  committed: boolean;
  claimedAt: number;
}

/** Up to `limit` workspace ids after `cursor`, from the index and the name leases. */
export async function workspaceIdsAfter(db: Db, cursor: string, limit: number): Promise<string[]> {
  const ids = await db
    .prepare(
      `SELECT id FROM (SELECT id FROM workspaces WHERE id > ? UNION SELECT workspace_id AS id FROM workspace_names WHERE workspace_id > ?)
       ORDER BY id LIMIT ?`,
    )
    .bind(cursor, cursor, limit)
    .all<{ id: string }>();
  return ids.results.map((r) => r.id);
}

/** The workspace's index row, its name leases and whether `projectId` exists, in one batch. */
export async function indexFacts(
  db: Db,
  id: string,
  projectId: string,
): Promise<{ indexed: IndexedWorkspace | null; leases: NameLease[]; projectExists: boolean }> {
  const [row, leases, project] = await db.batch([
    db.prepare("SELECT version, doc FROM workspaces WHERE id = ?").bind(id),
    db.prepare("SELECT organization_id, name, committed, claimed_at FROM workspace_names WHERE workspace_id = ?").bind(id),
    db.prepare("SELECT 1 AS ok FROM projects WHERE id = ?").bind(projectId),
  ]);
  const indexRow = (row?.results?.[0] ?? null) as { version: number; doc: string } | null;
  return {
    indexed: indexRow ? { version: indexRow.version, record: parseDoc(indexRow) } : null,
    leases: ((leases?.results ?? []) as LeaseRow[]).map((l) => ({
      organizationId: l.organization_id,
      name: l.name,
      committed: l.committed === 1,
      claimedAt: l.claimed_at,
    })),
    projectExists: (project?.results?.length ?? 0) > 0,
  };
}
