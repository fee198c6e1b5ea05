/** Request shapes of variables (workspace and variable-set variables share them). */
import { z } from "@hono/zod-openapi";
import { LIMITS } from "../limits";
import { attr, resourceSchema } from "../jsonapi/schemas";
import { CATEGORIES } from "./variables.rules";

const category = z.enum(CATEGORIES);
const value = z.string().max(LIMITS.variableValueMax).nullable();
const description = z.string().max(LIMITS.variableDescriptionMax).nullable();

export const createVariableBody = z
  .object({
    data: z.object({
      type: z.literal("vars"),
      attributes: z.object({
        // Key rules (characters, length) are checked with the category, in variables.rules.ts.
        key: z.string().max(10_000),
        value: value.optional(),
        description: description.optional(),
        category,
        hcl: z.boolean().optional(),
        sensitive: z.boolean().optional(),
      }),
    }),
  })
  .openapi("VariableCreate");

export const updateVariableBody = z
  .object({
    data: z.object({
      type: z.literal("vars"),
      id: z.string().max(64).optional(),
      attributes: z
        .object({
          key: z.string().max(10_000).optional(),
          value: value.optional(),
          description: description.optional(),
          category: category.optional(),
          hcl: z.boolean().optional(),
          sensitive: z.boolean().optional(),
        })
        .optional(),
    }),
  })
  .openapi("VariableUpdate");

export type VariableCreateAttributes = z.infer<typeof createVariableBody>["data"]["attributes"];
export type VariableUpdateAttributes = NonNullable<z.infer<typeof updateVariableBody>["data"]["attributes"]>;

/** Variable ids in paths: anything else (go-tfe's tests send "nonexisting") is a plain 404. */
export const variableIdParam = z.string().regex(/^var-[A-Za-z0-9]{1,64}$/);

/** The `vars` resource (./variables.serialize.ts): a sensitive value is null. */
export const variableResource = resourceSchema("Variable", "vars", {
  key: attr.string,
  value: attr.nullableString,
  description: attr.nullableString,
  sensitive: attr.boolean,
  category: z.enum(CATEGORIES),
  hcl: attr.boolean,
  "created-at": attr.time,
  "version-id": attr.string,
});
