/** OAuth clients and tokens (tfe-api-notes §2.8): members read them; manage-vcs-settings manages clients. */
import { authorize } from "../auth/requirements";
import { requireOrgAccess, type OrgAccess } from "../auth/access";
import type { Caller } from "../caller";
import { ApiError } from "../errors";
import { newId, nowIso } from "../ids";
import type { Page } from "../jsonapi/document";
import {
  deleteClient,
  findClient,
  findToken,
  insertClientWithToken,
  listClients,
  listOrgTokens,
  patchClientAttrs,
  tokensOf,
  type ClientRow,
  type TokenRow,
  deleteToken,
  setTokenSshKey,
} from "./oauth.d1";
import { poolExists } from "../organizations/organizations.d1";
import { loadOwned } from "./registry.common";

/** A client with the ids of its tokens (its `oauth-tokens` relationship) and its organisation's name. */
export interface ClientWithTokens {
  client: ClientRow;
  tokenIds: string[];
  organization: string;
}

const withTokens = async (caller: Caller, client: ClientRow, access: OrgAccess): Promise<ClientWithTokens> => ({
  client,
  tokenIds: (await tokensOf(caller.db, client.id)).map((t) => t.id),
  organization: access.organization.name,
});

/** Providers whose client cannot work without its consumer key, and the real service's words for it. */
const KEY_REQUIRED: Record<string, string> = {
  bitbucket_data_center: "The Consumer Key for Bitbucket Data Center must be present. Please add a value for `key`.",
};

function checkKey(provider: unknown, attrs: Record<string, unknown>): void {
  const required = KEY_REQUIRED[String(provider)];
  if (required && "key" in attrs && (typeof attrs.key !== "string" || attrs.key.trim() === "")) {
    throw ApiError.of("invalid_attribute", { detail: required, pointer: "/data/attributes/key" });
  }
}

/**
 * Creates a client and its OAuth token; `attrs` are its public attributes (secrets are never stored). `agentPoolId`:
 * the agent pool its VCS requests would go through, which must be the organisation's.
 */
export async function createClient(
  caller: Caller,
  organization: string,
  attrs: Record<string, unknown>,
  agentPoolId: string | null = null,
): Promise<ClientWithTokens> {
  const access = await requireOrgAccess(caller, { name: organization });
  authorize(caller, "vcs.manage", { access });
  checkKey(attrs["service-provider"], attrs);
  if (agentPoolId !== null) {
    if (!(await poolExists(caller.db, access.organization.externalId, agentPoolId))) {
      // go-tfe matches this text.
      throw ApiError.of("invalid_attribute", {
        detail: "the provided agent pool does not exist or you are not authorized to use it",
        pointer: "/data/relationships/agent-pool/data/id",
      });
    }
    attrs = { ...attrs, "agent-pool-id": agentPoolId };
  }
  const client: ClientRow = { id: newId("oc"), organization_id: access.organization.externalId, attrs: JSON.stringify(attrs), created_at: nowIso() };
  const token: TokenRow = {
    id: newId("ot"),
    oauth_client_id: client.id,
    organization_id: client.organization_id,
    service_provider_user: null,
    created_at: client.created_at,
  };
  await insertClientWithToken(caller.db, client, token);
  return { client, tokenIds: [token.id], organization: access.organization.name };
}

/** One page of the organisation's clients (tokens are read for that page only) and the total count. */
export async function listOrgClients(caller: Caller, organization: string, page: Page): Promise<{ clients: ClientWithTokens[]; total: number }> {
  const access = await requireOrgAccess(caller, { name: organization });
  const rows = await listClients(caller.db, access.organization.externalId);
  const slice = rows.slice((page.number - 1) * page.size, page.number * page.size);
  return { clients: await Promise.all(slice.map((r) => withTokens(caller, r, access))), total: rows.length };
}

export async function showClient(caller: Caller, id: string): Promise<ClientWithTokens> {
  const { row, access } = await loadOwned(caller, findClient, id);
  return withTokens(caller, row, access);
}

export async function updateClient(caller: Caller, id: string, attrs: Record<string, unknown>): Promise<ClientWithTokens> {
  const { row, access } = await loadOwned(caller, findClient, id);
  authorize(caller, "vcs.manage", { access });
  checkKey(attrs["service-provider"] ?? (JSON.parse(row.attrs) as Record<string, unknown>)["service-provider"], attrs);
  const updated = await patchClientAttrs(caller.db, row.id, attrs);
  if (!updated) throw ApiError.of("not_found"); // deleted concurrently
  return withTokens(caller, updated, access);
}

export async function removeClient(caller: Caller, id: string): Promise<void> {
  const { row, access } = await loadOwned(caller, findClient, id);
  authorize(caller, "vcs.manage", { access });
  await deleteClient(caller.db, row.id);
}

export async function listClientTokens(caller: Caller, clientId: string): Promise<TokenRow[]> {
  const { row } = await loadOwned(caller, findClient, clientId);
  return tokensOf(caller.db, row.id);
}

export async function listOrgOAuthTokens(caller: Caller, organization: string): Promise<TokenRow[]> {
  const access = await requireOrgAccess(caller, { name: organization });
  return listOrgTokens(caller.db, access.organization.externalId);
}

export async function showToken(caller: Caller, id: string): Promise<TokenRow> {
  return (await loadOwned(caller, findToken, id)).row;
}

/** A PEM private key (RSA, OpenSSH, EC, …): what the real service accepts for VCS clones. */
const PRIVATE_KEY = /^-----BEGIN ([A-Z0-9]+ )?PRIVATE KEY-----\r?\n[\s\S]+\r?\n-----END ([A-Z0-9]+ )?PRIVATE KEY-----\s*$/;

/** Sets the token's private SSH key (`sshKey` undefined: nothing changes); only whether one is set is kept. */
export async function updateToken(caller: Caller, id: string, sshKey: string | undefined): Promise<TokenRow> {
  const { row, access } = await loadOwned(caller, findToken, id);
  authorize(caller, "vcs.manage", { access });
  if (sshKey === undefined) return row;
  // go-tfe matches the "Ssh key is invalid" text.
  if (!PRIVATE_KEY.test(sshKey.trim())) throw ApiError.of("invalid_attribute", { detail: "Ssh key is invalid", pointer: "/data/attributes/ssh-key" });
  const updated = await setTokenSshKey(caller.db, row.id, true);
  if (!updated) throw ApiError.of("not_found"); // deleted concurrently
  return updated;
}

export async function removeToken(caller: Caller, id: string): Promise<void> {
  const { row, access } = await loadOwned(caller, findToken, id);
  authorize(caller, "vcs.manage", { access });
  if (!(await deleteToken(caller.db, row.id))) throw ApiError.of("not_found");
}
