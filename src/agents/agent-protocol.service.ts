/**
 * The private agent protocol (docs/runs.md "Agent protocol"): agents register with an agent token, long-poll for a
 * job (claimed by compare-and-set in the job's workspace object), and then make the job's calls with its run token.
 * Agent tokens are never API callers and run tokens reach only their own job here: neither is a `Caller`.
 */
// The agent's own declaration of the job (a type import: the agent is a separate program that imports no Worker code).
import type { Job as AgentJob } from "../../agent/protocol";
import { findPool } from "../agent-pools/agent-pools.d1";
import { agentTokenByHash, touchAgentToken } from "../agent-pools/agent-tokens.d1";
import { mintRunToken, type RunTokenClaims, runPrincipalOf, runStillStands, verifyRunToken } from "../auth/run-token";
import type { Db } from "../caller";
import type { Bindings } from "../env";
import { ApiError, unwrap } from "../errors";
import { newId, nowIso, sha256Hex } from "../ids";
import { LIMITS } from "../limits";
import { findOrganization } from "../organizations/organizations.d1";
import { queuedJobs, runIndexRow } from "../runs/runs.d1";
import { ARTIFACT_PHASE, type ArtifactKind, type CancelSignal, type Job, type Phase } from "../runs/runs.types";
import { piecesResponse, stagePieces } from "../platform/pieces";
import { openValue } from "../variables/variables.crypto";
import { effectiveVariables } from "../variables/variables.rules";
import { varsetsReachingWorkspace } from "../varsets/varsets.d1";
import { terraformForJob } from "../terraform-versions/terraform-versions.service";
import { findAgent, insertAgent, recordClaim, releaseJob, touchAgent, type Agent, type AgentStatus } from "./agents.d1";
import { goneBefore } from "./agents.rules";
import type { FinishBody, RegisterBody } from "./agents.schemas";
import { workspaceObject } from "../workspaces/workspace.stub";

/** An agent's credentials resolved: the pool its token serves (null: the operator's default pool). */
export interface AgentAuth {
  env: Bindings;
  db: Db;
  pool: { id: string; organizationId: string } | null;
}

/** Bytes per call while an artifact streams into the workspace's object (stored as rows of half a MiB). */
const ARTIFACT_UPLOAD_PIECE_BYTES = 2 * 1024 * 1024;

/** `last-used-at` of an agent token is refreshed at most this often. */
const TOKEN_TOUCH_MS = 60_000;

let operatorHash: { token: string; hash: string } | null = null;

function sameDigest(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * The pool a bearer token serves: the operator's AGENT_TOKEN (compared by digest, in constant time) → the default
 * pool; an agent pool's token → that pool. Anything else is 401.
 */
export async function authenticateAgent(env: Bindings, db: Db, bearer: string | null, defer: (p: Promise<unknown>) => void): Promise<AgentAuth> {
  if (!bearer || bearer.length > 512) throw ApiError.of("unauthorized");
  const hash = await sha256Hex(bearer);
  if (env.AGENT_TOKEN) {
    if (operatorHash?.token !== env.AGENT_TOKEN) operatorHash = { token: env.AGENT_TOKEN, hash: await sha256Hex(env.AGENT_TOKEN) };
    if (sameDigest(hash, operatorHash.hash)) return { env, db, pool: null };
  }
  const token = await agentTokenByHash(db, hash);
  if (!token) throw ApiError.of("unauthorized");
  if (!token.lastUsedAt || Date.now() - Date.parse(token.lastUsedAt) > TOKEN_TOUCH_MS) {
    defer(touchAgentToken(db, token.id, nowIso()).catch(() => undefined));
  }
  return { env, db, pool: { id: token.agentPoolId, organizationId: token.organizationId } };
}

/**
 * Registers an agent of the token's pool, within the pool's bound (LIMITS.agentsPerPool, `agent_limit` beyond it);
 * agents gone for a day are removed on the way.
 */
export async function registerAgent(auth: AgentAuth, body: RegisterBody, ipAddress: string | null): Promise<Agent> {
  const at = nowIso();
  const agent: Agent = {
    id: newId("agent"),
    agentPoolId: auth.pool?.id ?? null,
    organizationId: auth.pool?.organizationId ?? null,
    name: body.name,
    version: body.version ?? null,
    status: "idle",
    ipAddress,
    lastPingAt: at,
    createdAt: at,
  };
  const cap = LIMITS.agentsPerPool;
  const { inserted, count } = await insertAgent(auth.db, agent, { cap, goneBefore: goneBefore(Date.parse(at)) });
  if (inserted) return agent;
  if (count >= cap) {
    throw ApiError.of("agent_limit", {
      detail: `The agent pool already has ${cap} agents, the most a pool may have: an agent that stops says it has exited and makes room, and one silent for a day is removed`,
    });
  }
  // The pool was deleted since its token was read (its tokens went with it).
  throw ApiError.of("unauthorized");
}

/** The agent, when it is one of the token's pool (404 otherwise: an agent of another pool is not there for it). */
async function agentOf(auth: AgentAuth, id: string): Promise<Agent> {
  const agent = await findAgent(auth.db, id);
  if (!agent || agent.agentPoolId !== (auth.pool?.id ?? null)) throw ApiError.of("not_found");
  return agent;
}

export async function reportStatus(auth: AgentAuth, id: string, status: AgentStatus, ipAddress: string | null): Promise<void> {
  await agentOf(auth, id);
  await touchAgent(auth.db, id, { status, ipAddress, at: nowIso() });
}

/** Where the agent reached the service: Terraform on the agent talks to the API there. */
export interface Origin {
  host: string;
  origin: string;
}

/**
 * The first queued job of the agent's pool that it manages to claim, looking again every `agentNextJobPollMs` for up
 * to `waitMs`; null when none. Jobs come in turn by organisation (queuedJobs: the oldest job of the organisation the
 * pool served longest ago), so on the default pool one tenant's queue cannot starve another's. A claim lost to a
 * racing agent (the index still showed the job queued) moves on to the next job.
 */
export async function nextJob(auth: AgentAuth, id: string, origin: Origin, waitMs: number): Promise<AgentJob | null> {
  const agent = await agentOf(auth, id);
  await touchAgent(auth.db, id, { ipAddress: null, at: nowIso() });
  const poolName = auth.pool ? ((await findPool(auth.db, auth.pool.id))?.name ?? null) : null;
  const deadline = Date.now() + waitMs;
  for (;;) {
    for (const queued of await queuedJobs(auth.db, auth.pool?.id ?? null, LIMITS.agentNextJobCandidates)) {
      // A pool's jobs are its organisation's; the index says so too, and a stray row is never handed out.
      if (auth.pool && queued.organizationId !== auth.pool.organizationId) continue;
      const claimed = await workspaceObject(auth.env, queued.workspaceId).claimJob({
        runId: queued.runId,
        phase: queued.phase,
        agent: { id: agent.id, name: agent.name, poolId: agent.agentPoolId, poolName },
        now: nowIso(),
      });
      if (!claimed.ok) continue;
      await recordClaim(auth.db, {
        agentId: id,
        poolId: agent.agentPoolId,
        organizationId: queued.organizationId,
        at: nowIso(),
        job: { runId: queued.runId, phase: queued.phase, workspaceId: queued.workspaceId },
      });
      return jobPayload(auth, claimed.value, origin);
    }
    if (Date.now() + LIMITS.agentNextJobPollMs > deadline) return null;
    await new Promise((resolve) => setTimeout(resolve, LIMITS.agentNextJobPollMs));
  }
}

/**
 * The job as the agent needs it, with its run token and the workspace's effective variables in clear (never
 * logged). Built after the claim: should this fail, the lease runs out and the run errors, as for a lost agent.
 */
async function jobPayload(auth: AgentAuth, job: Job, origin: Origin): Promise<AgentJob> {
  const { run, workspace } = job;
  // The plan runs what the run's or the workspace's setting resolves to now; the apply, the version its plan ran.
  const requested = run.terraformVersion ?? workspace.settings["engine-version"];
  const [org, own, sets, terraform] = await Promise.all([
    findOrganization(auth.db, { id: run.organizationId }),
    workspaceObject(auth.env, workspace.id).listVariables(),
    varsetsReachingWorkspace(auth.db, workspace.organizationId, workspace.id, workspace.projectId),
    terraformForJob(auth.env, auth.db, requested),
  ]);
  if (!org) throw ApiError.of("not_found");
  const chosen = effectiveVariables(unwrap(own).value.variables, sets);
  const variables = await Promise.all(
    chosen.map(async ({ variable: v }) => ({
      key: v.key,
      value: await openValue(auth.env, v.id, v.sealedValue),
      category: v.category,
      hcl: v.hcl,
      sensitive: v.sensitive,
    })),
  );
  const token = await mintRunToken(auth.env, {
    runId: run.id,
    workspaceId: workspace.id,
    organizationId: run.organizationId,
    phase: job.phase,
    claimId: job.claimId,
    projectId: workspace.projectId,
  });
  return {
    run: run.id,
    phase: job.phase,
    claim: job.claimId,
    token,
    leaseSeconds: Math.max(1, Math.round((Date.parse(job.leaseUntil) - Date.now()) / 1000)),
    hostname: origin.host,
    apiBase: `${origin.origin}/api/v2/`,
    organization: org.name,
    workspace: {
      id: workspace.id,
      name: workspace.name,
      workingDirectory: workspace.settings["working-directory"] ?? "",
      terraformVersion: requested,
      // Terraform renders a remote run's log as JSON lines (and reads the redacted JSON plan) when this is on.
      structuredRunOutput: workspace.settings["structured-run-output-enabled"] !== false,
    },
    operation: {
      isDestroy: run.isDestroy,
      refresh: run.refresh,
      refreshOnly: run.refreshOnly,
      targetAddrs: run.targetAddrs ?? [],
      replaceAddrs: run.replaceAddrs ?? [],
      planOnly: run.planOnly,
      savePlan: run.savePlan,
      allowEmptyApply: run.allowEmptyApply,
      allowConfigGeneration: run.allowConfigGeneration,
    },
    variables,
    runVariables: run.variables.map(({ key, value }) => ({ key, value })),
    terraform,
  };
}

// ---- the job's calls, with its run token ----

/** A job's credentials: the run token of this run and phase (401 otherwise). */
export interface JobAuth {
  env: Bindings;
  db: Db;
  claims: RunTokenClaims;
}

export async function authenticateJob(env: Bindings, db: Db, bearer: string | null, runId: string, phase: Phase): Promise<JobAuth> {
  const claims = bearer ? await verifyRunToken(env, bearer) : null;
  if (!claims || claims.runId !== runId || claims.phase !== phase) throw ApiError.of("unauthorized");
  return { env, db, claims };
}

const stubOf = (job: JobAuth) => workspaceObject(job.env, job.claims.workspaceId);

/** The reads carry no claim to check in the object: the run's index row must still back the token (one D1 read). */
async function requireLiveRun(job: JobAuth): Promise<void> {
  const row = await runIndexRow(job.db, job.claims.runId);
  const standing = row && { id: job.claims.runId, workspace_id: row.workspaceId, organization_id: row.organizationId, status: row.status };
  if (!runStillStands(runPrincipalOf(job.claims), standing ?? null)) throw ApiError.of("job_lost");
}

/** The configuration version the job runs (its archive is streamed by the route from the workspace's object). */
export async function jobConfiguration(job: JobAuth): Promise<{ workspaceId: string; configurationVersionId: string }> {
  await requireLiveRun(job);
  const { run } = unwrap(await stubOf(job).getRun(job.claims.runId)).value;
  return { workspaceId: job.claims.workspaceId, configurationVersionId: run.configurationVersionId };
}

export async function heartbeat(job: JobAuth): Promise<{ signal: CancelSignal }> {
  const { runId, phase, claimId } = job.claims;
  return unwrap(await stubOf(job).heartbeat({ runId, phase, claimId, now: nowIso() })).value;
}

export async function appendLog(job: JobAuth, offset: number, bytes: Uint8Array): Promise<{ size: number; signal: CancelSignal }> {
  const { runId, phase, claimId } = job.claims;
  return unwrap(await stubOf(job).appendLog({ runId, phase, claimId, offset, bytes, now: nowIso() })).value;
}

const artifactTooLarge = () => ApiError.of("payload_too_large", { detail: `Artifacts are limited to ${LIMITS.agentArtifactBytes} bytes` });

/** One request of an artifact sent in several: the upload it belongs to, where it begins, and whether it ends it. */
export interface ArtifactPart {
  upload: string;
  offset: number;
  final: boolean;
}

/**
 * Streams an artifact upload into the workspace's object in pieces staged for this upload, then completes it: no
 * request or call holds the whole artifact. The agent sends a large one in several requests (`part`), each staged
 * after the ones before (a retried part replaces itself); the last completes it. Each kind is stored by one phase
 * (the plan's, or the apply's errored state).
 */
export async function putArtifact(
  job: JobAuth,
  kind: ArtifactKind,
  body: ReadableStream<Uint8Array> | null,
  contentLength: number,
  part: ArtifactPart | null,
): Promise<void> {
  const { runId, phase, claimId } = job.claims;
  if (ARTIFACT_PHASE[kind] !== phase) throw ApiError.of("conflict", { detail: `Artifacts of kind ${kind} are stored by the ${ARTIFACT_PHASE[kind]} phase` });
  const room = LIMITS.agentArtifactBytes - (part?.offset ?? 0);
  if (room < 0 || contentLength > room) throw artifactTooLarge();
  const stub = stubOf(job);
  // A single request's upload is its own; a part's is the agent's, namespaced apart from the random ones.
  const upload = part ? `part-${part.upload}` : crypto.randomUUID();
  const target = { runId, phase, claimId, kind, upload };
  // Only the request's first call carries its offset (what was staged from there on is replaced).
  let at: number | undefined = part?.offset;
  const first = () => {
    const v = at;
    at = undefined;
    return v;
  };
  const last = await stagePieces(
    body,
    { size: ARTIFACT_UPLOAD_PIECE_BYTES, maxBytes: room, tooLarge: artifactTooLarge },
    {
      append: async (bytes) => void unwrap(await stub.appendArtifact({ ...target, bytes, at: first() })),
      // A part that failed is sent again (it replaces itself); a single request's upload is dropped.
      abort: () => (part ? Promise.resolve() : stub.abortArtifact({ runId, kind, upload })),
    },
  );
  if (!part || part.final) unwrap(await stub.completeArtifact({ ...target, bytes: last, at: first() }));
  else unwrap(await stub.appendArtifact({ ...target, bytes: last, at: first() }));
}

/** An artifact of the job's run as a streamed response, read from the workspace's object a few MiB per call. */
export async function artifactResponse(job: JobAuth, kind: ArtifactKind): Promise<Response> {
  await requireLiveRun(job);
  const stub = stubOf(job);
  return piecesResponse(
    (fromSeq) => stub.readArtifactPart({ runId: job.claims.runId, kind, fromSeq }),
    "application/octet-stream",
    "artifact vanished while streaming",
  );
}

export async function finishJob(job: JobAuth, body: FinishBody): Promise<void> {
  const { runId, phase, claimId } = job.claims;
  unwrap(await stubOf(job).finishJob({ runId, phase, claimId, now: nowIso(), ...body }));
  await releaseJob(job.db, runId, phase);
}
