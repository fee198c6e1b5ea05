import type { Context } from "hono";
import type { AppEnv } from "./env";

/**
 * D1 access through the Sessions API. Auth, permission and name lookups always read the
 * primary; list reads may use replicas when the client echoes the bookmark of its writes.
 */
export function primary(c: Context<AppEnv>): D1DatabaseSession {
  return c.env.DB.withSession("first-primary");
}

/** A session for list reads: the client's bookmark (read-your-writes) or the primary. */
export function listSession(c: Context<AppEnv>): D1DatabaseSession {
  const bookmark = c.req.header("X-D1-Bookmark");
  return c.env.DB.withSession(bookmark && /^[\w-]{1,200}$/.test(bookmark) ? bookmark : "first-primary");
}

/** Returns the session's bookmark to the client so its next list read sees its writes. */
export function exposeBookmark(c: Context<AppEnv>, session: D1DatabaseSession): void {
  const bookmark = session.getBookmark();
  if (bookmark) c.header("X-D1-Bookmark", bookmark);
}
