/** What every UI route shares: its `Caller` (as API routes build theirs) and the paths of its pages. */
import type { Context } from "hono";
import { countedEnv, deferOf } from "../auth/caller.http";
import type { Caller } from "../caller";
import type { AppEnv } from "../env";
import type { Readable } from "../workspaces/workspaces.service";

export type Ctx = Context<AppEnv>;

/** Every page's Content-Security-Policy (a page may widen its own: the login page's form-action). */
export const UI_CSP = "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** The service `Caller` of a UI request: the session's principal; D1 and DO calls counted (X-Hops), as the API's. */
export function callerOf(c: Ctx): Caller {
  const env = countedEnv(c);
  let authz = c.get("authz");
  if (!authz) {
    authz = { authorized: new Set() };
    c.set("authz", authz);
  }
  return {
    env,
    principal: c.get("principal"),
    db: env.DB.withSession("first-primary"),
    near: env.DB.withSession("first-unconstrained"),
    authorized: authz.authorized,
    defer: deferOf(c),
    origin: new URL(c.req.url).origin,
  };
}

export const wsPath = (org: string, name: string) => `/app/${encodeURIComponent(org)}/workspaces/${encodeURIComponent(name)}`;
export const orgPath = (org: string, page: "workspaces" | "projects") => `/app/${encodeURIComponent(org)}/${page}`;

/** The organisation and the workspace a page's path names (`:organization`, `:name`). */
export const orgOf = (c: Ctx) => c.req.param("organization") ?? "";
export const nameOf = (c: Ctx) => c.req.param("name") ?? "";

/** The workspace's permission flags, as its API resource shows them (`permissions`). */
export const flagsOf = (r: Readable) => (r.scope.serialize(r.record).attributes as { permissions: Record<string, boolean> }).permissions;
