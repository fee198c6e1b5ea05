/**
 * The workspace object's notification configurations (HCP Terraform API docs: Notification Configurations). A run's
 * status change queues one delivery per enabled configuration it triggers, in the commit that changes it; the alarm
 * then sends them (notifications.send.ts), out of any critical section, recording each answer on its configuration
 * and retrying a failed one with backoff up to LIMITS.notificationAttempts times. A delivery never holds up a run.
 */
import { organizationName } from "../auth/organization.d1";
import type { Bindings } from "../env";
import { fail, ok, type Result } from "../errors";
import { LIMITS } from "../limits";
import type { RunRecord, RunStatus } from "../runs/runs.types";
import { usernames } from "../users/users.d1";
import type { WorkspaceHost } from "../workspaces/workspace.host";
import { ensure, NOTIFICATION_TABLES, present } from "../workspaces/workspace.migrations";
import { isFailure } from "../workspaces/workspace.rules";
import type { Guard, WorkspaceRecord } from "../workspaces/workspace.types";
import { retryAt, SENDS_PER_ALARM } from "./notifications.outbound";
import { triggerOf } from "./notifications.rules";
import { sendNotification } from "./notifications.send";
import {
  countConfigs,
  deleteConfig,
  dropDelivery,
  dueDeliveries,
  earliestDelivery,
  eraseNotifications,
  getConfig,
  insertConfig,
  listConfigs,
  queueDelivery,
  retryDelivery,
  saveConfig,
} from "./notifications.store";
import type { DeliveryResponse, NotificationConfig } from "./notifications.types";

export type ConfigResult = Result<{ config: NotificationConfig; workspace: WorkspaceRecord }>;

/** The newest answer first, at most LIMITS.notificationResponsesKept. */
export const withResponse = (c: NotificationConfig, r: DeliveryResponse): NotificationConfig => ({
  ...c,
  deliveryResponses: [r, ...c.deliveryResponses].slice(0, LIMITS.notificationResponsesKept),
});

export class Notifications {
  constructor(
    private readonly host: WorkspaceHost,
    private readonly env: Bindings,
  ) {}

  private get made(): boolean {
    return present(this.host.sql, NOTIFICATION_TABLES);
  }

  // ---- the RPC methods' logic ----

  create(input: { config: NotificationConfig; guard?: Guard }): ConfigResult {
    const w = this.host.guarded(input.guard);
    if (isFailure(w)) return w;
    const sql = ensure(this.host.sql, NOTIFICATION_TABLES);
    if (countConfigs(sql) >= LIMITS.notificationConfigsPerWorkspace) {
      return fail("invalid_attribute", `A workspace may have at most ${LIMITS.notificationConfigsPerWorkspace} notification configurations`);
    }
    insertConfig(sql, input.config);
    return ok({ config: input.config, workspace: w });
  }

  get(id: string): ConfigResult {
    const w = this.host.live();
    if (isFailure(w)) return w;
    const config = this.made ? getConfig(this.host.sql, id) : null;
    return config ? ok({ config, workspace: w }) : fail("not_found");
  }

  list(): Result<{ items: NotificationConfig[]; workspace: WorkspaceRecord }> {
    const w = this.host.live();
    if (isFailure(w)) return w;
    return ok({ items: this.made ? listConfigs(this.host.sql) : [], workspace: w });
  }

  /** Replaces a configuration the Worker read at `updatedAt` (a change made meanwhile is a conflict, not lost). */
  update(input: { config: NotificationConfig; readAt: string; guard?: Guard }): ConfigResult {
    const w = this.host.guarded(input.guard);
    if (isFailure(w)) return w;
    const current = this.made ? getConfig(this.host.sql, input.config.id) : null;
    if (!current) return fail("not_found");
    if (current.updatedAt !== input.readAt) return fail("conflict", "The notification configuration changed meanwhile; retry the request");
    const next = { ...input.config, deliveryResponses: current.deliveryResponses };
    saveConfig(this.host.sql, next);
    return ok({ config: next, workspace: w });
  }

  delete(input: { id: string; guard?: Guard }): Result<null> {
    const w = this.host.guarded(input.guard);
    if (isFailure(w)) return w;
    if (!this.made || !getConfig(this.host.sql, input.id)) return fail("not_found");
    deleteConfig(this.host.sql, input.id);
    return ok(null);
  }

  /** An answer the Worker got (a verification) joins the configuration's delivery responses. */
  record(input: { id: string; response: DeliveryResponse }): ConfigResult {
    const w = this.host.live();
    if (isFailure(w)) return w;
    const current = this.made ? getConfig(this.host.sql, input.id) : null;
    if (!current) return fail("not_found");
    const next = withResponse(current, input.response);
    saveConfig(this.host.sql, next);
    return ok({ config: next, workspace: w });
  }

  // ---- the engine's side ----

  /** The runs capability's observer: one delivery per enabled configuration the change triggers, in its commit. */
  onRunStatus(_w: WorkspaceRecord, run: RunRecord, from: RunStatus | null): void {
    if (!this.made) return;
    const fired = triggerOf(run, from);
    if (!fired) return;
    const now = new Date().toISOString();
    const event = {
      trigger: fired.trigger,
      message: fired.message,
      runId: run.id,
      runStatus: run.status,
      runMessage: run.message,
      runCreatedAt: run.createdAt,
      runCreatedBy: run.createdBy?.id ?? null,
      runUpdatedAt: now,
    };
    for (const c of listConfigs(this.host.sql)) if (c.enabled && c.triggers.includes(fired.trigger)) queueDelivery(this.host.sql, c.id, event, Date.now());
  }

  due(): number | null {
    return this.made ? earliestDelivery(this.host.sql) : null;
  }

  /** The alarm's step: the due deliveries sent, each answer recorded; a failure retried later, up to the bound. */
  async deliver(): Promise<void> {
    if (!this.made) return;
    const pending = dueDeliveries(this.host.sql, Date.now(), SENDS_PER_ALARM);
    if (pending.length === 0) return;
    const w = this.host.live();
    if (isFailure(w)) return;
    const organization = await organizationName(this.env.DB, w.organizationId).catch(() => null);
    // The payload names a run's creator by username, as the API shows users.
    const creators = [...new Set(pending.map((p) => p.event.runCreatedBy).filter((id): id is string => !!id))];
    const names = creators.length ? await usernames(this.env.DB, creators).catch(() => []) : [];
    const byId = new Map(names.map((u) => [u.id, u.username]));
    for (const p of pending) {
      const config = getConfig(this.host.sql, p.configId);
      if (!config?.enabled) {
        dropDelivery(this.host.sql, p.seq);
        continue;
      }
      const answer = await sendNotification(
        this.env,
        { config, workspaceId: w.id, workspaceName: w.name, organizationId: w.organizationId, organizationName: organization ?? w.organizationId },
        { ...p.event, runCreatedBy: p.event.runCreatedBy ? (byId.get(p.event.runCreatedBy) ?? p.event.runCreatedBy) : null },
      );
      // Read again after the await: the configuration may have changed or gone meanwhile.
      const current = getConfig(this.host.sql, p.configId);
      if (current) saveConfig(this.host.sql, withResponse(current, answer));
      if (answer.successful === "true" || p.attempts + 1 >= LIMITS.notificationAttempts || !current) dropDelivery(this.host.sql, p.seq);
      else retryDelivery(this.host.sql, p.seq, retryAt(p.attempts));
    }
  }

  /** Once D1 has the workspace's delete. */
  erase(): void {
    if (this.made) eraseNotifications(this.host.sql);
  }
}
