/**
 * The webhooks of connected repositories: one per (OAuth token, repository), shared by every workspace connected to
 * it (as OTF's repohooks and Terrakube's RepoWebhook), registered on the host with a secret of ours and removed once no
 * workspace uses it. Called from the workspaces' objects (their alarm), never in a request: a host that is down never
 * fails a connect, and the object retries.
 */
import type { Bindings } from "../env";
import { newId, nowIso, randomBase62 } from "../ids";
import { sealValue } from "../variables/variables.crypto";
import { connectionOf, vcsClient } from "./vcs.connection";
import { deleteUnreferencedHook, hookFor, hookOrInsert, type Hook } from "./vcs.d1";

/** The URL the host delivers to. */
export function webhookUrl(origin: string, hookId: string): string {
  return `${origin.replace(/\/+$/, "")}/webhooks/vcs/${hookId}`;
}

export type HookSync = { state: "registered"; hook: Hook } | { state: "retry"; error: string } | { state: "unusable"; error: string };

/**
 * Makes sure (token, repository) has a registered hook delivering to `origin`. A new hook is made on the host first and
 * recorded in D1 after, so a host that fails leaves nothing behind; two workspaces registering at once both make one,
 * the first record wins and the other removes its own from the host. `retry`: the host failed (the caller's alarm
 * tries again); `unusable`: the token is gone or cannot act.
 */
export async function syncHook(env: Bindings, origin: string, tokenId: string, repo: string): Promise<HookSync> {
  const db = env.DB.withSession("first-primary");
  const existing = await hookFor(db, tokenId, repo);
  if (existing) return { state: "registered", hook: existing };
  const connected = await connectionOf(env, tokenId);
  if (!connected) return { state: "unusable", error: "the OAuth token is gone or has no token string" };
  const client = vcsClient(env, connected.connection, origin);
  const id = newId("hook");
  const secret = randomBase62(40);
  let hostId: string;
  try {
    hostId = await client.createHook(repo, webhookUrl(origin, id), secret);
  } catch (err) {
    return { state: "retry", error: err instanceof Error ? err.message : String(err) };
  }
  const at = nowIso();
  const hook: Hook = {
    id,
    organizationId: connected.organizationId,
    oauthTokenId: tokenId,
    repo: repo.toLowerCase(),
    secretSealed: await sealValue(env, id, secret),
    hostHookId: hostId,
    createdAt: at,
    registeredAt: at,
  };
  const kept = await hookOrInsert(db, hook);
  if (kept.id !== id) {
    // Another workspace's object recorded its hook first: this one goes.
    await client.deleteHook(repo, hostId).catch(() => undefined);
  }
  return { state: "registered", hook: kept };
}

/**
 * Once no workspace in the index is connected to (token, repository), its hook goes, on the host too. A host that
 * fails to delete it keeps a hook whose deliveries find no hook here and are refused.
 */
export async function releaseHook(env: Bindings, origin: string | null, tokenId: string, repo: string): Promise<void> {
  const gone = await deleteUnreferencedHook(env.DB.withSession("first-primary"), tokenId, repo);
  if (!gone) return;
  const connected = await connectionOf(env, tokenId);
  if (!connected) return;
  try {
    await vcsClient(env, connected.connection, origin).deleteHook(repo, gone.hostHookId);
  } catch (err) {
    console.log(JSON.stringify({ level: "warn", msg: "VCS hook removal failed", hook: gone.id, error: err instanceof Error ? err.message : String(err) }));
  }
}
