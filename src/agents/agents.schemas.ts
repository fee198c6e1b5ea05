/** Schemas of agents: the public resource (GET /agents/:id) and the private protocol's bodies (docs/runs.md). */
import { z } from "@hono/zod-openapi";
import { attr, resourceSchema } from "../jsonapi/schemas";

export const agentResource = resourceSchema("Agent", "agents", {
  name: attr.nullableString,
  status: attr.string,
  "ip-address": attr.nullableString,
  "last-ping-at": attr.time,
});

export const agentIdParam = z.object({ agent_id: z.string().regex(/^agent-[A-Za-z0-9]{1,64}$/) });

// ---- the private agent protocol ----

export const registerBody = z.object({ name: z.string().trim().min(1).max(255), version: z.string().max(64).optional() });
export type RegisterBody = z.infer<typeof registerBody>;

export const statusBody = z.object({ status: z.enum(["idle", "busy", "exited"]) });

const count = z.number().int().min(0).max(1_000_000_000).optional();
export const finishBody = z.object({
  status: z.enum(["finished", "errored", "canceled"]),
  error: z.string().max(10_000).nullish(),
  hasChanges: z.boolean().optional(),
  resourceAdditions: count,
  resourceChanges: count,
  resourceDestructions: count,
  resourceImports: count,
  terraformVersion: z
    .string()
    .regex(/^\d{1,20}\.\d{1,20}\.\d{1,20}(-[0-9A-Za-z.-]{1,64})?$/)
    .optional(),
});
export type FinishBody = z.infer<typeof finishBody>;

export const jobParams = z.object({
  run: z.string().regex(/^run-[A-Za-z0-9]{1,64}$/),
  phase: z.enum(["plan", "apply"]),
});
export const artifactKind = z.enum(["plan-json", "plan-json-redacted", "plan-binary", "lock-file", "errored-state"]);
