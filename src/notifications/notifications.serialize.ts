/** The notification configuration resource. The token is write-only: it is answered as null. */
import type { Resource } from "../jsonapi/document";
import type { NotificationConfig } from "./notifications.types";

export const serializeNotification = (c: NotificationConfig, workspaceId: string): Resource => ({
  id: c.id,
  type: "notification-configurations",
  attributes: {
    name: c.name,
    "destination-type": c.destinationType,
    enabled: c.enabled,
    url: c.url,
    token: null,
    triggers: c.triggers,
    "email-addresses": c.emailAddresses,
    "delivery-responses": c.deliveryResponses,
    "created-at": c.createdAt,
    "updated-at": c.updatedAt,
  },
  relationships: {
    subscribable: { data: { id: workspaceId, type: "workspaces" } },
    users: { data: c.emailUserIds.map((id) => ({ id, type: "users" })) },
  },
  links: { self: `/api/v2/notification-configurations/${c.id}` },
});
