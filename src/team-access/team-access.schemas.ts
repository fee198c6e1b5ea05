/** Response schemas of team access to workspaces and projects (src/team-access/team-access.routes.ts). */
import { z } from "@hono/zod-openapi";
import { resourceSchema } from "../jsonapi/schemas";
import { PRJ_LEVELS, WS_LEVELS, type WsCustom } from "./team-access.rules";

/** The custom workspace permissions: a request's and a response's. */
export const WS_CUSTOM = {
  runs: z.enum(["read", "plan", "apply"]),
  variables: z.enum(["none", "read", "write"]),
  "state-versions": z.enum(["none", "read-outputs", "read", "write"]),
  "sentinel-mocks": z.enum(["none", "read"]),
  "workspace-locking": z.boolean(),
  "run-tasks": z.boolean(),
  "policy-overrides": z.boolean(),
} satisfies { [K in keyof WsCustom]: z.ZodType<WsCustom[K]> };

export const teamWorkspaceResource = resourceSchema("TeamWorkspace", "team-workspaces", {
  access: z.enum(WS_LEVELS),
  ...WS_CUSTOM,
});

export const teamProjectResource = resourceSchema("TeamProject", "team-projects", {
  access: z.enum(PRJ_LEVELS),
  // As stored: every access the API writes has both; a row stored with perms `{}` (the column's default) has neither.
  "project-access": z.record(z.string(), z.unknown()).optional(),
  "workspace-access": z.record(z.string(), z.unknown()).optional(),
});
