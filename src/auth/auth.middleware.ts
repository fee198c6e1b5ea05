import { createMiddleware } from "hono/factory";
import { fencedD1, raiseReplicaClock } from "../platform/replica-fence";
import { ApiError } from "../errors";
import type { AppEnv, Bindings } from "../env";
import { newId, nowIso, sha256Hex } from "../ids";
import { extraHop, type Hops, traced } from "../platform/hops";
import { hopsOf } from "./caller.http";
import { cachedPrincipal, rememberPrincipal, TokenGate } from "./principal-cache";
import { principalKey, type Principal } from "./principal";
import { RUN_TOKEN_PREFIX, runPrincipalOf, runStillStands, runTokenMayCall, verifyRunToken } from "./run-token";
import { ROUTE_ACTIONS } from "../jsonapi/define-route";
import { routePath } from "hono/route";
import {
  authTokenOf,
  bootstrapAdmin,
  runStandingStatement,
  type RunStandingRow,
  insertBootstrapAdmin,
  tokenByHash,
  tokenByHashStatement,
  touchToken,
  type AuthToken,
} from "./principal.d1";
import { configuredLimit, rateHeaders, RateLimiter } from "./ratelimit";

/** Per-isolate memo of the site admin's user id (the row is created once, idempotently). */
let siteAdmin: { hash: string; userId: string } | null = null;

/**
 * Ensures the bootstrap site-admin user exists and returns its id. It is found by its marker
 * (migration 0003), not by username, because the admin may rename itself (PATCH /account/update).
 */
export async function ensureSiteAdmin(env: Bindings, tokenHash: string): Promise<string> {
  if (siteAdmin && siteAdmin.hash === tokenHash) return siteAdmin.userId;
  const db = env.DB.withSession("first-primary");
  let row = await bootstrapAdmin(db);
  // "admin" may already name another user: then the bootstrap admin takes a suffixed name.
  for (const username of ["admin", `admin-${newId("u").slice(2, 10).toLowerCase()}`]) {
    if (row) break;
    await insertBootstrapAdmin(db, newId("user"), username, nowIso());
    row = await bootstrapAdmin(db);
  }
  if (!row) throw new Error("site admin user missing");
  siteAdmin = { hash: tokenHash, userId: row.id };
  return row.id;
}

function timingSafeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** `last-used-at` is refreshed at most this often per token (one D1 write, off the request path). */
const LAST_USED_RESOLUTION_MS = 60_000;

/** Per-isolate memo of ADMIN_TOKEN's hash (a secret fixed for the isolate's life): no digest of it per request. */
let adminHash: { token: string; hash: string } | null = null;
async function adminTokenHash(adminToken: string): Promise<string> {
  if (adminHash?.token !== adminToken) adminHash = { token: adminToken, hash: await sha256Hex(adminToken) };
  return adminHash.hash;
}

/**
 * Resolves a bearer token to a principal, or null when it is unknown, deleted or expired: one D1 read (the token
 * with its user or team, one indexed statement), none for the site admin's token once its user row is known.
 *
 * Uncached: sign-in and tests resolve afresh; the API's middleware (`requireAuth`) looks in the principal cache first.
 */
export async function authenticate(env: Bindings, token: string, defer?: (p: Promise<unknown>) => void, hops?: Hops): Promise<Principal | null> {
  return authenticateHash(env, await sha256Hex(token), defer, hops);
}

/** As `authenticate`, from the token's SHA-256 (the API's middleware, when its cache has no principal for it). */
export async function authenticateHash(env: Bindings, hash: string, defer?: (p: Promise<unknown>) => void, hops?: Hops): Promise<Principal | null> {
  const admin = await siteAdminPrincipal(env, hash, hops);
  if (admin) return admin;
  if (hops) hops.d1++;
  // The nearest instance first; a token it does not know may be newer than the replica, so the primary decides.
  const near = await traced(hops, "d1r", () => tokenByHash(fencedD1(env.DB, () => extraHop(hops, "d1p")).withSession("first-unconstrained"), hash));
  if (near) return principalOfToken(near, defer, env);
  if (hops) hops.d1++;
  return principalOfToken(await traced(hops, "d1p", () => tokenByHash(env.DB.withSession("first-primary"), hash)), defer, env);
}

/** The site admin when `hash` is ADMIN_TOKEN's (no D1 read once its user row is known), else null. */
export async function siteAdminPrincipal(env: Bindings, hash: string, hops?: Hops): Promise<Principal | null> {
  if (!env.ADMIN_TOKEN || !timingSafeEqual(hash, await adminTokenHash(env.ADMIN_TOKEN))) return null;
  const known = siteAdmin?.hash === hash;
  if (!known && hops) hops.d1++;
  const userId = await (known ? ensureSiteAdmin(env, hash) : traced(hops, "d1p", () => ensureSiteAdmin(env, hash)));
  return { kind: "user", userId, username: "admin", isSiteAdmin: true, tokenId: null };
}

/**
 * The principal of a token already read (by `tokenByHash`, or joined to a UI session), or null when
 * there is none, it expired, or its user or team is gone. `defer` (with `env`) refreshes `last-used-at`.
 */
export function principalOfToken(token: AuthToken | null, defer?: (p: Promise<unknown>) => void, env?: Bindings): Principal | null {
  if (!token) return null;
  if (token.expiredAt && Date.parse(token.expiredAt) <= Date.now()) return null;
  // A token older than its organisation's token TTL policy allows ceases to work, whatever its own expiry.
  if (typeof token.ttlCapMs === "number" && Date.parse(token.createdAt) + token.ttlCapMs <= Date.now()) return null;
  if (defer && env && (!token.lastUsedAt || Date.now() - Date.parse(token.lastUsedAt) > LAST_USED_RESOLUTION_MS)) {
    defer(touchToken(env.DB, token.id, nowIso()).catch(() => undefined));
  }
  switch (token.kind) {
    case "user":
      if (!token.userId || token.username === null) return null;
      return {
        kind: "user",
        userId: token.userId,
        username: token.username,
        isSiteAdmin: token.isSiteAdmin,
        tokenId: token.id,
        tokenCreatedAt: token.createdAt,
        twoFactor: token.twoFactor,
      };
    case "team":
      if (!token.teamId || !token.teamOrganizationId || token.organizationName === null) return null;
      return {
        kind: "team",
        teamId: token.teamId,
        organizationId: token.teamOrganizationId,
        organization: token.organizationName,
        serviceUserId: token.teamServiceUserId ?? `user-${token.teamId.slice(5)}`,
        tokenId: token.id,
      };
    case "organization":
      if (!token.organizationId || token.organizationName === null) return null;
      return {
        kind: "organization",
        organizationId: token.organizationId,
        organization: token.organizationName,
        serviceUserId: token.userId ?? `user-${token.id.slice(3)}`,
        tokenId: token.id,
      };
    case "audit-trails":
      // HCP's audit trail tokens authenticate integrations pulling the audit trail, and nothing else (requireAuth).
      if (!token.organizationId || token.organizationName === null) return null;
      return {
        kind: "organization",
        organizationId: token.organizationId,
        organization: token.organizationName,
        serviceUserId: `user-${token.id.slice(3)}`,
        tokenId: token.id,
        auditTrailsOnly: true,
      };
  }
  return null;
}

const limiter = new RateLimiter();

/** Runs `p` past the response where the runtime offers it (Hono throws when there is no execution context). */
function waitUntil(c: { executionCtx: { waitUntil(p: Promise<unknown>): void } }, p: Promise<unknown>): void {
  try {
    c.executionCtx.waitUntil(p);
  } catch {
    void p;
  }
}

type Ctx = Parameters<Parameters<typeof createMiddleware<AppEnv>>[0]>[0];

/** Host names of a local run (`npm start` binds wrangler dev to 127.0.0.1). */
const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * The budget key of an unauthenticated caller. On the platform the edge sets `CF-Connecting-IP` to
 * the connection's address (overwriting any client value). Locally the header is whatever the client
 * sent (miniflare only fills it in when absent), and the connection is always loopback: one budget.
 */
export function clientKey(c: Ctx): string {
  const host = new URL(c.req.url).hostname.toLowerCase();
  if (LOCAL_HOSTS.has(host) || host.endsWith(".localhost")) return "ip:local";
  return `ip:${c.req.header("CF-Connecting-IP") ?? "unknown"}`;
}

/** Routes without a token (signed blob URLs, openapi.json) are counted per client address. */
export const limitByClient = createMiddleware<AppEnv>(async (c, next) => {
  limit(c, clientKey(c));
  await next();
});

/** Counts a request against its key; over the limit answers 429 with the headers go-tfe backs off by. */
function limit(c: Ctx, key: string): void {
  const max = configuredLimit(c.env.RATE_LIMIT);
  if (max === 0) return;
  const d = limiter.take(key, max);
  for (const [k, v] of Object.entries(rateHeaders(d))) c.header(k, v);
  if (!d.allowed) {
    throw ApiError.of("rate_limited", { headers: { ...rateHeaders(d), "Retry-After": String(Math.ceil(d.resetSeconds)) } });
  }
}

/**
 * Every API request but discovery and the signed blob URLs needs `Authorization: Bearer <token>`. A token this
 * isolate resolved lately is taken from the principal cache and rechecked inside the request's first round trip
 * (src/auth/principal-cache.ts); otherwise it costs one D1 read here.
 */
export const requireAuth = createMiddleware<AppEnv>(async (c, next) => {
  const header = c.req.header("Authorization") ?? "";
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  const hops = hopsOf(c);
  const defer = (p: Promise<unknown>) => waitUntil(c, p);
  let principal: Principal | null = null;
  let gate: TokenGate | undefined;
  if (match?.[1].startsWith(RUN_TOKEN_PREFIX)) {
    // A run token: its signature and expiry here (no I/O); its run's index row rides the request's first read
    // batch as a cached principal's recheck does, so a final or unknown run answers 401 before any write.
    const claims = await verifyRunToken(c.env, match[1]);
    if (claims) {
      const run = runPrincipalOf(claims);
      const route = `${c.req.method} ${routePath(c, -1)}`;
      if (!runTokenMayCall(route, ROUTE_ACTIONS[route])) throw ApiError.of("not_found");
      principal = run;
      gate = new TokenGate(
        c.env,
        `run:${claims.runId}:${claims.claimId}`,
        (db) => runStandingStatement(db, claims.runId),
        (row) => runStillStands(run, (row ?? null) as RunStandingRow | null),
        hops,
      );
      c.set("tokenGate", gate);
    }
  } else if (match && match[1].length <= 512) {
    const hash = await sha256Hex(match[1]);
    // Never ADMIN_TOKEN's principal: site admins are not cached.
    principal = cachedPrincipal(hash);
    if (principal) {
      gate = new TokenGate(
        c.env,
        hash,
        (db) => tokenByHashStatement(db, hash),
        (row) => principalOfToken(authTokenOf(row), defer, c.env),
        hops,
      );
      c.set("tokenGate", gate);
    } else {
      principal = await authenticateHash(c.env, hash, defer, hops);
      if (principal) rememberPrincipal(hash, principal);
    }
  }
  // Unauthenticated requests are counted per client IP, authenticated ones per user.
  limit(c, principal ? principalKey(principal) : clientKey(c));
  if (!principal) throw ApiError.of("unauthorized");
  // An audit-trails token is valid for the audit trail alone; elsewhere it is no token at all.
  if (principal.kind === "organization" && principal.auditTrailsOnly && ROUTE_ACTIONS[`${c.req.method} ${routePath(c, -1)}`] !== "organization.audit-trail") {
    throw ApiError.of("unauthorized");
  }
  // Keeps the replica clock moving while the service is in use, so fenced reads seldom fall back to the primary.
  const beat = raiseReplicaClock(c.env.DB);
  if (beat) waitUntil(c, beat);
  c.set("principal", principal);
  await next();
  // A request that made no round trip still answers only a token that stands (throws 401 otherwise).
  if (gate) await gate.settled();
});
