/** Response schemas of users and organisation memberships (src/meta/meta.routes.ts userResource, ./memberships.serialize.ts). */
import { z } from "@hono/zod-openapi";
import { attr, resourceSchema } from "../jsonapi/schemas";

export const userParam = z.object({ user_id: z.string().regex(/^user-[A-Za-z0-9]{1,64}$/) });

export const userResource = resourceSchema("User", "users", {
  username: attr.string,
  "is-service-account": attr.boolean,
  "auth-method": attr.string,
  "avatar-url": attr.string,
  "two-factor": z.object({ enabled: z.boolean(), verified: z.boolean() }),
  "v2-only": attr.boolean,
  "is-site-admin": attr.boolean,
  "is-sso-login": attr.boolean,
  // Shown to the user itself and those who manage it; null otherwise.
  email: attr.nullableString,
  "unconfirmed-email": attr.nullableString,
  permissions: attr.permissions,
});

export const membershipResource = resourceSchema("OrganizationMembership", "organization-memberships", {
  status: z.enum(["active", "invited"]),
  email: attr.nullableString,
});
