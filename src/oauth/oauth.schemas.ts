/** Response schemas of OAuth clients and OAuth tokens (src/oauth/oauth.routes.ts). */
import { attr, resourceSchema } from "../jsonapi/schemas";

export const oauthClientResource = resourceSchema("OAuthClient", "oauth-clients", {
  "created-at": attr.time,
  "callback-url": attr.string,
  "connect-path": attr.string,
  "service-provider-display-name": attr.nullableString,
  name: attr.nullableString,
  "service-provider": attr.nullableString,
  "http-url": attr.nullableString,
  "api-url": attr.nullableString,
  key: attr.nullableString,
  "rsa-public-key": attr.nullableString,
  "organization-scoped": attr.boolean,
});

export const oauthTokenResource = resourceSchema("OAuthToken", "oauth-tokens", {
  "created-at": attr.time,
  "service-provider-user": attr.nullableString,
  "has-ssh-key": attr.boolean,
});
