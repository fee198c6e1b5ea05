import { OpenAPIHono } from "@hono/zod-openapi";
import { cors } from "hono/cors";
import { requestId } from "hono/request-id";
import { secureHeaders } from "hono/secure-headers";
import { limitByClient, requireAuth } from "./auth/auth.middleware";
import { drainUnreadBody, limitBody } from "./platform/body";
import { principalKey } from "./auth/principal";
import type { AppEnv } from "./env";
import { SplitRouter } from "./platform/router";
import { declaredActionHeld, hopsOf } from "./auth/caller.http";
import { hopsHeader, hopTraceHeader } from "./platform/hops";
import { ApiError, errorResponse, JSONAPI, toApiError } from "./errors";
import { defaultHook } from "./jsonapi/validation";
import { LIMITS } from "./limits";
import { apiMetaHeaders, meta, mountDiscovery } from "./meta/meta.routes";
import { organizations } from "./organizations/organizations.routes";
import { openApiDocument } from "./jsonapi/openapi";
import { workspaces } from "./workspaces/workspaces.routes";
import { workspaceActions } from "./workspaces/lock.routes";
import { teams } from "./teams/teams.routes";
import { tokens } from "./tokens/tokens.routes";
import { auditTrail } from "./audit/audit.routes";
import { tokenTtlPolicies } from "./tokens/token-ttl-policies.routes";
import { teamAccess } from "./team-access/team-access.routes";
import { users } from "./users/users.routes";
import { projects } from "./projects/projects.routes";
import { sshKeys } from "./ssh-keys/ssh-keys.routes";
import { agentPools } from "./agent-pools/agent-pools.routes";
import { agentTokens } from "./agent-pools/agent-tokens.routes";
import { agents } from "./agents/agents.routes";
import { AGENT_PROTOCOL_PREFIX, agentProtocol } from "./agents/agent-protocol.routes";
import { oauth } from "./oauth/oauth.routes";
import { consumers } from "./workspaces/consumers.routes";
import { retention } from "./retention/retention.routes";
import { stateVersions } from "./state-versions/state-versions.routes";
import { blobs } from "./blobs/blobs.signed.routes";
import { runLogs } from "./runs/runs.signed.routes";
import { runs } from "./runs/runs.routes";
import { configurationVersions } from "./configuration-versions/configuration-versions.routes";
import { slugs } from "./configuration-versions/configuration-versions.signed.routes";
import { vcsWebhooks } from "./vcs/vcs-webhooks.signed.routes";
import { admin } from "./admin/admin.routes";
import { terraformVersions } from "./terraform-versions/terraform-versions.routes";
import { subscriptions } from "./subscriptions/subscriptions.routes";
import { organizationTags } from "./tags/organization-tags.routes";
import { reservedTagKeys } from "./tags/reserved-tag-keys.routes";
import { tagBindings } from "./tags/tag-bindings.routes";
import { workspaceTags } from "./tags/workspace-tags.routes";
import { variables } from "./variables/variables.routes";
import { varsets } from "./varsets/varsets.routes";
import { ui } from "./ui/app";
import { login } from "./login/login.routes";
import { registryModules } from "./registry/registry-modules.routes";
import { registryProviders } from "./registry/registry-providers.routes";
import { registryApi } from "./registry/registry-protocol.routes";
import { registryObjects } from "./registry/registry-objects.routes";
import { runTriggers } from "./run-triggers/run-triggers.routes";
import { notifications } from "./notifications/notifications.routes";
import { runTasks } from "./run-tasks/run-tasks.routes";
import { taskIntegration } from "./run-tasks/run-tasks.signed.routes";

export { WorkspaceObject } from "./workspaces/workspace.object";

/** Routers mounted under /api/v2 behind authentication. Each resource adds itself here. */
const API_ROUTERS = [
  meta,
  organizations,
  workspaces,
  workspaceTags,
  tagBindings,
  organizationTags,
  reservedTagKeys,
  workspaceActions,
  teams,
  tokens,
  tokenTtlPolicies,
  teamAccess,
  users,
  projects,
  sshKeys,
  agentPools,
  agentTokens,
  agents,
  oauth,
  consumers,
  retention,
  runTriggers,
  notifications,
  runTasks,
  stateVersions,
  configurationVersions,
  admin,
  terraformVersions,
  subscriptions,
  variables,
  varsets,
  runs,
  registryModules,
  registryProviders,
  auditTrail,
];

export const app = new OpenAPIHono<AppEnv>({ defaultHook, router: new SplitRouter() });

// Outermost, so every early answer (413, 401, 415, 429…) first reads what the client is still sending.
app.use("*", drainUnreadBody);
app.use("*", requestId({ headerName: "X-Request-Id" }));
// Browser portals call the API cross-origin with bearer tokens (no cookies), so any origin may.
app.use(
  "*",
  cors({
    origin: "*",
    allowHeaders: ["Authorization", "Content-Type", "Accept", "X-D1-Bookmark"],
    allowMethods: ["GET", "POST", "PATCH", "PUT", "DELETE", "OPTIONS"],
    exposeHeaders: ["X-Request-Id", "X-D1-Bookmark", "X-RateLimit-Limit", "X-RateLimit-Reset", "Retry-After", "TFP-API-Version"],
    maxAge: 600,
  }),
);
app.use("*", secureHeaders({ crossOriginResourcePolicy: "cross-origin" }));

// A structured log line (never the token) for each request that failed on our side, and with ACCESS_LOG=1 for every
// request. Workers Logs records every invocation's method, URL, status and duration itself (wrangler.toml,
// [observability]); a line of our own per request cost 5–20% of a small request's CPU here.
app.use("*", async (c, next) => {
  const started = Date.now();
  await next();
  if (c.res.status < 500 && c.env.ACCESS_LOG !== "1") return;
  const principal = c.get("principal");
  console.log(
    JSON.stringify({
      level: c.res.status >= 500 ? "error" : "info",
      requestId: c.get("requestId"),
      method: c.req.method,
      route: c.req.routePath,
      path: c.req.path,
      status: c.res.status,
      durationMs: Date.now() - started,
      principal: principal ? principalKey(principal) : null,
    }),
  );
});

app.use("*", async (c, next) => {
  await next();
  for (const [k, v] of Object.entries(apiMetaHeaders(c.env))) c.res.headers.set(k, v);
});

mountDiscovery(app);

/**
 * An authenticated JSON:API router: body limit and media type, the hop counter, authentication, and the check that the
 * route authorised its declared action. /api/v2 and the registry's own API (/api/registry) are both built by it.
 */
function authenticatedRouter(): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>({ defaultHook });

  // Bodies: 413 before parsing when too large; 415 unless JSON:API.
  router.use(
    "*",
    limitBody(LIMITS.apiBodyBytes, () => {
      throw ApiError.of("payload_too_large", { detail: `Request bodies are limited to ${LIMITS.apiBodyBytes} bytes` });
    }),
  );
  router.use("*", async (c, next) => {
    const method = c.req.method;
    if (method === "POST" || method === "PATCH" || method === "PUT" || method === "DELETE") {
      const length = c.req.header("Content-Length");
      const hasBody = (length !== undefined && length !== "0") || c.req.header("Transfer-Encoding") !== undefined;
      const type = (c.req.header("Content-Type") ?? "").split(";")[0].trim().toLowerCase();
      if (hasBody && type !== JSONAPI) throw ApiError.of("unsupported_media_type");
    }
    await next();
  });
  // Round trips per request, reported when EXPOSE_HOPS=1 (the bench and the hop-count test).
  router.use("*", async (c, next) => {
    const hops = hopsOf(c);
    await next();
    if (c.env.EXPOSE_HOPS === "1") {
      c.res.headers.set("X-Hops", hopsHeader(hops));
      c.res.headers.set("X-Hop-Trace", hopTraceHeader(hops));
    }
  });
  router.use("*", requireAuth);
  router.use("*", async (c, next) => {
    await next();
    if (c.res.status < 400 && !declaredActionHeld(c)) {
      console.log(
        JSON.stringify({
          level: "error",
          requestId: c.get("requestId"),
          error: `route ${c.req.method} ${c.req.path} answered without authorising its declared action`,
        }),
      );
      c.res = errorResponse(c, ApiError.of("internal"));
    }
  });
  return router;
}

const api = authenticatedRouter();
for (const r of API_ROUTERS) api.route("/", r);

// Signed state-blob URLs: no token (Terraform sends none), raw bodies, their own size limit; rate
// limited per client address like every unauthenticated request.
app.use("/_blobs/*", limitByClient);
app.use("/_slugs/*", limitByClient);
app.use("/api/v2/openapi.json", limitByClient);
app.route("/", blobs);
// Signed run-log and plan-artifact URLs: go-tfe's log reader sends no token (the signature is in the path).
app.use("/_logs/*", limitByClient);
app.use("/_artifacts/*", limitByClient);
app.route("/", runLogs);
// Signed configuration-archive URLs, likewise (go-tfe uploads without a token; the download endpoint redirects here).
app.route("/", slugs);
// VCS deliveries: no token, signed by the host with the hook's secret (src/vcs/vcs-webhooks.signed.routes.ts).
app.route("/", vcsWebhooks);
// The OpenAPI document is public like discovery; registered before the authenticated API.
app.get("/api/v2/openapi.json", (c) => c.json(openApiDocument(app)));
// Run task integrations: their callback and the JSON plan, with the access token of the task request (no API token).
app.on("PATCH", "/api/v2/task-results/:id/callback", limitByClient);
app.route("/", taskIntegration);
app.route("/api/v2", api);
// The registry protocols and GPG keys (src/registry/registry-protocol.routes.ts), authenticated as /api/v2 is.
const registry = authenticatedRouter();
registry.route("/", registryApi);
app.route("/api/registry", registry);
// Signed registry object URLs: uploads (no token: go-tfe and curl PUT them as links) and Terraform's downloads.
app.use("/_registry/*", limitByClient);
app.route("/", registryObjects);
// The private agent protocol (docs/runs.md): agent tokens and run tokens, plain JSON and raw bytes.
app.route(AGENT_PROTOCOL_PREFIX, agentProtocol);
// The web UI: server-rendered pages with their own session, CSRF check and error pages.
app.route("/app", ui);
// `terraform login`'s token endpoint (login.v1); its authorization endpoint is a UI page.
app.route("/", login);

app.notFound((c) => errorResponse(c, ApiError.of("not_found")));
app.onError((err, c) => {
  const apiErr = toApiError(err);
  // Expected failures (ApiError, including unlock's 503 while a state version is pending) are not logged as errors.
  if (apiErr.status >= 500 && !(err instanceof ApiError)) {
    console.log(JSON.stringify({ level: "error", requestId: c.get("requestId"), error: String(err), stack: err instanceof Error ? err.stack : undefined }));
  }
  return errorResponse(c, apiErr);
});

export default app;
