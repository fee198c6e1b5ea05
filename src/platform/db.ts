import type { Context } from "hono";
import type { AppEnv } from "../env";
import { fencedD1 } from "./replica-fence";

/** The primary: writes, and reads that must see every acknowledged write (docs/consistency.md). */
export function primary(c: Context<AppEnv>): D1DatabaseSession {
  return c.env.DB.withSession("first-primary");
}

/** A session for list reads: the client's bookmark (read-your-writes), else the nearest instance; fenced either way. */
export function listSession(c: Context<AppEnv>): D1DatabaseSession {
  const bookmark = c.req.header("X-D1-Bookmark");
  return fencedD1(c.env.DB).withSession(bookmark && /^[\w-]{1,200}$/.test(bookmark) ? bookmark : "first-unconstrained");
}

/** Returns the session's bookmark to the client so its next list read sees its writes. */
export function exposeBookmark(c: Context<AppEnv>, session: D1DatabaseSession): void {
  const bookmark = session.getBookmark();
  if (bookmark) c.header("X-D1-Bookmark", bookmark);
}
