/**
 * Web UI sessions (issue 20). Sign-in checks a pasted API token with `authenticate`; the cookie then holds
 * a random session id whose SHA-256 is stored in D1 with the SHA-256 of that token. Every UI request
 * re-authenticates through the stored token hash — the API's own token lookup, joined to the session in the
 * same read (cached sessions: in the page's first batch) — so a revoked, deleted or expired token ends its sessions
 * on their very next request.
 */
import type { Principal } from "../auth/principal";
import { authenticate, principalOfTokenRow, siteAdminPrincipal } from "../auth/auth.middleware";
import { cachedPrincipal, rememberPrincipal, TokenGate } from "../auth/principal-cache";
import type { Bindings } from "../env";
import type { Hops } from "../hops";
import type { AuthTokenRow } from "../tokens/tokens.d1";
import { nowIso, randomBase62, sha256Hex } from "../ids";
import { deleteExpiredSessions, deleteSession, insertSession, sessionByIdHash, sessionByIdHashStatement, type SessionRow } from "./ui.sessions.d1";

export const SESSION_COOKIE = "ws_session";
/** A session lasts at most this long, whatever the token's own expiry (which is checked on every request too). */
export const SESSION_TTL_SECONDS = 12 * 60 * 60;

/** Signs in with an API token: the new session's id (for the cookie), or null when the token is not valid. */
export async function signIn(env: Bindings, token: string): Promise<string | null> {
  if (token.length === 0 || token.length > 512) return null;
  const principal = await authenticate(env, token);
  if (!principal) return null;
  const id = randomBase62(43);
  const now = Date.now();
  const db = env.DB.withSession("first-primary");
  await deleteExpiredSessions(db, new Date(now).toISOString());
  await insertSession(db, await sha256Hex(id), await sha256Hex(token), nowIso(), new Date(now + SESSION_TTL_SECONDS * 1000).toISOString());
  return id;
}

/** The principal a session row stands for now: none when it expired or its token no longer stands. */
function principalOfSessionRow(row: SessionRow | null): Principal | null {
  if (!row || Date.parse(row.session_expires_at) <= Date.now()) return null;
  return principalOfTokenRow(row.id === null ? null : (row as AuthTokenRow));
}

/**
 * The principal a session cookie stands for, or null (unknown, expired, or its token no longer valid). A session this
 * isolate resolved lately comes from the principal cache with a `gate` that rechecks it inside the page's first
 * round trip (src/auth/principal-cache.ts); otherwise it costs one D1 read, the session joined to its token.
 * `hops` counts the round trips (src/hops.ts), as the API's authentication does.
 */
export async function principalOfSession(env: Bindings, sessionId: string | undefined, hops: Hops): Promise<{ principal: Principal; gate?: TokenGate } | null> {
  if (!sessionId || sessionId.length > 100) return null;
  const idHash = await sha256Hex(sessionId);
  const key = `session:${idHash}`;
  const cached = cachedPrincipal(key);
  if (cached) {
    const gate = new TokenGate(
      env,
      key,
      (d) => sessionByIdHashStatement(d, idHash),
      (row) => principalOfSessionRow(row as SessionRow | null),
      hops,
    );
    return { principal: cached, gate };
  }
  hops.d1++;
  const db = env.DB.withSession("first-primary");
  const row = await sessionByIdHash(db, idHash);
  if (!row) return null;
  const principal = (await siteAdminPrincipal(env, row.session_token_hash, hops)) ?? principalOfSessionRow(row);
  if (!principal) {
    hops.d1++;
    await deleteSession(db, idHash);
    return null;
  }
  rememberPrincipal(key, principal);
  return { principal };
}

/** Ends a session: on sign-out, and when a cached session's recheck failed. */
export async function signOut(env: Bindings, sessionId: string | undefined): Promise<void> {
  if (!sessionId || sessionId.length > 100) return;
  await deleteSession(env.DB.withSession("first-primary"), await sha256Hex(sessionId));
}
