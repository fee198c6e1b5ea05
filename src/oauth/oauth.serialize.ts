/** The OAuth client and OAuth token resources. */
import type { Resource } from "../jsonapi/document";
import type { OAuthToken } from "./oauth.d1";
import type { ClientWithTokens } from "./oauth.service";

/** The VCS providers a client may name. */
export const OAUTH_PROVIDERS = [
  "github",
  "github_enterprise",
  "gitlab_hosted",
  "gitlab_community_edition",
  "gitlab_enterprise_edition",
  "ado_server",
  "ado_services",
  "bitbucket_hosted",
  "bitbucket_server",
  "bitbucket_data_center",
  // Not an HCP provider: Gitea and Forgejo (OTF names its own `forgejo`), whose API this service speaks.
  "gitea",
] as const;
/** `service-provider-display-name`: the providers' product names (the reference notes give no list; these follow the VCS docs). */
export const DISPLAY_NAMES: Record<(typeof OAUTH_PROVIDERS)[number], string> = {
  github: "GitHub",
  github_enterprise: "GitHub Enterprise",
  gitlab_hosted: "GitLab.com",
  gitlab_community_edition: "GitLab Community Edition",
  gitlab_enterprise_edition: "GitLab Enterprise Edition",
  ado_server: "Azure DevOps Server",
  ado_services: "Azure DevOps Services",
  bitbucket_hosted: "Bitbucket Cloud",
  bitbucket_server: "Bitbucket Server",
  bitbucket_data_center: "Bitbucket Data Center",
  gitea: "Gitea",
};
/** The attributes a client keeps and shows as sent (its secrets are write-only). */
export const PUBLIC_ATTRS = ["name", "service-provider", "http-url", "api-url", "key", "rsa-public-key", "organization-scoped"] as const;

export function serializeClient({ client: c, tokenIds: tokens, projectIds, organization }: ClientWithTokens): Resource {
  const a = c.attrs;
  return {
    id: c.id,
    type: "oauth-clients",
    attributes: {
      "created-at": c.createdAt,
      "callback-url": `/auth/${c.id}/callback`,
      "connect-path": `/auth/${c.id}?organization_id=${c.organizationId}`,
      "service-provider-display-name": DISPLAY_NAMES[a["service-provider"] as keyof typeof DISPLAY_NAMES] ?? null,
      ...Object.fromEntries(PUBLIC_ATTRS.map((k) => [k, a[k] ?? null])),
      // The docs: "Defaults to `true`".
      "organization-scoped": a["organization-scoped"] ?? true,
    },
    relationships: {
      organization: { data: { id: organization, type: "organizations" } },
      "oauth-tokens": { data: tokens.map((id) => ({ id, type: "oauth-tokens" })), links: { related: `/api/v2/oauth-clients/${c.id}/oauth-tokens` } },
      projects: { data: projectIds.map((id) => ({ id, type: "projects" })) },
      "agent-pool": { data: typeof a["agent-pool-id"] === "string" ? { id: a["agent-pool-id"], type: "agent-pools" } : null },
    },
    links: { self: `/api/v2/oauth-clients/${c.id}` },
  };
}

export const serializeToken = (t: OAuthToken): Resource => ({
  id: t.id,
  type: "oauth-tokens",
  attributes: { "created-at": t.createdAt, "service-provider-user": t.serviceProviderUser, "has-ssh-key": t.hasSshKey },
  relationships: {
    "oauth-client": { data: { id: t.oauthClientId, type: "oauth-clients" }, links: { related: `/api/v2/oauth-clients/${t.oauthClientId}` } },
  },
  links: { self: `/api/v2/oauth-tokens/${t.id}` },
});
