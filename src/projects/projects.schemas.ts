/** Request schemas for projects (HCP Terraform API docs: Projects). Name rules are checked in the handler for the real texts. */
import { z } from "@hono/zod-openapi";
import { LIMITS } from "../limits";
import { attr, includeQuery, pageQuery, resourceSchema } from "../jsonapi/schemas";

/** Letters, numbers, spaces, - and _; no leading or trailing space (length is checked separately). */
export const PROJECT_NAME = /^[A-Za-z0-9_-]([A-Za-z0-9 _-]*[A-Za-z0-9_-])?$/;

export const EXECUTION_MODES = ["remote", "local", "agent"] as const;
export type ExecutionMode = (typeof EXECUTION_MODES)[number];

export const projectParam = z.object({ project_id: z.string().regex(/^prj-[A-Za-z0-9]{1,64}$/) });

const bindingInput = z.object({
  type: z.literal("tag-bindings"),
  attributes: z.object({ key: z.string(), value: z.string().nullable().optional() }),
});

// The docs name the overwrite keys execution-mode / agent-pool; go-tfe sends default-execution-mode / default-agent-pool.
const settingOverwrites = z
  .object({
    "execution-mode": z.boolean().optional(),
    "agent-pool": z.boolean().optional(),
    "default-execution-mode": z.boolean().optional(),
    "default-agent-pool": z.boolean().optional(),
  })
  .nullable()
  .optional();

export const projectAttributes = z.object({
  // Length and charset are checked by the handler so the detail text matches the real service.
  name: z
    .string()
    .max(LIMITS.projectNameMax + 10)
    .optional(),
  description: z.string().max(LIMITS.projectDescriptionMax).nullable().optional(),
  "default-execution-mode": z.enum(EXECUTION_MODES).nullable().optional(),
  "default-agent-pool-id": z.string().max(64).nullable().optional(),
  "auto-destroy-activity-duration": z.string().max(16).nullable().optional(),
  "setting-overwrites": settingOverwrites,
});

export const projectRelationships = z
  .object({
    "default-agent-pool": z.object({ data: z.object({ type: z.literal("agent-pools"), id: z.string().max(64) }).nullable() }).optional(),
    "tag-bindings": z.object({ data: z.array(bindingInput).max(LIMITS.tagBindingsPerResource * 10) }).optional(),
  })
  .optional();

export const createProjectBody = z
  .object({
    data: z.object({
      type: z.literal("projects"),
      attributes: projectAttributes.extend({ name: z.string().max(LIMITS.projectNameMax + 10) }),
      relationships: projectRelationships,
    }),
  })
  .openapi("ProjectCreate");

export const updateProjectBody = z
  .object({
    data: z.object({
      type: z.literal("projects"),
      attributes: projectAttributes.optional(),
      relationships: projectRelationships,
    }),
  })
  .openapi("ProjectUpdate");

export const listProjectsQuery = z
  .object({
    ...pageQuery.shape,
    ...includeQuery.shape,
    q: z.string().max(255).optional(),
    "filter[names]": z.string().max(4000).optional(),
    sort: z.enum(["name", "-name"]).optional(),
  })
  .passthrough();

export type ProjectAttributes = z.infer<typeof projectAttributes>;
export type ProjectRelationships = z.infer<typeof projectRelationships>;

/** The project resource (src/projects/projects.serialize.ts). */
export const projectResource = resourceSchema("Project", "projects", {
  name: attr.string,
  description: attr.nullableString,
  "created-at": attr.time,
  "workspace-count": attr.int,
  "team-count": attr.int,
  "default-execution-mode": z.enum(EXECUTION_MODES),
  "auto-destroy-activity-duration": attr.nullableString,
  "setting-overwrites": z.object({
    "execution-mode": z.boolean(),
    "agent-pool": z.boolean(),
    "default-execution-mode": z.boolean(),
    "default-agent-pool": z.boolean(),
  }),
  permissions: attr.permissions,
});
