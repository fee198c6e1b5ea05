/** Response schema of teams (src/teams/teams.serialize.ts). */
import { z } from "@hono/zod-openapi";
import { attr, resourceSchema } from "../jsonapi/schemas";
import { ORG_ACCESS_KEYS } from "./teams.rules";

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
