/** The SQL of the notification tables in the workspace's object (NOTIFICATION_TABLES in workspace.migrations.ts). */
import { nextSeq, record, records } from "../platform/sql-records";
import type { NotificationConfig, NotificationEvent } from "./notifications.types";

export function listConfigs(sql: SqlStorage): NotificationConfig[] {
  return records<NotificationConfig>(sql, "SELECT record FROM notification_configs ORDER BY seq");
}

export function getConfig(sql: SqlStorage, id: string): NotificationConfig | null {
  return record<NotificationConfig>(sql, "SELECT record FROM notification_configs WHERE id = ?", id);
}

export function countConfigs(sql: SqlStorage): number {
  return sql.exec<{ n: number }>("SELECT count(*) AS n FROM notification_configs").one().n;
}

export function insertConfig(sql: SqlStorage, c: NotificationConfig): void {
  const seq = nextSeq(sql, "notification_configs");
  sql.exec("INSERT INTO notification_configs (id, seq, record) VALUES (?, ?, ?)", c.id, seq, JSON.stringify(c));
}

export function saveConfig(sql: SqlStorage, c: NotificationConfig): void {
  sql.exec("UPDATE notification_configs SET record = ? WHERE id = ?", JSON.stringify(c), c.id);
}

export function deleteConfig(sql: SqlStorage, id: string): void {
  sql.exec("DELETE FROM notification_configs WHERE id = ?", id);
  sql.exec("DELETE FROM notification_deliveries WHERE config_id = ?", id);
}

export interface PendingDelivery {
  seq: number;
  configId: string;
  event: NotificationEvent;
  attempts: number;
}

export function queueDelivery(sql: SqlStorage, configId: string, event: NotificationEvent, dueMs: number): void {
  sql.exec("INSERT INTO notification_deliveries (config_id, event, next_at) VALUES (?, ?, ?)", configId, JSON.stringify(event), dueMs);
}

export function dueDeliveries(sql: SqlStorage, nowMs: number, limit: number): PendingDelivery[] {
  return sql
    .exec<{ seq: number; config_id: string; event: string; attempts: number }>(
      "SELECT seq, config_id, event, attempts FROM notification_deliveries WHERE next_at <= ? ORDER BY seq LIMIT ?",
      nowMs,
      limit,
    )
    .toArray()
    .map((r) => ({ seq: r.seq, configId: r.config_id, event: JSON.parse(r.event) as NotificationEvent, attempts: r.attempts }));
}

export function earliestDelivery(sql: SqlStorage): number | null {
  return sql.exec<{ t: number | null }>("SELECT min(next_at) AS t FROM notification_deliveries").one().t;
}

export function dropDelivery(sql: SqlStorage, seq: number): void {
  sql.exec("DELETE FROM notification_deliveries WHERE seq = ?", seq);
}

export function retryDelivery(sql: SqlStorage, seq: number, nextMs: number): void {
  sql.exec("UPDATE notification_deliveries SET attempts = attempts + 1, next_at = ? WHERE seq = ?", nextMs, seq);
}

export function eraseNotifications(sql: SqlStorage): void {
  sql.exec("DELETE FROM notification_configs");
  sql.exec("DELETE FROM notification_deliveries");
}
