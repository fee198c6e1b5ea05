/** Route-side helpers of the workspace routes: what reads the request or writes the response. */
import type { Context } from "hono";
import type { AppEnv } from "../env";
import type { Faults } from "./workspace.types";

/** Test-only fault injection, honoured only when FAULT_INJECTION=1. */
export function faultsOf(c: Context<AppEnv>): Faults | undefined {
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
  } as Faults;
}

/** Passes the index write's D1 bookmark to the client (read-your-writes on its next list read). */
export function acknowledge(c: Context<AppEnv>, result: { bookmark?: string | null }): void {
  if (result.bookmark) c.header("X-D1-Bookmark", result.bookmark);
}
