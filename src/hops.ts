/**
 * Round trips per request, counted in code: D1 calls (a batch or one statement's first/all/run/raw)
 * and Durable Object RPCs. Services reach D1 and the DOs only through the Caller, whose handles
 * count here; `X-Hops` reports them when EXPOSE_HOPS=1 (the bench and the hop-count test read it).
 */
export interface Hops {
  d1: number;
  do: number;
}

const real = new WeakMap<object, D1PreparedStatement>();
const EXECUTE = new Set(["first", "all", "run", "raw"]);

function countedStatement(stmt: D1PreparedStatement, hops: Hops): D1PreparedStatement {
  const proxy = new Proxy(stmt, {
    get(target, prop) {
      if (prop === "bind") return (...values: unknown[]) => countedStatement(target.bind(...values), hops);
      const value = Reflect.get(target, prop, target);
      if (typeof prop === "string" && EXECUTE.has(prop) && typeof value === "function") {
        return (...args: unknown[]) => {
          hops.d1++;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  real.set(proxy, stmt);
  return proxy;
}

/** A D1 handle whose calls count; statements it prepares go back to D1 unwrapped in a batch. */
export function countedDb<T extends D1Database | D1DatabaseSession>(db: T, hops: Hops): T {
  return new Proxy(db, {
    get(target, prop) {
      if (prop === "prepare") return (sql: string) => countedStatement(target.prepare(sql), hops);
      if (prop === "withSession") return (...args: unknown[]) => countedDb((target as D1Database).withSession(...(args as [string])), hops);
      if (prop === "batch") {
        return (statements: D1PreparedStatement[]) => {
          hops.d1++;
          return target.batch(statements.map((s) => real.get(s) ?? s));
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** A Durable Object namespace whose stubs count each RPC. */
export function countedNamespace<T extends object>(ns: T, hops: Hops): T {
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
              return (s as unknown as Record<string, (...a: unknown[]) => unknown>)[method](...callArgs);
            };
          },
        });
      };
    },
  });
}

export const hopsHeader = (h: Hops) => `d1=${h.d1}, do=${h.do}`;
