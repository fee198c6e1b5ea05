import { z } from "@hono/zod-openapi";
import { LIMITS } from "../limits";
import { settingsInputShape } from "./workspace.fields";

/** Workspace names: letters, numbers, `-`, `_`. Compared case-insensitively. */
export const WORKSPACE_NAME = /^[A-Za-z0-9_-]+$/;

/** Writable attributes: every setting of the field table (workspace.fields.ts) under its own and its aliases' names. */
export const workspaceAttributesInput = z.object({
  name: z.string().max(LIMITS.workspaceNameMax).optional(),
  ...settingsInputShape,
  /** Deprecated: true is execution-mode remote, false local. */
  operations: z.boolean().optional(),
  "setting-overwrites": z.object({ "execution-mode": z.boolean().optional(), "agent-pool": z.boolean().optional() }).optional(),
});
export type WorkspaceAttributesInput = z.infer<typeof workspaceAttributesInput>;

export const tagBindingInput = z.object({
  type: z.literal("tag-bindings"),
  attributes: z.object({ key: z.string(), value: z.string().optional().nullable() }),
});

export const flatTagInput = z.object({
  type: z.literal("tags"),
  id: z.string().max(64).optional(),
  attributes: z.object({ name: z.string().optional() }).optional(),
});

export const workspaceRelationshipsInput = z.object({
  project: z.object({ data: z.object({ type: z.literal("projects"), id: z.string().max(64) }).nullable() }).optional(),
  "tag-bindings": z.object({ data: z.array(tagBindingInput).max(1000) }).optional(),
  tags: z.object({ data: z.array(flatTagInput).max(1000) }).optional(),
});

export const workspaceCreateBody = z
  .object({
    data: z.object({
      type: z.literal("workspaces"),
      attributes: workspaceAttributesInput.extend({ name: z.string().max(LIMITS.workspaceNameMax) }),
      relationships: workspaceRelationshipsInput.optional(),
    }),
  })
  .openapi("WorkspaceCreate");

export const workspaceUpdateBody = z
  .object({
    data: z.object({
      type: z.literal("workspaces"),
      attributes: workspaceAttributesInput.optional(),
      relationships: workspaceRelationshipsInput.optional(),
    }),
  })
  .openapi("WorkspaceUpdate");

export const workspaceIdParam = z.object({ workspace_id: z.string().regex(/^ws-[A-Za-z0-9]{1,64}$/) });
export const orgParam = z.object({ organization_name: z.string().min(1).max(255) });
export const orgWorkspaceParam = z.object({
  organization_name: z.string().min(1).max(255),
  name: z.string().min(1).max(255),
});
export const includeQuery = z.object({ include: z.string().max(2000).optional() });
