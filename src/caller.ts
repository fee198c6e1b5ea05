import type { Principal } from "./auth/principal";
import type { Bindings } from "./env";
import type { Faults } from "./workspaces/workspace.types";

/**
 * What a service needs to know about a request, without HTTP: who calls, the Worker's bindings and
 * the D1 session its reads and writes go through. Routes build it once (`callerOf` in
 * src/auth/caller.http.ts); services and repositories never see Hono's Context, so no module knows
 * both HTTP and SQL.
 */
export interface Caller {
  env: Bindings;
  principal: Principal;
  /** The primary: writes, and reads that must see every acknowledged write (docs/consistency.md). */
  db: D1DatabaseSession;
  /**
   * The nearest instance, fenced (src/platform/replica-fence.ts): reads that gate a request (access, name lookups, lists) and may trail
   * the primary by at most `REPLICA_FENCE_MS`.
   */
  near: D1DatabaseSession;
  /** The actions `authorize` let through for this request (the router checks the route's is among them). */
  authorized?: Set<string>;
  /** Work to finish after the answer (the request's `waitUntil`): absent where there is none. */
  defer?: (p: Promise<unknown>) => void;
  /** The service's own origin as this request reached it (outbound requests never go there). */
  origin?: string;
  /** The request's id (`X-Request-Id`): audit events name it. */
  requestId?: string;
  /** Test-only (FAULT_INJECTION=1): the request's X-Fault-* headers; `env.WORKSPACES` applies them to each RPC. */
  faults?: Faults;
}

/** A repository's handle: D1 itself or one of its sessions. */
export type Db = D1Database | D1DatabaseSession;
