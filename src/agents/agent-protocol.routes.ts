/**
 * The private agent protocol under /api/agent (docs/runs.md "Agent protocol"): plain JSON and raw bytes, not
 * JSON:API, and not in the public OpenAPI document. Errors are still JSON:API error objects (app.onError).
 */
import { type Context, Hono } from "hono";
import type { Registration } from "../../agent/protocol";
import type { z } from "zod";
import { limitBody } from "../platform/body";
import { archiveResponse } from "../configuration-versions/configuration-versions.signed.service";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";
import { LIMITS } from "../limits";
import { validationError } from "../jsonapi/validation";
import {
  appendLog,
  authenticateAgent,
  authenticateJob,
  finishJob,
  artifactResponse,
  heartbeat,
  jobConfiguration,
  nextJob,
  putArtifact,
  registerAgent,
  reportStatus,
  type ArtifactPart,
  type JobAuth,
} from "./agent-protocol.service";
import { agentIdParam, artifactKind, finishBody, jobParams, registerBody, statusBody } from "./agents.schemas";

export const AGENT_PROTOCOL_PREFIX = "/api/agent";
export const agentProtocol = new Hono<AppEnv>();

const tooLarge = (limit: number) => () => {
  throw ApiError.of("payload_too_large", { detail: `Request bodies here are limited to ${limit} bytes` });
};
const jsonLimit = limitBody(LIMITS.agentJsonBodyBytes, tooLarge(LIMITS.agentJsonBodyBytes));

function bearerOf(c: Context<AppEnv>): string | null {
  return /^Bearer\s+(\S+)\s*$/i.exec(c.req.header("Authorization") ?? "")?.[1] ?? null;
}

function defer(c: Context<AppEnv>): (p: Promise<unknown>) => void {
  return (p) => {
    try {
      c.executionCtx.waitUntil(p);
    } catch {
      void p;
    }
  };
}

/** The address the agent called from (the edge sets it; absent locally). */
const ipOf = (c: Context<AppEnv>) => c.req.header("CF-Connecting-IP") ?? null;

const db = (c: Context<AppEnv>) => c.env.DB.withSession("first-primary");

async function json<T extends z.ZodType>(c: Context<AppEnv>, schema: T): Promise<z.output<T>> {
  const text = await c.req.text();
  let body: unknown = {};
  if (text.trim() !== "") {
    try {
      body = JSON.parse(text);
    } catch {
      throw ApiError.of("malformed_body");
    }
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error, "json");
  return parsed.data;
}

function param<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw ApiError.of("not_found");
  return parsed.data;
}

const agentAuth = (c: Context<AppEnv>) => authenticateAgent(c.env, db(c), bearerOf(c), defer(c));

async function jobAuth(c: Context<AppEnv>): Promise<JobAuth> {
  const { run, phase } = param(jobParams, { run: c.req.param("run"), phase: c.req.param("phase") });
  return authenticateJob(c.env, db(c), bearerOf(c), run, phase);
}

async function bytesOf(c: Context<AppEnv>): Promise<Uint8Array> {
  return new Uint8Array(await c.req.arrayBuffer());
}

agentProtocol.post("/register", jsonLimit, async (c) => {
  const auth = await agentAuth(c);
  const agent = await registerAgent(auth, await json(c, registerBody), ipOf(c));
  // The pool's scope: an agent that runs jobs unsandboxed refuses a pool of several organisations (agent/loop.ts).
  const answer: Registration = { id: agent.id, pool: { id: agent.agentPoolId, organizationId: agent.organizationId } };
  return c.json(answer, 201);
});

agentProtocol.post("/agents/:agent_id/status", jsonLimit, async (c) => {
  const auth = await agentAuth(c);
  const { agent_id } = param(agentIdParam, { agent_id: c.req.param("agent_id") });
  const { status } = await json(c, statusBody);
  await reportStatus(auth, agent_id, status, ipOf(c));
  return c.body(null, 204);
});

agentProtocol.post("/agents/:agent_id/jobs/next", jsonLimit, async (c) => {
  const auth = await agentAuth(c);
  const { agent_id } = param(agentIdParam, { agent_id: c.req.param("agent_id") });
  // `wait` (seconds, at most the default): how long to hold the request open when nothing is queued.
  const wait = c.req.query("wait");
  if (wait !== undefined && !/^\d{1,2}$/.test(wait)) throw ApiError.of("bad_request", { detail: "wait must be a number of seconds", parameter: "wait" });
  const waitMs = wait === undefined ? LIMITS.agentNextJobWaitMs : Math.min(Number(wait) * 1000, LIMITS.agentNextJobWaitMs);
  const url = new URL(c.req.url);
  const job = await nextJob(auth, agent_id, { host: url.host, origin: url.origin }, waitMs);
  return job ? c.json(job, 200) : c.body(null, 204);
});

agentProtocol.get("/jobs/:run/:phase/configuration", async (c) => {
  const cv = await jobConfiguration(await jobAuth(c));
  return archiveResponse(c.env, cv.workspaceId, cv.configurationVersionId);
});

agentProtocol.post("/jobs/:run/:phase/heartbeat", jsonLimit, async (c) => c.json(await heartbeat(await jobAuth(c)), 200));

agentProtocol.post("/jobs/:run/:phase/logs", limitBody(LIMITS.agentLogChunkBytes, tooLarge(LIMITS.agentLogChunkBytes)), async (c) => {
  const job = await jobAuth(c);
  const offset = c.req.query("offset");
  if (offset === undefined || !/^\d{1,15}$/.test(offset)) {
    throw ApiError.of("bad_request", { detail: "offset must be the log's size in bytes", parameter: "offset" });
  }
  return c.json(await appendLog(job, Number(offset), await bytesOf(c)), 200);
});

/** `upload`, `offset` and `final` of a request that is one part of an artifact sent in several (null: the whole). */
function artifactPart(c: Context<AppEnv>): ArtifactPart | null {
  const { upload, offset, final } = c.req.query();
  if (upload === undefined && offset === undefined && final === undefined) return null;
  if (!upload || !/^[A-Za-z0-9-]{8,64}$/.test(upload))
    throw ApiError.of("bad_request", { detail: "upload must name the artifact's upload", parameter: "upload" });
  if (!offset || !/^\d{1,12}$/.test(offset)) throw ApiError.of("bad_request", { detail: "offset must be the part's offset in bytes", parameter: "offset" });
  if (final !== "0" && final !== "1") throw ApiError.of("bad_request", { detail: "final must be 0 or 1", parameter: "final" });
  return { upload, offset: Number(offset), final: final === "1" };
}

// No body limit in front: the service streams the body in and refuses it past LIMITS.agentArtifactBytes.
agentProtocol.put("/jobs/:run/:phase/artifacts/:kind", async (c) => {
  const job = await jobAuth(c);
  const kind = param(artifactKind, c.req.param("kind"));
  await putArtifact(job, kind, c.req.raw.body, Number(c.req.header("Content-Length") ?? "0"), artifactPart(c));
  return c.body(null, 204);
});

agentProtocol.get("/jobs/:run/:phase/artifacts/:kind", async (c) => artifactResponse(await jobAuth(c), param(artifactKind, c.req.param("kind"))));

agentProtocol.post("/jobs/:run/:phase/finish", jsonLimit, async (c) => {
  const job = await jobAuth(c);
  await finishJob(job, await json(c, finishBody));
  return c.json({}, 200);
});
