/** The agent token resource (`authentication-tokens`), as the agent tokens docs show it. */
import type { Resource } from "../jsonapi/document";
import type { AgentTokenRow } from "./agent-tokens.d1";

/** `secret`: only in the create response; every other response says `token: null`. */
export function serializeAgentToken(row: AgentTokenRow, secret?: string): Resource {
  return {
    id: row.id,
    type: "authentication-tokens",
    attributes: {
      "created-at": row.created_at,
      "last-used-at": row.last_used_at,
      description: row.description,
      token: secret ?? null,
    },
    relationships: { "created-by": { data: row.created_by ? { id: row.created_by, type: "users" } : null } },
    links: { self: `/api/v2/authentication-tokens/${row.id}` },
  };
}
