/**
 * Notification configurations, pure (HCP Terraform API docs: Notification Configurations, "Notification Triggers" and
 * "Notification Payload"): which run status changes fire which trigger, the rules of a configuration, and each
 * destination's request body.
 */
import { fail, type Failure } from "../errors";
import type { RunRecord, RunStatus } from "../runs/runs.types";
import type { DestinationType, NotificationConfig, NotificationEvent } from "./notifications.types";

export const RUN_TRIGGERS = ["run:created", "run:planning", "run:needs_attention", "run:applying", "run:completed", "run:errored"] as const;
/** Stored and answered, never fired: assessments and automatic-destroy notices are not sent by this service (docs/behaviour.md). */
export const QUIET_TRIGGERS = [
  "assessment:drifted",
  "assessment:failed",
  "assessment:check_failure",
  "workspace:auto_destroy_reminder",
  "workspace:auto_destroy_run_results",
] as const;
export const TRIGGERS: readonly string[] = [...RUN_TRIGGERS, ...QUIET_TRIGGERS];
export const DESTINATIONS: readonly DestinationType[] = ["generic", "slack", "microsoft-teams", "email"];

/** The trigger a run's move to `status` fires, with the payload's message; null for none (discarded, canceled…). */
export function triggerOf(run: RunRecord, from: RunStatus | null): { trigger: string; message: string } | null {
  if (from === null) return { trigger: "run:created", message: "Run Created" };
  switch (run.status) {
    case "planning":
      return { trigger: "run:planning", message: "Run Planning" };
    case "planned":
      // A plan that waits for someone to confirm it (an auto-applied one moves on in the same commit).
      return { trigger: "run:needs_attention", message: "Run Needs Attention" };
    case "applying":
      return { trigger: "run:applying", message: "Run Applying" };
    case "applied":
    case "planned_and_finished":
    case "planned_and_saved":
      return { trigger: "run:completed", message: run.status === "applied" ? "Run Applied" : "Run Planned and Finished" };
    case "errored":
      return { trigger: "run:errored", message: "Run Errored" };
    case "canceled":
      // The API docs' run:errored: "a run terminated early due to error or cancellation".
      return { trigger: "run:errored", message: "Run Canceled" };
    default:
      return null;
  }
}

const A = "/data/attributes";

/** The cross-field rules of a configuration as it would be stored. */
export function checkConfig(c: Pick<NotificationConfig, "destinationType" | "url" | "triggers">): Failure | null {
  for (const t of c.triggers) if (!TRIGGERS.includes(t)) return fail("invalid_attribute", `Triggers contains an unknown trigger: ${t}`, `${A}/triggers`);
  if (c.destinationType !== "email" && !c.url) return fail("invalid_attribute", "URL is required for this destination type", `${A}/url`);
  return null;
}

export interface PayloadContext {
  config: NotificationConfig;
  workspaceId: string;
  workspaceName: string;
  /** The organisation's id (its users' memberships) and name (the payload's). */
  organizationId: string;
  organizationName: string;
}

const runUrl = (x: PayloadContext, runId: string) =>
  `${x.config.origin}/app/${encodeURIComponent(x.organizationName)}/workspaces/${encodeURIComponent(x.workspaceName)}/runs/${runId}`;

/** The generic destination's JSON (payload version 1); `event` null for a verification. */
export function genericPayload(x: PayloadContext, event: NotificationEvent | null): Record<string, unknown> {
  return {
    payload_version: 1,
    notification_configuration_id: x.config.id,
    run_url: event ? runUrl(x, event.runId) : null,
    run_id: event?.runId ?? null,
    run_message: event?.runMessage ?? null,
    run_created_at: event?.runCreatedAt ?? null,
    run_created_by: event?.runCreatedBy ?? null,
    workspace_id: x.workspaceId,
    workspace_name: x.workspaceName,
    organization_name: x.organizationName,
    notifications: [
      event
        ? { message: event.message, trigger: event.trigger, run_status: event.runStatus, run_updated_at: event.runUpdatedAt, run_updated_by: null }
        : { message: `Verification of ${x.config.name}`, trigger: "verification", run_status: null, run_updated_at: null, run_updated_by: null },
    ],
  };
}

/** One line for people (Slack, Teams, e-mail). */
function summary(x: PayloadContext, event: NotificationEvent | null): { title: string; text: string; link: string | null } {
  if (!event)
    return { title: `Verification of ${x.config.name}`, text: `Notifications of ${x.organizationName}/${x.workspaceName} reach this destination.`, link: null };
  return {
    title: `${event.message}: ${x.organizationName}/${x.workspaceName}`,
    text: `Run ${event.runId} (${event.runStatus}): ${event.runMessage}`,
    link: runUrl(x, event.runId),
  };
}

/** A Slack incoming webhook's message: `text` with Block Kit sections (api.slack.com/messaging/webhooks). */
export function slackPayload(x: PayloadContext, event: NotificationEvent | null): Record<string, unknown> {
  const s = summary(x, event);
  const line = s.link ? `*<${s.link}|${s.title}>*\n${s.text}` : `*${s.title}*\n${s.text}`;
  return { text: `${s.title}: ${s.text}`, blocks: [{ type: "section", text: { type: "mrkdwn", text: line } }] };
}

/** A Microsoft Teams incoming webhook's message: an Adaptive Card attachment (learn.microsoft.com, "Create an Incoming Webhook"). */
export function teamsPayload(x: PayloadContext, event: NotificationEvent | null): Record<string, unknown> {
  const s = summary(x, event);
  return {
    type: "message",
    attachments: [
      {
        contentType: "application/vnd.microsoft.card.adaptive",
        contentUrl: null,
        content: {
          $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
          type: "AdaptiveCard",
          version: "1.4",
          body: [
            { type: "TextBlock", size: "Medium", weight: "Bolder", text: s.title, wrap: true },
            { type: "TextBlock", text: s.text, wrap: true },
          ],
          actions: s.link ? [{ type: "Action.OpenUrl", title: "View run", url: s.link }] : [],
        },
      },
    ],
  };
}

/** An e-mail's subject and plain-text body. */
export function emailMessage(x: PayloadContext, event: NotificationEvent | null): { subject: string; text: string } {
  const s = summary(x, event);
  return { subject: s.title, text: `${s.text}\n${s.link ? `\n${s.link}\n` : ""}` };
}
