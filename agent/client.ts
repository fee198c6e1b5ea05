/**
 * The agent's HTTP client for the private protocol under /api/agent/ (docs/runs.md). Idempotent calls are retried
 * on network errors and 5xx/429 answers; a 409 about a job means its claim is lost and is never retried.
 */
import { randomUUID } from "node:crypto";
import type { AgentStatus, ArtifactKind, Finish, Job, Registration, Signal } from "./protocol.ts";

/** The most one artifact request carries (a multiple of the service's 512 KiB pieces, as parts must start on one). */
export const ARTIFACT_PART_BYTES = 64 * 1024 * 1024;

/** The claim on a job was lost (lease expired, force-cancel): stop the job and report nothing more. */
export class JobLostError extends Error {
  constructor(detail: string) {
    super(`the claim on this job was lost: ${detail}`);
    this.name = "JobLostError";
  }
}

export class ApiError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = "ApiError";
    this.status = status;
  }
}

export interface ClientOptions {
  /** The service's origin, e.g. `http://127.0.0.1:8787`. */
  url: string;
  /** The agent token (an agent pool's token or the operator's AGENT_TOKEN). */
  token: string;
  fetch?: typeof fetch;
  /** Attempts for idempotent calls (default 5). */
  attempts?: number;
  /** The first retry's delay; doubles up to 5 s (default 250 ms). */
  retryDelayMs?: number;
}

interface Call {
  method: "GET" | "POST" | "PUT";
  path: string;
  token: string;
  json?: unknown;
  bytes?: Uint8Array;
  idempotent: boolean;
  /** A 409 means the job's claim is lost. */
  job?: boolean;
  signal?: AbortSignal;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class AgentClient {
  readonly origin: string;
  private readonly token: string;
  private readonly fetchFn: typeof fetch;
  private readonly attempts: number;
  private readonly retryDelayMs: number;

  constructor(options: ClientOptions) {
    this.origin = options.url.replace(/\/+$/, "");
    this.token = options.token;
    this.fetchFn = options.fetch ?? fetch;
    this.attempts = options.attempts ?? 5;
    this.retryDelayMs = options.retryDelayMs ?? 250;
  }

  async register(name: string, version: string): Promise<Registration> {
    // Not idempotent (a retry could register twice); the loop retries it with its own backoff.
    const res = await this.call({ method: "POST", path: "/api/agent/register", token: this.token, json: { name, version }, idempotent: false });
    return (await res.json()) as Registration;
  }

  async status(agentId: string, status: AgentStatus): Promise<void> {
    await this.call({ method: "POST", path: `/api/agent/agents/${enc(agentId)}/status`, token: this.token, json: { status }, idempotent: true });
  }

  /** Long poll: a Job (already claimed for this agent) or null when none came within the server's wait. */
  async nextJob(agentId: string, signal?: AbortSignal): Promise<Job | null> {
    // Never retried: a lost answer may hold a claim, which then expires with its lease.
    const res = await this.call({
      method: "POST",
      path: `/api/agent/agents/${enc(agentId)}/jobs/next`,
      token: this.token,
      json: {},
      idempotent: false,
      signal,
    });
    if (res.status === 204) return null;
    return (await res.json()) as Job;
  }

  job(job: Pick<Job, "run" | "phase" | "token">): JobClient {
    return new JobClient(this, job);
  }

  /** One call, with retries when `idempotent`. Answers the response of a 2xx; throws ApiError or JobLostError. */
  async call(call: Call): Promise<Response> {
    const attempts = call.idempotent ? this.attempts : 1;
    let lastError: unknown;
    for (let attempt = 0; attempt < attempts; attempt++) {
      if (attempt > 0) await sleep(Math.min(this.retryDelayMs * 2 ** (attempt - 1), 5_000));
      let res: Response;
      try {
        const headers: Record<string, string> = { authorization: `Bearer ${call.token}` };
        let body: RequestInit["body"];
        if (call.bytes) {
          headers["content-type"] = "application/octet-stream";
          body = call.bytes;
        } else if (call.json !== undefined) {
          headers["content-type"] = "application/json";
          body = JSON.stringify(call.json);
        }
        res = await this.fetchFn(`${this.origin}${call.path}`, { method: call.method, headers, body, signal: call.signal });
      } catch (err) {
        if (call.signal?.aborted) throw err;
        lastError = err;
        continue;
      }
      if (res.ok) return res;
      const text = await res.text().catch(() => "");
      const detail = errorDetail(res.status, text);
      if (call.job && res.status === 409) throw new JobLostError(detail);
      lastError = new ApiError(res.status, `${call.method} ${call.path}: ${detail}`);
      if (res.status < 500 && res.status !== 429) break;
    }
    throw lastError instanceof Error ? lastError : new Error(String(lastError));
  }
}

/** The calls about one claimed job, authenticated with its run token. */
export class JobClient {
  private readonly base: string;
  private readonly client: AgentClient;
  private readonly job: Pick<Job, "run" | "phase" | "token">;
  constructor(client: AgentClient, job: Pick<Job, "run" | "phase" | "token">) {
    this.client = client;
    this.job = job;
    this.base = `/api/agent/jobs/${enc(job.run)}/${enc(job.phase)}`;
  }

  async configuration(): Promise<Uint8Array> {
    const res = await this.client.call({ method: "GET", path: `${this.base}/configuration`, token: this.job.token, idempotent: true, job: true });
    return new Uint8Array(await res.arrayBuffer());
  }

  /** An artifact of the plan phase, or null when the plan stored none of that kind (404). */
  async getArtifact(kind: ArtifactKind): Promise<Uint8Array | null> {
    try {
      const res = await this.client.call({ method: "GET", path: `${this.base}/artifacts/${kind}`, token: this.job.token, idempotent: true, job: true });
      return new Uint8Array(await res.arrayBuffer());
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return null;
      throw err;
    }
  }

  /**
   * One request up to ARTIFACT_PART_BYTES; a larger artifact in parts of that size (each retried on its own: a part
   * sent again replaces itself), so no request is near the body limits of the proxies in front of the service.
   */
  async putArtifact(kind: ArtifactKind, bytes: Uint8Array, partBytes = ARTIFACT_PART_BYTES): Promise<void> {
    const path = `${this.base}/artifacts/${kind}`;
    if (bytes.byteLength <= partBytes) {
      await this.client.call({ method: "PUT", path, token: this.job.token, bytes, idempotent: true, job: true });
      return;
    }
    const upload = randomUUID();
    for (let offset = 0; offset < bytes.byteLength; offset += partBytes) {
      const part = bytes.subarray(offset, offset + partBytes);
      const final = offset + part.byteLength >= bytes.byteLength ? 1 : 0;
      await this.client.call({
        method: "PUT",
        path: `${path}?upload=${upload}&offset=${offset}&final=${final}`,
        token: this.job.token,
        bytes: part,
        idempotent: true,
        job: true,
      });
    }
  }

  /** Appends at `offset` (the bytes this agent sent before); idempotent, so a retry of a landed chunk is harmless. */
  async appendLog(offset: number, bytes: Uint8Array): Promise<{ size: number; signal: Signal }> {
    const res = await this.client.call({
      method: "POST",
      path: `${this.base}/logs?offset=${offset}`,
      token: this.job.token,
      bytes,
      idempotent: true,
      job: true,
    });
    return (await res.json()) as { size: number; signal: Signal };
  }

  async heartbeat(): Promise<{ signal: Signal }> {
    const res = await this.client.call({ method: "POST", path: `${this.base}/heartbeat`, token: this.job.token, json: {}, idempotent: true, job: true });
    return (await res.json()) as { signal: Signal };
  }

  async finish(body: Finish): Promise<void> {
    await this.client.call({ method: "POST", path: `${this.base}/finish`, token: this.job.token, json: body, idempotent: true, job: true });
  }
}

function enc(s: string): string {
  return encodeURIComponent(s);
}

/** A short text for an error answer: the JSON:API error's title and detail when there is one. */
function errorDetail(status: number, text: string): string {
  try {
    const doc = JSON.parse(text) as { errors?: { title?: string; detail?: string }[] };
    const e = doc.errors?.[0];
    if (e) return `${status} ${[e.title, e.detail].filter(Boolean).join(": ")}`;
  } catch {}
  return `${status} ${text.slice(0, 200)}`.trim();
}
