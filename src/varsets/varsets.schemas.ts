/** Request shapes of variable sets. */
import { z } from "@hono/zod-openapi";
import { LIMITS } from "../limits";
import { attr, includeQuery, pageQuery, resourceSchema } from "../jsonapi/schemas";

export const varsetIdParam = z.object({ varset_id: z.string().regex(/^varset-[A-Za-z0-9]{1,64}$/) });
export const varsetVarParams = z.object({ varset_id: varsetIdParam.shape.varset_id, var_id: z.string().regex(/^var-[A-Za-z0-9]{1,64}$/) });

/** go-tfe sends whole workspace / project objects: only `type` and `id` are used. */
const ref = (type: string) => z.object({ type: z.literal(type), id: z.string().max(64) }).passthrough();
export const workspaceRefs = z.array(ref("workspaces")).max(LIMITS.varsetTargetsPerRequest);
export const projectRefs = z.array(ref("projects")).max(LIMITS.varsetTargetsPerRequest);

const attributes = {
  name: z.string().max(LIMITS.varsetNameMax),
  description: z.string().max(LIMITS.varsetDescriptionMax).nullable().optional(),
  global: z.boolean().optional(),
  priority: z.boolean().optional(),
};

/** `parent`: the organisation (id = its name) or a project that owns the set. */
const parent = z.object({
  data: z
    .object({ type: z.enum(["organizations", "projects"]), id: z.string().max(255) })
    .passthrough()
    .nullable(),
});

export const createVarsetBody = z
  .object({
    data: z.object({
      type: z.literal("varsets"),
      attributes: z.object(attributes),
      relationships: z
        .object({
          parent: parent.optional(),
          workspaces: z.object({ data: workspaceRefs }).optional(),
          projects: z.object({ data: projectRefs }).optional(),
        })
        .optional(),
    }),
  })
  .openapi("VarsetCreate");

export const updateVarsetBody = z
  .object({
    data: z.object({
      type: z.literal("varsets"),
      id: z.string().max(64).optional(),
      attributes: z.object({ ...attributes, name: attributes.name.optional() }).optional(),
      // go-tfe's UpdateWorkspaces replaces the set's workspaces through this relationship.
      relationships: z
        .object({ workspaces: z.object({ data: workspaceRefs }).optional() })
        .passthrough()
        .optional(),
    }),
  })
  .openapi("VarsetUpdate");

export const workspaceRefsBody = z.object({ data: workspaceRefs.min(1) }).openapi("VarsetWorkspaces");
export const projectRefsBody = z.object({ data: projectRefs.min(1) }).openapi("VarsetProjects");

export type VarsetCreateData = z.infer<typeof createVarsetBody>["data"];
export type VarsetUpdateData = z.infer<typeof updateVarsetBody>["data"];

export const listQuery = z.object({ ...pageQuery.shape, ...includeQuery.shape, q: z.string().max(255).optional() }).passthrough();
/** The lists of the sets reaching a workspace or applied to a project. */
export const pageIncludeQuery = z.object({ ...pageQuery.shape, ...includeQuery.shape }).passthrough();

/** The `varsets` resource (./varsets.serialize.ts): create, show and list answer the same shape. */
export const varsetResource = resourceSchema("Varset", "varsets", {
  name: attr.string,
  description: attr.string,
  global: attr.boolean,
  priority: attr.boolean,
  "updated-at": attr.time,
  "var-count": attr.int,
  "workspace-count": attr.int,
  "project-count": attr.int,
});
