/**
 * The web UI's pages, each declared once with the requirement table's action (src/auth/requirements.ts),
 * as `defineRoute` (src/jsonapi/define-route.ts) declares the API's. `null`: served without a session (sign-in,
 * the stylesheet). The UI's router (src/ui/app.tsx) answers 500 rather than a page when a route's declared action
 * was never authorised, and test/api/ui.test.ts checks every served /app route was declared.
 */
import type { Hono, Handler } from "hono";
import type { Action } from "../auth/requirements";
import type { AppEnv } from "../env";

/** Each UI route, as Hono names it (`METHOD /app/...`), and its action. */
export const UI_ROUTE_ACTIONS: Record<string, Action | null> = {};

/** Declares a UI route on an area's router (mounted at /app): registers its action, then serves it. */
export function definePage<P extends string>(router: Hono<AppEnv>, method: "get" | "post", path: P, action: Action | null, handler: Handler<AppEnv, P>) {
  const key = `${method.toUpperCase()} /app${path === "/" ? "" : path}`;
  if (key in UI_ROUTE_ACTIONS) throw new Error(`${key} is declared twice`);
  UI_ROUTE_ACTIONS[key] = action;
  router.on(method.toUpperCase(), path, handler);
}
