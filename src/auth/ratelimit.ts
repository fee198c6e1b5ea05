/**
 * Rate limiting: N requests per second per user (the real service counts per user, not per token;
 * unauthenticated requests per client IP), default 30, `RATE_LIMIT=0` turns it off.
 *
 * Why an in-isolate fixed window: it costs one Map lookup per request (no I/O), where a Durable
 * Object counter would add a network hop to every request and the platform's rate-limiting binding
 * only counts over 10 s or 60 s periods. The price is precision: each isolate (per location) counts
 * on its own, so a client spread over several isolates can exceed the limit by that factor.
 */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  /** Seconds until the window resets (decimal, as go-tfe parses X-RateLimit-Reset). */
  resetSeconds: number;
}

export class RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly now: () => number = () => Date.now(),
    private readonly windowMs = 1000,
  ) {}

  take(key: string, limit: number): RateDecision {
    const t = this.now();
    let w = this.windows.get(key);
    if (!w || t - w.start >= this.windowMs) {
      w = { start: t, count: 0 };
      this.windows.set(key, w);
      if (this.windows.size > 10_000) this.prune(t);
    }
    w.count++;
    const resetSeconds = Math.max(0.001, (w.start + this.windowMs - t) / 1000);
    return { allowed: w.count <= limit, limit, resetSeconds };
  }

  private prune(t: number): void {
    for (const [k, w] of this.windows) if (t - w.start >= this.windowMs) this.windows.delete(k);
  }
}

/** The configured limit; 0 disables. */
export function configuredLimit(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === "") return 30;
  const n = Number(raw);
  return Number.isFinite(n) && n >= 0 ? Math.floor(n) : 30;
}

export function rateHeaders(d: RateDecision): Record<string, string> {
  return { "X-RateLimit-Limit": String(d.limit), "X-RateLimit-Reset": d.resetSeconds.toFixed(3) };
}
