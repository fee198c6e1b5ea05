// The private agent protocol (/api/agent) as an agent reaches it, for HTTP tests: its calls, registering, claiming.
import { exports } from "cloudflare:workers";
import { expect } from "vitest";
import type { Job as AgentJob } from "../agent/protocol";
import { uniqueName } from "./helpers";

/** The operator's agent token the tests' Worker is configured with (agents of the default pool). */
export const OPERATOR = "test-agent-token";

export interface AgentAnswer {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- protocol answers are checked structurally
  bytes: Uint8Array;
}

/** One call of the protocol (the operator's token unless another, or `null` for none); JSON or bytes as the body. */
export function agentFetch(method: string, path: string, opts: { token?: string | null; json?: unknown; bytes?: Uint8Array } = {}): Promise<Response> {
  const headers: Record<string, string> = {};
  const token = opts.token === undefined ? OPERATOR : opts.token;
  if (token !== null) headers.Authorization = `Bearer ${token}`;
  let body: BodyInit | undefined;
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers["Content-Type"] = "application/json";
  } else if (opts.bytes) {
    body = opts.bytes;
    headers["Content-Type"] = "application/octet-stream";
  }
  return exports.default.fetch(new Request(`http://localhost/api/agent${path}`, { method, headers, body }));
}

/** The same call, its answer read: the status, the body parsed as JSON (null when it is not) and its bytes. */
export async function agentCall(method: string, path: string, opts: { token?: string | null; json?: unknown; bytes?: Uint8Array } = {}): Promise<AgentAnswer> {
  const res = await agentFetch(method, path, opts);
  const bytes = new Uint8Array(await res.arrayBuffer());
  const text = new TextDecoder().decode(bytes);
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  return { status: res.status, body: parsed, bytes };
}

/** Registers an agent with the token; its id. */
export async function registerAgent(token = OPERATOR, name = uniqueName("agent")): Promise<string> {
  const res = await agentCall("POST", "/register", { token, json: { name, version: "0.1.0" } });
  expect(res.status).toBe(201);
  return res.body.id;
}

/** A job for the agent, or null on 204 (never waiting: `wait=0`). */
export async function nextJob(agent: string, token = OPERATOR): Promise<AgentJob | null> {
  const res = await agentCall("POST", `/agents/${agent}/jobs/next?wait=0`, { token, json: {} });
  if (res.status === 204) return null;
  expect(res.status).toBe(200);
  return res.body as AgentJob;
}

/** The path of one of a job's calls (`/jobs/:run/:phase/<rest>`). */
export const jobPath = (job: AgentJob, rest: string) => `/jobs/${job.run}/${job.phase}/${rest}`;
