import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";

/** A JSON:API error object (https://jsonapi.org/format/#error-objects). */
export interface ErrorObject {
  status: string;
  title: string;
  detail?: string;
  source?: { pointer: string } | { parameter: string } | { header: string };
}

/**
 * The one table of expected failures. Titles and details that clients match are API:
 * go-tfe classifies 409s by substrings such as "is locked by Team" and 400s by "include parameter".
 */
export const ERRORS = {
  unauthorized: { status: 401, title: "unauthorized" },
  /** A web UI session past the organisation's session-timeout or session-remember (the UI signs it out). */
  session_expired: { status: 401, title: "unauthorized", detail: "Your session has ended under this organisation's session settings; sign in again" },
  not_found: { status: 404, title: "not found" },
  /** A member without two-factor authentication, in an organisation whose collaborator-auth-policy requires it (src/auth/access.ts). */
  two_factor_required: {
    status: 403,
    title: "forbidden",
    detail:
      "This organization requires two-factor authentication. Enable it for your account in the web UI (Account settings, Two-factor authentication: /app/settings/two-factor), then try again.",
  },
  /** A member's password session, in an organisation that requires single sign-on (`sso-required`, src/auth/access.ts). */
  sso_required: {
    status: 403,
    title: "forbidden",
    detail: "This organization requires single sign-on. Sign out, then sign in with SSO (/app/sso/start) to reach it.",
  },
  forbidden: { status: 403, title: "forbidden" },
  invalid_attribute: { status: 422, title: "invalid attribute" },
  invalid_attributes: { status: 422, title: "invalid attributes" },
  malformed_body: { status: 400, title: "bad request", detail: "Malformed JSON in request body" },
  bad_request: { status: 400, title: "bad request" },
  invalid_include: { status: 400, title: "Invalid include parameter" },
  unsupported_media_type: {
    status: 415,
    title: "invalid content type",
    detail: "content-type must be application/vnd.api+json",
  },
  payload_too_large: { status: 413, title: "payload too large" },
  conflict: { status: 409, title: "conflict" },
  transition_not_allowed: { status: 422, title: "unprocessable entity", detail: "transition not allowed" },
  stale_authorization: { status: 409, title: "conflict", detail: "The workspace changed while the request was being authorised; retry the request" },
  already_locked: { status: 409, title: "conflict", detail: "Unable to lock workspace. The workspace is already locked." },
  not_locked: { status: 409, title: "conflict", detail: "Unable to unlock workspace. The workspace is not locked." },
  state_pending: {
    status: 503,
    title: "service unavailable",
    detail: "Unable to unlock workspace: the latest state version is still pending. Try again shortly.",
    headers: { "Retry-After": "1" },
  },
  force_delete_forbidden: {
    status: 403,
    title: "forbidden",
    detail: "Not authorized to perform a force delete on the workspace",
  },
  safe_delete_locked: {
    status: 409,
    title: "conflict",
    detail: "Workspace is currently locked. Workspace must be unlocked before it can be safely deleted",
  },
  safe_delete_managing: {
    status: 409,
    title: "conflict",
    detail: "workspace cannot be safely deleted because it is still managing resources",
  },
  /**
   * Not a go-tfe text: it must contain neither "locked" nor "being processed", so that go-tfe reports it as
   * ErrWorkspaceNotSafeToDelete (a retry cannot help).
   */
  safe_delete_unreadable: {
    status: 409,
    title: "conflict",
    detail:
      "workspace cannot be safely deleted because its current state could not be read (it may be encrypted, and no JSON state was sent with it), so it may still be managing resources",
  },
  safe_delete_processing: {
    status: 409,
    title: "conflict",
    detail: "Latest workspace state is being processed to discover resources, please try again later",
  },
  /** go-tfe and the tfe provider match this text on a duplicate variable key. */
  key_taken: { status: 422, title: "invalid attribute", detail: "Key has already been taken" },
  name_taken: { status: 422, title: "invalid attribute", detail: "Name has already been taken" },
  // ---- configuration versions ----
  /** go-tfe's TestConfigurationVersionsArchive matches both texts (it joins title and detail). */
  cv_archive_current: { status: 409, title: "transition not allowed", detail: "configuration could not be archived because it is current" },
  cv_archive_not_allowed: { status: 409, title: "transition not allowed", detail: "configuration could not be archived" },
  cv_upload_closed: { status: 409, title: "conflict", detail: "This configuration version no longer accepts uploads" },
  cv_none: {
    status: 422,
    title: "invalid attribute",
    detail: "The workspace has no configuration version: create and upload one, or name one in the request",
  },
  cv_not_found: { status: 422, title: "invalid attribute", detail: "Configuration version not found in this workspace" },
  cv_not_uploaded: {
    status: 422,
    title: "invalid attribute",
    detail: "Configuration version is not uploaded: only an uploaded configuration version can start a run",
  },
  rate_limited: { status: 429, title: "Too many requests", detail: "You have exceeded the API's rate limit." },
  method_not_allowed: { status: 405, title: "method not allowed" },
  internal: { status: 500, title: "internal server error" },
  // ---- runs: the engine in the workspace's object (src/runs/runs.object.ts) ----
  /** A run action its run's status does not allow (the detail names the status). */
  run_transition: { status: 409, title: "transition not allowed" },
  /** force-execute: the run is not pending, or no other run holds the lock (403, as the real service answers). */
  run_force_execute_forbidden: { status: 403, title: "forbidden" },
  /** An agent's call about a job whose claim it lost (another claim, lease expired, canceled): the agent stops. */
  job_lost: { status: 409, title: "conflict", detail: "The job's claim was lost" },
  /** A claim of a job that is not waiting for an agent (already claimed, or gone). */
  job_unavailable: { status: 409, title: "conflict", detail: "The job is not queued" },
  log_gap: { status: 409, title: "conflict", detail: "The log append would leave a gap" },
  /** A registration beyond the pool's agents (LIMITS.agentsPerPool): the detail names the bound. */
  agent_limit: { status: 409, title: "conflict" },
  // The admin Terraform versions API: an official version, or one a workspace uses, is not removed.
  terraform_version_in_use: { status: 422, title: "unprocessable entity", detail: "The Terraform version cannot be removed (it is official or is in use)" },
  // ---- the private registry (src/registry/) ----
  version_taken: { status: 422, title: "invalid attribute", detail: "Version has already been taken" },
  /** go-tfe matches "namespace not authorized" (ErrNamespaceNotAuthorized) when a GPG key moves to a namespace it may not use. */
  namespace_not_authorized: { status: 403, title: "forbidden", detail: "namespace not authorized" },
  /** An upload the registry refuses (not a module archive, a binary whose checksum differs…): the detail says why. */
  registry_upload_invalid: { status: 422, title: "unprocessable entity" },
} as const satisfies Record<string, { status: number; title: string; detail?: string; headers?: Record<string, string> }>;

export type ErrorCode = keyof typeof ERRORS;

/** The one error class; `app.onError` turns it into a JSON:API error document. */
export class ApiError extends Error {
  readonly status: number;
  readonly errors: ErrorObject[];
  readonly headers: Record<string, string>;

  constructor(status: number, errors: ErrorObject[], headers: Record<string, string> = {}) {
    super(errors.map((e) => `${e.title}${e.detail ? `: ${e.detail}` : ""}`).join("; "));
    this.status = status;
    this.errors = errors;
    this.headers = headers;
  }

  static of(code: ErrorCode, opts: { detail?: string; pointer?: string; parameter?: string; headers?: Record<string, string> } = {}): ApiError {
    const def: { status: number; title: string; detail?: string; headers?: Record<string, string> } = ERRORS[code];
    const obj: ErrorObject = { status: String(def.status), title: def.title };
    const detail = opts.detail ?? def.detail;
    if (detail !== undefined) obj.detail = detail;
    if (opts.pointer !== undefined) obj.source = { pointer: opts.pointer };
    else if (opts.parameter !== undefined) obj.source = { parameter: opts.parameter };
    return new ApiError(def.status, [obj], { ...def.headers, ...opts.headers });
  }
}

/** Expected failure values that cross the Durable Object RPC boundary (never thrown). */
export interface Failure {
  ok: false;
  code: ErrorCode;
  detail?: string;
  pointer?: string;
}

export function fail(code: ErrorCode, detail?: string, pointer?: string): Failure {
  const f: Failure = { ok: false, code };
  if (detail !== undefined) f.detail = detail;
  if (pointer !== undefined) f.pointer = pointer;
  return f;
}

/**
 * THE result of every Durable Object RPC: a value (with the bookmark of the index write a mutation
 * made, for read-your-writes list reads) or a failure the Worker turns into its API error.
 */
export type Result<T> = { ok: true; value: T; bookmark?: string | null } | Failure;

export const ok = <T>(value: T, bookmark?: string | null): Result<T> => (bookmark === undefined ? { ok: true, value } : { ok: true, value, bookmark });

/** The success of a result, or its failure thrown as the API error. */
export function unwrap<R extends { ok: boolean }>(r: R): Extract<R, { ok: true }> {
  if (!r.ok) {
    const f = r as unknown as Failure;
    throw ApiError.of(f.code, { detail: f.detail, pointer: f.pointer });
  }
  return r as Extract<R, { ok: true }>;
}

export const JSONAPI = "application/vnd.api+json";

export function errorResponse(c: Context, err: ApiError): Response {
  return c.body(JSON.stringify({ errors: err.errors }), err.status as 400, {
    "Content-Type": JSONAPI,
    ...err.headers,
  });
}

/** Maps anything thrown in a handler to a JSON:API error response. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof HTTPException) {
    if (err.status === 400) return ApiError.of("malformed_body");
    if (err.status === 413) return ApiError.of("payload_too_large");
    return new ApiError(err.status, [{ status: String(err.status), title: err.message || "error" }]);
  }
  return ApiError.of("internal");
}
