// Password hashes (PBKDF2-SHA-256, the count recorded per hash) and the lock-out rules, without I/O.
import { describe, expect, it } from "vitest";
import { hashPassword, PASSWORD_ITERATIONS, parsePasswordHash, passwordProblems, verifyPassword } from "../../src/auth/password";
import { accountRetryAt, addressRetryAt, FAILURE_WINDOW_MS } from "../../src/passwords/passwords.rules";

describe("password hashes", () => {
  it("records the scheme, the iteration count, a random salt and the hash", async () => {
    const a = await hashPassword("correct horse battery");
    const b = await hashPassword("correct horse battery");
    expect(a).toMatch(new RegExp(`^pbkdf2-sha256\\$${PASSWORD_ITERATIONS}\\$[A-Za-z0-9+/=]{24}\\$[A-Za-z0-9+/=]{44}$`));
    // A fresh salt each time: the same password never gives the same row.
    expect(a).not.toBe(b);
    expect(await verifyPassword("correct horse battery", a)).toEqual({ ok: true, rehash: false });
    expect(await verifyPassword("correct horse batterY", a)).toEqual({ ok: false, rehash: false });
    expect(await verifyPassword("", a)).toEqual({ ok: false, rehash: false });
  });

  it("verifies with the count the hash names, and asks for a re-hash when it is below today's", async () => {
    const old = await hashPassword("an older password", 2_000);
    expect(parsePasswordHash(old)?.iterations).toBe(2_000);
    expect(await verifyPassword("an older password", old)).toEqual({ ok: true, rehash: true });
    // The same salt and hash read with another count would not match: the count is part of what is checked.
    expect(await verifyPassword("an older password", old.replace("$2000$", "$2001$"))).toEqual({ ok: false, rehash: false });
  });

  it("matches nothing with an unreadable or out-of-bounds hash", async () => {
    const good = await hashPassword("whatever it is");
    for (const bad of [
      "",
      "plain",
      good.replace("pbkdf2-sha256", "pbkdf2-sha1"),
      good.replace(/\$\d+\$/, "$999999999$"),
      good.replace(/\$\d+\$/, "$10$"),
      `${good}$x`,
    ]) {
      expect(await verifyPassword("whatever it is", bad)).toEqual({ ok: false, rehash: false });
    }
  });

  it("states each rule a new password breaks", () => {
    expect(passwordProblems("short", "short")).toEqual(["Password is too short (minimum is 10 characters)"]);
    expect(passwordProblems("long enough!", "long enough?")).toEqual(["Password confirmation doesn't match Password"]);
    expect(passwordProblems("x".repeat(257), "x".repeat(257))).toEqual(["Password is too long (maximum is 256 characters)"]);
    expect(passwordProblems("long enough!", "long enough!")).toEqual([]);
  });
});

describe("sign-in lock-out rules", () => {
  const now = Date.parse("2030-01-01T12:00:00.000Z");
  const ago = (ms: number) => new Date(now - ms).toISOString();

  it("lets an account try until its fifth failure, then waits a growing, capped time", () => {
    expect(accountRetryAt({ count: 4, first: ago(60_000), last: ago(0) }, now)).toBeNull();
    expect(accountRetryAt({ count: 5, first: ago(60_000), last: ago(0) }, now)).toBe(now + 30_000);
    expect(accountRetryAt({ count: 6, first: ago(60_000), last: ago(0) }, now)).toBe(now + 60_000);
    expect(accountRetryAt({ count: 7, first: ago(60_000), last: ago(0) }, now)).toBe(now + 120_000);
    // Capped: never longer than the counting window.
    expect(accountRetryAt({ count: 40, first: ago(60_000), last: ago(0) }, now)).toBe(now + FAILURE_WINDOW_MS);
    // Once the wait has passed, it may try again.
    expect(accountRetryAt({ count: 5, first: ago(120_000), last: ago(31_000) }, now)).toBeNull();
  });

  it("makes an address wait from its twentieth failure until its oldest leaves the window", () => {
    expect(addressRetryAt({ count: 19, first: ago(60_000), last: ago(0) }, now)).toBeNull();
    expect(addressRetryAt({ count: 20, first: ago(60_000), last: ago(0) }, now)).toBe(now - 60_000 + FAILURE_WINDOW_MS);
  });
});
