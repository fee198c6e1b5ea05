/** D1 statements of the VCS integration: webhooks per (OAuth token, repository), their deliveries, connected workspaces. */
import type { Db } from "../caller";

export interface HookRow {
  id: string;
  organization_id: string;
  oauth_token_id: string;
  repo: string;
  secret_sealed: string;
  host_hook_id: string;
  created_at: string;
  registered_at: string;
}

export interface Hook {
  id: string;
  organizationId: string;
  oauthTokenId: string;
  repo: string;
  secretSealed: string;
  hostHookId: string;
  createdAt: string;
  registeredAt: string;
}

function toHook(r: HookRow): Hook {
  return {
    id: r.id,
    organizationId: r.organization_id,
    oauthTokenId: r.oauth_token_id,
    repo: r.repo,
    secretSealed: r.secret_sealed,
    hostHookId: r.host_hook_id,
    createdAt: r.created_at,
    registeredAt: r.registered_at,
  };
}

export async function findHook(db: Db, id: string): Promise<Hook | null> {
  const row = await db.prepare("SELECT * FROM vcs_hooks WHERE id = ?").bind(id).first<HookRow>();
  return row ? toHook(row) : null;
}

export async function hookFor(db: Db, tokenId: string, repo: string): Promise<Hook | null> {
  const row = await db.prepare("SELECT * FROM vcs_hooks WHERE oauth_token_id = ? AND repo = ?").bind(tokenId, repo.toLowerCase()).first<HookRow>();
  return row ? toHook(row) : null;
}

/** The hook of (token, repository), made with `candidate`'s id and secret unless one exists. */
export async function hookOrInsert(db: Db, candidate: Hook): Promise<Hook> {
  await db
    .prepare(
      `INSERT INTO vcs_hooks (id, organization_id, oauth_token_id, repo, secret_sealed, host_hook_id, created_at, registered_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(oauth_token_id, repo) DO NOTHING`,
    )
    .bind(
      candidate.id,
      candidate.organizationId,
      candidate.oauthTokenId,
      candidate.repo.toLowerCase(),
      candidate.secretSealed,
      candidate.hostHookId,
      candidate.createdAt,
      candidate.registeredAt,
    )
    .run();
  return (await hookFor(db, candidate.oauthTokenId, candidate.repo))!;
}

/**
 * Deletes the hook row unless a workspace in the index is still connected to its (token, repository), in one
 * statement, so a workspace connecting meanwhile keeps it. The deleted row (its host id to remove there), or null.
 */
export async function deleteUnreferencedHook(db: Db, tokenId: string, repo: string): Promise<Hook | null> {
  const row = await db
    .prepare(
      `DELETE FROM vcs_hooks WHERE oauth_token_id = ?1 AND repo = ?2
         AND NOT EXISTS (SELECT 1 FROM workspaces WHERE vcs_token_id = ?1 AND vcs_repo = ?2)
       RETURNING *`,
    )
    .bind(tokenId, repo.toLowerCase())
    .first<HookRow>();
  return row ? toHook(row) : null;
}

/** The ids of the workspaces connected to (token, repository), from the index. */
export async function connectedWorkspaceIds(db: Db, tokenId: string, repo: string): Promise<string[]> {
  const { results } = await db
    .prepare("SELECT id FROM workspaces WHERE vcs_token_id = ? AND vcs_repo = ? ORDER BY id LIMIT 1000")
    .bind(tokenId, repo.toLowerCase())
    .all<{ id: string }>();
  return results.map((r) => r.id);
}

export interface Delivery {
  hookId: string;
  deliveryId: string;
  event: string;
  action: string | null;
  repo: string | null;
  sha: string | null;
  receivedAt: string;
  workspaces: number;
  outcome: string;
}

/** Records a delivery; false when the hook already had one with this id (a replay or a redelivery). */
export async function recordDelivery(db: Db, d: Delivery & { organizationId: string }): Promise<boolean> {
  const r = await db
    .prepare(
      `INSERT INTO vcs_deliveries (hook_id, delivery_id, organization_id, event, action, repo, sha, received_at, workspaces, outcome)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(hook_id, delivery_id) DO NOTHING`,
    )
    .bind(d.hookId, d.deliveryId, d.organizationId, d.event, d.action, d.repo, d.sha, d.receivedAt, d.workspaces, d.outcome)
    .run();
  return r.meta.changes === 1;
}

export async function setDeliveryOutcome(db: Db, hookId: string, deliveryId: string, workspaces: number, outcome: string): Promise<void> {
  await db
    .prepare("UPDATE vcs_deliveries SET workspaces = ?, outcome = ? WHERE hook_id = ? AND delivery_id = ?")
    .bind(workspaces, outcome, hookId, deliveryId)
    .run();
}

/** The latest deliveries of a hook, newest first. */
export async function recentDeliveries(db: Db, hookId: string, limit: number): Promise<Delivery[]> {
  const { results } = await db.prepare("SELECT * FROM vcs_deliveries WHERE hook_id = ? ORDER BY received_at DESC LIMIT ?").bind(hookId, limit).all<{
    hook_id: string;
    delivery_id: string;
    event: string;
    action: string | null;
    repo: string | null;
    sha: string | null;
    received_at: string;
    workspaces: number;
    outcome: string;
  }>();
  return results.map((r) => ({
    hookId: r.hook_id,
    deliveryId: r.delivery_id,
    event: r.event,
    action: r.action,
    repo: r.repo,
    sha: r.sha,
    receivedAt: r.received_at,
    workspaces: r.workspaces,
    outcome: r.outcome,
  }));
}
