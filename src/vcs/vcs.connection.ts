/**
 * From an OAuth token to a client of its VCS host: the provider's dialect, its URLs (the client's `api-url` and
 * `http-url`, else the provider's public ones), the token string unsealed, and the outbound rules on every request.
 */
import type { Bindings } from "../env";
import { tokenConnection } from "../oauth/oauth.d1";
import { outboundFetch } from "../platform/outbound";
import { openValue } from "../variables/variables.crypto";
import * as gitea from "./providers/gitea";
import * as github from "./providers/github";
import * as gitlab from "./providers/gitlab";
import type { ParsedDelivery, VcsClient, VcsConnection, VcsKind } from "./vcs.types";

/** The OAuth clients' `service-provider` values this service drives, and the dialect each speaks. */
const KINDS: Record<string, VcsKind> = {
  github: "github",
  github_enterprise: "github",
  gitlab_hosted: "gitlab",
  gitlab_community_edition: "gitlab",
  gitlab_enterprise_edition: "gitlab",
  gitea: "gitea",
};

/** The public hosts' URLs, for clients created without them. */
const DEFAULT_URLS: Record<string, { api: string; http: string }> = {
  github: { api: "https://api.github.com", http: "https://github.com" },
  gitlab_hosted: { api: "https://gitlab.com/api/v4", http: "https://gitlab.com" },
};

const PROVIDERS = { github, gitlab, gitea } as const;

/** The dialect of a `service-provider`, or null when this service cannot run from it. */
export function vcsKindOf(serviceProvider: string): VcsKind | null {
  return KINDS[serviceProvider] ?? null;
}

/** Why a workspace cannot be connected through this token (null: it can). */
export function connectRefusal(serviceProvider: string, hasTokenString: boolean): string | null {
  if (!vcsKindOf(serviceProvider)) return `VCS-driven runs through ${serviceProvider} are not supported by this service`;
  if (!hasTokenString) return "The OAuth client has no token string: set its oauth-token-string to connect workspaces through it";
  return null;
}

export interface Connected {
  organizationId: string;
  serviceProvider: string;
  connection: VcsConnection;
}

/** The token's connection, or null when the token is gone, has no token string or speaks no dialect of ours. */
export async function connectionOf(env: Bindings, tokenId: string): Promise<Connected | null> {
  const t = await tokenConnection(env.DB.withSession("first-primary"), tokenId);
  const kind = t && vcsKindOf(t.serviceProvider);
  if (!t || !kind || !t.tokenSealed) return null;
  const defaults = DEFAULT_URLS[t.serviceProvider];
  const apiUrl = (t.apiUrl ?? defaults?.api ?? "").replace(/\/+$/, "");
  const httpUrl = (t.httpUrl ?? defaults?.http ?? "").replace(/\/+$/, "");
  if (!apiUrl) return null;
  const token = await openValue(env, t.tokenId, t.tokenSealed);
  return { organizationId: t.organizationId, serviceProvider: t.serviceProvider, connection: { kind, apiUrl, httpUrl, token } };
}

/** A client of the connection's host; every request obeys the outbound rules (`self`: this service's origin). */
export function vcsClient(env: Bindings, connection: VcsConnection, self: string | null): VcsClient {
  return PROVIDERS[connection.kind].client(connection, (url: string, init?: RequestInit) => outboundFetch(env, url, { ...init, self, timeoutMs: 30_000 }));
}

export function verifyDelivery(kind: VcsKind, headers: Headers, body: Uint8Array, secret: string): Promise<boolean> {
  return PROVIDERS[kind].verifyDelivery(headers, body, secret);
}

export function parseDelivery(kind: VcsKind, headers: Headers, body: unknown, raw: Uint8Array): Promise<ParsedDelivery> {
  return PROVIDERS[kind].parseDelivery(headers, body, raw);
}
