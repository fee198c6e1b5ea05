/**
 * Signed URLs of a run's logs and plan artifacts, served outside /api/v2 without a token. go-tfe's log reader
 * replaces a `log-read-url`'s query with `limit`/`offset` and sends no Authorization header, so the expiry and the
 * signature ride in the path: `/_logs/<workspace>/<run>/<phase>/<expiry>.<signature>` and
 * `/_artifacts/<workspace>/<run>/<kind>/<expiry>.<signature>`. HMAC-SHA256 with BLOB_SIGNING_KEY over a message
 * naming its kind of URL, so no signature of one kind (or of a state blob) passes for another.
 */
import type { Bindings } from "../env";
import { sign, verifySignature } from "../platform/signature";
import type { Phase } from "./runs.types";

/** At least as long as signed state URLs: a run, its queue wait included, reads each log with one URL. */
export const LOG_URL_TTL_SECONDS = 25 * 60 * 60;
/** Log expiries round up to the hour, so reads of a phase within the hour show the same URL (go-tfe compares reads). */
const LOG_EXPIRY_STEP_SECONDS = 60 * 60;
/** The JSON plan's redirect target is short-lived (HCP Terraform API docs: Plans, "Retrieve the JSON execution plan"). */
export const ARTIFACT_URL_TTL_SECONDS = 60;

/** The artifacts a signed URL may serve. */
export type SignedArtifact = "plan-json" | "plan-json-redacted" | "errored-state";

const message = (domain: "run-log" | "run-artifact", workspaceId: string, runId: string, what: string, exp: number) =>
  `${domain}\n${workspaceId}\n${runId}\n${what}\n${exp}`;

/** The absolute URL a client reads one phase's log from. */
export async function signedLogUrl(
  env: Bindings,
  origin: string,
  workspaceId: string,
  runId: string,
  phase: Phase,
  nowSeconds = Math.floor(Date.now() / 1000),
) {
  const exp = Math.ceil((nowSeconds + LOG_URL_TTL_SECONDS) / LOG_EXPIRY_STEP_SECONDS) * LOG_EXPIRY_STEP_SECONDS;
  const sig = await sign(env, message("run-log", workspaceId, runId, phase, exp));
  return `${origin}/_logs/${workspaceId}/${runId}/${phase}/${exp}.${sig}`;
}

/** The absolute, short-lived URL of one of a run's artifacts. */
export async function signedArtifactUrl(
  env: Bindings,
  origin: string,
  workspaceId: string,
  runId: string,
  kind: SignedArtifact,
  nowSeconds = Math.floor(Date.now() / 1000),
) {
  const exp = nowSeconds + ARTIFACT_URL_TTL_SECONDS;
  const sig = await sign(env, message("run-artifact", workspaceId, runId, kind, exp));
  return `${origin}/_artifacts/${workspaceId}/${runId}/${kind}/${exp}.${sig}`;
}

async function verify(env: Bindings, domain: "run-log" | "run-artifact", workspaceId: string, runId: string, what: string, token: string): Promise<boolean> {
  const m = /^(\d{1,12})\.([0-9a-f]{64})$/.exec(token);
  if (!m) return false;
  return verifySignature(env, m[1], m[2], (exp) => message(domain, workspaceId, runId, what, exp));
}

/** Checks a log URL's `<expiry>.<signature>` (constant time) and expiry. */
export const verifyLogUrl = (env: Bindings, workspaceId: string, runId: string, phase: Phase, token: string) =>
  verify(env, "run-log", workspaceId, runId, phase, token);

export const verifyArtifactUrl = (env: Bindings, workspaceId: string, runId: string, kind: SignedArtifact, token: string) =>
  verify(env, "run-artifact", workspaceId, runId, kind, token);
