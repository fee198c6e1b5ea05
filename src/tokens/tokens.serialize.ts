/** The `authentication-tokens` resource: API tokens (user, team, organisation) and agent pools' agent tokens alike. */
import type { AgentToken } from "../agent-pools/agent-tokens.d1";
import type { Resource } from "../jsonapi/document";
import type { Token } from "./tokens.d1";

/** `secret`: only in the create response; every other response says `token: null`. */
export function serializeAuthenticationToken(t: Token | AgentToken, secret?: string): Resource {
  const relationships: Record<string, unknown> = {
    "created-by": { data: t.createdBy ? { id: t.createdBy, type: "users" } : null },
  };
  // Agent tokens never expire and belong to no team, as the agent tokens docs show them.
  const apiToken = "agentPoolId" in t ? null : t;
  if (apiToken?.teamId) relationships.team = { data: { id: apiToken.teamId, type: "teams" } };
  return {
    id: t.id,
    type: "authentication-tokens",
    attributes: {
      "created-at": t.createdAt,
      "last-used-at": t.lastUsedAt,
      description: t.description,
      ...(apiToken ? { "expired-at": apiToken.expiredAt } : {}),
      token: secret ?? null,
    },
    relationships,
    links: { self: `/api/v2/authentication-tokens/${t.id}` },
  };
}
