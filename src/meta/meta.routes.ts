import { edition, type AppEnv } from "../env";
import { callerOf } from "../auth/caller.http";
import { jsonapi } from "../jsonapi/document";
import { errorResponses, ok, router } from "../jsonapi/validation";
import type { Hono } from "hono";
import { accountDetails } from "./meta.service";
import { defineRoute } from "../jsonapi/define-route";

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
  app.get("/.well-known/terraform.json", (c) => c.json({ "tfe.v2": "/api/v2/", "tfe.v2.1": "/api/v2/", "tfe.v2.2": "/api/v2/", "state.v2": "/api/v2/" }));
}

export const meta = router();

meta.openapi(
  defineRoute({
    method: "get",
    path: "/ping",
    action: "authenticated",
    tags: ["Meta"],
    summary: "No-op; clients read the API version and rate-limit headers",
    responses: { 204: { description: "Pong (headers only)" }, ...errorResponses },
  }),
  (c) => c.body(null, 204),
);

meta.openapi(
  defineRoute({
    method: "get",
    path: "/account/details",
    action: "authenticated",
    tags: ["Meta"],
    summary: "Who the token belongs to",
    responses: { ...ok("The calling user (service users for team and organisation tokens)"), ...errorResponses },
  }),
  async (c) => {
    const a = await accountDetails(callerOf(c));
    return jsonapi(c, { data: userResource(a.id, a.username, a.email, a.isSiteAdmin, a.isService, a.authenticated, a.unconfirmedEmail) });
  },
);

export function userResource(
  id: string,
  username: string,
  email: string | null,
  isSiteAdmin: boolean,
  isService: boolean,
  authenticated: { id: string; type: string },
  /** An email change waiting for confirmation (see PATCH /account/update). */
  unconfirmedEmail: string | null = null,
) {
  const related = authenticated.type === "organizations" ? `/api/v2/organizations/${authenticated.id}` : `/api/v2/${authenticated.type}/${authenticated.id}`;
  return {
    id,
    type: "users",
    attributes: {
      username,
      "is-service-account": isService,
      "auth-method": "tfc",
      // A neutral placeholder image (no email hash is published); go-tfe expects a non-empty URL.
      "avatar-url": `https://www.gravatar.com/avatar/${id.replace(/[^A-Za-z0-9]/g, "")}?s=100&d=mm`,
      "two-factor": { enabled: false, verified: false },
      "v2-only": false,
      "is-site-admin": isSiteAdmin,
      "is-sso-login": false,
      email,
      "unconfirmed-email": unconfirmedEmail,
      permissions: { "can-create-organizations": !isService, "can-change-email": !isService, "can-change-username": !isService },
    },
    relationships: {
      "authentication-tokens": { links: { related: `/api/v2/users/${id}/authentication-tokens` } },
      "authenticated-resource": { data: authenticated, links: { related } },
    },
    links: { self: `/api/v2/users/${id}` },
  };
}
