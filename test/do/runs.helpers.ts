// Seeds and shortcuts for the run engine's tests, through the workspace object's RPC methods.
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import type { Result } from "../../src/errors";
import { newId } from "../../src/ids";
import type { Job, Phase, RunActor, RunOptions, RunRecord } from "../../src/runs/runs.types";
import type { WorkspaceRecord } from "../../src/workspaces/workspace.types";
import { createOrg, createWorkspace } from "../fixtures";

export const USER = { type: "users" as const, id: "user-RunsTestUser0001" };
export const AGENT = { id: "agent-TestAgent000001", name: "test-agent", poolId: null, poolName: null };

export type Stub = ReturnType<typeof env.WORKSPACES.getByName>;

export function value<T>(r: Result<T>): T {
  if (!r.ok) throw new Error(`expected success, got ${r.code}: ${r.detail ?? ""}`);
  return r.value;
}

export const iso = (ms: number): string => new Date(ms).toISOString();

/** A workspace with one uploaded configuration version. */
export async function setup(attributes: Record<string, unknown> = {}): Promise<{ id: string; stub: Stub; cv: string }> {
  const org = await createOrg();
  const ws = await createWorkspace(org, attributes);
  const stub = env.WORKSPACES.getByName(ws.id);
  const cv = await seedCv(stub);
  return { id: ws.id, stub, cv };
}

/** A configuration version through the object's own methods: created, then uploaded unless `uploaded` is false. */
export async function seedCv(
  stub: Stub,
  opts: { speculative?: boolean; provisional?: boolean; autoQueueRuns?: boolean; uploaded?: boolean; creator?: RunActor } = {},
): Promise<string> {
  const id = newId("cv");
  const now = new Date().toISOString();
  value(
    await stub.createConfigurationVersion({
      id,
      now,
      source: "tfe-api",
      speculative: opts.speculative ?? false,
      provisional: opts.provisional ?? false,
      autoQueueRuns: opts.autoQueueRuns ?? false,
      creator: opts.creator ?? { actor: USER, canApply: true },
    }),
  );
  if (opts.uploaded !== false) value(await stub.completeCvUpload({ id, upload: "u1", bytes: new Uint8Array([1, 2, 3]), sha256: "x", now }));
  return id;
}

export async function createRun(
  stub: Stub,
  cv: string | null,
  options: Partial<RunOptions> = {},
  opts: { canApply?: boolean; now?: string } = {},
): Promise<RunRecord> {
  const r = await stub.createRun({
    id: newId("run"),
    now: opts.now ?? new Date().toISOString(),
    configurationVersionId: cv,
    options,
    creator: { actor: USER, canApply: opts.canApply ?? true },
  });
  return value(r).run;
}

export async function run(stub: Stub, id: string): Promise<RunRecord> {
  return value(await stub.getRun(id)).run;
}

export async function workspace(stub: Stub): Promise<WorkspaceRecord> {
  return value(await stub.get());
}

export async function claim(stub: Stub, runId: string, phase: Phase, now = new Date().toISOString()): Promise<Job> {
  return value(await stub.claimJob({ runId, phase, agent: AGENT, now }));
}

export async function finish(
  stub: Stub,
  job: Job,
  status: "finished" | "errored" | "canceled",
  extra: { hasChanges?: boolean; now?: string; error?: string; resourceAdditions?: number } = {},
): Promise<RunRecord> {
  return value(await stub.finishJob({ runId: job.runId, phase: job.phase, claimId: job.claimId, now: extra.now ?? new Date().toISOString(), status, ...extra }))
    .run;
}

export async function action(
  stub: Stub,
  runId: string,
  act: "apply" | "discard" | "cancel" | "force-cancel" | "force-execute",
  extra: { comment?: string; now?: string } = {},
) {
  return stub.runAction({
    runId,
    action: act,
    now: extra.now ?? new Date().toISOString(),
    by: { actor: USER, canApply: true },
    comment: extra.comment ?? null,
  });
}

export function expectFailure(r: Result<unknown>, code: string, detail?: RegExp): void {
  expect(r.ok).toBe(false);
  if (r.ok) return;
  expect(r.code).toBe(code);
  if (detail) expect(r.detail ?? "").toMatch(detail);
}

/** A whole plan phase: claim, then finish with `hasChanges`. */
export async function plan(stub: Stub, runId: string, hasChanges = true): Promise<RunRecord> {
  const job = await claim(stub, runId, "plan");
  return finish(stub, job, "finished", { hasChanges, resourceAdditions: hasChanges ? 1 : 0 });
}
