/** Response schema of teams (src/teams/teams.serialize.ts). */
import { z } from "@hono/zod-openapi";
import { attr, resourceSchema } from "../jsonapi/schemas";
import { LIMITS } from "../limits";
import { ORG_ACCESS_KEYS } from "./teams.rules";

export const teamParam = z.object({ team_id: z.string().regex(/^team-[A-Za-z0-9]{1,64}$/) });

export const teamResource = resourceSchema("Team", "teams", {
  name: attr.string,
  "is-unified": attr.boolean,
  "organization-access": z.object(Object.fromEntries(ORG_ACCESS_KEYS.map((k) => [k, attr.boolean]))),
  visibility: z.enum(["secret", "organization"]),
  "sso-team-id": attr.nullableString,
  "users-count": attr.int,
  "allow-member-token-management": attr.boolean,
  permissions: attr.permissions,
});

const orgAccessInput = z.object(
  Object.fromEntries(ORG_ACCESS_KEYS.map((k) => [k, z.boolean().optional()])) as Record<(typeof ORG_ACCESS_KEYS)[number], z.ZodOptional<z.ZodBoolean>>,
);
/** A team's attributes as create and update accept them (the UI's team forms are checked against the same schema). */
export const teamAttributesInput = z.object({
  name: z.string().max(LIMITS.teamNameMax).optional(),
  "organization-access": orgAccessInput.optional(),
  visibility: z.enum(["secret", "organization"]).optional(),
  "sso-team-id": z.string().max(255).nullable().optional(),
  "allow-member-token-management": z.boolean().optional(),
});
