/** Input and response schemas of run triggers (HCP Terraform API docs: Run Triggers). */
import { z } from "@hono/zod-openapi";
import { attr, resourceSchema } from "../jsonapi/schemas";

export const runTriggerParam = z.object({ run_trigger_id: z.string().min(1).max(255) });

export const runTriggerCreateBody = z
  .object({
    data: z.object({
      type: z.literal("run-triggers").optional(),
      relationships: z.object({
        sourceable: z.object({ data: z.object({ type: z.literal("workspaces"), id: z.string().min(1).max(255) }) }),
      }),
    }),
  })
  .openapi("RunTriggerCreate");

/** `filter[run-trigger][type]` is required: a list is of the workspace's sources or of the workspaces it triggers. */
export const runTriggerListQuery = z.object({
  "filter[run-trigger][type]": z.string().max(20).optional(),
  include: z.string().max(200).optional(),
  "page[number]": z.string().max(20).optional(),
  "page[size]": z.string().max(20).optional(),
});

export const runTriggerResource = resourceSchema("RunTrigger", "run-triggers", {
  "workspace-name": attr.string,
  "sourceable-name": attr.string,
  "created-at": attr.time,
});
