/**
 * Web UI sessions. Sign-in checks a pasted API token with `authenticate`; the cookie then holds
 * a random session id whose SHA-256 is stored in D1 with the SHA-256 of that token. Every UI request
 * re-authenticates through the stored token hash — the API's own token lookup, joined to the session in the
 * same read (cached sessions: in the page's first batch) — so a revoked, deleted or expired token ends its sessions
 * on their very next request. A password sign-in (src/passwords/) has no token: its session stores the user's id,
 * and the same one read joins the user, so a deleted user's sessions end on their next request too.
 */
import { signInStatement } from "../../audit/audit.d1";
import type { Principal } from "../../auth/principal";
import { authenticate, principalOfToken, siteAdminPrincipal } from "../../auth/auth.middleware";
import { cachedPrincipal, rememberPrincipal, TokenGate } from "../../auth/principal-cache";
import type { Bindings } from "../../env";
import { type Hops, traced } from "../../platform/hops";
import { nowIso, randomBase62, sha256Hex } from "../../ids";
import {
  deleteExpiredSessions,
  deleteSession,
  insertSession,
  sessionByIdHash,
  sessionByIdHashStatement,
  sessionOf,
  touchSession,
  type Session,
} from "./sessions.d1";

export const SESSION_COOKIE = "ws_session";
/** A session lasts at most this long, whatever the token's own expiry (which is checked on every request too). */
export const SESSION_TTL_SECONDS = 12 * 60 * 60;

const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** The session cookie's attributes for a request to `url` (`Secure` except on localhost, where there is no TLS). */
export function sessionCookieOptions(url: string) {
  const host = new URL(url).hostname.toLowerCase();
  return { path: "/app", httpOnly: true, sameSite: "Strict", secure: !LOCAL_HOSTS.has(host), maxAge: SESSION_TTL_SECONDS } as const;
}

/**
 * The device cookie of a browser that signed in with a password (src/passwords/passwords.rules.ts): its failed
 * sign-ins then count for that browser alone. Sent to every UI page (it reaches the sign-in and link forms), never
 * read by script.
 */
export const DEVICE_COOKIE = "ws_device";

export function deviceCookieOptions(url: string, expiresAt: number) {
  return { ...sessionCookieOptions(url), maxAge: Math.max(1, Math.floor((expiresAt - Date.now()) / 1000)) } as const;
}

/**
 * The cookie of a password sign-in's second step (src/passwords/passwords.service.ts `signInSecondFactor`): the right
 * password, a code still owed. Sent only to the sign-in pages, for as long as the step waits.
 */
export const CHALLENGE_COOKIE = "ws_challenge";

export function challengeCookieOptions(url: string, expiresAt: number) {
  return { ...sessionCookieOptions(url), path: "/app/session", maxAge: Math.max(1, Math.floor((expiresAt - Date.now()) / 1000)) } as const;
}

/** Where to go after signing in: `next` when it is one of the UI's own pages, else the organisations page. */
export function pageAfterSignIn(next: unknown): string {
  if (typeof next !== "string" || next.length > 2000 || !/^\/app(\/|\?|$)/.test(next) || /[\\\s]/.test(next) || next.startsWith("/app/session")) return "/app";
  return next;
}

/** Signs in with an API token: the new session's id (for the cookie), or null when the token is not valid. */
export async function signIn(env: Bindings, token: string): Promise<string | null> {
  if (token.length === 0 || token.length > 512) return null;
  const principal = await authenticate(env, token);
  // An audit-trails token reads the audit trail's API and nothing else: no session stands for it.
  if (!principal || (principal.kind === "organization" && principal.auditTrailsOnly)) return null;
  const id = randomBase62(43);
  const now = Date.now();
  const db = env.DB.withSession("first-primary");
  await deleteExpiredSessions(db, new Date(now).toISOString());
  // A user's sign-in with its token is in its organisations' audit trails, in the batch that starts the session.
  const audit = principal.kind === "user" ? [signInStatement(db, principal.userId, "token", undefined)] : [];
  await insertSession(
    db,
    await sha256Hex(id),
    { tokenHash: await sha256Hex(token) },
    nowIso(),
    new Date(now + SESSION_TTL_SECONDS * 1000).toISOString(),
    audit,
  );
  return id;
}

/**
 * Signs in a user whose password (or password link) was just checked, or whom the SSO provider just vouched for
 * (`method`): the new session's id, for the cookie.
 */
export async function signInAsUser(env: Bindings, userId: string, method: "password" | "sso" = "password"): Promise<string> {
  const id = randomBase62(43);
  const now = Date.now();
  const db = env.DB.withSession("first-primary");
  await deleteExpiredSessions(db, new Date(now).toISOString());
  await insertSession(db, await sha256Hex(id), { userId, method }, nowIso(), new Date(now + SESSION_TTL_SECONDS * 1000).toISOString(), [
    signInStatement(db, userId, method, undefined),
  ]);
  return id;
}

/** A session's last request is recorded when the one before is older than this (the idle timeouts are in minutes). */
export const SESSION_TOUCH_MS = 30_000;

/**
 * The principal a session stands for now: none when it expired, or its token no longer stands, or its password user
 * is gone. A password session's principal is the one that user's own token gives (without a token id). A person's
 * principal carries the session's times, for the organisations' session settings (src/auth/access.ts).
 */
function principalStandingFor(session: Session | null): Principal | null {
  if (!session || Date.parse(session.expiresAt) <= Date.now()) return null;
  const times = { createdAt: session.createdAt, lastSeenAt: session.lastSeenAt, method: session.method };
  if (session.userId !== null) {
    const u = session.user;
    return u ? { kind: "user", userId: u.id, username: u.username, isSiteAdmin: u.isSiteAdmin, tokenId: null, session: times, twoFactor: u.twoFactor } : null;
  }
  const p = principalOfToken(session.token);
  return p?.kind === "user" ? { ...p, session: times } : p;
}

/**
 * Records this request as the session's last (after the page: the organisations' idle timeout counted from the one
 * before), when the recorded one is older than SESSION_TOUCH_MS; this isolate's cached principal follows.
 */
export async function touchedSession(env: Bindings, sessionId: string, principal: Principal): Promise<void> {
  if (principal.kind !== "user" || !principal.session) return;
  const now = Date.now();
  if (now - Date.parse(principal.session.lastSeenAt) < SESSION_TOUCH_MS) return;
  const idHash = await sha256Hex(sessionId);
  const at = new Date(now).toISOString();
  await touchSession(env.DB.withSession("first-primary"), idHash, at);
  const key = `session:${idHash}`;
  if (cachedPrincipal(key)) rememberPrincipal(key, { ...principal, session: { ...principal.session, lastSeenAt: at } });
}

/**
 * The principal a session cookie stands for, or null (unknown, expired, or its token no longer valid). A session this
 * isolate resolved lately comes from the principal cache with a `gate` that rechecks it inside the page's first
 * round trip (src/auth/principal-cache.ts); otherwise it costs one D1 read, the session joined to its token.
 * `hops` counts the round trips (src/platform/hops.ts), as the API's authentication does.
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
  const principal = (session.tokenHash ? await siteAdminPrincipal(env, session.tokenHash, hops) : null) ?? principalStandingFor(session);
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
