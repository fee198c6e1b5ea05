/** Pure rules of agents: the status the API shows, when an agent is gone, and the names and statuses an agent may report. */
import type { AgentStatus } from "./agents.d1";

/** Agents report every 10 s (docs/runs.md); this long without a word, a running agent shows `unknown`. */
export const AGENT_UNKNOWN_AFTER_MS = 2 * 60 * 1000;
/** And this long, `errored` (the agents docs: an unknown agent errors after two hours). */
export const AGENT_ERRORED_AFTER_MS = 2 * 60 * 60 * 1000;

/** And this long, it is gone: the API no longer shows it, and the next registration removes it. */
export const AGENT_GONE_AFTER_MS = 24 * 60 * 60 * 1000;

/** The last ping before which an agent is gone. */
export function goneBefore(nowMs: number): string {
  return new Date(nowMs - AGENT_GONE_AFTER_MS).toISOString();
}

/** What the API shows: the reported status, unless a running agent fell silent. */
export function shownStatus(status: AgentStatus, lastPingAt: string, nowMs: number): AgentStatus {
  if (status !== "idle" && status !== "busy") return status;
  const silent = nowMs - Date.parse(lastPingAt);
  if (silent >= AGENT_ERRORED_AFTER_MS) return "errored";
  if (silent >= AGENT_UNKNOWN_AFTER_MS) return "unknown";
  return status;
}
