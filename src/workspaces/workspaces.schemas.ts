import { z } from "@hono/zod-openapi";
import { LIMITS } from "../limits";
import { settingsInputShape, settingsResponseShape } from "./workspace.fields";
import { attr, orgParam, resourceSchema } from "../jsonapi/schemas";

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
export const orgWorkspaceParam = orgParam.extend({ name: z.string().min(1).max(255) });

// ---- responses ----

const vcsRepoView = z.object({
  branch: z.string(),
  "display-identifier": z.string(),
  identifier: z.string(),
  "ingress-submodules": z.boolean(),
  "oauth-token-id": z.string().nullable(),
  "vcs-app-installation-id": z.string().nullable(),
  "github-app-installation-id": z.string().nullable(),
  "repository-http-url": z.string(),
  "service-provider": z.string(),
  "tags-regex": z.string().nullable(),
  "webhook-url": z.string().nullable(),
});

/** The workspace resource (src/workspaces/workspaces.serialize.ts): every attribute, every time. */
export const workspaceResource = resourceSchema("Workspace", "workspaces", {
  // Every setting of the field table; the entries below describe what the serialiser derives or shows differently.
  ...settingsResponseShape,
  actions: z.object({ "is-destroyable": z.boolean() }),
  "auto-destroy-at": attr.nullableTime,
  "auto-destroy-status": attr.nullableString,
  "auto-destroy-activity-duration": attr.nullableString,
  "can-queue-destroy-plan": attr.boolean,
  "created-at": attr.time,
  environment: attr.string,
  "execution-mode": z.enum(["remote", "local", "agent"]),
  "latest-change-at": attr.time,
  "last-assessment-result-at": attr.nullableTime,
  locked: attr.boolean,
  "locked-reason": attr.nullableString,
  name: attr.string,
  "oauth-client-name": attr.nullableString,
  operations: attr.boolean,
  permissions: attr.permissions,
  "apply-duration-average": attr.nullableInt,
  "plan-duration-average": attr.nullableInt,
  "policy-check-failures": attr.nullableInt,
  "resource-count": attr.int,
  "run-failures": attr.nullableInt,
  source: attr.string,
  "tag-names": attr.strings,
  "engine-version": attr.string,
  "terraform-version": attr.string,
  "updated-at": attr.time,
  "vcs-repo": vcsRepoView.nullable(),
  "vcs-repo-identifier": attr.nullableString,
  "workspace-kpis-runs-count": attr.nullableInt,
  "setting-overwrites": z.object({ "execution-mode": z.boolean(), "agent-pool": z.boolean() }),
});
