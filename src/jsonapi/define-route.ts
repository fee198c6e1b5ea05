/**
 * One declaration per endpoint: method, path, the action it needs, request and response schemas. The
 * declaration feeds the OpenAPI document (`x-required-action`), the router's fail-closed check
 * (src/auth/caller.http.ts) and the authorisation-matrix test, so the action is spelt once.
 */
import { createRoute, type RouteConfig } from "@hono/zod-openapi";
import type { Action } from "../auth/requirements";

/** Where the API routers are mounted (src/index.ts); the registry's own API (GPG keys, the registry protocols) under REGISTRY_PREFIX. */
export const API_PREFIX = "/api/v2";
export const REGISTRY_PREFIX = "/api/registry";

/** Each API route, as Hono names it (`METHOD /api/v2/path/:param`), and the action it is declared against. */
export const ROUTE_ACTIONS: Record<string, Action> = {};

/** Hono's name for an OpenAPI path: `{param}` becomes `:param`, as @hono/zod-openapi registers it. */
export const honoPath = (openApiPath: string, prefix: string = API_PREFIX) => `${prefix}${openApiPath.replace(/\{([^}]+)\}/g, ":$1")}`;

/** Declares an API route: registers its action and returns the zod-openapi route for `router.openapi`. */
export function defineRoute<const R extends RouteConfig & { action: Action; prefix?: typeof API_PREFIX | typeof REGISTRY_PREFIX }>(declaration: R) {
  const { action, prefix, ...route } = declaration;
  const key = `${route.method.toUpperCase()} ${honoPath(route.path, prefix)}`;
  if (ROUTE_ACTIONS[key]) throw new Error(`${key} is declared twice`);
  ROUTE_ACTIONS[key] = action;
  return createRoute({ ...(route as Omit<R, "action" | "prefix">), "x-required-action": action });
}
