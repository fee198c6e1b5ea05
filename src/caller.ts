import type { Context } from "hono";
import type { Principal } from "./auth/principal";
import type { AppEnv, Bindings } from "./env";

/**
 * What a service needs to know about a request, without HTTP: who calls, the Worker's bindings and
 * the D1 session its reads and writes go through. Routes build it once (`callerOf`); services and
 * repositories never see Hono's Context, so no module knows both HTTP and SQL.
 */
export interface Caller {
  env: Bindings;
  principal: Principal;
  /** Auth, permission and name lookups read the primary (see src/db.ts). */
  db: D1DatabaseSession;
}

export function callerOf(c: Context<AppEnv>): Caller {
  return { env: c.env, principal: c.get("principal"), db: c.env.DB.withSession("first-primary") };
}

/** A repository's handle: D1 itself or one of its sessions. */
export type Db = D1Database | D1DatabaseSession;
