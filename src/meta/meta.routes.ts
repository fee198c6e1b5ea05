import { edition, type AppEnv } from "../env";
import { callerOf } from "../auth/caller.http";
import { jsonapi } from "../jsonapi/document";
import { ok, router } from "../jsonapi/validation";
import type { Hono } from "hono";
import { serializeUser } from "../users/users.serialize";
import { accountDetails } from "./meta.service";
import { defineRoutes } from "../jsonapi/define-route";
import { userResource as userSchema } from "../users/users.schemas";
import { resourceDocument } from "../jsonapi/schemas";
import { loginService } from "../login/login.rules";

const defineRoute = defineRoutes({ tags: ["Meta"] });

/** Headers go-tfe and Terraform read from every response (notably the ping). */
export function apiMetaHeaders(env: AppEnv["Bindings"]): Record<string, string> {
  const hosted = edition(env) === "hosted";
  return {
    "TFP-API-Version": "2.6",
    "TFP-AppName": hosted ? "HCP Terraform" : "Terraform Enterprise",
    "X-TFE-Version": "v202611-1",
    "X-TFE-Current-Version": "202611",
  };
}

/** Service discovery: public, application/json (Terraform checks the media type exactly). */
export function mountDiscovery(app: Hono<AppEnv>): void {
  app.get("/.well-known/terraform.json", (c) =>
    c.json({
      "tfe.v2": "/api/v2/",
      "tfe.v2.1": "/api/v2/",
      "tfe.v2.2": "/api/v2/",
      "state.v2": "/api/v2/",
      "login.v1": loginService(),
      // The private registry (src/registry/): Terraform installs modules and providers from this host.
      "modules.v1": "/api/registry/v1/modules/",
      "providers.v1": "/api/registry/v1/providers/",
    }),
  );
}

export const meta = router();

meta.openapi(
  defineRoute({
    method: "get",
    path: "/ping",
    action: "authenticated",
    summary: "No-op; clients read the API version and rate-limit headers",
    responses: { 204: { description: "Pong (headers only)" } },
  }),
  (c) => c.body(null, 204),
);

meta.openapi(
  defineRoute({
    method: "get",
    path: "/account/details",
    action: "authenticated",
    summary: "Who the token belongs to",
    responses: ok("The calling user (service users for team and organisation tokens)", resourceDocument(userSchema)),
  }),
  async (c) => {
    return jsonapi(c, { data: serializeUser(await accountDetails(callerOf(c))) });
  },
);
