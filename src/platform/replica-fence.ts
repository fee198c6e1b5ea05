/** The replica fence: how stale a read replica may be and still gate a request (docs/consistency.md). */

/**
 * How far behind the primary a read replica may be and still gate a request (token checks, access batches, name
 * lookups, lists): a revocation or a removed grant stops working everywhere this long after the primary committed it
 * (docs/consistency.md). D1 states no bound on replica lag, so the service enforces its own.
 */
export const REPLICA_FENCE_MS = 5_000;

const CLOCK_READ = "SELECT at FROM replica_clock WHERE id = 1";
const CLOCK_RAISE = "UPDATE replica_clock SET at = ?1 WHERE id = 1 AND at < ?1";

/** Sessions that carry the fence: a check whose answer must not be older than the bound may ride them. */
const fenced = new WeakSet<object>();
export const isFenced = (session: object): boolean => fenced.has(session);

/**
 * D1 whose non-primary sessions are fenced: each of their reads carries the replica clock as an extra statement of the
 * same batch (no extra round trip), and a replica whose clock is older than `REPLICA_FENCE_MS` is not trusted: the
 * batch runs again on the primary, raising the clock there. `onPrimaryRetry` counts that extra round trip. A result
 * that names no serving region comes from local D1, which has no replicas, and needs no fence.
 */
export function fencedD1(db: D1Database, onPrimaryRetry?: () => void): D1Database {
  return new Proxy(db, {
    get(target, prop) {
      if (prop === "withSession") {
        return (constraint?: string) =>
          constraint === "first-primary"
            ? target.withSession(constraint)
            : (new FencedSession(target, constraint ?? "first-unconstrained", onPrimaryRetry) as unknown as D1DatabaseSession);
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** A statement as SQL and bindings, prepared on whichever session finally runs it. */
class Recipe {
  constructor(
    readonly owner: FencedSession,
    readonly sql: string,
    readonly params: unknown[] = [],
  ) {}
  bind(...values: unknown[]): Recipe {
    return new Recipe(this.owner, this.sql, values);
  }
  on(db: D1DatabaseSession): D1PreparedStatement {
    const stmt = db.prepare(this.sql);
    return this.params.length ? stmt.bind(...this.params) : stmt;
  }
  async first<T = unknown>(column?: string): Promise<T | null> {
    const [res] = await this.owner.batch([this as unknown as D1PreparedStatement]);
    const row = (res?.results?.[0] ?? null) as Record<string, unknown> | null;
    return (column ? (row?.[column] ?? null) : row) as T | null;
  }
  async all<T = unknown>(): Promise<D1Result<T>> {
    const [res] = await this.owner.batch([this as unknown as D1PreparedStatement]);
    return res as D1Result<T>;
  }
  run<T = unknown>(): Promise<D1Result<T>> {
    return this.all<T>();
  }
  async raw<T = unknown[]>(): Promise<T[]> {
    const res = await this.all<Record<string, unknown>>();
    return res.results.map((r) => Object.values(r) as T);
  }
}

class FencedSession {
  private readonly near: D1DatabaseSession;
  private last: D1DatabaseSession;
  constructor(
    private readonly db: D1Database,
    constraint: string,
    private readonly onPrimaryRetry?: () => void,
  ) {
    this.near = db.withSession(constraint);
    this.last = this.near;
    fenced.add(this);
  }
  prepare(sql: string): D1PreparedStatement {
    return new Recipe(this, sql) as unknown as D1PreparedStatement;
  }
  async batch<T = unknown>(statements: D1PreparedStatement[]): Promise<D1Result<T>[]> {
    const recipes = statements as unknown as Recipe[];
    const [clock, ...results] = await this.near.batch<T>([this.near.prepare(CLOCK_READ), ...recipes.map((r) => r.on(this.near))]);
    const now = Date.now();
    if (!replicaTooStale(clock, now)) return results;
    this.onPrimaryRetry?.();
    const primary = this.db.withSession("first-primary");
    this.last = primary;
    const [, ...fresh] = await primary.batch<T>([primary.prepare(CLOCK_RAISE).bind(now), ...recipes.map((r) => r.on(primary))]);
    return fresh;
  }
  getBookmark(): string | null {
    return this.last.getBookmark();
  }
}

/** Whether a batch's clock row shows a replica more than the bound behind (local D1 names no region: no replica). */
function replicaTooStale(clock: D1Result | undefined, now: number): boolean {
  const meta = clock?.meta as { served_by_primary?: boolean; served_by_region?: string } | undefined;
  if (meta?.served_by_primary === true || meta?.served_by_region === undefined) return false;
  const at = Number((clock?.results?.[0] as { at?: number } | undefined)?.at ?? 0);
  return at < now - REPLICA_FENCE_MS;
}

/** Raises the replica clock on the primary (off the request path), at most once per half bound per isolate. */
let lastRaise = 0;
export function raiseReplicaClock(db: D1Database): Promise<unknown> | null {
  const now = Date.now();
  if (now - lastRaise < REPLICA_FENCE_MS / 2) return null;
  lastRaise = now;
  return db
    .withSession("first-primary")
    .prepare(CLOCK_RAISE)
    .bind(now)
    .run()
    .catch(() => {
      lastRaise = 0;
    });
}
