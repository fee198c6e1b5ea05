import { createMiddleware } from "hono/factory";
import { ApiError } from "../errors";
import type { AppEnv, Bindings } from "../env";
import { newId, nowIso, sha256Hex } from "../ids";
import { principalKey, type Principal } from "./principal";
import { configuredLimit, rateHeaders, RateLimiter } from "../ratelimit/ratelimit";

interface TokenRow {
  id: string;
  kind: "user" | "team" | "organization";
  user_id: string | null;
  team_id: string | null;
  organization_name: string | null;
  expired_at: string | null;
  username: string | null;
  is_site_admin: number | null;
  team_org: string | null;
  team_service_user: string | null;
}

/** Per-isolate memo of the site admin's user id (the row is created once, idempotently). */
let siteAdmin: { hash: string; userId: string } | null = null;

/** Ensures the site-admin user exists and returns its id. */
export async function ensureSiteAdmin(env: Bindings, tokenHash: string): Promise<string> {
  if (siteAdmin && siteAdmin.hash === tokenHash) return siteAdmin.userId;
  const db = env.DB.withSession("first-primary");
  await db
    .prepare(
      `INSERT INTO users (id, username, email, is_site_admin, created_at) VALUES (?, 'admin', 'admin@localhost', 1, ?)
       ON CONFLICT(username) DO NOTHING`,
    )
    .bind(newId("user"), nowIso())
    .run();
  const row = await db.prepare("SELECT id FROM users WHERE username = 'admin'").first<{ id: string }>();
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

/** Resolves a bearer token to a principal, or null when it is unknown, deleted or expired. */
export async function authenticate(env: Bindings, token: string): Promise<Principal | null> {
  const hash = await sha256Hex(token);
  if (env.ADMIN_TOKEN && timingSafeEqual(hash, await sha256Hex(env.ADMIN_TOKEN))) {
    const userId = await ensureSiteAdmin(env, hash);
    return { kind: "user", userId, username: "admin", isSiteAdmin: true, tokenId: null };
  }
  const row = await env.DB.withSession("first-primary")
    .prepare(
      `SELECT k.id, k.kind, k.user_id, k.team_id, k.organization_name, k.expired_at,
              u.username, u.is_site_admin, t.organization_name AS team_org, t.service_user_id AS team_service_user
       FROM tokens k
       LEFT JOIN users u ON u.id = k.user_id
       LEFT JOIN teams t ON t.id = k.team_id
       WHERE k.token_hash = ?`,
    )
    .bind(hash)
    .first<TokenRow>();
  if (!row) return null;
  if (row.expired_at && Date.parse(row.expired_at) <= Date.now()) return null;
  switch (row.kind) {
    case "user":
      if (!row.user_id || row.username === null) return null;
      return { kind: "user", userId: row.user_id, username: row.username, isSiteAdmin: row.is_site_admin === 1, tokenId: row.id };
    case "team":
      if (!row.team_id || !row.team_org) return null;
      return {
        kind: "team",
        teamId: row.team_id,
        organization: row.team_org,
        serviceUserId: row.team_service_user ?? `user-${row.team_id.slice(5)}`,
        tokenId: row.id,
      };
    case "organization":
      if (!row.organization_name) return null;
      return {
        kind: "organization",
        organization: row.organization_name,
        serviceUserId: row.user_id ?? `user-${row.id.slice(3)}`,
        tokenId: row.id,
      };
  }
  return null;
}

const limiter = new RateLimiter();

/** Counts a request against its key; over the limit answers 429 with the headers go-tfe backs off by. */
function limit(c: Parameters<Parameters<typeof createMiddleware<AppEnv>>[0]>[0], key: string): void {
  const max = configuredLimit(c.env.RATE_LIMIT);
  if (max === 0) return;
  const d = limiter.take(key, max);
  for (const [k, v] of Object.entries(rateHeaders(d))) c.header(k, v);
  if (!d.allowed) {
    throw ApiError.of("rate_limited", { headers: { ...rateHeaders(d), "Retry-After": String(Math.ceil(d.resetSeconds)) } });
  }
}

/** Every API request but discovery and the signed blob URLs needs `Authorization: Bearer <token>`. */
export const requireAuth = createMiddleware<AppEnv>(async (c, next) => {
  const header = c.req.header("Authorization") ?? "";
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  const principal = match && match[1].length <= 512 ? await authenticate(c.env, match[1]) : null;
  // Unauthenticated requests are counted per client IP, authenticated ones per user.
  limit(c, principal ? principalKey(principal) : `ip:${c.req.header("CF-Connecting-IP") ?? "local"}`);
  if (!principal) throw ApiError.of("unauthorized");
  c.set("principal", principal);
  await next();
});
