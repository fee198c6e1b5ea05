/**
 * The webhooks of connected repositories: one per (OAuth token, repository), shared by every workspace connected to
 * it (as OTF's repohooks and Terrakube's RepoWebhook), registered on the host with a secret of ours and removed once no
 * workspace uses it. Called from the workspaces' objects (their alarm), never in a request: a host that is down never
 * fails a connect, and the object retries.
 */
import type { Bindings } from "../env";
import { newId, nowIso, randomBase62 } from "../ids";
import { openValue, sealValue } from "../variables/variables.crypto";
import { connectionOf, vcsClient } from "./vcs.connection";
import { claimRegistration, deleteUnreferencedHook, hookOrInsert, markFailed, markRegistered, type Hook } from "./vcs.d1";

/** How long one registration may take before another workspace's object may try again. */
const CLAIM_MS = 60_000;

/** The URL the host delivers to. */
export function webhookUrl(origin: string, hookId: string): string {
  return `${origin.replace(/\/+$/, "")}/webhooks/vcs/${hookId}`;
}

export type HookSync = { state: "registered"; hook: Hook } | { state: "retry"; error: string } | { state: "unusable"; error: string };

/**
 * Makes sure (token, repository) has a registered hook delivering to `origin`. `retry`: another object is registering
 * it, or the host failed (the caller's alarm tries again); `unusable`: the token is gone or cannot act.
 */
export async function syncHook(env: Bindings, origin: string, tokenId: string, repo: string): Promise<HookSync> {
  const db = env.DB.withSession("first-primary");
  const connected = await connectionOf(env, tokenId);
  if (!connected) return { state: "unusable", error: "the OAuth token is gone or has no token string" };
  const id = newId("hook");
  const hook = await hookOrInsert(db, {
    id,
    organizationId: connected.organizationId,
    oauthTokenId: tokenId,
    repo: repo.toLowerCase(),
    secretSealed: await sealValue(env, id, randomBase62(40)),
    hostHookId: null,
    lastError: null,
    createdAt: nowIso(),
    registeredAt: null,
  });
  if (hook.hostHookId) return { state: "registered", hook };
  const now = Date.now();
  if (!(await claimRegistration(db, hook.id, now, now + CLAIM_MS))) return { state: "retry", error: "another workspace is registering the hook" };
  try {
    const secret = await openValue(env, hook.id, hook.secretSealed);
    const hostId = await vcsClient(env, connected.connection, origin).createHook(repo, webhookUrl(origin, hook.id), secret);
    await markRegistered(db, hook.id, hostId, nowIso());
    return { state: "registered", hook: { ...hook, hostHookId: hostId } };
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    await markFailed(db, hook.id, error);
    return { state: "retry", error };
  }
}

/**
 * Once no workspace in the index is connected to (token, repository), its hook goes, on the host too. A host that
 * fails to delete it keeps a hook whose deliveries find no hook here and are refused.
 */
export async function releaseHook(env: Bindings, origin: string | null, tokenId: string, repo: string): Promise<void> {
  const gone = await deleteUnreferencedHook(env.DB.withSession("first-primary"), tokenId, repo);
  if (!gone?.hostHookId) return;
  const connected = await connectionOf(env, tokenId);
  if (!connected) return;
  try {
    await vcsClient(env, connected.connection, origin).deleteHook(repo, gone.hostHookId);
  } catch (err) {
    console.log(JSON.stringify({ level: "warn", msg: "VCS hook removal failed", hook: gone.id, error: err instanceof Error ? err.message : String(err) }));
  }
}
