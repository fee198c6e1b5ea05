/**
 * Web UI sessions. Sign-in checks a pasted API token with `authenticate`; the cookie then holds
 * a random session id whose SHA-256 is stored in D1 with the SHA-256 of that token. Every UI request
 * re-authenticates through the stored token hash — the API's own token lookup, joined to the session in the
 * same read (cached sessions: in the page's first batch) — so a revoked, deleted or expired token ends its sessions
 * on their very next request.
 */
import type { Principal } from "../auth/principal";
import { authenticate, principalOfToken, siteAdminPrincipal } from "../auth/auth.middleware";
import { cachedPrincipal, rememberPrincipal, TokenGate } from "../auth/principal-cache";
import type { Bindings } from "../env";
import { type Hops, traced } from "../hops";
import { nowIso, randomBase62, sha256Hex } from "../ids";
import { deleteExpiredSessions, deleteSession, insertSession, sessionByIdHash, sessionByIdHashStatement, sessionOf, type Session } from "./ui.sessions.d1";

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

/** The principal a session stands for now: none when it expired or its token no longer stands. */
function principalStandingFor(session: Session | null): Principal | null {
  if (!session || Date.parse(session.expiresAt) <= Date.now()) return null;
  return principalOfToken(session.token);
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
      (row) => principalStandingFor(sessionOf(row)),
      hops,
    );
    return { principal: cached, gate };
  }
  hops.d1++;
  const db = env.DB.withSession("first-primary");
  const session = await traced(hops, "d1p", () => sessionByIdHash(db, idHash));
  if (!session) return null;
  const principal = (await siteAdminPrincipal(env, session.tokenHash, hops)) ?? principalStandingFor(session);
  if (!principal) {
    hops.d1++;
    await traced(hops, "d1w", () => deleteSession(db, idHash));
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
