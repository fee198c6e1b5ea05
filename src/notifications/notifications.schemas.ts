/** Input and response schemas of notification configurations (HCP Terraform API docs: Notification Configurations). */
import { z } from "@hono/zod-openapi";
import { attr, resourceSchema } from "../jsonapi/schemas";

export const notificationParam = z.object({ notification_configuration_id: z.string().min(1).max(255) });

const users = z.object({ data: z.array(z.object({ type: z.literal("users"), id: z.string().min(1).max(255) })).max(100) });

const attributes = {
  name: z.string().min(1).max(255),
  enabled: z.boolean(),
  url: z.string().max(2048).nullable(),
  token: z.string().max(1024).nullable(),
  triggers: z.array(z.string().max(100)).max(20),
  "email-addresses": z.array(z.string().email().max(320)).max(100),
};

export const notificationCreateBody = z
  .object({
    data: z.object({
      type: z.literal("notification-configurations").optional(),
      attributes: z.object({
        ...attributes,
        "destination-type": z.enum(["generic", "slack", "microsoft-teams", "email"]),
        url: attributes.url.optional(),
        token: attributes.token.optional(),
        triggers: attributes.triggers.optional(),
        "email-addresses": attributes["email-addresses"].optional(),
      }),
      relationships: z.object({ users: users.optional() }).passthrough().optional(),
    }),
  })
  .openapi("NotificationConfigurationCreate");

export const notificationUpdateBody = z
  .object({
    data: z.object({
      type: z.literal("notification-configurations").optional(),
      attributes: z
        .object({
          name: attributes.name.optional(),
          enabled: attributes.enabled.optional(),
          url: attributes.url.optional(),
          token: attributes.token.optional(),
          triggers: attributes.triggers.optional(),
          "email-addresses": attributes["email-addresses"].optional(),
        })
        .optional(),
      relationships: z.object({ users: users.optional() }).passthrough().optional(),
    }),
  })
  .openapi("NotificationConfigurationUpdate");

export type NotificationCreate = z.infer<typeof notificationCreateBody>["data"];
export type NotificationUpdate = z.infer<typeof notificationUpdateBody>["data"];

const deliveryResponse = z.object({
  url: z.string(),
  code: z.string(),
  body: z.string(),
  headers: z.record(z.string(), z.array(z.string())),
  "sent-at": z.string(),
  successful: z.string(),
});

export const notificationResource = resourceSchema("NotificationConfiguration", "notification-configurations", {
  name: attr.string,
  "destination-type": attr.string,
  enabled: attr.boolean,
  url: attr.nullableString,
  token: attr.nullableString,
  triggers: attr.strings,
  "email-addresses": attr.strings,
  "delivery-responses": z.array(deliveryResponse),
  "created-at": attr.time,
  "updated-at": attr.time,
});
