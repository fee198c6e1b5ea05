/**
 * The isolate's principal cache, and the check that keeps it honest. A token resolved once is remembered
 * for a short time, so a request need not spend a round trip on it before its own reads. Revocation still takes
 * effect within the replica fence (src/platform/replica-fence.ts): the token's row is read again, from the nearest fenced instance, in the
 * request's first read batch (`TokenGate`), and the request fails with 401 before any write or Durable Object call
 * when the token no longer stands for the same principal.
 */
import { fencedD1 } from "../platform/replica-fence";
import type { Bindings } from "../env";
import { ApiError } from "../errors";
import { type CheckStatement, extraHop, type Gate, type Hops, traced } from "../platform/hops";
import type { Principal } from "./principal";

/** How long a remembered principal may stand in for the token read (each use is still rechecked). */
const TTL_MS = 60_000;
/** Entries kept per isolate; the oldest go first. */
const MAX_ENTRIES = 5_000;

const cache = new Map<string, { principal: Principal; until: number }>();

/** The remembered principal of a key (a token's digest, or a UI session's), or null. */
export function cachedPrincipal(key: string): Principal | null {
  const hit = cache.get(key);
  if (!hit) return null;
  if (hit.until > Date.now()) return hit.principal;
  cache.delete(key);
  return null;
}

/**
 * Remembers a principal. Site admins are not cached: a user who loses site admin must not keep its power for a
 * single request, and the recheck could only see the loss after the batch that used it.
 */
export function rememberPrincipal(key: string, principal: Principal): void {
  cache.delete(key);
  if (principal.kind === "user" && principal.isSiteAdmin) return;
  cache.set(key, { principal, until: Date.now() + TTL_MS });
  if (cache.size > MAX_ENTRIES) cache.delete(cache.keys().next().value as string);
}

export function forgetPrincipal(key: string): void {
  cache.delete(key);
}

/**
 * The recheck of a cached principal, once per request. It rides as the first statement of the request's first
 * read-only batch (or single read); before a write, a Durable Object call or the end of the request it runs alone.
 * Once it failed, every later round trip of the request fails too, so a swallowed error cannot let one through.
 */
export class TokenGate implements Gate {
  private state: "pending" | "running" | "passed" | "failed" = "pending";
  private running: Promise<void> = Promise.resolve();

  /**
   * `key`: the cache entry rechecked; `statement`: the read of what the principal rests on (a token, or a UI session
   * joined to its token); `toPrincipal`: the principal the row it returned (null: none) stands for now, or null.
   */
  constructor(
    private readonly env: Bindings,
    private readonly key: string,
    private readonly statement: (db: D1Database | D1DatabaseSession) => D1PreparedStatement,
    private readonly toPrincipal: (row: unknown) => Principal | null,
    private readonly hops: Hops,
  ) {}

  async through<T>(canRide: boolean, op: (check: CheckStatement | null) => Promise<{ value: T; check?: unknown }>): Promise<T> {
    if (this.state !== "pending" || !canRide) {
      await this.settled();
      return (await op(null)).value;
    }
    this.state = "running";
    let finished: () => void = () => undefined;
    this.running = new Promise<void>((resolve) => {
      finished = resolve;
    });
    try {
      const out = await op(this.statement);
      if (!this.settle(out.check ?? null)) throw ApiError.of("unauthorized");
      return out.value;
    } catch (err) {
      // The batch itself failed: the check did not happen, and whoever waits on it makes it alone.
      if (this.state === "running") this.state = "pending";
      throw err;
    } finally {
      finished();
    }
  }

  /** Resolves once the check passed (running it alone when nothing carried it); throws 401 when it failed. */
  async settled(): Promise<void> {
    for (;;) {
      if (this.state === "passed") return;
      if (this.state === "failed") throw ApiError.of("unauthorized");
      if (this.state === "pending") this.startAlone();
      await this.running;
    }
  }

  private startAlone(): void {
    this.state = "running";
    this.hops.d1++;
    // The nearest instance, fenced: a revocation reaches it within REPLICA_FENCE_MS (docs/consistency.md).
    this.running = traced(this.hops, "d1r", () =>
      this.statement(fencedD1(this.env.DB, () => extraHop(this.hops, "d1p")).withSession("first-unconstrained")).first(),
    ).then(
      (row) => {
        this.settle(row);
      },
      (err) => {
        this.state = "pending";
        throw err;
      },
    );
  }

  /** Whether the check failed (the UI sends the caller to sign in again). */
  get failed(): boolean {
    return this.state === "failed";
  }

  /** Whether the token still stands for a principal; the cache follows what the row says now. */
  private settle(row: unknown): boolean {
    const principal = this.toPrincipal(row);
    if (!principal) {
      forgetPrincipal(this.key);
      this.state = "failed";
      return false;
    }
    // The same token names the same user, team or organisation; what may change (a username, an organisation's
    // name, gaining site admin) only ever widens the next request's view, never this one's.
    rememberPrincipal(this.key, principal);
    this.state = "passed";
    return true;
  }
}
