/**
 * The work of the requests a run task integration makes with its request's access token (run-tasks.token.ts): the
 * token's claims are the authority (no principal), and the workspace they name holds the task result and the run.
 */
import type { Bindings } from "../env";
import { unwrap } from "../errors";
import { signedArtifactUrl } from "../runs/runs.urls";
import { workspaceObject } from "../workspaces/workspace.stub";
import type { TaskTokenClaims } from "./run-tasks.token";
import type { TaskCallback, TaskResult } from "./run-tasks.types";

/** The integration's callback, recorded on the task result the token was minted for. */
export async function recordTaskCallback(env: Bindings, claims: TaskTokenClaims, callback: TaskCallback): Promise<TaskResult> {
  return unwrap(await workspaceObject(env, claims.workspaceId).taskCallback(callback)).value.result;
}

/** A signed URL of the token's run's JSON plan; null while the run has none. */
export async function taskPlanJsonUrl(env: Bindings, origin: string, claims: TaskTokenClaims): Promise<string | null> {
  // Only whether it exists: the integration downloads the bytes through the signed URL, streamed.
  const got = await workspaceObject(env, claims.workspaceId).getArtifact({ runId: claims.runId, kind: "plan-json", maxBytes: 0 });
  if (!got.ok) return null;
  return signedArtifactUrl(env, origin, claims.workspaceId, claims.runId, "plan-json");
}
