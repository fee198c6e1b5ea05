/** OAuth clients and tokens (HCP Terraform API docs: OAuth Clients, OAuth Tokens): members read them; manage-vcs-settings manages clients. */
import { pageSlice } from "../jsonapi/document";
import { authorize } from "../auth/requirements";
import { loadOwned, requireOrgAccess, type OrgAccess } from "../auth/access";
import type { Caller } from "../caller";
import { ApiError } from "../errors";
import { newId, nowIso } from "../ids";
import type { Page } from "../jsonapi/document";
import {
  attachProjects,
  deleteClient,
  detachProjects,
  findClient,
  findToken,
  insertClientWithToken,
  listClients,
  listOrgTokens,
  organizationProjectIds,
  patchClientAttrs,
  relationsOf,
  replaceProjects,
  tokensOf,
  type OAuthClient,
  type OAuthToken,
  deleteToken,
  setTokenSshKey,
  setClientTokenSealed,
} from "./oauth.d1";
import { sealValue } from "../variables/variables.crypto";
import { poolExists } from "../organizations/organizations.d1";

/**
 * A client with the ids of its tokens (its `oauth-tokens` relationship), of the projects it is attached to (its
 * `projects` relationship) and its organisation's name.
 */
export interface ClientWithTokens {
  client: OAuthClient;
  tokenIds: string[];
  projectIds: string[];
  organization: string;
}

/** Clients with their relationships, read for all of them in one batch. */
async function withRelations(caller: Caller, clients: OAuthClient[], access: OrgAccess): Promise<ClientWithTokens[]> {
  const relations = await relationsOf(
    caller.db,
    clients.map((c) => c.id),
  );
  return clients.map((client) => ({ client, tokenIds: [], projectIds: [], ...relations.get(client.id), organization: access.organization.name }));
}

const withTokens = async (caller: Caller, client: OAuthClient, access: OrgAccess): Promise<ClientWithTokens> =>
  (await withRelations(caller, [client], access))[0]!;

/** 422 naming the first of `ids` that is not a project of the organisation (the docs: "one or more projects not found"). */
async function checkProjects(caller: Caller, organizationId: string, ids: string[], base: string): Promise<void> {
  const known = await organizationProjectIds(caller.db, organizationId, ids);
  const i = ids.findIndex((id) => !known.has(id));
  if (i >= 0) throw ApiError.of("invalid_attribute", { detail: `Project ${ids[i]} not found in this organization`, pointer: `${base}/${i}/id` });
}

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
 * the agent pool its VCS requests would go through, which must be the organisation's. `projectIds`: the projects to
 * attach it to, each the organisation's (422 naming the entry otherwise, as attach and update answer).
 */
export async function createClient(
  caller: Caller,
  organization: string,
  attrs: Record<string, unknown>,
  agentPoolId: string | null = null,
  projectIds: string[] = [],
  tokenString?: string,
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
  const client: OAuthClient = { id: newId("oc"), organizationId: access.organization.externalId, attrs, createdAt: nowIso() };
  const token: OAuthToken = {
    id: newId("ot"),
    oauthClientId: client.id,
    organizationId: client.organizationId,
    serviceProviderUser: null,
    createdAt: client.createdAt,
    hasSshKey: false,
  };
  await checkProjects(caller, client.organizationId, projectIds, "/data/relationships/projects/data");
  const projects = [...new Set(projectIds)];
  const sealed = tokenString ? await sealValue(caller.env, token.id, tokenString) : null;
  await insertClientWithToken(caller.db, client, token, projects, sealed);
  return { client, tokenIds: [token.id], projectIds: projects, organization: access.organization.name };
}

/** One page of the organisation's clients (tokens and projects are read for that page only) and the total count. */
export async function listOrgClients(caller: Caller, organization: string, page: Page): Promise<{ clients: ClientWithTokens[]; total: number }> {
  const access = await requireOrgAccess(caller, { name: organization });
  const all = await listClients(caller.db, access.organization.externalId);
  const slice = pageSlice(all, page);
  return { clients: await withRelations(caller, slice, access), total: all.length };
}

export async function showClient(caller: Caller, id: string): Promise<ClientWithTokens> {
  const { item: client, access } = await loadOwned(caller, findClient, id);
  return withTokens(caller, client, access);
}

/** Updates public attributes; `projectIds` (PATCH's `relationships.projects`), when given, replaces the client's projects. */
export async function updateClient(
  caller: Caller,
  id: string,
  attrs: Record<string, unknown>,
  projectIds?: string[],
  tokenString?: string,
): Promise<ClientWithTokens> {
  const { item: client, access } = await loadOwned(caller, findClient, id);
  authorize(caller, "vcs.manage", { access });
  checkKey(attrs["service-provider"] ?? client.attrs["service-provider"], attrs);
  if (projectIds) await checkProjects(caller, client.organizationId, projectIds, "/data/relationships/projects/data");
  const updated = await patchClientAttrs(caller.db, client.id, attrs);
  if (!updated) throw ApiError.of("not_found"); // deleted concurrently
  if (projectIds) await replaceProjects(caller.db, client.id, [...new Set(projectIds)], nowIso());
  if (tokenString) await setClientTokenSealed(caller.db, client.id, (tokenId) => sealValue(caller.env, tokenId, tokenString));
  return withTokens(caller, updated, access);
}

/**
 * Attaches the client to projects, or detaches it from them (POST / DELETE …/relationships/projects). Every project
 * must be the client's organisation's (422 naming the first that is not, and nothing changes); attaching an attached
 * project or detaching one that is not attached changes nothing.
 */
export async function changeClientProjects(caller: Caller, id: string, op: "add" | "remove", projectIds: string[]): Promise<void> {
  const { item: client, access } = await loadOwned(caller, findClient, id);
  authorize(caller, "vcs.manage", { access });
  await checkProjects(caller, client.organizationId, projectIds, "/data");
  const ids = [...new Set(projectIds)];
  if (op === "add") await attachProjects(caller.db, client.id, ids, nowIso());
  else await detachProjects(caller.db, client.id, ids);
}

export async function removeClient(caller: Caller, id: string): Promise<void> {
  const { item: client, access } = await loadOwned(caller, findClient, id);
  authorize(caller, "vcs.manage", { access });
  await deleteClient(caller.db, client.id);
}

export async function listClientTokens(caller: Caller, clientId: string): Promise<OAuthToken[]> {
  const { item: client } = await loadOwned(caller, findClient, clientId);
  return tokensOf(caller.db, client.id);
}

export async function listOrgOAuthTokens(caller: Caller, organization: string): Promise<OAuthToken[]> {
  const access = await requireOrgAccess(caller, { name: organization });
  return listOrgTokens(caller.db, access.organization.externalId);
}

export async function showToken(caller: Caller, id: string): Promise<OAuthToken> {
  return (await loadOwned(caller, findToken, id)).item;
}

/** A PEM private key (RSA, OpenSSH, EC, …): what the real service accepts for VCS clones. */
const PRIVATE_KEY = /^-----BEGIN ([A-Z0-9]+ )?PRIVATE KEY-----\r?\n[\s\S]+\r?\n-----END ([A-Z0-9]+ )?PRIVATE KEY-----\s*$/;

/** Sets the token's private SSH key (`sshKey` undefined: nothing changes); only whether one is set is kept. */
export async function updateToken(caller: Caller, id: string, sshKey: string | undefined): Promise<OAuthToken> {
  const { item: token, access } = await loadOwned(caller, findToken, id);
  authorize(caller, "vcs.manage", { access });
  if (sshKey === undefined) return token;
  // go-tfe matches the "Ssh key is invalid" text.
  if (!PRIVATE_KEY.test(sshKey.trim())) throw ApiError.of("invalid_attribute", { detail: "Ssh key is invalid", pointer: "/data/attributes/ssh-key" });
  const updated = await setTokenSshKey(caller.db, token.id, true);
  if (!updated) throw ApiError.of("not_found"); // deleted concurrently
  return updated;
}

export async function removeToken(caller: Caller, id: string): Promise<void> {
  const { item: token, access } = await loadOwned(caller, findToken, id);
  authorize(caller, "vcs.manage", { access });
  if (!(await deleteToken(caller.db, token.id))) throw ApiError.of("not_found");
}
