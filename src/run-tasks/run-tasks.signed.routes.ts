/**
 * What a run task integration calls with the `access_token` of its request (run-tasks.token.ts), outside /api/v2's
 * authentication (the token is no API token): the callback `PATCH /api/v2/task-results/:id/callback` (HCP Terraform
 * API docs: Run Tasks Integration, "Run Task Callback"), and the run's JSON plan at the request's
 * `plan_json_api_url`. Any other bearer token passes the plan read on to the authenticated API.
 */
import { Hono } from "hono";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";
import { jsonapi } from "../jsonapi/document";
import { readLimited } from "../platform/body";
import { taskCallbackBody } from "./run-tasks.schemas";
import { serializeTaskResult } from "./run-tasks.serialize";
import { recordTaskCallback, taskPlanJsonUrl } from "./run-tasks.signed.service";
import { bearerTaskToken, verifyTaskToken } from "./run-tasks.token";

export const taskIntegration = new Hono<AppEnv>();

const CALLBACK_MAX_BYTES = 1024 * 1024;
const RESULT = /^taskrs-[A-Za-z0-9]{1,64}$/;
const refused = () => ApiError.of("unauthorized", { detail: "The access token is not valid for this task result" });

taskIntegration.patch("/api/v2/task-results/:id/callback", async (c) => {
  const id = c.req.param("id");
  if (!RESULT.test(id)) throw ApiError.of("not_found");
  const token = bearerTaskToken(c.req.header("Authorization"));
  const claims = token ? await verifyTaskToken(c.env, token) : null;
  if (!claims || claims.resultId !== id) throw refused();
  const raw = await readLimited(c.req.raw.body, CALLBACK_MAX_BYTES, () =>
    ApiError.of("payload_too_large", { detail: `Callbacks are limited to ${CALLBACK_MAX_BYTES} bytes` }),
  );
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(raw));
  } catch {
    throw ApiError.of("malformed_body");
  }
  const parsed = taskCallbackBody.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw ApiError.of("invalid_attribute", { detail: issue.message, pointer: `/${issue.path.join("/")}` });
  }
  const { attributes: a, relationships } = parsed.data.data;
  const result = await recordTaskCallback(c.env, claims, {
    resultId: id,
    status: a.status,
    message: a.message ?? null,
    url: a.url ?? null,
    outcomes: relationships?.outcomes?.data ?? null,
  });
  return jsonapi(c, { data: serializeTaskResult(result) });
});

taskIntegration.get("/api/v2/plans/:plan_id/json-output", async (c, next) => {
  const token = bearerTaskToken(c.req.header("Authorization"));
  if (!token) return next();
  const claims = await verifyTaskToken(c.env, token);
  if (!claims || claims.planId !== c.req.param("plan_id")) throw refused();
  const url = await taskPlanJsonUrl(c.env, new URL(c.req.url).origin, claims);
  return url ? c.redirect(url, 307) : c.body(null, 204);
});
