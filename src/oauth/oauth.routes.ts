/**
 * OAuth clients and their OAuth tokens (HCP Terraform API docs: OAuth Clients, OAuth Tokens): what a workspace's `vcs-repo.oauth-token-id`
 * names. Secrets are write-only: `oauth-token-string` is kept sealed (the VCS integration acts with it), `secret` and
 * `private-key` are never stored.
 */
import { z } from "@hono/zod-openapi";
import { callerOf } from "../auth/caller.http";
import { jsonapi, noContent, paginated, paginatedList } from "../jsonapi/document";
import { listDocument, orgParam, pageOf, pageQuery, resourceDocument } from "../jsonapi/schemas";
import { jsonBody, noContentResponse, ok, router } from "../jsonapi/validation";
import { OAUTH_PROVIDERS, PUBLIC_ATTRS, serializeClient, serializeToken } from "./oauth.serialize";
import { LIMITS } from "../limits";
import {
  changeClientProjects,
  createClient,
  listClientTokens,
  listOrgClients,
  listOrgOAuthTokens,
  removeClient,
  removeToken,
  showClient,
  showToken,
  updateClient,
  updateToken,
} from "./oauth.service";
import { defineRoutes } from "../jsonapi/define-route";
import { oauthClientResource, oauthTokenResource } from "./oauth.schemas";

const defineRoute = defineRoutes({ tags: ["OAuth"] });
export const oauth = router();

const attributes = z.object({
  name: z.string().max(255).nullable().optional(),
  "service-provider": z.enum(OAUTH_PROVIDERS).optional(),
  "http-url": z.string().max(1000).optional(),
  "api-url": z.string().max(1000).optional(),
  "oauth-token-string": z.string().max(10_000).optional(),
  key: z.string().max(1000).optional(),
  secret: z.string().max(10_000).optional(),
  "private-key": z.string().max(20_000).optional(),
  "rsa-public-key": z.string().max(20_000).optional(),
  "organization-scoped": z.boolean().optional(),
});
const agentPoolRelationship = z.object({ data: z.object({ type: z.literal("agent-pools"), id: z.string().min(1).max(255) }).nullable() });
// go-tfe sends whole project resources; only `type` and `id` are read.
const projectRefs = z.array(z.object({ type: z.literal("projects"), id: z.string().min(1).max(64) })).max(LIMITS.oauthClientProjectsPerRequest);
const createBody = z
  .object({
    data: z.object({
      type: z.literal("oauth-clients"),
      attributes: attributes.extend({ "service-provider": z.enum(OAUTH_PROVIDERS) }),
      relationships: z.object({ "agent-pool": agentPoolRelationship.optional(), projects: z.object({ data: projectRefs }).optional() }).optional(),
    }),
  })
  .openapi("OAuthClientCreate");
const updateBody = z
  .object({
    data: z.object({
      type: z.literal("oauth-clients"),
      attributes: attributes.optional(),
      // Replaces the client's projects (`[]` clears them), as the docs' PATCH describes.
      relationships: z.object({ projects: z.object({ data: projectRefs }).optional() }).optional(),
    }),
  })
  .openapi("OAuthClientUpdate");
const projectsBody = z.object({ data: projectRefs.min(1) }).openapi("OAuthClientProjects");
const clientParam = z.object({ oauth_client_id: z.string().regex(/^oc-[A-Za-z0-9]{1,64}$/) });
const tokenParam = z.object({ oauth_token_id: z.string().regex(/^ot-[A-Za-z0-9]{1,64}$/) });
const tokenUpdateBody = z
  .object({ data: z.object({ type: z.literal("oauth-tokens").optional(), attributes: z.object({ "ssh-key": z.string().max(16_384).optional() }).optional() }) })
  .openapi("OAuthTokenUpdate");

function publicAttrs(a: z.infer<typeof attributes>): Record<string, unknown> {
  return Object.fromEntries(PUBLIC_ATTRS.filter((k) => a[k] !== undefined).map((k) => [k, a[k]]));
}

oauth.openapi(
  defineRoute({
    method: "post",
    path: "/organizations/{organization_name}/oauth-clients",
    action: "vcs.manage",
    summary: "Create an OAuth client (and its OAuth token)",
    request: { params: orgParam, body: jsonBody(createBody) },
    responses: ok("The client", resourceDocument(oauthClientResource), 201),
  }),
  async (c) => {
    const { attributes: sent, relationships } = c.req.valid("json").data;
    const created = await createClient(
      callerOf(c),
      c.req.valid("param").organization_name,
      publicAttrs(sent),
      relationships?.["agent-pool"]?.data?.id ?? null,
      relationships?.projects?.data.map((p) => p.id) ?? [],
      sent["oauth-token-string"] || undefined,
    );
    return jsonapi(c, { data: serializeClient(created) }, 201);
  },
);

oauth.openapi(
  defineRoute({
    method: "get",
    path: "/organizations/{organization_name}/oauth-clients",
    action: "organization.read",
    summary: "List OAuth clients",
    request: { params: orgParam, query: pageQuery },
    responses: ok("A page of clients", listDocument(oauthClientResource)),
  }),
  async (c) => {
    const page = pageOf(c.req.valid("query"));
    const { clients, total } = await listOrgClients(callerOf(c), c.req.valid("param").organization_name, page);
    return jsonapi(c, paginated(c, clients.map(serializeClient), page, total));
  },
);

oauth.openapi(
  defineRoute({
    method: "get",
    path: "/oauth-clients/{oauth_client_id}",
    action: "organization.read",
    summary: "Show an OAuth client",
    request: { params: clientParam },
    responses: ok("The client", resourceDocument(oauthClientResource)),
  }),
  async (c) => {
    return jsonapi(c, { data: serializeClient(await showClient(callerOf(c), c.req.valid("param").oauth_client_id)) });
  },
);

oauth.openapi(
  defineRoute({
    method: "patch",
    path: "/oauth-clients/{oauth_client_id}",
    action: "vcs.manage",
    summary: "Update an OAuth client",
    request: { params: clientParam, body: jsonBody(updateBody) },
    responses: ok("The client", resourceDocument(oauthClientResource)),
  }),
  async (c) => {
    const { attributes: sent, relationships } = c.req.valid("json").data;
    const projectIds = relationships?.projects?.data.map((p) => p.id);
    return jsonapi(c, {
      data: serializeClient(
        await updateClient(callerOf(c), c.req.valid("param").oauth_client_id, publicAttrs(sent ?? {}), projectIds, sent?.["oauth-token-string"] || undefined),
      ),
    });
  },
);

for (const [method, op] of [
  ["post", "add"],
  ["delete", "remove"],
] as const) {
  oauth.openapi(
    defineRoute({
      method,
      path: "/oauth-clients/{oauth_client_id}/relationships/projects",
      action: "vcs.manage",
      summary: op === "add" ? "Attach an OAuth client to projects of its organisation" : "Detach an OAuth client from projects",
      request: { params: clientParam, body: jsonBody(projectsBody) },
      responses: noContentResponse,
    }),
    async (c) => {
      await changeClientProjects(
        callerOf(c),
        c.req.valid("param").oauth_client_id,
        op,
        c.req.valid("json").data.map((p) => p.id),
      );
      return noContent(c);
    },
  );
}

oauth.openapi(
  defineRoute({
    method: "delete",
    path: "/oauth-clients/{oauth_client_id}",
    action: "vcs.manage",
    summary: "Delete an OAuth client and its tokens",
    request: { params: clientParam },
    responses: noContentResponse,
  }),
  async (c) => {
    await removeClient(callerOf(c), c.req.valid("param").oauth_client_id);
    return noContent(c);
  },
);

oauth.openapi(
  defineRoute({
    method: "get",
    path: "/oauth-clients/{oauth_client_id}/oauth-tokens",
    action: "organization.read",
    summary: "List a client's OAuth tokens",
    request: { params: clientParam, query: pageQuery },
    responses: ok("A page of tokens", listDocument(oauthTokenResource)),
  }),
  async (c) => {
    const rows = await listClientTokens(callerOf(c), c.req.valid("param").oauth_client_id);
    const page = pageOf(c.req.valid("query"));
    return jsonapi(c, paginatedList(c, rows, page, serializeToken));
  },
);

oauth.openapi(
  defineRoute({
    method: "get",
    path: "/organizations/{organization_name}/oauth-tokens",
    action: "organization.read",
    summary: "List the organisation's OAuth tokens",
    request: { params: orgParam, query: pageQuery },
    responses: ok("A page of tokens", listDocument(oauthTokenResource)),
  }),
  async (c) => {
    const rows = await listOrgOAuthTokens(callerOf(c), c.req.valid("param").organization_name);
    const page = pageOf(c.req.valid("query"));
    return jsonapi(c, paginatedList(c, rows, page, serializeToken));
  },
);

oauth.openapi(
  defineRoute({
    method: "get",
    path: "/oauth-tokens/{oauth_token_id}",
    action: "organization.read",
    summary: "Show an OAuth token",
    request: { params: tokenParam },
    responses: ok("The token", resourceDocument(oauthTokenResource)),
  }),
  async (c) => jsonapi(c, { data: serializeToken(await showToken(callerOf(c), c.req.valid("param").oauth_token_id)) }),
);

oauth.openapi(
  defineRoute({
    method: "patch",
    path: "/oauth-tokens/{oauth_token_id}",
    action: "vcs.manage",
    summary: "Set an OAuth token's private SSH key (only whether one is set is kept)",
    request: { params: tokenParam, body: jsonBody(tokenUpdateBody) },
    responses: ok("The token", resourceDocument(oauthTokenResource)),
  }),
  async (c) => {
    const sshKey = c.req.valid("json").data.attributes?.["ssh-key"];
    return jsonapi(c, { data: serializeToken(await updateToken(callerOf(c), c.req.valid("param").oauth_token_id, sshKey)) });
  },
);

oauth.openapi(
  defineRoute({
    method: "delete",
    path: "/oauth-tokens/{oauth_token_id}",
    action: "vcs.manage",
    summary: "Delete an OAuth token",
    request: { params: tokenParam },
    responses: noContentResponse,
  }),
  async (c) => {
    await removeToken(callerOf(c), c.req.valid("param").oauth_token_id);
    return noContent(c);
  },
);
