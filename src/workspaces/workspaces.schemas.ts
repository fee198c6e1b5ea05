import { z } from "@hono/zod-openapi";
import { LIMITS } from "../limits";

/** Workspace names: letters, numbers, `-`, `_`. Compared case-insensitively. */
export const WORKSPACE_NAME = /^[A-Za-z0-9_-]+$/;
/** `<digits><d|h>`, greater than 0, at most four digits. */
export const AUTO_DESTROY_DURATION = /^\d{1,4}[dh]$/;
/** An exact version (`1.2.3`, `1.2.3-beta1`) or a constraint (`~> 1.0.0`, `>= 1.2, < 2.0`), or `latest`. */
const VERSION = String.raw`v?\d+(\.\d+){0,2}(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?`;
export const ENGINE_VERSION = new RegExp(String.raw`^(latest|\s*((~>|>=|<=|!=|=|>|<)\s*)?${VERSION}\s*(,\s*((~>|>=|<=|!=|=|>|<)\s*)?${VERSION}\s*)*)$`);

const str = (max: number = LIMITS.genericStringMax) => z.string().max(max);
const nullableStr = (max: number = LIMITS.genericStringMax) => z.string().max(max).nullable();
const timestamp = z
  .string()
  .max(64)
  .refine((s) => !Number.isNaN(Date.parse(s)), "must be an ISO 8601 timestamp");

export const vcsRepoInput = z.object({
  identifier: str(255).optional(),
  "oauth-token-id": str(64).optional(),
  "vcs-app-installation-id": str(64).optional(),
  "github-app-installation-id": str(64).optional(),
  branch: str(255).optional(),
  "ingress-submodules": z.boolean().optional(),
  "tags-regex": nullableStr(255).optional(),
});

const triggerList = z.array(z.string().max(LIMITS.genericStringMax)).max(LIMITS.triggerListMax);

/** Writable attributes: both the documented names and the ones the real clients send. */
export const workspaceAttributesInput = z.object({
  name: z.string().max(LIMITS.workspaceNameMax).optional(),
  "agent-pool-id": nullableStr(64).optional(),
  "allow-destroy-plan": z.boolean().optional(),
  "assessments-enabled": z.boolean().optional(),
  "auto-apply": z.boolean().optional(),
  "auto-apply-run-trigger": z.boolean().optional(),
  "auto-destroy-at": timestamp.nullable().optional(),
  "auto-destroy-activity-duration": nullableStr(16).optional(),
  "inherits-project-auto-destroy": z.boolean().optional(),
  description: nullableStr(LIMITS.descriptionMax).optional(),
  "execution-mode": z.enum(["remote", "local", "agent"]).optional(),
  "file-triggers-enabled": z.boolean().optional(),
  "global-remote-state": z.boolean().optional(),
  "project-remote-state": z.boolean().optional(),
  operations: z.boolean().optional(),
  "queue-all-runs": z.boolean().optional(),
  "source-name": nullableStr(255).optional(),
  "source-url": nullableStr(LIMITS.genericStringMax).optional(),
  "speculative-enabled": z.boolean().optional(),
  "structured-run-output-enabled": z.boolean().optional(),
  "engine-version": str(128).optional(),
  engine_version: str(128).optional(),
  "terraform-version": str(128).optional(),
  terraform_version: str(128).optional(),
  "trigger-patterns": triggerList.optional(),
  "trigger-prefixes": triggerList.optional(),
  "working-directory": nullableStr(LIMITS.genericStringMax).optional(),
  "setting-overwrites": z.object({ "execution-mode": z.boolean().optional(), "agent-pool": z.boolean().optional() }).optional(),
  "vcs-repo": vcsRepoInput.nullable().optional(),
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
