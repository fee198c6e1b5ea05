import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { makeUser } from "../fixtures";
import { app } from "../../src/index";
import { RateLimiter } from "../../src/auth/ratelimit";

describe("rate limiter", () => {
  it("allows the limit per window per key and reports decimal seconds until the reset", () => {
    let now = 1_000;
    const rl = new RateLimiter(() => now);
    expect([1, 2, 3].map(() => rl.take("a", 2).allowed)).toEqual([true, true, false]);
    expect(rl.take("b", 2).allowed).toBe(true); // per key
    now += 400;
    const d = rl.take("a", 2);
    expect(d.allowed).toBe(false);
    expect(d.resetSeconds).toBeCloseTo(0.6, 5);
    now += 600;
    expect(rl.take("a", 2).allowed).toBe(true);
  });

  it("answers 429 with the headers go-tfe backs off by once a user exceeds the configured rate; other users are unaffected", async () => {
    const user = await makeUser();
    const limited = { ...env, RATE_LIMIT: "3" };
    const call = () => app.request("http://localhost/api/v2/ping", { headers: { Authorization: `Bearer ${user.token}` } }, limited);
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 6; i++) {
      last = await call();
      statuses.push(last.status);
    }
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(2);
    const res = last!;
    expect(res.status).toBe(429);
    expect(res.headers.get("X-RateLimit-Limit")).toBe("3");
    expect(res.headers.get("X-RateLimit-Reset")).toMatch(/^\d+\.\d{3}$/);
    expect(Number(res.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
    const body = (await res.json()) as { errors: Array<{ status: string; title: string; detail: string }> };
    expect(body.errors[0]).toEqual({ status: "429", title: "Too many requests", detail: "You have exceeded the API's rate limit." });
    const ok = await app.request("http://localhost/api/v2/ping", { headers: { Authorization: "Bearer test-admin-token" } }, limited);
    expect(ok.status).toBe(204);
    expect(ok.headers.get("X-RateLimit-Limit")).toBe("3");
  });
});
