import type { OpenAPIHono } from "@hono/zod-openapi";

type DocConfig = Parameters<OpenAPIHono<AppEnv>["getOpenAPI31Document"]>[0];
import type { AppEnv } from "../env";

/** Document metadata; the paths come from the routes' zod schemas (`createRoute`). */
export const OPENAPI_CONFIG: DocConfig = {
  openapi: "3.1.0",
  info: {
    title: "Workspace service (HCP Terraform / Terraform Enterprise workspaces API)",
    version: "2.6.0",
    description: "JSON:API under /api/v2. Every request but discovery, this document and the signed state-blob URLs carries `Authorization: Bearer <token>`.",
  },
  servers: [{ url: "/" }],
  security: [{ bearer: [] }],
};

const registered = new WeakSet<object>();

export function openApiDocument(app: OpenAPIHono<AppEnv>) {
  if (!registered.has(app)) {
    registered.add(app);
    app.openAPIRegistry.registerComponent("securitySchemes", "bearer", { type: "http", scheme: "bearer" });
  }
  return app.getOpenAPI31Document(OPENAPI_CONFIG);
}
