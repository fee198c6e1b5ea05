/** The SQL of the VCS capability's tables in the workspace object (VCS_TABLES in workspace.migrations.ts). */
import type { VcsEvent } from "./vcs.types";

export interface InboxRow {
  seq: number;
  deliveryId: string;
  event: VcsEvent;
  origin: string;
  attempts: number;
  nextAt: number;
}

/** Queues a delivery's event; false when this delivery is already here. */
export function enqueue(sql: SqlStorage, d: { deliveryId: string; event: VcsEvent; origin: string; receivedAt: string }, now: number): boolean {
  const before = sql.exec<{ n: number }>("SELECT count(*) AS n FROM vcs_inbox WHERE delivery_id = ?", d.deliveryId).one().n;
  if (before > 0) return false;
  sql.exec(
    "INSERT INTO vcs_inbox (delivery_id, event, origin, received_at, next_at) VALUES (?, ?, ?, ?, ?)",
    d.deliveryId,
    JSON.stringify(d.event),
    d.origin,
    d.receivedAt,
    now,
  );
  return true;
}

export function dueInbox(sql: SqlStorage, now: number, limit: number): InboxRow[] {
  return sql
    .exec<{ seq: number; delivery_id: string; event: string; origin: string; attempts: number; next_at: number }>(
      "SELECT seq, delivery_id, event, origin, attempts, next_at FROM vcs_inbox WHERE next_at <= ? ORDER BY seq LIMIT ?",
      now,
      limit,
    )
    .toArray()
    .map((r) => ({ seq: r.seq, deliveryId: r.delivery_id, event: JSON.parse(r.event) as VcsEvent, origin: r.origin, attempts: r.attempts, nextAt: r.next_at }));
}

export function earliestInbox(sql: SqlStorage): number | null {
  return sql.exec<{ t: number | null }>("SELECT min(next_at) AS t FROM vcs_inbox").one().t;
}

export function dropInbox(sql: SqlStorage, seq: number): void {
  sql.exec("DELETE FROM vcs_inbox WHERE seq = ?", seq);
}

export function retryInbox(sql: SqlStorage, seq: number, nextAt: number): void {
  sql.exec("UPDATE vcs_inbox SET attempts = attempts + 1, next_at = ? WHERE seq = ?", nextAt, seq);
}

export interface Link {
  tokenId: string;
  repo: string;
  branch: string;
  synced: boolean;
  attempts: number;
  nextAt: number;
  error: string | null;
}

export function getLink(sql: SqlStorage): Link | null {
  const r = sql
    .exec<{ token_id: string; repo: string; branch: string; synced: number; attempts: number; next_at: number; error: string | null }>(
      "SELECT * FROM vcs_link WHERE singleton = 1",
    )
    .toArray()[0];
  return r ? { tokenId: r.token_id, repo: r.repo, branch: r.branch, synced: r.synced === 1, attempts: r.attempts, nextAt: r.next_at, error: r.error } : null;
}

export function putLink(sql: SqlStorage, l: Link): void {
  sql.exec(
    "INSERT OR REPLACE INTO vcs_link (singleton, token_id, repo, branch, synced, attempts, next_at, error) VALUES (1, ?, ?, ?, ?, ?, ?, ?)",
    l.tokenId,
    l.repo,
    l.branch,
    l.synced ? 1 : 0,
    l.attempts,
    l.nextAt,
    l.error,
  );
}

export function dropLink(sql: SqlStorage): void {
  sql.exec("DELETE FROM vcs_link");
}

/** Records that the workspace ran this commit (`kind`: push or pull_request); false when it already had. */
export function markCommit(sql: SqlStorage, kind: string, sha: string, at: string): boolean {
  const had = sql.exec("SELECT 1 FROM vcs_commits WHERE kind = ? AND sha = ?", kind, sha).toArray().length > 0;
  if (!had) sql.exec("INSERT INTO vcs_commits (kind, sha, at) VALUES (?, ?, ?)", kind, sha, at);
  return !had;
}

export function ranCommit(sql: SqlStorage, kind: string, sha: string): boolean {
  return sql.exec("SELECT 1 FROM vcs_commits WHERE kind = ? AND sha = ?", kind, sha).toArray().length > 0;
}

export interface Report {
  cvId: string;
  tokenId: string;
  repo: string;
  sha: string;
  origin: string;
  posted: string | null;
  attempts: number;
  nextAt: number;
}

export function addReport(sql: SqlStorage, r: Omit<Report, "posted" | "attempts" | "nextAt">, pr: number | null): void {
  sql.exec(
    "INSERT OR IGNORE INTO vcs_reports (cv_id, token_id, repo, sha, origin, pr) VALUES (?, ?, ?, ?, ?, ?)",
    r.cvId,
    r.tokenId,
    r.repo,
    r.sha,
    r.origin,
    pr,
  );
}

/** The configuration versions of earlier plans of a pull request (other commits than `sha`). */
export function earlierPlans(sql: SqlStorage, pr: number, sha: string): string[] {
  return sql
    .exec<{ cv_id: string }>("SELECT cv_id FROM vcs_reports WHERE pr = ? AND sha <> ?", pr, sha)
    .toArray()
    .map((r) => r.cv_id);
}

export function openReports(sql: SqlStorage): Report[] {
  return sql
    .exec<{ cv_id: string; token_id: string; repo: string; sha: string; origin: string; posted: string | null; attempts: number; next_at: number }>(
      "SELECT * FROM vcs_reports WHERE done = 0",
    )
    .toArray()
    .map((r) => ({
      cvId: r.cv_id,
      tokenId: r.token_id,
      repo: r.repo,
      sha: r.sha,
      origin: r.origin,
      posted: r.posted,
      attempts: r.attempts,
      nextAt: r.next_at,
    }));
}

export function reportPosted(sql: SqlStorage, cvId: string, posted: string, done: boolean): void {
  sql.exec("UPDATE vcs_reports SET posted = ?, done = ?, attempts = 0, next_at = 0 WHERE cv_id = ?", posted, done ? 1 : 0, cvId);
}

export function reportFailed(sql: SqlStorage, cvId: string, nextAt: number, giveUp: boolean): void {
  sql.exec("UPDATE vcs_reports SET attempts = attempts + 1, next_at = ?, done = ? WHERE cv_id = ?", nextAt, giveUp ? 1 : 0, cvId);
}

export function eraseVcs(sql: SqlStorage): void {
  for (const t of ["vcs_inbox", "vcs_link", "vcs_commits", "vcs_reports"]) sql.exec(`DELETE FROM ${t}`);
}
