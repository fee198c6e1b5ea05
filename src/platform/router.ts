import type { Result, Router } from "hono/router";
import { RegExpRouter } from "hono/router/reg-exp-router";
import { SmartRouter } from "hono/router/smart-router";
import { TrieRouter } from "hono/router/trie-router";

const UI_PREFIX = "/app";

/**
 * Hono's SmartRouter picks one router for the whole app: the web UI's `/app/session` beside `/app/:organization/…`
 * is a shape RegExpRouter refuses, so every API request paid for TrieRouter's per-request search (about a tenth of a
 * show's CPU). Keeping the UI's routes in a router of their own lets the API's match on RegExpRouter's one regular
 * expression. Routes for every path (`*`) go to both, in registration order, so middleware runs as before.
 */
export class SplitRouter<T> implements Router<T> {
  name = "SplitRouter";
  readonly #api = new SmartRouter<T>({ routers: [new RegExpRouter(), new TrieRouter()] });
  readonly #ui = new SmartRouter<T>({ routers: [new RegExpRouter(), new TrieRouter()] });

  add(method: string, path: string, handler: T): void {
    const ui = isUiPath(path);
    if (ui !== false) this.#ui.add(method, path, handler);
    if (ui !== true) this.#api.add(method, path, handler);
  }

  match(method: string, path: string): Result<T> {
    return isUiPath(path) ? this.#ui.match(method, path) : this.#api.match(method, path);
  }
}

/** true: only UI paths match it; false: none do; undefined: a pattern that may match both (`*`, `/*`, `/:x…`). */
function isUiPath(path: string): boolean | undefined {
  if (path === UI_PREFIX || path.startsWith(`${UI_PREFIX}/`)) return true;
  if (path === "*" || path === "/*" || path.startsWith("/:") || path.startsWith("/*")) return undefined;
  return false;
}
