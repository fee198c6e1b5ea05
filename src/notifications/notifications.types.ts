/** Notification configurations across the workspace object's boundary (both sides `import type`). */

export type DestinationType = "generic" | "slack" | "microsoft-teams" | "email";

/** One answer of a destination (HCP Terraform API docs: Notification Configurations, `delivery-responses`). */
export interface DeliveryResponse {
  url: string;
  /** The HTTP status as a string (go-tfe reads it so), or "" when none came back. */
  code: string;
  body: string;
  headers: Record<string, string[]>;
  "sent-at": string;
  /** "true" or "false", a string as the real API has it. */
  successful: string;
}

export interface NotificationConfig {
  /** `nc-<16><16 of the workspace>`: the workspace is found from the id alone. */
  id: string;
  name: string;
  destinationType: DestinationType;
  enabled: boolean;
  url: string | null;
  triggers: string[];
  emailAddresses: string[];
  emailUserIds: string[];
  /** The token, sealed by the Worker (variables.crypto.ts); null when none. Never answered. */
  sealedToken: string | null;
  /** The origin of the request that created it: links in payloads point there, and requests to it are refused. */
  origin: string;
  createdAt: string;
  updatedAt: string;
  /** The newest first, at most LIMITS.notificationResponsesKept. */
  deliveryResponses: DeliveryResponse[];
}

/** A run event a configuration is told of (the generic payload's `notifications[0]`). */
export interface NotificationEvent {
  trigger: string;
  message: string;
  runId: string;
  runStatus: string;
  runMessage: string;
  runCreatedAt: string;
  runCreatedBy: string | null;
  runUpdatedAt: string;
}
