/**
 * One declaration per endpoint: method, path, the action it needs, request and response schemas. The
 * declaration feeds the OpenAPI document (`x-required-action`), the router's fail-closed check
 * (src/auth/caller.http.ts) and the authorisation-matrix test, so the action is spelt once. What every route shares
 * (the file's OpenAPI tag, the error responses) is defaulted, so a block says only what is particular to it.
 */
import { createRoute, type RouteConfig } from "@hono/zod-openapi";
import type { Action } from "../auth/requirements";
import { errorResponses } from "./validation";

/** Where the API routers are mounted (src/index.ts); the registry's own API (GPG keys, the registry protocols) under REGISTRY_PREFIX. */
export const API_PREFIX = "/api/v2";
export const REGISTRY_PREFIX = "/api/registry";

/** Each API route, as Hono names it (`METHOD /api/v2/path/:param`), and the action it is declared against. */
export const ROUTE_ACTIONS: Record<string, Action> = {};

/** Hono's name for an OpenAPI path: `{param}` becomes `:param`, as @hono/zod-openapi registers it. */
export const honoPath = (openApiPath: string, prefix: string = API_PREFIX) => `${prefix}${openApiPath.replace(/\{([^}]+)\}/g, ":$1")}`;

/** What a route block says: method, path, action, request and its own responses (what is particular to it). */
export type Declaration = RouteConfig & { action: Action; prefix?: typeof API_PREFIX | typeof REGISTRY_PREFIX };

type ErrorResponses = typeof errorResponses;
/** A block's responses with the shared error responses (its own win where both name a status). */
type WithErrors<T> = { [K in keyof T | keyof ErrorResponses]: K extends keyof T ? T[K] : K extends keyof ErrorResponses ? ErrorResponses[K] : never };

/** What every route of a routes file shares, unless its block says otherwise: its OpenAPI tags. */
export interface RouteDefaults {
  tags: string[];
}

/**
 * The `defineRoute` of one routes file (`const defineRoute = defineRoutes({ tags: ["Workspaces"] })`): each
 * declaration registers its action and becomes the zod-openapi route for `router.openapi`, tagged with the file's
 * tags unless it names its own, and answering the shared error responses (`errorResponses`) besides its own.
 */
export function defineRoutes(defaults: RouteDefaults) {
  return function defineRoute<const R extends Declaration>(declaration: R) {
    const { action, method, path, prefix, ...rest } = declaration;
    const key = `${method.toUpperCase()} ${honoPath(path, prefix)}`;
    if (ROUTE_ACTIONS[key]) throw new Error(`${key} is declared twice`);
    ROUTE_ACTIONS[key] = action;
    // Key order is the document's: method, path, tags, then the block's own (openapi.json stays as it was written).
    const route = { method, path, tags: defaults.tags, ...rest, responses: { ...errorResponses, ...rest.responses } };
    return createRoute({ ...(route as Omit<R, "action" | "prefix" | "responses"> & { responses: WithErrors<R["responses"]> }), "x-required-action": action });
  };
}
