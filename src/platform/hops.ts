import { isFenced } from "./replica-fence";
import type { Faults } from "../workspaces/workspace.types";

/**
 * Round trips per request, counted in code: D1 calls (a batch or one statement's first/all/run/raw)
 * and Durable Object RPCs. Services reach D1 and the DOs only through the Caller, whose handles
 * count here; `X-Hops` reports them when EXPOSE_HOPS=1 (the bench and the hop-count test read it), and
 * `X-Hop-Trace` where each went and which ran side by side (`bench/edge.mjs` prices them by distance).
 */
export interface Hops {
  d1: number;
  do: number;
  trace?: HopTrace;
}

/**
 * Where a round trip goes, which is what it costs far from the D1 primary: `d1p` a read the primary must answer (no
 * session, or the first query of a `first-primary` session), `d1w` a write (always the primary), `d1r` a read that
 * a nearby replica may answer (a `first-unconstrained` or bookmark session, or a `first-primary` session after its
 * first answer), `do` a Durable Object call, `do-create` the call that creates the workspace's object.
 */
export type HopKind = "d1p" | "d1w" | "d1r" | "do" | "do-create";

/** One round trip; `indexWrites`: D1 writes the object made and awaited before it answered. */
export interface HopEntry {
  kind: HopKind;
  indexWrites?: number;
}

/** The round trips in the order they started: a step holds those started while another of the step was in flight. */
export interface HopTrace {
  steps: HopEntry[][];
  inFlight: number;
}

/** Runs round trip `io` and records it in `hops`' trace (counting stays with the caller). */
export function traced<T>(hops: Hops | undefined, kind: HopKind, io: (entry: HopEntry) => Promise<T>): Promise<T> {
  const entry: HopEntry = { kind };
  if (!hops) return io(entry);
  hops.trace ??= { steps: [], inFlight: 0 };
  const trace = hops.trace;
  const step = trace.inFlight > 0 ? trace.steps[trace.steps.length - 1] : undefined;
  if (step) step.push(entry);
  else trace.steps.push([entry]);
  trace.inFlight++;
  const done = () => {
    trace.inFlight--;
  };
  let running: Promise<T>;
  try {
    running = io(entry);
  } catch (err) {
    done();
    throw err;
  }
  return running.then(
    (value) => {
      done();
      return value;
    },
    (err) => {
      done();
      throw err;
    },
  );
}

/**
 * A check that must pass before the request's round trips take effect (the cached principal's recheck,
 * src/auth/principal-cache.ts). `through` runs a round trip once it may: when the check is still to be made and
 * the round trip only reads, `op` gets the check's statement to run first in the same batch and hands back its first
 * row; otherwise the check runs alone first.
 */
export interface Gate {
  through<T>(canRide: boolean, op: (check: CheckStatement | null) => Promise<{ value: T; check?: unknown }>): Promise<T>;
}

/** The check's statement, prepared on the handle whose batch carries it. */
export type CheckStatement = (db: D1Database | D1DatabaseSession) => D1PreparedStatement;

const real = new WeakMap<object, D1PreparedStatement>();
/** Statements that only read, on the primary: a check may ride along with them. */
const readOnly = new WeakSet<object>();
/** Statements that write (whatever the handle: writes always reach the primary). */
const writes = new WeakSet<object>();
const EXECUTE = new Set(["first", "all", "run", "raw"]);
/** Durable Object methods that only read. */
const READ_RPCS = new Set(["get"]);
// A WITH clause reads too, unless its statement writes.
const READ_SQL = /^\s*(SELECT\b|WITH\b(?![\s\S]*\b(INSERT|UPDATE|DELETE|REPLACE)\b))/i;

/**
 * Where a handle's reads go: `primary` (no session), `first-primary` until its first answer (then, as D1's Sessions
 * API allows, a replica at least that fresh), or `replica` (an unconstrained or bookmark session).
 */
export interface Place {
  mode: "primary" | "first-primary" | "replica";
  answered: boolean;
  /** A fenced session (src/platform/replica-fence.ts): its reads may carry the request's check, though a replica answers. */
  fenced?: boolean;
}

function hopKind(place: Place, write: boolean): HopKind {
  if (write) return "d1w";
  if (place.mode === "primary" || (place.mode === "first-primary" && !place.answered)) return "d1p";
  return "d1r";
}

/** A D1 round trip on `place`, traced; the place has answered once it resolves. */
function d1Hop<T>(hops: Hops, place: Place, write: boolean, io: () => Promise<T>): Promise<T> {
  return traced(hops, hopKind(place, write), async () => {
    const value = await io();
    place.answered = true;
    return value;
  });
}

/** `reads`: the statement only reads and runs on the primary, so a gate's check may ride with it. */
function countedStatement(
  stmt: D1PreparedStatement,
  reads: boolean,
  write: boolean,
  hops: Hops,
  db: D1Database | D1DatabaseSession,
  place: Place,
  gate?: Gate,
): D1PreparedStatement {
  const proxy = new Proxy(stmt, {
    get(target, prop) {
      if (prop === "bind") return (...values: unknown[]) => countedStatement(target.bind(...values), reads, write, hops, db, place, gate);
      const value = Reflect.get(target, prop, target);
      if (typeof prop === "string" && EXECUTE.has(prop) && typeof value === "function") {
        return (...args: unknown[]) => {
          hops.d1++;
          const call = () => d1Hop(hops, place, write, () => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args));
          if (!gate) return call();
          return gate.through(reads && prop !== "raw", async (check) => {
            if (!check) return { value: await call() };
            const [checked, result] = await d1Hop(hops, place, write, () => db.batch([check(db), target]));
            return { value: singleResult(prop, args, result), check: checked?.results?.[0] ?? null };
          });
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  real.set(proxy, stmt);
  if (reads) readOnly.add(proxy);
  if (write) writes.add(proxy);
  return proxy;
}

/** What `first`/`all`/`run` would have answered, from the statement's result in a batch. */
function singleResult(method: string, args: unknown[], result: D1Result | undefined): unknown {
  if (method !== "first") return result;
  const row = (result?.results?.[0] ?? null) as Record<string, unknown> | null;
  const column = args[0];
  return typeof column === "string" ? (row?.[column] ?? null) : row;
}

/** A D1 handle whose calls count (and pass `gate`); statements it prepares go back to D1 unwrapped in a batch. */
export function countedDb<T extends D1Database | D1DatabaseSession>(db: T, hops: Hops, gate?: Gate, place: Place = { mode: "primary", answered: false }): T {
  const primary = place.mode !== "replica" || place.fenced === true;
  return new Proxy(db, {
    get(target, prop) {
      if (prop === "prepare") {
        return (sql: string) => {
          const reads = READ_SQL.test(sql);
          return countedStatement(target.prepare(sql), primary && reads, !reads, hops, target, place, gate);
        };
      }
      // Only the primary or a fenced session (src/platform/replica-fence.ts) may carry the check: an unfenced replica could show
      // a revoked token for as long as it lags.
      if (prop === "withSession") {
        return (...args: unknown[]) => {
          const session = (target as D1Database).withSession(...(args as [string]));
          return countedDb(session, hops, gate, {
            mode: args[0] === "first-primary" ? "first-primary" : "replica",
            answered: false,
            fenced: isFenced(session),
          });
        };
      }
      if (prop === "batch") {
        return (statements: D1PreparedStatement[]) => {
          hops.d1++;
          const unwrapped = statements.map((s) => real.get(s) ?? s);
          const write = statements.some((s) => writes.has(s));
          if (!gate) return d1Hop(hops, place, write, () => target.batch(unwrapped));
          const canRide = primary && statements.length > 0 && statements.every((s) => readOnly.has(s));
          return gate.through(canRide, async (check) => {
            if (!check) return { value: await d1Hop(hops, place, write, () => target.batch(unwrapped)) };
            const [checked, ...results] = await d1Hop(hops, place, write, () => target.batch([check(target), ...unwrapped]));
            return { value: results, check: checked?.results?.[0] ?? null };
          });
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * A Durable Object namespace whose stubs count each RPC (made once `gate` passed). With a request's test-only `faults`
 * (the Caller's, FAULT_INJECTION=1), each RPC goes through the object's `withFaults`, which applies them to that call.
 * With `traceIndexWrites` (EXPOSE_HOPS=1), each goes through the object's `traced`, which also says how many index
 * writes the object awaited before it answered: a round trip of its own, from the object to the D1 primary.
 */
export function countedNamespace<T extends object>(ns: T, hops: Hops, gate?: Gate, faults?: Faults, traceIndexWrites = false): T {
  return new Proxy(ns, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (prop !== "getByName" && prop !== "get") return typeof value === "function" ? value.bind(target) : value;
      return (...args: unknown[]) => {
        const stub = (value as (...a: unknown[]) => object).apply(target, args);
        return new Proxy(stub, {
          get(s, method) {
            const fn = Reflect.get(s, method);
            if (typeof fn !== "function" || typeof method !== "string" || method === "then") return fn;
            // An RPC stub answers any property as a remote method (even `apply`): call it as a method.
            return (...callArgs: unknown[]) => {
              hops.do++;
              const rpc = s as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
              const kind: HopKind = method === "create" ? "do-create" : "do";
              const call = () =>
                traced(hops, kind, async (entry) => {
                  if (!traceIndexWrites) return faults ? rpc.withFaults(faults, method, callArgs) : rpc[method](...callArgs);
                  const out = (await rpc.traced(faults ?? null, method, callArgs)) as { value: unknown; indexWrites: number };
                  if (out.indexWrites > 0) entry.indexWrites = out.indexWrites;
                  return out.value;
                });
              // A read of the object may run beside the request's check: the answer still waits for the check.
              return gate && !READ_RPCS.has(method) ? gate.through(false, async () => ({ value: await call() })) : call();
            };
          },
        });
      };
    },
  });
}

/** A round trip made inside another's (a fenced read run again on the primary): counted, and traced after it. */
export function extraHop(hops: Hops | undefined, kind: HopKind): void {
  if (!hops) return;
  hops.d1++;
  hops.trace ??= { steps: [], inFlight: 0 };
  hops.trace.steps.push([{ kind }]);
}

export const hopsHeader = (h: Hops) => `d1=${h.d1}, do=${h.do}`;

/**
 * The trace as `X-Hop-Trace`: steps in order, separated by ", "; round trips that overlapped within a step by " | ";
 * `+d1w` after a Durable Object call for each index write it awaited before answering. For example
 * `d1p, d1w, do-create+d1w`: a primary read, then a write, then the object's creation with its index write.
 */
export const hopTraceHeader = (h: Hops) =>
  (h.trace?.steps ?? []).map((step) => step.map((e) => e.kind + "+d1w".repeat(e.indexWrites ?? 0)).join(" | ")).join(", ");
