import { isFenced } from "./replica-fence";
import type { Faults } from "./workspaces/workspace.types";

/**
 * Round trips per request, counted in code: D1 calls (a batch or one statement's first/all/run/raw)
 * and Durable Object RPCs. Services reach D1 and the DOs only through the Caller, whose handles
 * count here; `X-Hops` reports them when EXPOSE_HOPS=1 (the bench and the hop-count test read it).
 */
export interface Hops {
  d1: number;
  do: number;
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
const EXECUTE = new Set(["first", "all", "run", "raw"]);
/** Durable Object methods that only read. */
const READ_RPCS = new Set(["get"]);
// A WITH clause reads too, unless its statement writes.
const READ_SQL = /^\s*(SELECT\b|WITH\b(?![\s\S]*\b(INSERT|UPDATE|DELETE|REPLACE)\b))/i;

/** `reads`: the statement only reads and runs on the primary, so a gate's check may ride with it. */
function countedStatement(stmt: D1PreparedStatement, reads: boolean, hops: Hops, db: D1Database | D1DatabaseSession, gate?: Gate): D1PreparedStatement {
  const proxy = new Proxy(stmt, {
    get(target, prop) {
      if (prop === "bind") return (...values: unknown[]) => countedStatement(target.bind(...values), reads, hops, db, gate);
      const value = Reflect.get(target, prop, target);
      if (typeof prop === "string" && EXECUTE.has(prop) && typeof value === "function") {
        return (...args: unknown[]) => {
          hops.d1++;
          const call = () => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          if (!gate) return call();
          return gate.through(reads && prop !== "raw", async (check) => {
            if (!check) return { value: await call() };
            const [checked, result] = await db.batch([check(db), target]);
            return { value: singleResult(prop, args, result), check: checked?.results?.[0] ?? null };
          });
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  real.set(proxy, stmt);
  if (reads) readOnly.add(proxy);
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
export function countedDb<T extends D1Database | D1DatabaseSession>(db: T, hops: Hops, gate?: Gate, primary = true): T {
  return new Proxy(db, {
    get(target, prop) {
      if (prop === "prepare") return (sql: string) => countedStatement(target.prepare(sql), primary && READ_SQL.test(sql), hops, target, gate);
      // Only the primary or a fenced session (src/db.ts) may carry the check: an unfenced replica could show a
      // revoked token for as long as it lags.
      if (prop === "withSession") {
        return (...args: unknown[]) => {
          const session = (target as D1Database).withSession(...(args as [string]));
          return countedDb(session, hops, gate, args[0] === "first-primary" || isFenced(session));
        };
      }
      if (prop === "batch") {
        return (statements: D1PreparedStatement[]) => {
          hops.d1++;
          const unwrapped = statements.map((s) => real.get(s) ?? s);
          if (!gate) return target.batch(unwrapped);
          const canRide = primary && statements.length > 0 && statements.every((s) => readOnly.has(s));
          return gate.through(canRide, async (check) => {
            if (!check) return { value: await target.batch(unwrapped) };
            const [checked, ...results] = await target.batch([check(target), ...unwrapped]);
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
 */
export function countedNamespace<T extends object>(ns: T, hops: Hops, gate?: Gate, faults?: Faults): T {
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
              const rpc = s as unknown as Record<string, (...a: unknown[]) => unknown>;
              const call = () => (faults ? rpc.withFaults(faults, method, callArgs) : rpc[method](...callArgs));
              // A read of the object may run beside the request's check: the answer still waits for the check.
              return gate && !READ_RPCS.has(method) ? gate.through(false, async () => ({ value: await call() })) : call();
            };
          },
        });
      };
    },
  });
}

export const hopsHeader = (h: Hops) => `d1=${h.d1}, do=${h.do}`;
