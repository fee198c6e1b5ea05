/** Route-side helpers of the workspace routes: what reads the request or writes the response. */
import type { Context } from "hono";
import type { AppEnv } from "../env";

/** Passes the index write's D1 bookmark to the client (read-your-writes on its next list read). */
export function acknowledge(c: Context<AppEnv>, result: { bookmark?: string | null }): void {
  if (result.bookmark) c.header("X-D1-Bookmark", result.bookmark);
}
