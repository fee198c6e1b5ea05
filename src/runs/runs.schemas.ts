/**
 * Request and response schemas of runs, plans, applies, run events, comments and the organisation's queue and
 * capacity (HCP Terraform API docs: Runs, Plans, Applies, Run Events, Comments). Serialisers: ./runs.serialize.ts.
 */
import { z } from "@hono/zod-openapi";
import { attr, resourceSchema } from "../jsonapi/schemas";
import { LIMITS } from "../limits";

// ---- parameters ----

const id = (prefix: string) => z.string().regex(new RegExp(`^${prefix}-[A-Za-z0-9]{1,64}$`));
export const runIdParam = z.object({ run_id: id("run") });
export const planIdParam = z.object({ plan_id: id("plan") });
export const applyIdParam = z.object({ apply_id: id("apply") });
export const runEventIdParam = z.object({ run_event_id: id("re") });
export const commentIdParam = z.object({ comment_id: id("wsc") });

const csv = z.string().max(2000).optional();
/** The filters of both run lists (HCP Terraform API docs: Runs, List Runs in a Workspace / in an Organization). */
export const runListQuery = z.object({
  "page[number]": z.string().max(20).optional(),
  "page[size]": z.string().max(20).optional(),
  include: z.string().max(2000).optional(),
  "filter[operation]": csv,
  "filter[status]": csv,
  "filter[source]": csv,
  "filter[status_group]": csv,
  "filter[timeframe]": csv,
  "filter[agent_pool_names]": csv,
  "search[user]": z.string().max(255).optional(),
  "search[commit]": z.string().max(255).optional(),
  "search[basic]": z.string().max(255).optional(),
});
export const orgRunListQuery = runListQuery.extend({ "filter[workspace_names]": csv });

// ---- request bodies ----

const addrs = z.array(z.string().min(1).max(1024)).max(LIMITS.triggerListMax).nullable().optional();
const relation = (type: string) => z.object({ data: z.object({ type: z.literal(type), id: z.string().min(1).max(80) }) });

export const createRunBody = z
  .object({
    data: z.object({
      type: z.literal("runs"),
      attributes: z
        .object({
          message: z.string().max(LIMITS.genericStringMax).nullable().optional(),
          "is-destroy": z.boolean().nullable().optional(),
          refresh: z.boolean().nullable().optional(),
          "refresh-only": z.boolean().nullable().optional(),
          "plan-only": z.boolean().nullable().optional(),
          "save-plan": z.boolean().nullable().optional(),
          "auto-apply": z.boolean().nullable().optional(),
          "allow-empty-apply": z.boolean().nullable().optional(),
          "allow-config-generation": z.boolean().nullable().optional(),
          "target-addrs": addrs,
          "replace-addrs": addrs,
          "terraform-version": z.string().min(1).max(64).nullable().optional(),
          // HCL literals, kept as written (go-tfe's test sends `Hello, World!` unquoted).
          variables: z
            .array(z.object({ key: z.string().min(1).max(LIMITS.genericStringMax), value: z.string().max(LIMITS.genericStringMax) }))
            .max(500)
            .nullable()
            .optional(),
        })
        .optional(),
      relationships: z.object({
        workspace: relation("workspaces"),
        // go-tfe sends `{"data": null}` when no configuration version is named.
        "configuration-version": z
          .object({ data: z.object({ type: z.literal("configuration-versions"), id: z.string().min(1).max(80) }).nullable() })
          .optional(),
      }),
    }),
  })
  .openapi("RunCreate");
export type CreateRunBody = z.infer<typeof createRunBody>;

/** A run action's optional body: plain JSON `{comment}` (go-tfe), `{}` (Terraform), or nothing (force-execute). */
export const runActionBody = z
  .object({ comment: z.string().max(LIMITS.genericStringMax).nullable().optional() })
  .passthrough()
  .optional();

export const createCommentBody = z
  .object({
    data: z.object({
      type: z.literal("comments"),
      attributes: z.object({ body: z.string().min(1).max(LIMITS.genericStringMax) }),
    }),
  })
  .openapi("CommentCreate");

// ---- responses ----

const timestamps = z.record(z.string(), z.string());
const executionDetails = z.object({
  mode: z.enum(["remote", "agent"]),
  "agent-id": z.string().nullable().optional(),
  "agent-name": z.string().nullable().optional(),
  "agent-pool-id": z.string().nullable().optional(),
  "agent-pool-name": z.string().nullable().optional(),
});

export const runResource = resourceSchema("Run", "runs", {
  actions: z.object({
    "is-cancelable": z.boolean(),
    "is-confirmable": z.boolean(),
    "is-discardable": z.boolean(),
    "is-force-cancelable": z.boolean(),
  }),
  "allow-config-generation": attr.boolean,
  "allow-empty-apply": attr.boolean,
  "auto-apply": attr.boolean,
  "canceled-at": attr.nullableTime,
  "created-at": attr.time,
  "force-cancel-available-at": attr.nullableTime,
  "has-changes": attr.boolean,
  "is-destroy": attr.boolean,
  message: attr.string,
  permissions: attr.permissions,
  "plan-only": attr.boolean,
  "position-in-queue": attr.int,
  refresh: attr.boolean,
  "refresh-only": attr.boolean,
  "replace-addrs": attr.strings.nullable(),
  "save-plan": attr.boolean,
  source: attr.string,
  status: attr.string,
  "status-timestamps": timestamps,
  "target-addrs": attr.strings.nullable(),
  "terraform-version": attr.nullableString,
  "trigger-reason": attr.string,
  variables: z.array(z.object({ key: z.string(), value: z.string() })),
});

const phaseAttributes = {
  "execution-details": executionDetails,
  "log-read-url": attr.string,
  "resource-additions": attr.int,
  "resource-changes": attr.int,
  "resource-destructions": attr.int,
  "resource-imports": attr.int,
  status: attr.string,
  "status-timestamps": timestamps,
};
export const planResource = resourceSchema("Plan", "plans", {
  ...phaseAttributes,
  "has-changes": attr.boolean,
  "generated-configuration": attr.boolean,
});
export const applyResource = resourceSchema("Apply", "applies", phaseAttributes);

export const runEventResource = resourceSchema("RunEvent", "run-events", {
  action: attr.string,
  "created-at": attr.time,
  description: attr.nullableString,
});

export const commentResource = resourceSchema("Comment", "comments", { body: attr.string });

export const capacityResource = resourceSchema("OrganizationCapacity", "organization-capacity", { pending: attr.int, running: attr.int });

/** The organisation's run list: pagination without totals (HCP Terraform API docs: Runs, "List runs in an organization"). */
export const organizationRunListDocument = z
  .object({
    data: z.array(runResource),
    included: z.array(z.looseObject({ id: z.string(), type: z.string() })).optional(),
    links: z.record(z.string(), z.string().nullable()).optional(),
    meta: z.object({
      pagination: z.object({
        "current-page": z.number().int(),
        "page-size": z.number().int(),
        "prev-page": z.number().int().nullable(),
        "next-page": z.number().int().nullable(),
      }),
    }),
  })
  .openapi("OrganizationRunList");
