/** Building a service's `Caller` from a request, and the router's check of the route's declared action. */
import type { Context } from "hono";
import { routePath } from "hono/route";
import type { Caller } from "../caller";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";
import { fencedD1 } from "../platform/replica-fence";
import { countedDb, countedNamespace, extraHop, type Hops } from "../platform/hops";
import { ROUTE_ACTIONS } from "../jsonapi/define-route";

/** The request's injected faults, as the Caller carries them (their shape is the workspace object's). */
type Faults = NonNullable<Caller["faults"]>;

export function callerOf(c: Context<AppEnv>): Caller {
  const declared = ROUTE_ACTIONS[`${c.req.method} ${c.req.routePath}`];
  // Fail closed: a route declared without an action serves nothing.
  if (!declared) throw ApiError.of("internal", { detail: `No requirement declared for ${c.req.method} ${c.req.routePath}` });
  let record = c.get("authz");
  if (!record) {
    record = { authorized: new Set() };
    c.set("authz", record);
  }
  const faults = faultsOf(c);
  const env = countedEnv(c, faults);
  return {
    env,
    principal: c.get("principal"),
    db: env.DB.withSession("first-primary"),
    near: env.DB.withSession("first-unconstrained"),
    authorized: record.authorized,
    defer: deferOf(c),
    origin: new URL(c.req.url).origin,
    requestId: c.get("requestId"),
    ...(faults ? { faults } : {}),
  };
}

/** The request's `waitUntil` (a test's direct call of the app may have no execution context). */
export function deferOf(c: Context<AppEnv>): (p: Promise<unknown>) => void {
  return (p) => {
    try {
      c.executionCtx.waitUntil(p);
    } catch {
      void p;
    }
  };
}

/** Test-only fault injection from the X-Fault-* headers, read only when FAULT_INJECTION=1. */
function faultsOf(c: Context<AppEnv>): Faults | undefined {
  if (c.env.FAULT_INJECTION !== "1") return undefined;
  const n = Number(c.req.header("X-Fault-Fail-Index-Writes") ?? "0");
  // Holds the index write after the DO commit (the crash test kills the process inside that window).
  const delay = Number(c.req.header("X-Fault-Delay-Index-Writes-Ms") ?? "0");
  const create = c.req.header("X-Fault-Fail-Create");
  const failCreate = create === "result" || create === "throw" || create === "throw-after-commit" ? create : undefined;
  if (!(n > 0) && !(delay > 0) && !failCreate) return undefined;
  return {
    ...(n > 0 ? { failIndexWrites: Math.min(n, 100) } : {}),
    ...(delay > 0 ? { delayIndexWritesMs: Math.min(delay, 10_000) } : {}),
    ...(failCreate ? { failCreate } : {}),
  };
}

/**
 * The request's bindings with D1 and the workspace DOs counting their round trips, behind the token's recheck
 * (src/platform/hops.ts); the workspace stubs carry the request's test-only `faults`.
 */
export function countedEnv(c: Context<AppEnv>, faults?: Faults): AppEnv["Bindings"] {
  const hops = hopsOf(c);
  const gate = c.get("tokenGate");
  const traceIndexWrites = c.env.EXPOSE_HOPS === "1";
  return {
    ...c.env,
    DB: countedDb(
      fencedD1(c.env.DB, () => extraHop(hops, "d1p")),
      hops,
      gate,
    ),
    WORKSPACES: countedNamespace(c.env.WORKSPACES, hops, gate, faults, traceIndexWrites),
  };
}

/** The request's round-trip counter (src/platform/hops.ts). */
export function hopsOf(c: Context<AppEnv>): Hops {
  let hops = c.get("hops");
  if (!hops) {
    hops = { d1: 0, do: 0 };
    c.set("hops", hops);
  }
  return hops;
}

/**
 * After a successful answer: the route's declared action must have been authorised (routes declared
 * `authenticated` need nothing beyond a valid token). A route whose service checked something else,
 * or nothing, is a bug the authorisation-matrix test would otherwise miss, so it answers 500 rather
 * than data. The route is the last one Hono matched (middleware come first).
 */
export function declaredActionHeld(c: Context<AppEnv>): boolean {
  const declared = ROUTE_ACTIONS[`${c.req.method} ${routePath(c, -1)}`];
  if (!declared || declared === "authenticated") return true;
  return c.get("authz")?.authorized.has(declared) ?? false;
}
