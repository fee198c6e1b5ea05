/** What the schemas of registry modules and registry providers share: the path that names an entry, tag bindings. */
import { z } from "@hono/zod-openapi";
import { orgParam } from "../jsonapi/schemas";

export const segment = z.string().min(1).max(128);

/** `/organizations/{organization_name}/registry-{modules,providers}/{registry_name}/{namespace}/{name}` */
export const registryEntryParams = orgParam.extend({ registry_name: z.enum(["private", "public"]), namespace: segment, name: segment });

export const tagBindingInput = z.object({
  type: z.literal("tag-bindings"),
  attributes: z.object({ key: z.string(), value: z.string().nullable().optional() }),
});
